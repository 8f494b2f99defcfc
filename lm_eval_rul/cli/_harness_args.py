"""The options shared by ``pi`` and ``build``: the harness model (same meaning as in
``lm_eval``) and the base seed."""

from __future__ import annotations

import argparse


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
