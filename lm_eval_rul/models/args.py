"""``--model_args`` of the audio models: checked and converted before anything loads.

``lm-eval-rul run`` checks them (:func:`lm_eval_rul.models.lalm.check_model_args`) before
any data or model is loaded, and the model classes read their arguments through the same
:func:`validate_model_args`, so both say the same thing.
"""

from __future__ import annotations

import difflib
import inspect
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..audio import UnknownConditionError, condition_named, condition_names, condition_parameters
from ..audio.errors import AudioError
from ..errors import UserInputError
from ..model_flags import DTYPE_ARGS, ModelArgValueError, dtype_name

#: Keyword arguments lm-eval itself adds to every model's constructor.
_HARNESS_ARGS = ("batch_size", "max_batch_size", "device")


def use_cache_refusal(model: str) -> str:
    """Why an audio model refuses lm-eval's ``--use_cache`` (said before the model loads,
    and by the model itself when built another way)."""
    return (
        f"{model} does not support --use_cache: lm-eval keys cached responses by prompt text "
        f"only, so answers for another clip or audio condition would be reused. Run without "
        f"it: {model} keeps its own results cache, keyed by clip and setting (model_args "
        "results_cache=PATH|none), and resumes from it."
    )


class UnknownModelArgsError(UserInputError, TypeError):
    """``--model_args`` holds names the ``lalm`` model does not take."""


class LALMArgumentError(UserInputError, ValueError):
    """A ``--model_args`` value, harness option or task input ``lalm`` cannot use."""


class BadValueError(LALMArgumentError):
    """One ``model_args`` value a converter cannot read; the message names the value, and
    whoever reads it for an engine puts the engine's name first."""


_TRUE, _FALSE = ("true", "1", "yes", "on"), ("false", "0", "no", "off")


def _as_bool(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE or text in _FALSE:
        return text in _TRUE
    raise BadValueError(f"{name}={value!r} is not a boolean; use {name}=true or false.")


def _as_number(kind: Callable[[Any], Any], name: str, value: Any, optional: bool = False) -> Any:
    if value is None or (optional and str(value).strip().lower() in ("", "none")):
        if optional:
            return None
        raise BadValueError(f"{name} needs a value.")
    if isinstance(value, bool):  # True would pass as 1
        raise BadValueError(f"{name}={value!r} is not a number.")
    try:
        number = kind(value)
        if kind is int and isinstance(value, float) and number != value:
            raise ValueError
    except (TypeError, ValueError, OverflowError):  # int(float("inf")) overflows
        what = "an integer" if kind is int else "a number"
        raise BadValueError(
            f"{name}={value!r} is not {what}; e.g. --model_args pretrained=...,{name}="
            f"{'10' if kind is int else '10.0'}"
        ) from None
    return number


@dataclass(frozen=True)
class NumberRange:
    """The values a numeric ``model_args`` entry may take: a finite number of ``kind``
    from ``low`` (excluded when ``above``) to ``high``; ``unit`` words the messages."""

    kind: Callable[[Any], Any]
    low: float | None = None
    above: bool = False
    high: float | None = None
    optional: bool = False
    unit: str = ""
    hint: str = ""

    def read(self, name: str, value: Any) -> Any:
        """``value`` converted, or one line naming ``name``, the value and the range."""
        number = _as_number(self.kind, name, value, self.optional)
        if number is None:
            return None
        low_ok = self.low is None or (number > self.low if self.above else number >= self.low)
        if math.isfinite(number) and low_ok and (self.high is None or number <= self.high):
            return number
        raise BadValueError(f"{name}={value!r} must be {self.describe()}.{self.hint}")

    def describe(self) -> str:
        """The range in words: ``at least 1``, ``a finite number of seconds, above 0 and at
        most 3600``."""
        bounds = []
        if self.low is not None:
            bounds.append(f"above {self.low:g}" if self.above else f"at least {self.low:g}")
        if self.high is not None:
            bounds.append(f"at most {self.high:g}")
        if self.kind is int:
            return " and ".join(bounds) or "an integer"
        what = "a finite number" + (f" of {self.unit}" if self.unit else "")
        return ", ".join([what, " and ".join(bounds)]) if bounds else what


#: The numeric ``model_args`` entries every engine may take and the values each takes (NaN
#: and infinity are never taken: a NaN noise level or length reaches the model as a waveform
#: of NaN, an infinite length as an ``OverflowError`` deep in a run). An engine's own are
#: its class's ``ARG_RANGES``; the audio conditions' (``noise_std``...) are declared by
#: their conditions (:func:`number_range`).
NUMBER_RANGES: dict[str, NumberRange] = {
    "max_audio_seconds": NumberRange(
        float,
        0,
        True,
        optional=True,
        unit="seconds",
        hint=" Leave it out (or none) for the model's own limit: there is no unlimited window.",
    ),
    "max_batch_size": NumberRange(int, 1, optional=True),
    "max_length": NumberRange(int, 1, optional=True),
    "max_gen_toks": NumberRange(int, 1),
}
#: The boolean ``model_args`` every engine may take (an engine's own: ``BOOL_ARGS``).
BOOL_ARGS = ("chat_template", "prefix_cache", "trust_remote_code")


def number_range(name: str, model_class: type | None = None) -> NumberRange | None:
    """The values ``name`` takes: the engine's entry (its ``ARG_RANGES``), a common one,
    or a condition's parameter."""
    own = getattr(model_class, "ARG_RANGES", {})
    if name in own or name in NUMBER_RANGES:
        return own.get(name) or NUMBER_RANGES[name]
    parameter = condition_parameters().get(name)
    if parameter is None:
        return None
    return NumberRange(
        parameter.kind, parameter.low, parameter.above, parameter.high, unit=parameter.unit
    )


def _word(parameter: Any, name: str, value: Any) -> str:
    """A condition's word parameter (``excerpt_at``) read, or :class:`BadValueError` listing
    its words."""
    try:
        return parameter.read("", value)
    except AudioError as error:
        raise BadValueError(str(error)) from None


def _converter(name: str, model_class: type) -> Callable[[str, Any], Any] | None:
    """How the ``model_args`` value ``name`` is read for ``model_class`` (``None``: as
    given)."""
    if name in DTYPE_ARGS:
        return dtype_name
    if name in (*BOOL_ARGS, *getattr(model_class, "BOOL_ARGS", ())):
        return _as_bool
    if name in getattr(model_class, "NUMBER_ARGS", ()):  # any finite or not: checked later
        return lambda n, v: _as_number(model_class.NUMBER_ARGS[n], n, v)
    parameter = condition_parameters().get(name)
    if parameter is not None and parameter.choices:  # a word (excerpt_at)
        return lambda n, v: _word(parameter, n, v)
    rule = number_range(name, model_class)
    return None if rule is None else rule.read


def audio_condition(audio: Any) -> str:
    """The name of the condition ``audio=`` names (lm-eval parses ``none`` to ``None``).

    Raises:
        UnknownConditionError: ``audio=`` names no condition, or is empty (``audio=`` with
            no value is not ``none``: the message lists the conditions).
    """
    if isinstance(audio, str) and not audio.strip():
        raise UnknownConditionError(audio, condition_names())
    return condition_named(audio).name


def _batch_size(value: Any) -> int:
    if str(value).startswith("auto"):
        raise BadValueError("batch_size=auto is not supported; give an integer.")
    size = _as_number(int, "batch_size", value)
    if size < 1:
        raise BadValueError(f"batch_size={value!r} must be at least 1.")
    return size


def validate_model_args(model_args: Mapping[str, Any], model_class: type) -> dict[str, Any]:
    """Validate ``--model_args`` without loading anything; return them converted.

    Args:
        model_args: Names and values as the harness parsed them (strings, numbers, bools).
        model_class: The model whose constructor defines the accepted names (its
            ``MODEL_NAME`` starts the messages).

    Raises:
        UnknownModelArgsError: A name the model does not take (all of them named).
        UnknownConditionError: ``audio=`` names no condition.
        LALMArgumentError: A value of the wrong kind (e.g. ``noise_seconds=abc``).
    """
    who = model_class.MODEL_NAME
    supported = supported_args(model_class)
    unknown = sorted(set(model_args) - set(supported))
    if unknown:
        guesses = {name: _nearest(name, supported) for name in unknown}
        hint = ", ".join(
            f"{guess} (for {name})" if len(unknown) > 1 else guess
            for name, guess in guesses.items()
            if guess
        )
        raise UnknownModelArgsError(
            f"{who}: unknown model_args {', '.join(unknown)}."
            + (f" Did you mean {hint}?" if hint else "")
            + f" Supported: {', '.join(supported)}."
        )
    out = dict(model_args)
    for name, value in model_args.items():
        converter = _converter(name, model_class)
        if converter is not None:
            try:
                out[name] = converter(name, value)
            except (BadValueError, ModelArgValueError) as error:
                raise LALMArgumentError(f"{who}: {error}") from None
    if "audio" in out:
        out["audio"] = audio_condition(out["audio"])
    if "batch_size" in out:
        try:
            out["batch_size"] = _batch_size(out["batch_size"])
        except BadValueError as error:
            raise LALMArgumentError(f"{who}: {error}") from None
    if "pretrained" in out and not isinstance(out["pretrained"], str):
        raise LALMArgumentError(f"{who}: pretrained must be a Hub id or a local path (a string).")
    return out


def given_args(names: Mapping[str, Any], *, unchecked: tuple[str, ...] = ()) -> dict[str, Any]:
    """A constructor's arguments from its ``locals()``, ``**condition_args`` merged in (less
    ``unchecked``: those the harness passes and the engine ignores)."""
    skip = ("self", "__class__", "condition_args", *unchecked)
    named = {name: value for name, value in names.items() if name not in skip}
    return {**named, **names.get("condition_args", {})}


def _nearest(name: str, known: list[str]) -> str | None:
    """The supported name ``name`` most likely means: one it starts or ends with
    (``audio_condition`` -> ``audio``), else the closest spelling (``nosie_std``).

    >>> _nearest("audio_condition", ["audio", "max_audio_seconds"])
    'audio'
    >>> _nearest("nosie_std", ["noise_seconds", "noise_std"]), _nearest("xyz", ["audio"])
    ('noise_std', None)
    """
    parts = [k for k in known if name.startswith(f"{k}_") or name.endswith(f"_{k}")]
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    return max(parts, key=len) if parts else (close[0] if close else None)


def supported_args(model_class: type) -> list[str]:
    """The ``model_args`` names a model takes: its constructor's, the harness's own, and,
    for an audio model (``AUDIO_CONDITION_ARGS``), every condition's parameters."""
    names = [
        name
        for name, parameter in inspect.signature(model_class.__init__).parameters.items()
        if name != "self" and parameter.kind is not inspect.Parameter.VAR_KEYWORD
    ]
    if getattr(model_class, "AUDIO_CONDITION_ARGS", False):
        names += list(condition_parameters())
    return sorted(set(names) | set(_HARNESS_ARGS))
