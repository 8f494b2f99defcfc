"""Do a task's logged samples give the figures its results file printed?

A samples file swapped for another run's (or edited) scores other answers than the
results say. :func:`logged_mismatches` recomputes, for every task of every family, each
printed figure whose aggregation the report can redo from the per-sample values: a
``mean`` (``acc``, ``parse_failure``...) and the tagging figures' own aggregations
(:data:`lm_eval_rul.tagging.tasks.AGGREGATIONS`, recorded under their ``repr``). The
report names each figure that differs ("the samples may come from another run").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["Mismatch", "logged_mismatches", "mismatch_note"]

#: (metric, filter, printed, from the samples)
Mismatch = tuple[str, str, float, float]
#: Figures averaged by the harness when the results record no ``metric_list`` (its
#: defaults for multiple-choice and generation tasks).
_DEFAULT_MEANS = ("acc", "acc_norm", "exact_match")


def _aggregations(task_config: Mapping[str, Any]) -> dict[str, Callable | str]:
    """Metric -> ``"mean"`` or the plugin aggregation its recorded text names."""
    from ..tagging.tasks import AGGREGATIONS

    by_repr = {repr(aggregation): aggregation for aggregation in AGGREGATIONS.values()}
    listed = task_config.get("metric_list")
    if not isinstance(listed, list):
        return dict.fromkeys(_DEFAULT_MEANS, "mean")
    found: dict[str, Callable | str] = {}
    for entry in listed:
        if not isinstance(entry, Mapping) or not isinstance(entry.get("metric"), str):
            continue
        aggregation = str(entry.get("aggregation", "")).strip()
        if aggregation == "mean":
            found[entry["metric"]] = "mean"
        elif aggregation in by_repr:
            found[entry["metric"]] = by_repr[aggregation]
    return found


def _number(value: Any) -> float | None:
    if isinstance(value, bool | int | float):
        return float(value)
    return None


def _redone(aggregation: Callable | str, values: Sequence[Any]) -> float | None:
    """The figure from the per-sample values; None when it cannot be redone."""
    if aggregation == "mean":
        numbers = [_number(v) for v in values]
        if not numbers or any(n is None for n in numbers):
            return None
        return math.fsum(numbers) / len(numbers)  # type: ignore[arg-type]
    if not all(isinstance(v, Mapping) for v in values):
        return None
    try:
        return float(aggregation(list(values)))  # type: ignore[operator]
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return None


def logged_mismatches(
    printed: Mapping[str, Any], task_config: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]
) -> list[Mismatch]:
    """The printed figures of one task (its ``results`` row, ``"acc,none"`` keys) that its
    logged ``rows`` do not give, each with the value they give."""
    found: list[Mismatch] = []
    by_filter: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        by_filter.setdefault(str(row.get("filter", "none")), []).append(row)
    for metric, aggregation in _aggregations(task_config).items():
        for name, logged in by_filter.items():
            shown = _number(printed.get(f"{metric},{name}"))
            if shown is None or math.isnan(shown) or any(metric not in r for r in logged):
                continue
            value = _redone(aggregation, [r[metric] for r in logged])
            if value is None or math.isnan(value):
                continue
            if not math.isclose(shown, value, rel_tol=1e-9, abs_tol=1e-9):
                found.append((metric, name, shown, value))
    return found


def mismatch_note(label: str, task: str, mismatch: Mismatch) -> str:
    """The report's note for one figure the samples do not give."""
    metric, name, shown, value = mismatch
    figure = metric if name == "none" else f"{metric} ({name})"
    return (
        f"{label}, {task}: the harness printed {figure} {shown:.6f} but the logged samples give "
        f"{value:.6f}; the samples may come from another run."
    )
