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
out_of_vocabulary = AGGREGATIONS_BY_METRIC["out_of_vocabulary"]
tree_f1 = AGGREGATIONS_BY_METRIC["tree_f1"]
tree_precision = AGGREGATIONS_BY_METRIC["tree_precision"]
tree_recall = AGGREGATIONS_BY_METRIC["tree_recall"]
tree_micro_f1 = AGGREGATIONS_BY_METRIC["tree_micro_f1"]
tree_macro_f1 = AGGREGATIONS_BY_METRIC["tree_macro_f1"]

# the binary-choice and true/false studies
from lm_eval_rul.factual.study_tasks import (  # noqa: E402, F401
    BINARY_AGGREGATIONS,
    TRUEFALSE_AGGREGATIONS,
    binary_choices,
    load_factual_binary,
    load_factual_truefalse,
    process_results_binary,
    process_results_truefalse,
    truefalse_choices,
)

binary_acc = BINARY_AGGREGATIONS["acc"]
binary_first_share = BINARY_AGGREGATIONS["first_share"]
binary_gold_first_share = BINARY_AGGREGATIONS["gold_first_share"]
binary_parse_failure = BINARY_AGGREGATIONS["parse_failure"]
binary_f1 = BINARY_AGGREGATIONS["f1"]
binary_precision = BINARY_AGGREGATIONS["precision"]
binary_recall = BINARY_AGGREGATIONS["recall"]
tf_acc_inclusive = TRUEFALSE_AGGREGATIONS["acc_inclusive"]
tf_acc_majority = TRUEFALSE_AGGREGATIONS["acc_majority"]
tf_precision_inclusive = TRUEFALSE_AGGREGATIONS["precision_inclusive"]
tf_precision_majority = TRUEFALSE_AGGREGATIONS["precision_majority"]
tf_recall_inclusive = TRUEFALSE_AGGREGATIONS["recall_inclusive"]
tf_recall_majority = TRUEFALSE_AGGREGATIONS["recall_majority"]
tf_true_share_inclusive = TRUEFALSE_AGGREGATIONS["true_share_inclusive"]
tf_true_share_majority = TRUEFALSE_AGGREGATIONS["true_share_majority"]
tf_base_rate = TRUEFALSE_AGGREGATIONS["base_rate"]
tf_parse_failure = TRUEFALSE_AGGREGATIONS["parse_failure"]

from lm_eval_rul.logs import quiet_plugin_task_warnings  # noqa: E402

# plain `lm_eval`: the harness's per-task "Custom kwargs can be passed to --metadata"
# warning says nothing about these tasks (their keys are documented in docs/tasks.md)
quiet_plugin_task_warnings()
