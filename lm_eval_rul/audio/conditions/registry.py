"""The audio conditions as objects: one :class:`Condition` subclass per condition, one registry.

A condition decides, for one document, what the model hears instead of (or as) its clip.
Each subclass declares every fact the rest of the package asks about it, so that no module
compares condition names:

* ``name``: the value of ``audio=`` (``--model_args``), also written to the results'
  ``config`` (``audio_condition``), the logs and the report;
* ``description``: one line, for ``--help``-style listings, docs and the report;
* ``reads``: what it needs besides the spec: :data:`NOTHING` (synthetic audio, no files),
  :data:`OWN_CLIP` (the document's own clip) or :data:`CLIP_POOL` (another clip of the
  benchmark's pool); the pre-flight clip checks, the missing-audio checks and the factual
  tasks' windows follow it;
* ``audio_slot``: whether the prompt has an audio slot at all (``none``: no);
* ``synthetic_length``: the waveform's length is ``noise_seconds`` (noise, silence);
* ``alters_clip``: the document's own clip is not heard as it is (``audio_replaced`` of
  the logged samples names it);
* ``report_order`` and ``colour``: where and how the report shows it;
* :meth:`Condition.key`: the key of what is heard, without reading any audio (requests are
  grouped by it, and it keys the resume caches: keys of existing conditions never change);
* :meth:`Condition.waveform`: the waveform of a key (mono float32, read-only);
* :meth:`Condition.describe`: a key in words (``audio_heard`` of the logged samples);
* ``parameters``: the :class:`Parameter` entries it reads from ``--model_args``
  (``noise`` reads ``seed``, ``noise_seconds`` and ``noise_std``); every audio model takes
  them (:func:`condition_parameters`), checks them before anything loads, records them in
  its results and keys its caches with them: a new parameter is declared by its condition
  and nowhere else;
* :meth:`Condition.check_spec`: a warning about the settings the user gave (default: none);
* :meth:`Condition.window`: the stretch of the document's own file a key plays, in
  seconds, when the condition cuts one (``excerpt``; logged as ``audio_window``).

A new condition is one subclass decorated with :func:`register_condition` in a module the
package :mod:`lm_eval_rul.audio.conditions` imports (see :mod:`.reversed_clip`, the example).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..errors import AudioError, UnknownConditionError

#: The type of the ``spec`` arguments: :class:`~.spec.AudioSpec` (which imports this module,
#: so it is not imported here).
AudioSpec = Any
__all__ = [
    "NOTHING",
    "OWN_CLIP",
    "CLIP_POOL",
    "READS",
    "REFERENCE_CONDITION",
    "Parameter",
    "condition_parameters",
    "Condition",
    "register_condition",
    "registered_conditions",
    "condition_names",
    "condition_named",
    "condition_of_key",
]

#: ``reads``: synthetic audio, no file.
NOTHING = "nothing"
#: ``reads``: the document's own clip.
OWN_CLIP = "own clip"
#: ``reads``: another clip of the benchmark's pool (or the one the task chose).
CLIP_POOL = "clip pool"
READS: tuple[str, ...] = (NOTHING, OWN_CLIP, CLIP_POOL)
#: The condition every other one is compared with (the report's perception gains).
REFERENCE_CONDITION = "original"

_REGISTRY: dict[str, Condition] = {}
#: Key kinds that are not a condition's name (several clips; a text task).
_COMPOSITE_KINDS = ("clips", "text")


@dataclass(frozen=True)
class Parameter:
    """A ``--model_args`` entry a condition reads: a finite number of ``kind``, or one of
    ``choices`` (a word: ``excerpt_at``).

    Attributes:
        name: The ``model_args`` name (also ``audio_<name>`` in the results' ``config``).
        kind: ``int`` or ``float``.
        default: Its value when the user gives none.
        low: The lowest value (excluded when ``above``); ``None``: no bound.
        above: ``low`` itself is refused.
        high: The highest value; ``None``: no bound.
        unit: Words the messages use (``seconds``).
        doc: One line for the docs and the constructors' ``Args:``.
        recorded: Written to every run's results and cache scope whatever the condition
            (``seed``, ``noise_seconds``, ``noise_std``: as every release before the
            conditions declared them did, so no key changes). Any other parameter is
            recorded only under the conditions that read it.
        choices: The words it takes (``kind`` is ``str``); empty for a number.
    """

    name: str
    kind: type
    default: Any
    low: float | None = None
    above: bool = False
    high: float | None = None
    unit: str = ""
    doc: str = ""
    recorded: bool = False
    choices: tuple[str, ...] = ()

    def read(self, who: str, value: Any) -> str:
        """``value`` of a word parameter, or one line naming it and the words it takes
        (``who`` prefixes the line: ``lalm: excerpt_at='x' ...``)."""
        word = str(value).strip().lower() if value is not None else ""
        if word not in self.choices:
            raise AudioError(
                f"{f'{who}: ' if who else ''}{self.name}={value!r} must be one of: "
                f"{', '.join(self.choices)}"
            )
        return word

    def check(self, value: Any) -> None:
        """Refuse a value out of range (:class:`~lm_eval_rul.errors.AudioError`), for
        specs built without the model's ``model_args`` checks."""
        if self.choices:
            self.read("audio", value)
            return
        if self.low is not None and (value <= self.low if self.above else value < self.low):
            bound = "positive" if self.above and self.low == 0 else f">= {self.low:g}"
            raise AudioError(f"{self.name} must be {bound}, got {value!r}")
        if isinstance(value, float) and not math.isfinite(value):
            raise AudioError(f"{self.name} must be finite, got {value!r}")


class Condition(ABC):
    """One audio condition (see the module doc for each field; a subclass that does not
    define ``key``, ``waveform`` and ``describe`` cannot be instantiated)."""

    name: ClassVar[str]
    description: ClassVar[str]
    reads: ClassVar[str]
    audio_slot: ClassVar[bool] = True
    synthetic_length: ClassVar[bool] = False
    alters_clip: ClassVar[bool] = True
    report_order: ClassVar[int]
    colour: ClassVar[str]
    #: The first element of this condition's keys (``clip`` is shared by the conditions
    #: that play a file as it is, so a clip's key is the same under ``original`` and
    #: ``random``). Defaults to ``name``.
    key_kind: ClassVar[str]
    #: The ``model_args`` it reads (a name two conditions read is one same entry).
    parameters: ClassVar[tuple[Parameter, ...]] = ()

    @abstractmethod
    def key(self, doc: Mapping[str, Any], spec: AudioSpec) -> Hashable:
        """The key of what ``doc`` hears under ``spec``; reads no audio."""

    @abstractmethod
    def waveform(
        self, key: tuple[Any, ...], doc: Mapping[str, Any], spec: AudioSpec
    ) -> np.ndarray | None:
        """The mono float32 waveform of ``key`` (``None``: no audio)."""

    @abstractmethod
    def describe(self, key: tuple[Any, ...]) -> str:
        """``key`` in words."""

    def check_spec(self, spec: AudioSpec) -> None:  # noqa: B027 - a hook, no-op by default
        """Warn about settings that do not do what they say (called once per spec)."""

    def window(self, key: tuple[Any, ...]) -> tuple[float, float] | None:
        """``[start_s, end_s]`` of the document's own file that ``key`` plays, when the
        condition cuts the clip itself (``excerpt``); None (the default) otherwise."""
        return None

    def __repr__(self) -> str:
        return f"<audio condition {self.name!r}>"


def register_condition(cls: type[Condition]) -> type[Condition]:
    """Class decorator: register one instance of ``cls`` under ``cls.name``.

    Raises:
        TypeError: The class leaves a field undeclared, or its name, order or colour is
            already another condition's.
    """
    missing = [
        field
        for field in ("name", "description", "reads", "report_order", "colour")
        if not hasattr(cls, field)
    ]
    missing += [
        method
        for method in ("key", "waveform", "describe")
        if getattr(cls, method) is getattr(Condition, method)
    ]
    if missing:
        raise TypeError(f"audio condition {cls.__name__} does not declare {', '.join(missing)}")
    if cls.reads not in READS:
        raise TypeError(f"audio condition {cls.name}: reads={cls.reads!r} is not one of {READS}")
    if not hasattr(cls, "key_kind"):
        cls.key_kind = cls.name
    for other in _REGISTRY.values():
        for field in ("name", "report_order", "colour"):
            if getattr(other, field) == getattr(cls, field) and other.name != cls.name:
                raise TypeError(
                    f"audio condition {cls.name}: {field} {getattr(cls, field)!r} is already "
                    f"{other.name}'s"
                )
    known = condition_parameters()
    for parameter in cls.parameters:
        if parameter.name in known and known[parameter.name] != parameter:
            raise TypeError(
                f"audio condition {cls.name}: parameter {parameter.name!r} is declared "
                "differently by another condition (share the one Parameter)"
            )
    _REGISTRY[cls.name] = cls()
    return cls


def condition_parameters() -> dict[str, Parameter]:
    """Every registered condition's parameters by name, in report order."""
    found: dict[str, Parameter] = {}
    for condition in registered_conditions():
        for parameter in condition.parameters:
            found.setdefault(parameter.name, parameter)
    return found


def registered_conditions() -> list[Condition]:
    """Every registered condition, in report order."""
    return sorted(_REGISTRY.values(), key=lambda c: c.report_order)


def condition_names() -> tuple[str, ...]:
    """The names ``audio=`` accepts, in report order."""
    return tuple(c.name for c in registered_conditions())


def condition_named(value: Any) -> Condition:
    """The condition ``audio=value`` names (``None``, empty or ``"None"``: ``none``, as
    lm-eval parses the string ``none`` in ``model_args`` to ``None``).

    Raises:
        UnknownConditionError: ``value`` names no condition (the message lists them).
    """
    name = "none" if value is None or str(value).strip() in ("", "None") else str(value)
    if name not in _REGISTRY:
        raise UnknownConditionError(value, condition_names())
    return _REGISTRY[name]


def condition_of_key(key: tuple[Any, ...]) -> Condition | None:
    """The condition that describes ``key`` (``None`` for a composite key: several clips,
    a text task)."""
    if key[0] in _COMPOSITE_KINDS:
        return None
    for condition in _REGISTRY.values():
        if condition.key_kind == key[0]:
            return condition
    raise KeyError(f"no audio condition makes keys of kind {key[0]!r}")
