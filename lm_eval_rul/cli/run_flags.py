"""``run`` flags checked (or warned about) before anything loads: a run without
``--tasks``, lmms-eval's ``model=`` for the checkpoint, and plugin tasks run without
``--log_samples`` (``report`` needs their per-question results)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from ..adapters import adapter_named
from ..errors import UserInputError

__all__ = [
    "NoTasksError",
    "ModelKeyError",
    "MissingModelArgError",
    "check_tasks_given",
    "check_model_key",
    "check_required_model_args",
    "warn_unlogged",
]

logger = logging.getLogger("lm_eval_rul.cli.run")


class NoTasksError(UserInputError, ValueError):
    """``run`` without ``--tasks``."""


class ModelKeyError(UserInputError, ValueError):
    """``--model_args model=...`` (lmms-eval's name) for a model that reads ``pretrained``."""


class MissingModelArgError(UserInputError, ValueError):
    """``--model lalm`` without ``pretrained=`` (``lalm-api`` without ``base_url=``...)."""


def check_required_model_args(model: str | None, model_args: Mapping[str, Any]) -> None:
    """Raises :class:`MissingModelArgError` naming the first ``--model_args`` key a plugin
    model needs that is missing or empty (its adapter row's ``required_args``: the harness
    builds the output folder's name from them before any model check runs), before anything
    loads."""
    row = adapter_named(model)
    for key, example in row.required_args if row else ():
        if model_args.get(key) in (None, ""):
            given = ", ".join(sorted(model_args)) or "none"
            raise MissingModelArgError(
                f"--model {model} needs --model_args {key}= ({example}); the model_args given "
                f"name {given}. Nothing was loaded."
            )


def _names(tasks: Any) -> list[str]:
    parts = [tasks] if isinstance(tasks, str) else [t for t in tasks or [] if isinstance(t, str)]
    return [name.strip() for part in parts for name in part.split(",") if name.strip()]


def check_tasks_given(tasks: Any) -> None:
    """Raises :class:`NoTasksError` when ``--tasks`` names nothing."""
    if _names(tasks) or (tasks and not isinstance(tasks, str)):
        return
    raise NoTasksError(
        "lm-eval-rul run: no --tasks given; name what to run, e.g. --tasks music_mc --metadata "
        "'{\"mc_data_path\": \"my_bench.csv\"}' (your own file) or --tasks rul_muchomusic "
        "(`lm-eval-rul run --help` lists the plugin's tasks, `lm-eval-rul ls tasks` all)"
    )


def check_model_key(model: str | None, model_args: Mapping[str, Any], served: bool) -> None:
    """Raises :class:`ModelKeyError` for ``model=`` without ``pretrained=`` given to a local
    model (a served model's ``model=`` is its own argument)."""
    if served or "model" not in model_args or "pretrained" in model_args:
        return
    value = model_args["model"]
    raise ModelKeyError(
        f"--model_args model={value}: --model {model or 'hf'} names the checkpoint "
        f"pretrained= (model= is lmms-eval's name); give --model_args pretrained={value}"
    )


def warn_unlogged(tasks: Any, log_samples: bool, plugin_task: Any) -> bool:
    """Warn, at the start, that ``report`` will need the per-question results of the
    plugin's tasks a run without ``--log_samples`` does not keep; whether it warned.

    Args:
        tasks: ``--tasks``.
        log_samples: Whether ``--log_samples`` was given.
        plugin_task: ``(names) -> {name: folder or None}`` (the plugin's task folders).
    """
    if log_samples:
        return False
    names = _names(tasks)
    ours = sorted(name for name, folder in plugin_task(names).items() if folder) if names else []
    if not ours:
        return False
    logger.warning(
        "running %s without --log_samples: the run keeps no per-question results, which "
        "`lm-eval-rul report` needs (accuracy intervals, PI, perception gain); add "
        "--log_samples to report on this run",
        ", ".join(ours),
    )
    return True
