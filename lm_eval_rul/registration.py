"""Make the plugin's tasks and models known to lm-evaluation-harness."""

from __future__ import annotations

from pathlib import Path

__all__ = ["tasks_dir", "register_models", "MODELS"]

#: Model name -> lazy import target, registered without importing torch-heavy code.
MODELS: dict[str, str] = {"lalm": "lm_eval_rul.models.lalm:LALM"}


def tasks_dir() -> Path:
    """The folder holding the plugin's task YAMLs (inside the wheel, or the repo's ``tasks/``)."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "tasks", here.parent / "tasks"):
        if (candidate / "rul_muchomusic").is_dir():
            return candidate
    raise FileNotFoundError(
        f"lm-eval-rul task folder not found next to {here}; reinstall the package "
        "(pip install --force-reinstall lm-eval-rul)."
    )


def register_models() -> None:
    """Register the plugin's models with the harness registry (idempotent, lazy)."""
    import lm_eval.models  # noqa: F401  - fills the built-in registry first
    from lm_eval.api.registry import model_registry

    for name, target in MODELS.items():
        if name not in model_registry:
            model_registry.register(name, target=target)
