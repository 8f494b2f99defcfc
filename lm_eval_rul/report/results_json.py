"""Reading the harness's results JSON: its groups, a row's metrics, a task's document count."""

from __future__ import annotations

from typing import Any

__all__ = ["group_names", "metrics_of", "original_count"]


def group_names(results: dict[str, Any]) -> set[str]:
    """The groups a results file reports (those with members, and its ``groups`` rows)."""
    groups = {name for name, subtasks in (results.get("group_subtasks") or {}).items() if subtasks}
    return groups | set(results.get("groups") or {})


def metrics_of(row: dict[str, Any]) -> dict[str, float]:
    """``{"acc": 0.5, ...}`` from a results row (``"acc,none"`` keys; stderrs left out)."""
    return {
        key.split(",")[0]: float(value)
        for key, value in row.items()
        if "," in key and "_stderr" not in key and isinstance(value, int | float)
    }


def original_count(results: dict[str, Any], task: str) -> int | None:
    """The task's documents before ``--limit`` (``n-samples``/``original`` of the results)."""
    count = ((results.get("n-samples") or {}).get(task) or {}).get("original")
    return count if isinstance(count, int) and not isinstance(count, bool) else None
