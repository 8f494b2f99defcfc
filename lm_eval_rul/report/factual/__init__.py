"""The factual section of the report (``lm-eval-rul report`` on factual runs).

:mod:`.runs` (the logged windows of each run), :mod:`.sections` (per task: figures,
baselines, correct vs random with :mod:`.paired_scores`), :mod:`.markdown` and
:mod:`.plots`; the robustness studies :mod:`.studies` (phrasings, binary choice,
true/false), :mod:`.parser_agreement` (two parsers of the same answers),
:mod:`.studies_markdown` and :mod:`.studies_plots`.
"""
