"""``perceptual_index`` as a harness metric, registered where lm-eval looks metrics up.

The plugin's letter tasks compute ``perceptual_index`` in their ``process_results``; lm-eval
0.5 also resolves every ``metric_list`` name in its metric registry, and without this
registration logs "Metric 'perceptual_index' not found in registry" once per task.
"""

from __future__ import annotations

from typing import Any

from ..harness_compat import register_task_metric
from .scoring import perceptual_index

__all__ = ["perceptual_index_metric", "register_metrics"]


def perceptual_index_metric(references: int, predictions: Any, **_: Any) -> float:
    """``1 - p̂(gold)`` of one document, in lm-eval 0.5's metric signature.

    Args:
        references: The index of the correct choice.
        predictions: The choices' log-likelihoods (0.5's ``LLResults``, whose ``lls`` holds
            them, or the plain sequence).
    """
    logliks = getattr(predictions, "lls", predictions)
    return perceptual_index(list(logliks), int(references))


def register_metrics() -> bool:
    """Register ``perceptual_index`` (lower is better: the text alone points less to the
    answer) with the harness; idempotent. Returns whether this call registered it."""
    return register_task_metric(
        "perceptual_index",
        perceptual_index_metric,
        higher_is_better=False,
        output_type="multiple_choice",
    )
