"""Thin bridge from the YAMLs to lm_eval_rul (the logic lives in the package)."""

from lm_eval_rul.logs import quiet_plugin_task_warnings
from lm_eval_rul.mcqa.tasks import (  # noqa: F401
    doc_to_choice,
    doc_to_text,
    doc_to_text_gen,
    doc_to_text_official,
    doc_to_text_textonly_gen,
    load_muchomusic,
    load_muchomusic_official,
    process_results,
    process_results_gen,
    process_results_official,
)

# plain `lm_eval`: the harness's per-task "Custom kwargs can be passed to --metadata"
# warning says nothing about these tasks (their keys are documented in docs/tasks.md)
quiet_plugin_task_warnings()
