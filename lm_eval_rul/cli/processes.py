"""Several processes (``torchrun``, ``accelerate launch``) on a machine without GPUs.

The harness's ``HFLM`` (and ``lalm``, which extends it) splits the documents across
processes only when it sees more than one GPU; without them every process scores every
document and prints its own table, all as "rank 0". So a launch of several processes
without GPUs stops before the model loads, in one line. The world is read as the
launchers set it: ``WORLD_SIZE`` (with ``RANK`` / ``LOCAL_RANK``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ..errors import UserInputError

__all__ = ["DataParallelError", "LaunchVariableError", "LAUNCH_VARIABLES", "check_processes"]

#: The variables launchers set and accelerate (and torch.distributed) read with ``int()``:
#: each, when set, is a whole number (``WORLD_SIZE`` and ``LOCAL_WORLD_SIZE`` at least 1).
LAUNCH_VARIABLES: dict[str, int] = {
    "WORLD_SIZE": 1,
    "LOCAL_WORLD_SIZE": 1,
    "RANK": 0,
    "LOCAL_RANK": 0,
}


class DataParallelError(UserInputError, RuntimeError):
    """Several processes were launched, but documents are split across GPUs only."""


class LaunchVariableError(UserInputError, ValueError):
    """A launcher variable (``WORLD_SIZE``...) set to something that is not a count."""


def _check_launch_variables() -> None:
    """Each launcher variable set in the environment reads as a whole number in range.

    A cluster script exporting an unset variable leaves ``WORLD_SIZE=""``; accelerate then
    fails with ``invalid literal for int()`` while the model is built.
    """
    for name, low in LAUNCH_VARIABLES.items():
        value = os.environ.get(name)
        if value is None:
            continue
        text = value.strip()
        if text.lstrip("-").isdigit() and int(text) >= low:
            continue
        raise LaunchVariableError(
            f"the environment variable {name}={value!r} is not a whole number "
            f"{'of processes, 1 or more' if low else '0 or more'} (a launcher sets it, e.g. "
            f"torchrun or accelerate launch). For one process, unset it (unset {name}) or "
            f"launch the run with the launcher that sets it."
        )


def _world_size() -> int:
    return int(os.environ.get("WORLD_SIZE", "1").strip())


def _gpus() -> int:
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def check_processes(model_args: Mapping[str, Any] | None = None) -> None:
    """Refuse a launch of several processes when there are fewer than two GPUs.

    ``tp_plan`` (tensor parallelism, where every rank runs the same loop by design) is left
    to transformers.

    Raises:
        LaunchVariableError: ``WORLD_SIZE``, ``RANK``... set to anything but a whole number.
        DataParallelError: ``WORLD_SIZE`` > 1 and fewer than two GPUs.
    """
    _check_launch_variables()
    world = _world_size()
    if world <= 1 or (model_args and model_args.get("tp_plan")):
        return
    gpus = _gpus()
    if gpus >= 2:
        return
    rank = os.environ.get("RANK", "?")
    raise DataParallelError(
        f"{world} processes were launched (WORLD_SIZE={world}, this is RANK={rank}), but "
        f"this machine has {gpus or 'no'} GPU{'' if gpus == 1 else 's'}: the harness splits "
        "documents across processes only on GPUs (one each), so every process would score "
        "every document. Run one process (lm-eval-rul run ... without torchrun / accelerate "
        "launch), or launch as many processes as GPUs on a machine with two or more."
    )
