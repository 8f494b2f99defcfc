"""The report's "Music tagging" section (``lm-eval-rul report`` on tagging runs): per task a
table of model × condition with the popularity baseline and the text-only figure, the gains
original − X with bootstrap intervals over clips, the per-tag ROC-AUC original vs noise
figure, and the ``music_understanding`` table as the model reports print it.

:mod:`.runs` (the logged clips of each run), :mod:`.sections` (the numbers),
:mod:`.bootstrap` (the gains' resamples as arrays),
:mod:`.markdown` and :mod:`.plots`.
"""
