"""``--model_args`` of the audio models: checked and converted before anything loads.

``lm-eval-rul run`` checks them (:func:`lm_eval_rul.models.lalm.check_model_args`) before
any data or model is loaded, and the model classes read their arguments through the same
:func:`validate_model_args`, so both say the same thing.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable, Mapping
from typing import Any

from ..audio import condition_named
from ..errors import UserInputError

__all__ = [
    "UnknownModelArgsError",
    "LALMArgumentError",
    "validate_model_args",
    "supported_args",
    "audio_condition",
    "USE_CACHE_REFUSAL",
]

#: Keyword arguments lm-eval itself adds to every model's constructor.
_HARNESS_ARGS = ("batch_size", "max_batch_size", "device")


#: Why ``lalm`` refuses lm-eval's ``--use_cache`` (said before the model loads, and by the
#: model itself when built another way).
USE_CACHE_REFUSAL = (
    "lalm does not support --use_cache: lm-eval keys cached responses by prompt text only, "
    "so answers for another clip or audio condition would be reused. Run without it: lalm "
    "keeps its own results cache, keyed by clip and setting (model_args "
    "results_cache=PATH|none), and resumes from it."
)


class UnknownModelArgsError(UserInputError, TypeError):
    """``--model_args`` holds names the ``lalm`` model does not take."""


class LALMArgumentError(UserInputError, ValueError):
    """A ``--model_args`` value, harness option or task input ``lalm`` cannot use."""


_TRUE, _FALSE = ("true", "1", "yes", "on"), ("false", "0", "no", "off")


def _as_bool(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE or text in _FALSE:
        return text in _TRUE
    raise LALMArgumentError(f"lalm: {name}={value!r} is not a boolean; use {name}=true or false.")


def _as_number(kind: Callable[[Any], Any], name: str, value: Any, optional: bool = False) -> Any:
    if value is None or (optional and str(value).strip().lower() in ("", "none")):
        if optional:
            return None
        raise LALMArgumentError(f"lalm: {name} needs a value.")
    if isinstance(value, bool):  # True would pass as 1
        raise LALMArgumentError(f"lalm: {name}={value!r} is not a number.")
    try:
        number = kind(value)
        if kind is int and isinstance(value, float) and number != value:
            raise ValueError
    except (TypeError, ValueError):
        what = "an integer" if kind is int else "a number"
        raise LALMArgumentError(
            f"lalm: {name}={value!r} is not {what}; e.g. --model_args pretrained=...,{name}="
            f"{'10' if kind is int else '10.0'}"
        ) from None
    return number


#: How each ``model_args`` value is read (name -> converter of (name, value)).
_CONVERTERS: dict[str, Callable[[str, Any], Any]] = {
    "noise_seconds": lambda n, v: _as_number(float, n, v),
    "noise_std": lambda n, v: _as_number(float, n, v),
    "seed": lambda n, v: _as_number(int, n, v),
    "max_audio_seconds": lambda n, v: _as_number(float, n, v, optional=True),
    "max_batch_size": lambda n, v: _as_number(int, n, v, optional=True),
    "max_length": lambda n, v: _as_number(int, n, v, optional=True),
    "max_gen_toks": lambda n, v: _as_number(int, n, v),
    "chat_template": _as_bool,
    "prefix_cache": _as_bool,
    "trust_remote_code": _as_bool,
    "parallelize": _as_bool,
    # lalm-api (lm_eval_rul.models.api)
    "sampling_rate": lambda n, v: _as_number(int, n, v),
    "top_logprobs": lambda n, v: _as_number(int, n, v),
    "num_concurrent": lambda n, v: _as_number(int, n, v),
    "max_retries": lambda n, v: _as_number(int, n, v),
    "retry_backoff": lambda n, v: _as_number(float, n, v),
    "timeout": lambda n, v: _as_number(float, n, v),
    "verify_certificate": _as_bool,
    "chunked": _as_bool,
    # lalm-vllm (lm_eval_rul.models.lalm_vllm)
    "tensor_parallel_size": lambda n, v: _as_number(int, n, v),
    "data_parallel_size": lambda n, v: _as_number(int, n, v),
    "gpu_memory_utilization": lambda n, v: _as_number(float, n, v),
    "max_model_len": lambda n, v: _as_number(int, n, v, optional=True),
    "enforce_eager": _as_bool,
    "block_size": lambda n, v: _as_number(int, n, v, optional=True),
}



def audio_condition(audio: Any) -> str:
    """The name of the condition ``audio=`` names (lm-eval parses ``none`` to ``None``)."""
    return condition_named(audio).name


def _batch_size(value: Any) -> int:
    if str(value).startswith("auto"):
        raise LALMArgumentError("lalm: batch_size=auto is not supported; give an integer.")
    size = _as_number(int, "batch_size", value)
    if size < 1:
        raise LALMArgumentError(f"lalm: batch_size={value!r} must be at least 1.")
    return size


def validate_model_args(model_args: Mapping[str, Any], model_class: type) -> dict[str, Any]:
    """Validate ``--model_args`` without loading anything; return them converted.

    Args:
        model_args: Names and values as the harness parsed them (strings, numbers, bools).
        model_class: The model whose constructor defines the accepted names (its
            ``MODEL_NAME`` attribute, default ``lalm``, starts the messages).

    Raises:
        UnknownModelArgsError: A name the model does not take (all of them named).
        UnknownConditionError: ``audio=`` names no condition.
        LALMArgumentError: A value of the wrong kind (e.g. ``noise_seconds=abc``).
    """
    who = getattr(model_class, "MODEL_NAME", "lalm")
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
        if name in _CONVERTERS:
            try:
                out[name] = _CONVERTERS[name](name, value)
            except LALMArgumentError as error:  # the converters speak for lalm
                raise LALMArgumentError(str(error).replace("lalm:", f"{who}:", 1)) from None
    if "audio" in out:
        out["audio"] = audio_condition(out["audio"])
    if "batch_size" in out:
        out["batch_size"] = _batch_size(out["batch_size"])
    if "pretrained" in out and not isinstance(out["pretrained"], str):
        raise LALMArgumentError("lalm: pretrained must be a Hub id or a local path (a string).")
    return out


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
    """The ``model_args`` names a model takes: its constructor's, plus the harness's own."""
    names = [
        name
        for name, parameter in inspect.signature(model_class.__init__).parameters.items()
        if name != "self" and parameter.kind is not inspect.Parameter.VAR_KEYWORD
    ]
    return sorted(set(names) | set(_HARNESS_ARGS))
