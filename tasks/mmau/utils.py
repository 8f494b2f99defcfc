"""Thin bridge from the YAMLs to lm_eval_rul (the logic lives in the package)."""

from lm_eval_rul.logs import quiet_plugin_task_warnings
from lm_eval_rul.mcqa.mmau.tasks import (  # noqa: F401
    doc_to_choice,
    doc_to_text,
    doc_to_text_gen,
    load_mmau,
    load_rul_mmau_music,
    process_results,
    process_results_gen,
)
from lm_eval_rul.mcqa.tasks import doc_to_choice as doc_to_choice_rul  # noqa: F401
from lm_eval_rul.mcqa.tasks import doc_to_text as doc_to_text_rul  # noqa: F401
from lm_eval_rul.mcqa.tasks import process_results as process_results_rul  # noqa: F401

# plain `lm_eval`: the harness's per-task "Custom kwargs can be passed to --metadata"
# warning says nothing about these tasks (their keys are documented in docs/tasks.md)
quiet_plugin_task_warnings()
