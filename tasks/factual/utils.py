"""Thin bridge from the YAMLs to lm_eval_rul (the logic lives in the package)."""

from lm_eval_rul.factual.tasks import (  # noqa: F401
    AGGREGATIONS_BY_METRIC,
    load_factual,
    process_results,
)

# the metric_list's aggregation functions, one per metric name
f1 = AGGREGATIONS_BY_METRIC["f1"]
precision = AGGREGATIONS_BY_METRIC["precision"]
recall = AGGREGATIONS_BY_METRIC["recall"]
micro_f1 = AGGREGATIONS_BY_METRIC["micro_f1"]
micro_precision = AGGREGATIONS_BY_METRIC["micro_precision"]
micro_recall = AGGREGATIONS_BY_METRIC["micro_recall"]
macro_f1 = AGGREGATIONS_BY_METRIC["macro_f1"]
empty_share = AGGREGATIONS_BY_METRIC["empty_share"]
pred_size = AGGREGATIONS_BY_METRIC["pred_size"]
tree_f1 = AGGREGATIONS_BY_METRIC["tree_f1"]
tree_precision = AGGREGATIONS_BY_METRIC["tree_precision"]
tree_recall = AGGREGATIONS_BY_METRIC["tree_recall"]
tree_micro_f1 = AGGREGATIONS_BY_METRIC["tree_micro_f1"]
tree_macro_f1 = AGGREGATIONS_BY_METRIC["tree_macro_f1"]
