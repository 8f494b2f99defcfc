"""The options shared by ``pi`` and ``build``: the harness model (same meaning as in
``lm_eval``) and the base seed."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from ..errors import UserInputError


def add_harness_model_arguments(group: argparse._ActionsContainer) -> None:
    """``--model``, ``--model_args``, ``--device`` and ``--batch_size``."""
    group.add_argument("--model", default="hf", help="Harness model name (default: hf)")
    group.add_argument("--model_args", default="", help="Harness model_args, k=v,k=v")
    group.add_argument("--device", default=None, help="Harness --device (e.g. cuda:0, cpu)")
    group.add_argument(
        "--batch_size", default=None, help="Harness --batch_size (int or auto; default 1)"
    )


#: What ``--help`` shows as the seed's default (``--help`` stays instant: the questions
#: package is imported only when a command runs; a test checks the two agree).
DEFAULT_SEED_HELP = "1234, lm_eval_rul.questions.DEFAULT_SEED"


def add_seed_argument(parser: argparse._ActionsContainer, what: str) -> None:
    """``--seed``, by default :data:`lm_eval_rul.questions.DEFAULT_SEED` (:func:`seed_of`)."""
    parser.add_argument(
        "--seed", type=int, default=None, help=f"Base seed of {what} (default: {DEFAULT_SEED_HELP})"
    )


def seed_of(args: argparse.Namespace) -> int:
    """``--seed``, or :data:`lm_eval_rul.questions.DEFAULT_SEED` when it was not given."""
    from ..questions import DEFAULT_SEED

    return DEFAULT_SEED if args.seed is None else int(args.seed)


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
