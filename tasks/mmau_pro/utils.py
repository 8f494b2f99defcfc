"""Thin bridge from the YAMLs to lm_eval_rul (the logic lives in
:mod:`lm_eval_rul.mcqa.mmau.pro`)."""

from lm_eval_rul.logs import quiet_plugin_task_warnings
from lm_eval_rul.mcqa.mmau.pro import (  # noqa: F401
    doc_to_choice,
    doc_to_text,
    doc_to_text_gen,
    load_mmau_pro,
    load_mmau_pro_gen,
    process_results,
    process_results_gen,
)

# plain `lm_eval`: the harness's per-task "Custom kwargs can be passed to --metadata"
# warning says nothing about these tasks (their keys are documented in docs/tasks.md)
quiet_plugin_task_warnings()
