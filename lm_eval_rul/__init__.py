"""lm-eval-rul: is your audio language model really listening?

An lm-evaluation-harness plugin with MuChoMusic / RUL-MuChoMusic tasks, the
Perceptual Index, and audio conditions (noise, silence, random clip, reversed, none) for
audio language models.

Importing the package registers its harness models ``lalm``, ``lalm-vllm`` and ``lalm-api`` with
lm-eval's registry (lazily: by import path, nothing torch-heavy is imported), so
``lm_eval.simple_evaluate(model="lalm", ...)`` and ``get_model("lalm")`` work after
``import lm_eval_rul``.

Public names: :func:`register_models` (idempotent; the import already ran it),
:func:`task_manager` (the harness's ``TaskManager`` for the plugin's tasks, with
``--metadata``-style keys applied), :func:`tasks_dir` (the task YAML folder) and
``__version__``. See docs/python_api.md.
"""

from .registration import register_models, task_manager, tasks_dir

__version__ = "0.1.0"
__all__ = ["__version__", "register_models", "task_manager", "tasks_dir"]

register_models()
