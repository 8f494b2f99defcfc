"""The factual figure: F1 per task under each audio condition, baselines as reference lines.

Bars of height 0 are common here (a model that never names a right label) and would be
invisible: :func:`mark_zero_bars` draws a tick on the axis and a "0" above each.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from ..plots import pyplot, save_figure

__all__ = ["factual_f1_bars", "mark_zero_bars"]


def mark_zero_bars(ax, bars) -> int:
    """Mark each bar of ``bars`` (from ``ax.bar``) whose height is 0 with a tick in its colour
    on the axis and a "0" above it, so an empty result reads as 0, not as no bar.

    Returns:
        How many bars were marked.
    """
    marked = 0
    for rect in bars:
        height = rect.get_height()
        if not np.isfinite(height) or height != 0:
            continue
        left, width = rect.get_x(), rect.get_width()
        colour = rect.get_facecolor()
        ax.plot(
            (left, left + width),
            (0, 0),
            color=colour,
            linewidth=3,
            solid_capstyle="butt",
            clip_on=False,
            zorder=3,
        )
        ax.annotate(
            "0",
            (left + width / 2, 0),
            xytext=(0, 2),
            textcoords="offset points",
            ha="center",
            va="bottom",
            fontsize=7,
            color=colour,
        )
        marked += 1
    return marked


def factual_f1_bars(
    path: str | Path,
    tasks: Sequence[str],
    conditions: Sequence[str],
    values: Mapping[tuple[str, str], tuple[float, float, float]],
    baselines: Mapping[str, tuple[float, float]],
    *,
    title: str = "",
    confidence_level: float = 0.95,
) -> Path:
    """Grouped bars: per task, one model's mean F1 under each condition, with baselines.

    Args:
        path: PNG to write.
        tasks: One group per task (labels on the x axis).
        conditions: One bar per condition within a group (``original``, ``random``...).
        values: ``(task, condition) -> (F1, low, high)``; missing pairs stay empty.
        baselines: ``task -> (majority F1, label-frequency expected F1)``, drawn as a solid
            and a dotted segment across the task's group.
        title: Figure title.
        confidence_level: Shown in the axis label.
    """
    if not tasks or not conditions:
        raise ValueError("factual_f1_bars needs at least one task and one condition")
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(max(6.0, 0.35 * len(tasks) * len(conditions) + 3.0), 4.2))
    width = 0.8 / len(conditions)
    x = np.arange(len(tasks))
    for index, condition in enumerate(conditions):
        present = [t for t in tasks if (t, condition) in values]
        if not present:
            continue
        offset = (index - (len(conditions) - 1) / 2) * width
        pos = np.array([x[tasks.index(t)] for t in present]) + offset
        est, low, high = np.array([values[(t, condition)] for t in present]).T
        errors = np.vstack([np.clip(est - low, 0, None), np.clip(high - est, 0, None)])
        bars = ax.bar(pos, est, width, yerr=errors, capsize=3, label=condition)
        mark_zero_bars(ax, bars)
    for position, task in zip(x, tasks, strict=True):
        if task not in baselines:
            continue
        majority, frequency = baselines[task]
        span = (position - 0.45, position + 0.45)
        ax.plot(span, (majority, majority), color="black", linewidth=1.2)
        ax.plot(span, (frequency, frequency), color="black", linewidth=1.2, linestyle=":")
    ax.plot([], [], color="black", linewidth=1.2, label="majority label")
    ax.plot([], [], color="black", linewidth=1.2, linestyle=":", label="label frequency")
    ax.set_xticks(x, tasks, rotation=30, ha="right", fontsize=8)
    # headroom above 1: a baseline at F1 = 1.0 (one label for every item) would lie on the
    # top spine and be hidden
    ax.set_ylim(0, 1.05)
    ax.set_yticks(np.linspace(0, 1, 6))
    ax.set_ylabel(f"mean F1 over items ({confidence_level:.0%} CI)")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return save_figure(fig, path)
