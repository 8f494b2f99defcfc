"""The harness model options shared by ``pi`` and ``build`` (same meaning as in ``lm_eval``)."""

from __future__ import annotations

import argparse


def add_harness_model_arguments(group: argparse._ActionsContainer) -> None:
    """``--model``, ``--model_args``, ``--device`` and ``--batch_size``."""
    group.add_argument("--model", default="hf", help="Harness model name (default: hf)")
    group.add_argument("--model_args", default="", help="Harness model_args, k=v,k=v")
    group.add_argument("--device", default=None, help="Harness --device (e.g. cuda:0, cpu)")
    group.add_argument("--batch_size", default="1", help="Harness --batch_size (int or auto)")
