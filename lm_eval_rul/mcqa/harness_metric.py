"""The plugin's task metrics registered where lm-eval looks metrics up.

The plugin's tasks compute their metrics in their ``process_results``; lm-eval 0.5 also
resolves every ``metric_list`` name in its metric registry, and without a registration
logs "Metric 'NAME' not found in registry" once per task. ``perceptual_index`` gets its
function; every other name any plugin task file lists (``parse_failure``, the factual
tasks' ``micro_f1``...: :func:`task_file_metrics`) a placeholder that is never called.
"""

from __future__ import annotations

from typing import Any

from ..catalogue import tasks_dir
from ..harness_compat import register_process_results_metrics, register_task_metric
from ..included import read_task_yaml
from .scoring import perceptual_index

__all__ = ["perceptual_index_metric", "register_metrics", "task_file_metrics"]


def perceptual_index_metric(references: int, predictions: Any, **_: Any) -> float:
    """``1 - p̂(gold)`` of one document, in lm-eval 0.5's metric signature.

    Args:
        references: The index of the correct choice.
        predictions: The choices' log-likelihoods (0.5's ``LLResults``, whose ``lls`` holds
            them, or the plain sequence).
    """
    logliks = getattr(predictions, "lls", predictions)
    return perceptual_index(list(logliks), int(references))


def task_file_metrics() -> dict[str, bool]:
    """Metric name -> higher is better, of every ``metric_list`` in the plugin's task
    files (YAMLs and their ``_template_yaml`` files)."""
    found: dict[str, bool] = {}
    for path in sorted(tasks_dir().glob("*/*yaml")):
        for entry in (read_task_yaml(path) or {}).get("metric_list") or []:
            if isinstance(entry, dict) and isinstance(entry.get("metric"), str):
                found.setdefault(entry["metric"], bool(entry.get("higher_is_better", True)))
    return found


def register_metrics() -> bool:
    """Register ``perceptual_index`` (lower is better: the text alone points less to the
    answer) with the harness, and on lm-eval 0.5 every other metric the plugin's tasks list
    (:func:`task_file_metrics`); idempotent. Returns whether this call registered
    ``perceptual_index``."""
    registered = register_task_metric(
        "perceptual_index",
        perceptual_index_metric,
        higher_is_better=False,
        output_type="multiple_choice",
    )
    register_process_results_metrics(task_file_metrics())
    return registered
