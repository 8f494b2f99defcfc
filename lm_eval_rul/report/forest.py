"""The perception-gain figure: a forest plot of original − each other audio condition, per
model, with its paired bootstrap interval and a zero line (the paper's headline number:
how much accuracy the audio itself brings)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .plots import pyplot, save_figure
from .settings import condition_colour

__all__ = ["perception_gain_forest"]


def perception_gain_forest(
    path: str | Path,
    rows: Sequence[tuple[str, str, float, float, float]],
    *,
    title: str = "Perception gain",
    confidence_level: float = 0.95,
) -> Path:
    """One row per (model, condition): the gain, its interval and a zero line.

    Args:
        path: PNG to write.
        rows: ``(model, condition, estimate, low, high)``: the accuracy under ``original``
            minus the accuracy under ``condition`` (paired on shared questions).
        title: Figure title.
        confidence_level: The intervals' level, for the axis label.
    """
    if not rows:
        raise ValueError("perception_gain_forest needs at least one comparison")
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.2, 1.7 + 0.42 * len(rows)))
    y = np.arange(len(rows))[::-1]
    for position, (_, condition, estimate, low, high) in zip(y, rows, strict=True):
        colour = condition_colour(condition.split(",")[0].strip())
        with_zero = bool(low <= 0.0 <= high)  # the table's "⚠ interval contains 0"
        ax.errorbar(
            estimate,
            position,
            xerr=[[max(estimate - low, 0.0)], [max(high - estimate, 0.0)]],
            fmt="o",
            color=colour,
            ecolor=colour,
            capsize=4,
            markersize=6,
            markerfacecolor="white" if with_zero else colour,
            linestyle="none",
            elinewidth=1 if with_zero else 1.6,
        )
        mark = " (interval contains 0)" if with_zero else ""
        ax.annotate(
            f"{estimate:+.3f}{mark}",
            (high, position),
            xytext=(6, 0),
            textcoords="offset points",
            va="center",
            fontsize=8,
        )
    ax.axvline(0.0, color="black", linewidth=1)
    models = {model for model, *_ in rows}
    labels = [
        f"{model}: original − {condition}" if len(models) > 1 else f"original − {condition}"
        for model, condition, *_ in rows
    ]
    ax.set_yticks(y, labels, fontsize=8)
    spread = [v for _, _, e, lo, hi in rows for v in (e, lo, hi) if np.isfinite(v)]
    reach = max([abs(v) for v in spread] + [0.05]) * 1.35
    ax.set_xlim(-reach, reach)
    ax.set_xlabel(f"accuracy under original − under each condition\n({confidence_level:.0%} "
                  "paired bootstrap interval; > 0: the audio helps; hollow: the interval "
                  "contains 0)")
    ax.set_title(title if len(models) > 1 else f"{title} of {next(iter(models))}", fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    return save_figure(fig, path)
