"""The harness options a model's constructor also receives (``device``, ``batch_size``,
``max_batch_size``), given once: in ``--model_args`` or as their flags.

Used by :func:`lm_eval_rul.create_lm` (``registration``) and by ``lm-eval-rul run`` (``cli``),
so it sits below both.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .errors import UserInputError

__all__ = ["MODEL_FLAGS", "FlagClashError", "settle_model_flags"]


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
