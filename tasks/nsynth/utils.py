"""Thin bridge from the YAMLs to lm_eval_rul.tagging (the logic lives in the package)."""

from lm_eval_rul.logs import quiet_plugin_task_warnings
from lm_eval_rul.tagging.yaml_functions import *  # noqa: F403  (every name the YAMLs use)

# plain `lm_eval`: the harness's per-task "Custom kwargs can be passed to --metadata"
# warning says nothing about these tasks (their keys are documented in docs/tasks.md)
quiet_plugin_task_warnings()
