"""The plugin's task YAMLs: this folder (``lm_eval_rul/tasks`` when installed).

The harness's ``lm_eval.tasks`` entry point names ``lm_eval_rul.tasks:tasks_dir``: a
harness that calls it gets this folder, and one that reads only the module part takes the
module's folder, which is this one too (docs/harness_versions.md).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["tasks_dir"]


def tasks_dir() -> Path:
    """The task folder, as :func:`lm_eval_rul.tasks_dir` gives it."""
    from lm_eval_rul.registration import tasks_dir as plugin_tasks_dir

    return plugin_tasks_dir()
