"""Figures of the robustness studies and of the parser agreement (plain numbers in, PNG out)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from ..plots import pyplot, save_figure
from .plots import mark_zero_bars

__all__ = [
    "phrasing_bars",
    "binary_bars",
    "truefalse_bars",
    "agreement_scatter",
    "draw_study_figures",
]


def _rows_figure(n: int):
    """A figure for ``n`` bar groups with multi-line labels (no rotation, nothing clipped)."""
    plt = pyplot()
    return plt.subplots(figsize=(max(5.0, 1.35 * n + 2.6), 4.2))


def binary_bars(
    path: str | Path,
    labels: Sequence[str],
    accuracy: Sequence[tuple[float, float, float]],
    first_share: Sequence[float],
    *,
    title: str = "",
    confidence_level: float = 0.95,
) -> Path:
    """Per row: binary-choice accuracy with its interval, the first-option share, chance.

    Args:
        path: PNG to write.
        labels: One (multi-line) label per row.
        accuracy: ``(estimate, low, high)`` per row.
        first_share: Share of readable answers picking the first option (NaN: none).
        title: Figure title.
        confidence_level: Shown in the axis label.
    """
    if not labels or len(labels) != len(accuracy) or len(labels) != len(first_share):
        raise ValueError("binary_bars needs one accuracy and first share per label (>= 1 label)")
    fig, ax = _rows_figure(len(labels))
    x = np.arange(len(labels))
    est, low, high = (np.asarray(v, dtype=float) for v in zip(*accuracy, strict=True))
    errors = np.vstack([np.clip(est - low, 0, None), np.clip(high - est, 0, None)])
    for bars in (
        ax.bar(x - 0.2, est, 0.4, yerr=errors, capsize=3, color="#4C72B0", label="accuracy"),
        ax.bar(x + 0.2, first_share, 0.4, color="#8C8C8C", label="first option chosen"),
    ):
        mark_zero_bars(ax, bars)
    ax.axhline(0.5, color="#C44E52", linestyle="--", label="chance (0.50)")
    ax.set_xticks(x, labels, fontsize=7)
    ax.set_ylim(0, 1)
    ax.set_ylabel(f"share of items ({confidence_level:.0%} CI)")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return save_figure(fig, path)


def phrasing_bars(
    path: str | Path,
    panels: Mapping[str, Sequence[str]],
    series: Sequence[str],
    values: Mapping[tuple[str, str, str], float],
    *,
    title: str = "",
) -> Path:
    """One panel per task: mean F1 per phrasing (x), one bar per model and audio setting.

    Args:
        path: PNG to write.
        panels: Task title -> its phrasings, in order.
        series: Bar series (``model [audio]``).
        values: ``(task title, phrasing, series) -> F1``; missing bars stay empty.
        title: Figure title.
    """
    if not panels or not series:
        raise ValueError("phrasing_bars needs at least one panel and one series")
    plt = pyplot()
    fig, axes = plt.subplots(
        1, len(panels), figsize=(3.6 * len(panels) + 2.2, 3.6), squeeze=False, sharey=True
    )
    width = 0.8 / len(series)
    for ax, (task, phrasings) in zip(axes[0], panels.items(), strict=True):
        x = np.arange(len(phrasings))
        for index, name in enumerate(series):
            heights = [values.get((task, p, name), np.nan) for p in phrasings]
            offset = (index - (len(series) - 1) / 2) * width
            mark_zero_bars(ax, ax.bar(x + offset, heights, width, label=name))
        ax.set_xticks(x, phrasings, fontsize=8)
        ax.set_title(task, fontsize=9)
        ax.set_ylim(0, 1)
    axes[0][0].set_ylabel("mean F1 over items")
    axes[0][-1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.suptitle(title, fontsize=10)
    return save_figure(fig, path)


def truefalse_bars(
    path: str | Path,
    labels: Sequence[str],
    said_true: Sequence[float],
    base_rate: Sequence[float],
    accuracy: Sequence[float],
    *,
    title: str = "",
) -> Path:
    """Per row: the share of pairs answered "true" and the accuracy, with the base rate.

    Args:
        path: PNG to write.
        labels: One label per row (``task: model [audio], scoring``).
        said_true: Share of (item, label) pairs answered true (inclusive rule).
        base_rate: Share of true pairs (a black tick per row).
        accuracy: Accuracy over pairs (inclusive rule).
        title: Figure title.
    """
    if not labels or not (len(labels) == len(said_true) == len(base_rate) == len(accuracy)):
        raise ValueError("truefalse_bars needs one value of each kind per label (>= 1 label)")
    fig, ax = _rows_figure(len(labels))
    x = np.arange(len(labels))
    mark_zero_bars(ax, ax.bar(x - 0.2, said_true, 0.4, color="#DD8452", label='said "true"'))
    mark_zero_bars(ax, ax.bar(x + 0.2, accuracy, 0.4, color="#4C72B0", label="accuracy"))
    ax.scatter(x - 0.2, base_rate, marker="_", s=400, color="black", label="base rate", zorder=3)
    ax.set_xticks(x, labels, fontsize=7)
    ax.set_ylim(0, 1)
    ax.set_ylabel("share of (item, label) pairs")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return save_figure(fig, path)


def agreement_scatter(
    path: str | Path,
    points: Mapping[str, Sequence[tuple[float, float]]],
    *,
    title: str = "",
) -> Path:
    """Mean F1 of each (run, task) under parser a (x) and parser b (y), one colour per pair.

    Args:
        path: PNG to write.
        points: ``"a vs b" -> [(F1 a, F1 b), ...]``.
        title: Figure title.
    """
    if not points:
        raise ValueError("agreement_scatter needs at least one pair of parsers")
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.2, 4.4))
    ax.plot([0, 1], [0, 1], color="grey", linewidth=0.8, linestyle="--")
    for name, xy in points.items():
        values = np.asarray(xy, dtype=float).reshape(-1, 2)
        ax.scatter(values[:, 0], values[:, 1], s=18, label=name, alpha=0.8)
    ax.set_xlim(-0.03, 1.03)
    ax.set_ylim(-0.03, 1.03)
    ax.set_xlabel("mean F1, parser a")
    ax.set_ylabel("mean F1, parser b")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="lower right")
    return save_figure(fig, path)


def _series(row: Mapping[str, object]) -> str:
    return f"{row['model']} [{row['setting']}]"


def _row_label(task: str, row: Mapping[str, object]) -> str:
    scoring = "generated" if row["scoring"] == "generate" else "log-lik."
    return f"{task}\n{row['model']}\n{row['setting']}, {scoring}"


def draw_study_figures(studies: dict, out: Path, confidence_level: float = 0.95) -> None:
    """Draw the studies' figures into ``out/figures`` and record their paths in ``studies``."""
    from .sections import TASK_TITLES
    from .studies import PHRASING_TITLES

    figures, folder = studies.setdefault("figures", {}), Path(out) / "figures"
    if studies.get("phrasings"):
        panels, values, series = {}, {}, []
        for task, data in studies["phrasings"].items():
            title = TASK_TITLES.get(task, task)
            panels[title] = [PHRASING_TITLES.get(p, p) for p in data["phrasings"]]
            for entry in data["models"]:
                name = _series(entry)
                series.append(name)
                for phrasing, f in entry["figures"].items():
                    values[(title, PHRASING_TITLES.get(phrasing, phrasing), name)] = f["f1"]
        path = phrasing_bars(
            folder / "factual_phrasings.png",
            panels,
            list(dict.fromkeys(series)),
            values,
            title="Factual tasks: mean F1 per phrasing",
        )
        figures["Wording sensitivity: F1 per phrasing"] = str(path.relative_to(out))
    rows = [(t, r) for t, data in (studies.get("binary") or {}).items() for r in data["rows"]]
    if rows:
        path = binary_bars(
            folder / "factual_binary.png",
            [_row_label(t, r) for t, r in rows],
            [tuple(r["accuracy"][k] for k in ("estimate", "low", "high")) for _, r in rows],
            [r["first_share"] for _, r in rows],
            title="Binary choice: accuracy and position bias",
            confidence_level=confidence_level,
        )
        figures["Binary choice: accuracy against chance"] = str(path.relative_to(out))
    rows = [(t, r) for t, data in (studies.get("truefalse") or {}).items() for r in data["rows"]]
    if rows:
        path = truefalse_bars(
            folder / "factual_truefalse.png",
            [_row_label(t, r) for t, r in rows],
            [r["figures"]["true_share_inclusive"] for _, r in rows],
            [r["figures"]["base_rate"] for _, r in rows],
            [r["figures"]["acc_inclusive"] for _, r in rows],
            title='True/false per label: share answered "true" vs base rate',
        )
        figures["True/false: share answered true against the base rate"] = str(
            path.relative_to(out)
        )
    if studies.get("parsers"):
        points = {
            f"{p['a']} vs {p['b']}": [(r["f1_a"], r["f1_b"]) for r in p["rows"]]
            for p in studies["parsers"]
        }
        path = agreement_scatter(
            folder / "factual_parser_agreement.png", points, title="F1 under two parsers"
        )
        figures["Parser agreement: F1 under each parser"] = str(path.relative_to(out))
