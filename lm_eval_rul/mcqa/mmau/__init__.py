"""MMAU (Sakshi et al., 2024; ``Sakshi113/MMAU``) under three protocols, with the listening
test: the ``mmau_music`` / ``mmau_music_gen`` / ``rul_mmau_music`` task functions.

Imports :mod:`lm_eval_rul.questions` (:mod:`lm_eval_rul.questions.mmau` reads the released
JSON), :mod:`lm_eval_rul.mcqa`'s documents, prompts and answer readers (among them
:mod:`lm_eval_rul.mcqa.mmau_parsing`: MMAU's official rule and lmms-eval's reading) and
:mod:`lm_eval_rul.audio`; never the build or report stages (the report's MMAU tables are
:mod:`lm_eval_rul.report.mmau`).

Modules: :mod:`.sources` (the public files), :mod:`.documents` (protocols and option
orders), :mod:`.prompts`, :mod:`.tasks` (the harness functions), :mod:`.baselines` (the
always-the-same-letter baseline), :mod:`.predictions` (the authors' predictions file).
"""
