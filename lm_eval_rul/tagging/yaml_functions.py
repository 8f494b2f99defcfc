"""Every function a tagging task YAML names (``!function utils.NAME``), in one place.

The three tagging folders' ``utils.py`` re-export this module whole, so the YAMLs of GTZAN,
MTG-Jamendo and MagnaTagATune read the same functions without three copies of the list.
"""

from ..mcqa.tasks import process_results as process_results_letters
from .tasks import (
    AGGREGATIONS,
    TagLikelihoodTask,
    doc_to_letters,
    doc_to_text,
    doc_to_yes_no,
    load_tagging,
    process_results_gen,
    process_results_genre,
    process_results_likelihood,
)

# the metric_list's aggregation functions, one per figure
likelihood_roc_auc = AGGREGATIONS["likelihood_roc_auc"]
likelihood_pr_auc = AGGREGATIONS["likelihood_pr_auc"]
likelihood_micro_f1 = AGGREGATIONS["likelihood_micro_f1"]
gen_micro_f1 = AGGREGATIONS["gen_micro_f1"]
gen_micro_precision = AGGREGATIONS["gen_micro_precision"]
gen_micro_recall = AGGREGATIONS["gen_micro_recall"]
gen_samples_f1 = AGGREGATIONS["gen_samples_f1"]
gen_parse_failure = AGGREGATIONS["gen_parse_failure"]

__all__ = [
    "TagLikelihoodTask",
    "doc_to_letters",
    "doc_to_text",
    "doc_to_yes_no",
    "load_tagging",
    "process_results_gen",
    "process_results_genre",
    "process_results_likelihood",
    "process_results_letters",
    "likelihood_roc_auc",
    "likelihood_pr_auc",
    "likelihood_micro_f1",
    "gen_micro_f1",
    "gen_micro_precision",
    "gen_micro_recall",
    "gen_samples_f1",
    "gen_parse_failure",
]
