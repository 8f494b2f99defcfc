"""lm-eval-rul: is your audio language model really listening?

An lm-evaluation-harness plugin with MuChoMusic / RUL-MuChoMusic tasks, the
Perceptual Index, and audio conditions (noise, silence, random clip, none) for
audio language models.
"""

from .registration import register_models, tasks_dir

__version__ = "0.1.0"
__all__ = ["__version__", "register_models", "tasks_dir"]
