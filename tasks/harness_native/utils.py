"""Thin bridge from the YAMLs to lm_eval_rul (the logic lives in the package)."""

from lm_eval_rul.logs import quiet_plugin_task_warnings
from lm_eval_rul.mcqa.native_tasks import (  # noqa: F401
    doc_to_audio,
    load_muchomusic_native,
    load_rul_muchomusic_native,
)
from lm_eval_rul.mcqa.tasks import doc_to_text_gen, process_results_gen  # noqa: F401

# plain `lm_eval`: the harness's per-task "Custom kwargs can be passed to --metadata"
# warning says nothing about these tasks (their keys are documented in docs/tasks.md)
quiet_plugin_task_warnings()
