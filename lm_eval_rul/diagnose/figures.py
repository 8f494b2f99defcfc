"""``diagnose``'s figures (matplotlib, Agg): one function per PNG, plain numbers in.

Same conventions as the report's figures (:mod:`lm_eval_rul.report.plots`). Nothing here reads
data or computes findings; see :mod:`.pipeline`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

# The report's figure helpers: Agg backend, tight layout, one DPI for every PNG.
from ..report.plots import pyplot, save_figure

__all__ = ["similarity_histograms", "similarity_scatter", "audit_bars"]


def similarity_histograms(
    path: str | Path,
    values: Mapping[str, Mapping[str, Sequence[float]]],
    *,
    labels: Mapping[str, str],
    thresholds: Mapping[str, float] | None = None,
    bins: int = 40,
) -> Path:
    """One panel per space; in each, the datasets' similarity histograms overlaid.

    Bars show the share of each dataset's distractors, so datasets of different sizes
    (four distractors vs pools of fifty) compare; each legend entry gives n and the mean.

    Args:
        path: PNG to write.
        values: Space -> dataset -> cosine similarity of every distractor to its answer.
        labels: Space -> panel title (e.g. ``T5 (text)``).
        thresholds: Space -> near-identical threshold, drawn as a dashed line.
        bins: Bins over the range of the data.
    """
    if not values:
        raise ValueError("similarity_histograms needs at least one space")
    plt = pyplot()
    fig, axes = plt.subplots(1, len(values), figsize=(5.2 * len(values), 3.8), squeeze=False)
    for ax, (space, by_dataset) in zip(axes[0], values.items(), strict=True):
        present = {n: np.asarray(v, dtype=np.float64) for n, v in by_dataset.items() if len(v)}
        if present:
            low = min(float(v.min()) for v in present.values())
            high = max(float(v.max()) for v in present.values())
            edges = np.linspace(min(low, 0.0), max(high, 1.0), bins + 1)
            for name, data in present.items():
                ax.hist(
                    data,
                    bins=edges,
                    weights=np.full(data.size, 1.0 / data.size),
                    alpha=0.5,
                    label=f"{name} (n={data.size}, mean {data.mean():.3f})",
                )
        if thresholds and space in thresholds:
            ax.axvline(
                thresholds[space],
                color="black",
                linestyle="--",
                linewidth=1,
                label=f"near-identical ({thresholds[space]:.2f})",
            )
        ax.set_title(labels.get(space, space), fontsize=10)
        ax.set_xlabel("cosine similarity to the correct answer")
        ax.set_ylabel("share of distractors")
        ax.legend(fontsize=8, loc="upper left")
    return save_figure(fig, path)


def similarity_scatter(
    path: str | Path,
    points: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    *,
    axis_labels: tuple[str, str],
    thresholds: tuple[float, float] | None = None,
) -> Path:
    """One panel per dataset: each distractor at (T5 similarity, CLAP similarity), both the
    cosine similarity of the distractor to its question's correct answer.

    The top-right corner beyond both thresholds (shaded, dashed lines) holds the
    near-identical distractors; perception-hard ones sit high on x and spread on y.

    Args:
        path: PNG to write.
        points: Dataset -> (x similarities, y similarities).
        axis_labels: (x space, y space): each axis reads "<space> similarity to the
            correct answer".
        thresholds: (x threshold, y threshold) of the shaded corner.
    """
    if not points:
        raise ValueError("similarity_scatter needs at least one dataset")
    plt = pyplot()
    fig, axes = plt.subplots(1, len(points), figsize=(4.4 * len(points), 4.0), squeeze=False)
    for ax, (name, (x, y)) in zip(axes[0], points.items(), strict=True):
        x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
        size = 10 if x.size < 5000 else 2
        ax.scatter(x, y, s=size, alpha=0.35 if x.size < 5000 else 0.15, linewidths=0)
        if thresholds is not None:
            ax.fill_between(
                [thresholds[0], 1.0],
                thresholds[1],
                1.0,
                color="#C44E52",
                alpha=0.15,
                label="near-identical in both",
            )
            ax.legend(fontsize=8, loc="lower left")
        if thresholds is not None:
            ax.axvline(thresholds[0], color="#C44E52", linestyle="--", linewidth=0.8)
            ax.axhline(thresholds[1], color="#C44E52", linestyle="--", linewidth=0.8)
        ax.set_title(f"{name} ({x.size} distractors)", fontsize=10)
        ax.set_xlabel(f"{axis_labels[0]} similarity to the correct answer")
        ax.set_ylabel(f"{axis_labels[1]}\nsimilarity to the correct answer")
    fig.suptitle(
        "Each point is one distractor: how close it is to its question's correct answer "
        "in each embedding space",
        fontsize=9,
    )
    return save_figure(fig, path)


def audit_bars(
    path: str | Path, counts: Mapping[str, Mapping[str, int]], *, rules: Sequence[str]
) -> Path:
    """Horizontal bars: questions flagged by each audit rule, one bar per dataset.

    Args:
        path: PNG to write.
        counts: Dataset -> rule -> flagged questions.
        rules: Rules in display order (top to bottom).
    """
    if not counts or not rules:
        raise ValueError("audit_bars needs at least one dataset and one rule")
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.0, 0.5 * len(rules) * max(1, len(counts)) + 1.2))
    height = 0.8 / len(counts)
    y = np.arange(len(rules))[::-1]
    for k, (name, by_rule) in enumerate(counts.items()):
        values = [by_rule.get(r, 0) for r in rules]
        pos = y + (len(counts) - 1) / 2 * height - k * height
        bars = ax.barh(pos, values, height, label=name)
        ax.bar_label(bars, fontsize=7, padding=2)
    ax.set_yticks(y, rules, fontsize=8)
    ax.set_xlabel("questions flagged")
    ax.set_title("QA audit", fontsize=10)
    ax.legend(fontsize=8, loc="lower right")
    return save_figure(fig, path)
