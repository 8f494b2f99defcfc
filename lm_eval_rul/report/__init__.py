"""The paper's tables and figures from harness outputs: ``report.md`` + ``report.json``.

:func:`build_report` turns :class:`~lm_eval_rul.report.runs.Run` objects into one
JSON-ready dict holding every number (per benchmark: the accuracy table, paired
comparisons, text leakage, PI-accuracy correlations), :func:`write_report` draws the
figures and writes ``report.json`` and ``report.md``.

Definitions (see ``docs/method.md``, "Statistics"):

* mean accuracy = mean over all logged (question, fold) pairs (the harness's group
  ``acc`` with ``weight_by_size``); its interval resamples questions (all folds of a
  question together) or, with ``by="track"``, tracks;
* majority vote: a question is right when its correct answer has strictly more votes
  than any other answer chosen over its folds (ties and unparsed answers never win;
  :func:`lm_eval_rul.mcqa.voting.majority_vote`);
* perception gain ``original - X`` for every other condition X of the same model, and
  leakage ``max(0, none - text backbone)``, on the (question, fold) pairs both runs
  covered, with a paired bootstrap interval and a Wilcoxon signed-rank p-value of the
  per-question scores; *flagged* when the interval contains zero;
* PI vs accuracy: per question, accuracy averaged over the runs of a group and their
  folds, against the question's PI (a ``--pi`` file named after the benchmark, else the
  ``source_pi`` stored in the dataset);
* share above chance: the share of questions whose PI exceeds their own chance level
  ``1 - 1/n_options``;
* a run is one model under one audio condition and one set of audio settings
  (:attr:`lm_eval_rul.report.runs.Run.setting`, e.g. ``noise, seed=1``).

Modules: :mod:`.samples` and :mod:`.runs` (reading harness output folders),
:mod:`.pi_files` (``--pi`` files), :mod:`.stats` (intervals and tests on scipy),
:mod:`.correlation` (Pearson's r),
:mod:`.settings`, :mod:`.summary`, :mod:`.comparisons` (the numbers), :mod:`.plots`,
:mod:`.markdown` and :mod:`.writing` (the files); the factual section is its own
subpackage, :mod:`.factual`: :mod:`.factual.runs` (logged windows), :mod:`.factual.sections`
(per task: figures, baselines, correct vs random with :mod:`.factual.paired_scores`),
:mod:`.factual.markdown`, :mod:`.factual.plots`; its robustness studies
:mod:`.factual.studies` (phrasings, binary choice, true/false), :mod:`.factual.parser_agreement`
(two parsers of the same answers), :mod:`.factual.studies_markdown`,
:mod:`.factual.studies_plots`.

Public names: :func:`load_runs`, :func:`read_results_file`, :class:`Run`,
:class:`TaskResult`, :class:`Sample`, :class:`RunReadError`, :data:`TEXT_CONDITION`,
:func:`sample_answer`, :func:`majority_from_samples`, :class:`PIFile`,
:func:`read_pi_file`, :class:`ReportSettings`, :class:`ReportSettingsError`,
:data:`CONDITION_ORDER`, :func:`build_report`, :func:`write_report`,
:func:`render_markdown`; the statistics :func:`accuracy_ci`, :func:`paired_difference_ci`,
:func:`leakage_ci`, :func:`wilcoxon_pvalue`, :func:`pearson`, :class:`Interval`,
:class:`Correlation`.
"""

from .correlation import Correlation, pearson
from .markdown import render_markdown
from .pi_files import PIFile, read_pi_file
from .runs import TEXT_CONDITION, Run, TaskResult, load_runs, read_results_file
from .samples import RunReadError, Sample, majority_from_samples, sample_answer
from .settings import CONDITION_ORDER, ReportSettings, ReportSettingsError
from .stats import (
    Interval,
    accuracy_ci,
    leakage_ci,
    paired_difference_ci,
    wilcoxon_pvalue,
)
from .summary import build_report
from .writing import write_report

__all__ = [
    "load_runs",
    "read_results_file",
    "Run",
    "TaskResult",
    "Sample",
    "RunReadError",
    "TEXT_CONDITION",
    "sample_answer",
    "majority_from_samples",
    "PIFile",
    "read_pi_file",
    "ReportSettings",
    "ReportSettingsError",
    "CONDITION_ORDER",
    "build_report",
    "write_report",
    "render_markdown",
    "accuracy_ci",
    "paired_difference_ci",
    "leakage_ci",
    "wilcoxon_pvalue",
    "pearson",
    "Interval",
    "Correlation",
]
