"""Model names in the report: short, and never one name for two different checkpoints.

A run's model is named by the last part of its ``pretrained`` path (``x`` for
``../models/x``). Two different ``pretrained`` values ending alike (``../models/x`` and
``/data/models/x``, or two ``checkpoint-1000`` folders) get the fewest trailing path
parts that tell them apart (``../models/x`` and ``data/models/x``). ``--text-backbone``
accepts any of a model's names, and refuses one that several models answer to.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ..errors import UserInputError

#: :class:`lm_eval_rul.report.runs.Run` (imports this module's callers, not this module).
Run = Any

__all__ = [
    "distinct_names",
    "model_args_of",
    "name_models",
    "runs_named",
    "short_name",
    "AmbiguousModelError",
]


class AmbiguousModelError(UserInputError, ValueError):
    """A model name given on the command line matches several models' runs."""


def _parts(pretrained: str) -> list[str]:
    return pretrained.replace("\\", "/").rstrip("/").split("/")


def _tail(parts: list[str], k: int) -> str:
    return "/".join(parts[-k:]) or "/"


def distinct_names(pretrained: Iterable[str]) -> dict[str, str]:
    """``pretrained -> name``: the last path part, or the fewest trailing parts that no other
    ``pretrained`` of the same last part shares (the whole value when it is all suffix).

    >>> distinct_names(["../models/x", "/data/models/x", "Qwen/Qwen2-7B"])
    {'../models/x': '../models/x', '/data/models/x': 'data/models/x', 'Qwen/Qwen2-7B': 'Qwen2-7B'}
    >>> names = distinct_names(["/a/run/checkpoint-1000", "/b/run/checkpoint-1000"])
    >>> names["/b/run/checkpoint-1000"]
    'b/run/checkpoint-1000'
    """
    by_last: dict[str, list[str]] = defaultdict(list)
    for value in dict.fromkeys(pretrained):
        by_last[_parts(value)[-1] or value].append(value)
    names = {}
    for last, values in by_last.items():
        if len(values) == 1:
            names[values[0]] = last
            continue
        split = {value: _parts(value) for value in values}
        for value, parts in split.items():
            others = [p for v, p in split.items() if v != value]
            k = next(
                (
                    k
                    for k in range(1, len(parts) + 1)
                    if all(_tail(parts, k) != _tail(other, k) for other in others)
                ),
                len(parts),
            )
            names[value] = value if k == len(parts) else _tail(parts, k)
    return names


def name_models(runs: Sequence[Run]) -> None:
    """Set each run's :attr:`model` by :func:`distinct_names` of every run's ``pretrained``."""
    names = distinct_names(run.pretrained for run in runs)
    for run in runs:
        run.model = names[run.pretrained]


def _answers_to(run: Run, name: str) -> bool:
    """Whether ``name`` is the run's model name, its ``pretrained``, or a trailing part of it
    (``checkpoint-1000``, ``b/checkpoint-1000``)."""
    if name in (run.model, run.pretrained):
        return True
    parts, wanted = _parts(run.pretrained), _parts(name)
    return len(wanted) <= len(parts) and parts[-len(wanted) :] == wanted


def runs_named(runs: Sequence[Run], name: str, *, option: str) -> list[Run]:
    """The runs of the one model that ``name`` names (empty when none does).

    Raises:
        AmbiguousModelError: ``name`` answers to several models (listed with their
            distinguishing names and paths).
    """
    found = [run for run in runs if _answers_to(run, name)]
    exact = [run for run in found if name in (run.model, run.pretrained)]
    found = exact or found
    models = dict.fromkeys(run.pretrained for run in found)
    if len(models) > 1:
        named = {run.pretrained: run.model for run in found}
        listed = ", ".join(f"{named[p]} ({p})" for p in models)
        raise AmbiguousModelError(
            f"{option} {name!r} matches {len(models)} models: {listed}; give one of their "
            "names as shown"
        )
    return found


def model_args_of(config: dict[str, Any]) -> dict[str, Any]:
    """A results config's ``model_args`` as a dict (the harness writes a dict or a string)."""
    args = config.get("model_args") or {}
    if isinstance(args, dict):
        return dict(args)
    parsed: dict[str, Any] = {}
    for part in str(args).split(","):
        if "=" in part:
            key, value = part.split("=", 1)
            parsed[key.strip()] = value.strip()
    return parsed


def short_name(pretrained: str) -> str:
    """The last part of a local ``pretrained`` path; a hub id as it is."""
    if pretrained.startswith(("/", ".", "~")) or Path(pretrained).exists():
        return Path(pretrained.rstrip("/")).name or pretrained
    return pretrained
