"""Command-line values checked before anything loads: ``--metadata``, ``--model``, ``--device``.

Each mistake here used to surface as a traceback (bad JSON, an unknown model name, a
CUDA device on a machine without one) or not at all (a misspelt ``--metadata`` key was
silently ignored, so ``shufle_seed`` ran with the default seed). Each is now one
:class:`~lm_eval_rul.errors.UserInputError` line naming the value, the closest valid
ones and the fix.

The ``--metadata`` keys a run accepts are those of the task families it requests
(:func:`family_metadata_keys`: each family's module declares the keys it reads) plus the
harness's own (:data:`HARNESS_METADATA_KEYS`). A run that names a task of another
package is not checked: its keys are not known here.
"""

from __future__ import annotations

import difflib
import functools
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import UserInputError
from .data_keys import family_metadata_keys  # where each family's keys are listed

__all__ = [
    "HARNESS_METADATA_KEYS",
    "MetadataJSONError",
    "UnknownMetadataKeyError",
    "UnknownModelError",
    "DeviceUnavailableError",
    "family_metadata_keys",
    "check_metadata_json",
    "check_metadata_keys",
    "check_model_name",
    "check_device",
]

#: ``--metadata`` keys the harness itself reads (a task's ``metadata`` block).
HARNESS_METADATA_KEYS: tuple[str, ...] = ("version",)


class MetadataJSONError(UserInputError, ValueError):
    """``--metadata`` looks like a JSON object but is not valid JSON."""


class UnknownMetadataKeyError(UserInputError, ValueError):
    """``--metadata`` has a key no requested task reads (a typo, most often)."""


class UnknownModelError(UserInputError, ValueError):
    """``--model`` names no registered harness model."""


class DeviceUnavailableError(UserInputError, RuntimeError):
    """``--device`` names an accelerator this machine (or this torch build) does not have."""


def _closest(name: str, known: Iterable[str], n: int = 3) -> list[str]:
    return difflib.get_close_matches(name, sorted(set(known)), n=n, cutoff=0.6)


def check_metadata_json(argv: Sequence[str]) -> None:
    """A ``--metadata`` value that starts like a JSON object must be valid JSON.

    Checked on the raw command line, before argparse (the harness raises a bare
    ``ValueError`` with a traceback).

    Raises:
        MetadataJSONError: The value, the parser's complaint and its position.
    """
    for index, word in enumerate(argv[:-1]):
        if word != "--metadata":
            continue
        value = argv[index + 1]
        if not value.lstrip().startswith("{"):
            continue
        try:
            json.loads(value)
        except json.JSONDecodeError as error:
            hint = (
                " It looks single-quoted: JSON needs double quotes, e.g. "
                """--metadata '{"data_path": "RUL-MuchoMusic.json"}'."""
                if "'" in value
                else ""
            )
            pointer = value[max(0, error.pos - 15) : error.pos + 15]
            raise MetadataJSONError(
                f"--metadata {value!r} is not valid JSON: {error.msg} at character "
                f"{error.pos + 1} (near {pointer!r}).{hint} Or give key=value pairs: "
                "--metadata data_path=RUL-MuchoMusic.json"
            ) from None


@functools.lru_cache(maxsize=4)
def _plugin_index(tasks_dir: str) -> dict[str, Any]:
    from lm_eval.tasks import TaskManager

    from ..harness_compat import task_index

    return dict(task_index(TaskManager(include_path=tasks_dir, include_defaults=False)))


def _families(names: Sequence[str]) -> set[str] | None:
    """The plugin task folders of ``names``; None when one is not a plugin task."""
    from ..registration import tasks_dir

    root = tasks_dir()
    index = _plugin_index(str(root))
    families = family_metadata_keys()
    found: set[str] = set()
    for name in names:
        entry = index.get(name)
        path = getattr(entry, "yaml_path", None)
        if not isinstance(path, Path) or path.parent.parent != root:
            return None
        if path.parent.name not in families:
            return None
        found.add(path.parent.name)
    return found


def check_metadata_keys(metadata: Mapping[str, Any] | None, tasks: Any) -> None:
    """Every ``--metadata`` key is read by some requested task (or by the harness).

    Args:
        metadata: The user's ``--metadata`` (not yet merged with ``--model_args``).
        tasks: ``--tasks`` (a comma-separated string or a list of names).

    Raises:
        UnknownMetadataKeyError: The unknown keys, the closest known key of each and
            every key the requested tasks read.
    """
    if not metadata:
        return
    parts = [tasks] if isinstance(tasks, str) else [str(t) for t in tasks or []]
    names = [n.strip() for part in parts for n in part.split(",") if n.strip()]
    families = _families(names) if names else None
    if not families:
        return  # a task of another package: its keys are not known here
    known = sorted(
        {k for family in families for k in family_metadata_keys()[family]}
        | set(HARNESS_METADATA_KEYS)
    )
    unknown = [key for key in metadata if key not in known]
    if not unknown:
        return
    shown = []
    for key in unknown:
        close = _closest(key, known, n=1)
        shown.append(f"{key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    raise UnknownMetadataKeyError(
        f"unknown --metadata key{'s' if len(unknown) > 1 else ''} {', '.join(shown)} for "
        f"{', '.join(sorted(families))} tasks; nothing was loaded. Known keys: "
        f"{', '.join(known)}."
    )


def check_model_name(model: str | None) -> None:
    """``--model`` is a registered harness model (the plugin's included).

    Raises:
        UnknownModelError: The name, the closest registered names and where to list them.
    """
    if not model:
        return
    from lm_eval.api.registry import model_registry

    from ..registration import register_models

    register_models()
    known = list(model_registry.keys())
    if model in known:
        return
    close = _closest(model, known)
    hint = f" Closest: {', '.join(close)}." if close else ""
    raise UnknownModelError(
        f"--model {model!r} is not a registered model.{hint} Local checkpoints: --model hf "
        "(text) or --model lalm (audio LM); a served audio model: --model lalm-api. "
        f"Every name: {', '.join(sorted(known))}."
    )


def check_device(device: str | None) -> None:
    """A ``cuda`` / ``mps`` ``--device`` exists on this machine.

    Raises:
        DeviceUnavailableError: Which device is missing and ``--device cpu`` as the fix.
    """
    if not device:
        return
    kind = str(device).split(":")[0]
    if kind not in ("cuda", "mps"):
        return
    import torch

    if kind == "cuda":
        if not torch.cuda.is_available():
            why = (
                "this torch build has no CUDA support"
                if torch.version.cuda is None
                else "torch sees no CUDA GPU (driver or CUDA_VISIBLE_DEVICES?)"
            )
            raise DeviceUnavailableError(
                f"--device {device}: {why}. Run on the CPU with --device cpu (or leave "
                "--device out: the models use a GPU when torch sees one, else the CPU)."
            )
        index = str(device).partition(":")[2]
        if index.isdigit() and int(index) >= torch.cuda.device_count():
            raise DeviceUnavailableError(
                f"--device {device}: torch sees {torch.cuda.device_count()} CUDA GPU(s) "
                f"(cuda:0..cuda:{torch.cuda.device_count() - 1}). Pick one of them or "
                "--device cpu."
            )
    elif not torch.backends.mps.is_available():
        raise DeviceUnavailableError(
            f"--device {device}: Apple's MPS backend is not available here. Use --device cpu."
        )
