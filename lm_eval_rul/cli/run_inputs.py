"""Command-line values checked before anything loads: ``--metadata``, ``--model``, ``--device``.

Each mistake here used to surface as a traceback (bad JSON, an unknown model name, a
CUDA device on a machine without one) or not at all (a misspelt ``--metadata`` key was
silently ignored, so ``shufle_seed`` ran with the default seed). Each is now one
:class:`~lm_eval_rul.errors.UserInputError` line naming the value, the closest valid
ones and the fix.

The ``--metadata`` keys a run accepts are those of the task families it requests
(:func:`family_metadata_keys`: each benchmark's catalogue entry declares the keys it reads,
:mod:`lm_eval_rul.catalogue`) plus the harness's own (:data:`HARNESS_METADATA_KEYS`). A
run that names a task of another package is not checked: its keys are not known here. A
bare ``protocol`` is refused when two requested families each have their own protocol key
(``mmau_protocol``, ``factual_protocol``...): it would mean two things.
"""

from __future__ import annotations

import difflib
import functools
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..catalogue import unknown_keys_text
from ..data_keys import family_metadata_keys  # where each family's keys are listed
from ..errors import UserInputError

__all__ = [
    "HARNESS_METADATA_KEYS",
    "MetadataJSONError",
    "UnknownMetadataKeyError",
    "AmbiguousProtocolError",
    "UnknownModelError",
    "DeviceUnavailableError",
    "family_metadata_keys",
    "task_folders",
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


class AmbiguousProtocolError(UserInputError, ValueError):
    """A bare ``--metadata protocol`` in a run of several families with their own protocol."""


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


def task_folders(names: Sequence[str]) -> dict[str, str | None]:
    """Task or group name -> the plugin task folder (``tasks/<folder>``) its YAML is in;
    None for a name of another package or of a ``--include_path`` folder.

    A task belongs to the benchmark of its folder, never to one its name looks like.
    """
    from ..catalogue import tasks_dir

    root = tasks_dir()
    index = _plugin_index(str(root))
    found: dict[str, str | None] = {}
    for name in names:
        path = getattr(index.get(name), "yaml_path", None)
        inside = isinstance(path, Path) and path.parent.parent == root
        found[name] = path.parent.name if inside else None
    return found


def _with_members(names: Sequence[str]) -> list[str]:
    """``names`` and every task of each group among them, nested groups included: a group's
    members may live in other task folders than its own (``music_understanding``, in
    ``music_tagging``, runs ``rul_muchomusic``), and each reads its own folder's keys."""
    from ..catalogue import tasks_dir

    index = _plugin_index(str(tasks_dir()))
    seen: list[str] = []
    todo = list(names)
    while todo:
        name = todo.pop(0)
        if name in seen:
            continue
        seen.append(name)
        members = (getattr(index.get(name), "cfg", None) or {}).get("task")
        if isinstance(members, str):
            members = [members]
        if str(getattr(index.get(name), "kind", "")).upper().endswith("GROUP") and members:
            todo += [m for m in members if isinstance(m, str)]
    return seen


def _families(names: Sequence[str]) -> set[str] | None:
    """The plugin task folders of ``names`` and of their groups' members; None when one is
    not a plugin task."""
    folders = task_folders(_with_members(names))
    known = family_metadata_keys()
    if any(folder not in known for folder in folders.values()):
        return None
    return {str(folder) for folder in folders.values()}


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
    if unknown:
        raise UnknownMetadataKeyError(
            f"unknown --metadata key{'s' if len(unknown) > 1 else ''} "
            f"{unknown_keys_text(unknown, known)} for {', '.join(sorted(families))} tasks; "
            f"nothing was loaded. Known keys: {', '.join(known)}."
        )
    _check_protocol_key(metadata, families)


def _check_protocol_key(metadata: Mapping[str, Any], families: set[str]) -> None:
    """A bare ``protocol`` names one family's protocol only when one such family runs."""
    from ..catalogue import protocol_keys

    own = {folder: key for folder, key in protocol_keys().items() if folder in families}
    if "protocol" not in metadata or len(own) < 2:
        return
    raise AmbiguousProtocolError(
        f"--metadata protocol={metadata['protocol']!r} is ambiguous in a run of "
        f"{' and '.join(sorted(own))} tasks: give each family its own key, "
        f"{', '.join(f'{key}=...' for _, key in sorted(own.items()))}."
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
