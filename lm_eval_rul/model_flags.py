"""The harness options a model's constructor also receives (``device``, ``batch_size``,
``max_batch_size``), given once: in ``--model_args`` or as their flags; and the dtype
arguments of any model (``hf``'s and the plugin's), spelt as torch names them.

Used by :func:`lm_eval_rul.create_lm` (``registration``) and by ``lm-eval-rul run`` (``cli``),
so it sits below both.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .errors import UserInputError

__all__ = [
    "MODEL_FLAGS", "FlagClashError", "settle_model_flags", "ModelArgValueError", "DTYPE_ARGS",
    "dtype_name", "with_dtype_names",
]


#: Harness options the harness also passes to the model's constructor, by their flags.
#: Named in ``model_args`` as well, the constructor gets them twice (``TypeError: got
#: multiple values for keyword argument 'device'``).
MODEL_FLAGS: dict[str, str] = {
    "device": "--device",
    "batch_size": "--batch_size",
    "max_batch_size": "--max_batch_size",
}


class FlagClashError(UserInputError, ValueError):
    """``model_args`` and a harness flag give one setting two different values."""


def settle_model_flags(
    model_args: Mapping[str, Any] | None,
    flags: Mapping[str, Any],
    *,
    option: str = "--model_args",
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(model_args, flags)`` with ``device``/``batch_size``/``max_batch_size`` given once.

    A setting named in ``model_args`` (``docs/models.md`` documents ``device=`` and
    ``batch_size=`` there) is moved to its flag when the flag was not given (``None``)
    or gives the same value; two different values are refused in one line.

    Args:
        model_args: The parsed ``--model_args``.
        flags: ``{name: value}`` of the flags, ``None`` for a flag not given.
        option: The option that gave ``model_args``, for the message.

    Raises:
        FlagClashError: the same setting with two values.
    """
    rest, chosen = dict(model_args or {}), dict(flags)
    for name, flag in MODEL_FLAGS.items():
        if name not in rest:
            continue
        value = rest.pop(name)
        given = chosen.get(name)
        if given is not None and str(given).strip() != str(value).strip():
            raise FlagClashError(
                f"{option} {name}={value} and {flag} {given} disagree: give the {name} once, "
                f"either as {flag} {value} or in {option}."
            )
        chosen[name] = value
    return rest, chosen


class ModelArgValueError(UserInputError, ValueError):
    """A ``model_args`` value no model can take (a dtype torch has no name for)."""


#: The ``model_args`` that name a torch dtype (the harness's ``HFLM`` reads each with
#: ``getattr(torch, value)``, so ``bf16`` was an ``AttributeError`` after the load began).
DTYPE_ARGS = ("dtype", "softmax_dtype", "mixed_precision_dtype", "bnb_4bit_compute_dtype")
#: Common spellings -> torch's names (``auto``: the checkpoint's own dtype).
_DTYPES = {
    "auto": "auto",
    "bfloat16": "bfloat16",
    "bf16": "bfloat16",
    "float16": "float16",
    "fp16": "float16",
    "half": "float16",
    "float32": "float32",
    "fp32": "float32",
    "float": "float32",
    "float64": "float64",
    "fp64": "float64",
    "double": "float64",
}


def dtype_name(name: str, value: Any) -> Any:
    """``value`` of the dtype argument ``name`` as torch names it, or one line listing the
    accepted spellings (a ``torch.dtype`` or ``None`` passes unchanged).

    >>> dtype_name("dtype", "bf16"), dtype_name("dtype", "torch.Half"), dtype_name("dtype", "fp32")
    ('bfloat16', 'float16', 'float32')
    """
    if value is None or not isinstance(value, str):
        return value
    key = value.strip().lower().removeprefix("torch.")
    if key in _DTYPES:
        return _DTYPES[key]
    spellings: dict[str, list[str]] = {}
    for spelling, canonical in _DTYPES.items():
        spellings.setdefault(canonical, []).append(spelling)
    shown = "; ".join(", ".join(names) for names in spellings.values())
    raise ModelArgValueError(f"{name}={value!r} is not a dtype; use one of: {shown}.")


def with_dtype_names(model_args: Mapping[str, Any], who: str) -> dict[str, Any]:
    """``model_args`` with each of :data:`DTYPE_ARGS` spelt as torch names it; a spelling
    torch has no name for is one line starting with ``who`` (the model, or its flag)."""
    out = dict(model_args)
    for name in DTYPE_ARGS:
        if name in out:
            try:
                out[name] = dtype_name(name, out[name])
            except ModelArgValueError as error:
                raise ModelArgValueError(f"{who}: {error}") from None
    return out
