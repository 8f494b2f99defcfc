"""The report's figures (matplotlib, Agg backend): one function per figure, one PNG each.

Every function takes plain numbers, writes ``path`` and returns it; nothing here reads
runs or computes statistics (see :mod:`.summary` and :mod:`.stats`).
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..files import atomic_write
from .settings import condition_colour

__all__ = [
    "pyplot",
    "save_figure",
    "accuracy_bars",
    "condition_bars",
    "pi_histograms",
    "pi_accuracy_scatter",
    "group_positions",
    "centred_positions",
    "merge_identical",
]

_DPI = 120


def pyplot():
    """``matplotlib.pyplot`` on the Agg backend (files only, no display), imported lazily."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _errors(estimates, lows, highs) -> np.ndarray:
    est, low, high = (np.asarray(v, dtype=np.float64) for v in (estimates, lows, highs))
    return np.vstack([np.clip(est - low, 0, None), np.clip(high - est, 0, None)])


def save_figure(fig, path: str | Path) -> Path:
    """Write ``fig`` as a PNG at the report's resolution (folders made) and close it; a
    text wider than the figure (a long title) is wrapped first, so none leaves the canvas."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    from matplotlib.text import Text

    renderer, room = fig.canvas.get_renderer(), 0.9 * fig.bbox.width
    for text in fig.findobj(Text):
        width, lines = text.get_window_extent(renderer).width, text.get_text().split("\n")
        if text.get_visible() and width > room:
            chars = max(20, int(max(map(len, lines)) * room / width))
            text.set_text("\n".join(textwrap.fill(line, chars) for line in lines))
    fig.tight_layout()
    with atomic_write(path, "wb") as handle:  # a reader never sees half a figure
        fig.savefig(handle, dpi=_DPI, format=path.suffix.lstrip(".") or "png")
    pyplot().close(fig)
    return path


_OTHER_COLOURS = ("#937860", "#DA8BC3", "#8C8C8C", "#1F77B4", "#FF7F0E")
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">")

_HATCHES = ("", "//", "..", "xx", "\\\\", "++")


def _hatch(label: str, labels: Sequence[str]) -> str:
    """Settings of one condition (``noise, seed=0`` / ``noise, seed=1``) share its colour and
    differ by hatching."""
    condition = label.split(",")[0].strip()
    same = list(dict.fromkeys(x for x in labels if x.split(",")[0].strip() == condition))
    return _HATCHES[same.index(label) % len(_HATCHES)] if label in same else ""


def _colour(label: str, index: int) -> str:
    """A condition's colour (by the condition before any ``, setting``; each condition
    declares its own), else a spare one."""
    colour = condition_colour(label.split(",")[0].strip())
    return colour or _OTHER_COLOURS[index % len(_OTHER_COLOURS)]


def group_positions(groups: Sequence[str]) -> np.ndarray:
    """x of each bar: consecutive bars of one group side by side, a gap between groups.

    >>> group_positions(["a", "b", "b", "c"]).tolist()
    [0.0, 1.6, 2.6, 4.2]
    """
    starts = [i for i in range(len(groups)) if i and groups[i] != groups[i - 1]]
    return np.array([i + 0.6 * sum(s <= i for s in starts) for i in range(len(groups))], float)


def centred_positions(
    models: Sequence[str],
    conditions: Sequence[str],
    values: Mapping[tuple[str, str], Any],
    width: float,
) -> dict[tuple[str, str], float]:
    """x of each (model, condition) bar: a model's bars centred on its tick ``x = index``.

    >>> centred_positions(["m", "n"], ["a", "b"], {("m", "a"): 0, ("m", "b"): 0,
    ...                   ("n", "b"): 0}, 0.4)
    {('m', 'a'): -0.2, ('m', 'b'): 0.2, ('n', 'b'): 1.0}
    """
    out = {}
    for x, model in enumerate(models):
        present = [c for c in conditions if (model, c) in values]
        for slot, condition in enumerate(present):
            out[(model, condition)] = round(x + (slot - (len(present) - 1) / 2) * width, 9)
    return out


def accuracy_bars(
    path: str | Path,
    labels: Sequence[str],
    estimates: Sequence[float],
    lows: Sequence[float],
    highs: Sequence[float],
    *,
    groups: Sequence[str] | None = None,
    chance: float | None = None,
    title: str = "",
    confidence_level: float = 0.95,
    counts: Sequence[str] | None = None,
) -> Path:
    """Accuracy per run as bars with confidence-interval whiskers and a chance line.

    Args:
        path: PNG to write.
        labels: One label per bar (with ``groups``: the audio condition of the run).
        estimates, lows, highs: Accuracy and its interval per bar.
        groups: The model of each bar: a model's bars stand together, its name written
            once under them, and each bar is coloured by its condition.
        chance: Accuracy of a uniform guess, drawn as a dashed line.
        title: Figure title.
        confidence_level: Shown in the axis label.
        counts: Questions per bar (``"150 of 1,187"``: part of the benchmark), written under
            each bar's label (nothing crosses them there) when they differ or one is partial.
    """
    if not (len(labels) == len(estimates) == len(lows) == len(highs)) or not labels:
        raise ValueError("accuracy_bars needs one estimate, low and high per label (>= 1 label)")
    if groups is not None and len(groups) != len(labels):
        raise ValueError("accuracy_bars needs one group per label")
    plt = pyplot()
    shown = list(labels)
    if counts is not None and (len(set(counts)) > 1 or any(" of " in c for c in counts)):
        shown = [f"{label}, n={count}" for label, count in zip(labels, counts, strict=True)]
    longest = max(len(line) for label in shown for line in label.split(", "))
    per_bar = 0.8  # room for each label, and for each model's name under its bars
    if groups is not None:
        widths = (0.09 * len(name) / groups.count(name) for name in set(groups))
        per_bar = max(per_bar, 0.075 * longest, *widths)
    fig, ax = plt.subplots(figsize=(max(4.0, per_bar * len(labels) + 2.5), 4.2))
    if groups is None:
        x = np.arange(len(labels), dtype=np.float64)
        colours, hatches = ["#4C72B0"] * len(labels), [""] * len(labels)
    else:
        x = group_positions(groups)
        colours = [_colour(label, i) for i, label in enumerate(labels)]
        hatches = [_hatch(label, labels) for label in labels]
    bars = ax.bar(x, estimates, color=colours, yerr=_errors(estimates, lows, highs), capsize=4)
    for bar, hatch in zip(bars, hatches, strict=True):
        bar.set_hatch(hatch)
        bar.set_edgecolor("white" if hatch else bar.get_facecolor())
    if chance is not None:
        ax.axhline(
            chance, color="black", linestyle="--", linewidth=1, label=f"chance ({chance:.2f})"
        )
        ax.legend(loc="upper right", fontsize=8)
    if groups is None:
        ticks = [label.replace(", n=", "\nn=") for label in shown]
        ax.set_xticks(x, ticks, rotation=30, ha="right", fontsize=8)
    else:  # settings one per line ("noise\nseed=1"), the model's name once below them
        ticks = [label.replace(", ", "\n") for label in shown]
        ax.set_xticks(x, ticks, fontsize=8)
        depth = 10 * max(t.count("\n") + 1 for t in ticks) + 10
        for name in dict.fromkeys(groups):
            where = x[[i for i, g in enumerate(groups) if g == name]]
            ax.annotate(
                name,
                xy=(where.mean(), 0),
                xycoords=("data", "axes fraction"),
                xytext=(0, -depth),
                textcoords="offset points",
                ha="center",
                va="top",
                fontsize=9,
                fontweight="bold",
            )
    ax.set_ylim(0, 1)
    ax.set_ylabel(f"accuracy ({confidence_level:.0%} CI)")
    ax.set_title(title, fontsize=10)
    return save_figure(fig, path)


def condition_bars(
    path: str | Path,
    models: Sequence[str],
    conditions: Sequence[str],
    values: Mapping[tuple[str, str], tuple[float, float, float]],
    *,
    chance: float | None = None,
    title: str = "",
    confidence_level: float = 0.95,
) -> Path:
    """Grouped bars: per model, accuracy under each audio condition (original, noise, ...).

    A model's bars are centred on its name whatever conditions it has; each condition has
    one colour (and one legend entry) throughout.

    Args:
        path: PNG to write.
        models: One group per model.
        conditions: The conditions, in display order (a model shows those it has).
        values: ``(model, condition) -> (estimate, low, high)``.
        chance: Chance accuracy, drawn as a dashed line.
        title: Figure title.
        confidence_level: Shown in the axis label.
    """
    if not models or not conditions:
        raise ValueError("condition_bars needs at least one model and one condition")
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(max(5.5, 0.6 * len(models) * len(conditions) + 2.5), 4.2))
    width = 0.8 / len(conditions)
    labelled: set[str] = set()
    for (model, condition), pos in centred_positions(models, conditions, values, width).items():
        est, low, high = values[(model, condition)]
        ax.bar(
            pos,
            est,
            width,
            color=_colour(condition, conditions.index(condition)),
            hatch=_hatch(condition, conditions),
            edgecolor="white",
            yerr=_errors([est], [low], [high]),
            capsize=3,
            label=None if condition in labelled else condition,
        )
        labelled.add(condition)
    if chance is not None:
        ax.axhline(
            chance, color="black", linestyle="--", linewidth=1, label=f"chance ({chance:.2f})"
        )
    ax.set_xticks(np.arange(len(models)), models, fontsize=8)
    ax.set_ylim(0, 1)
    ax.set_ylabel(f"accuracy ({confidence_level:.0%} CI)")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.1), frameon=False)
    return save_figure(fig, path)


def pi_histograms(
    path: str | Path,
    distributions: Mapping[str, Sequence[float]],
    *,
    bins: int = 20,
    title: str = "Perceptual Index",
    chance: float | None = 0.75,
) -> Path:
    """PI histograms side by side in each bin (e.g. MuChoMusic vs RUL-MuChoMusic), means in
    the legend.

    Bars show the share of each benchmark's questions, so benchmarks of different sizes
    compare; within a bin each benchmark has its own bar, so equal shares stay visible.

    Args:
        path: PNG to write.
        distributions: Label -> per-question PI values in [0, 1].
        bins: Bins over [0, 1].
        title: Figure title.
        chance: PI at chance (0.75 with four options), drawn as a dashed line; None: none.
    """
    if not distributions or any(len(v) == 0 for v in distributions.values()):
        raise ValueError("pi_histograms needs at least one non-empty distribution")
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    edges = np.linspace(0.0, 1.0, bins + 1)
    data = [np.asarray(v, dtype=np.float64) for v in distributions.values()]
    ax.hist(
        data,
        bins=edges,
        weights=[np.full(d.size, 1.0 / d.size) for d in data],
        color=[_OTHER_COLOURS[i % len(_OTHER_COLOURS)] for i in range(len(data))],
        edgecolor="black",  # adjacent bars of one height read as bars, not as one block
        linewidth=0.6,
        label=[
            f"{k} (n={d.size}, mean {d.mean():.3f})"
            for k, d in zip(distributions, data, strict=True)
        ],
    )
    if chance is not None:
        ax.axvline(
            chance, color="black", linestyle="--", linewidth=1, label=f"chance ({chance:.2f})"
        )
    ax.set_xlabel("PI (1 - p(correct) of a text-only model)")
    ax.set_ylabel("share of questions")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="upper left")
    return save_figure(fig, path)


def merge_identical(
    groups: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    annotations: Mapping[str, str],
) -> list[tuple[list[str], np.ndarray, np.ndarray, str]]:
    """Series with exactly the same points become one: (labels, x, y, annotation)."""
    merged: list[tuple[list[str], np.ndarray, np.ndarray, str]] = []
    for label, (pis, accs) in groups.items():
        x, y = np.asarray(pis, dtype=np.float64), np.asarray(accs, dtype=np.float64)
        for names, mx, my, _ in merged:
            if mx.shape == x.shape and np.array_equal(mx, x) and np.array_equal(my, y):
                names.append(label)
                break
        else:
            merged.append(([label], x, y, annotations.get(label, "")))
    return merged


def pi_accuracy_scatter(
    path: str | Path,
    groups: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    *,
    title: str = "PI vs accuracy",
    annotations: Mapping[str, str] | None = None,
    ylabel: str = "accuracy per question\n(mean over the group's runs and folds)",
) -> Path:
    """Per-question PI (x) vs accuracy (y), one colour and marker per group, each with its
    fitted line, except a group whose accuracies are all 0 or 1 (one run, one prompt: a
    line through two rows of points says nothing its ``r`` does not).

    Groups with exactly the same points are drawn once, and the legend names them all
    ("identical"); points of different groups that coincide are dodged sideways (the fits
    use the true values), so no series hides behind another.

    Args:
        path: PNG to write.
        groups: Group label -> (PI per question, accuracy per question).
        title: Figure title.
        annotations: Group label -> extra legend text (e.g. ``r = -0.74``).
        ylabel: What each point's accuracy averages.
    """
    from scipy import stats

    if not groups:
        raise ValueError("pi_accuracy_scatter needs at least one group")
    plt = pyplot()
    series = merge_identical(groups, annotations or {})
    fig, ax = plt.subplots(figsize=(6.5, 4.2 + 0.3 * len(series)))
    span = max((np.ptp(x) for _, x, _, _ in series if x.size), default=0.0) or 1.0
    step = 0.012 * span
    for index, (names, x, y, extra) in enumerate(series):
        label = textwrap.fill(", ".join(names), 70)
        if len(names) > 1:
            label += f"\n(identical points{', ' + extra.strip('()') if extra else ''})"
        elif extra:
            label += f" {extra}"
        colour = _colour(_series_condition(names[0]), index)
        dodge = (index - (len(series) - 1) / 2) * step if len(series) > 1 else 0.0
        ax.scatter(
            x + dodge,
            y,
            s=24,
            alpha=0.85,
            marker=_MARKERS[index % len(_MARKERS)],
            facecolors="none" if index else colour,
            edgecolors=colour,
            label=label,
        )
        binary = bool(np.isin(y, (0.0, 1.0)).all())
        if x.size >= 2 and np.ptp(x) > 0 and not binary:
            fit = stats.linregress(x, y)
            line = np.linspace(x.min(), x.max(), 50)
            ax.plot(
                line,
                fit.intercept + fit.slope * line,
                color=colour,
                linestyle=("-", "--", ":", "-.")[index % 4],
            )
    ax.set_xlabel("Perceptual Index")
    ax.set_ylabel(ylabel)
    ax.set_ylim(-0.05, 1.05)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16), frameon=False)
    return save_figure(fig, path)


def _series_condition(label: str) -> str:
    """``text-only`` -> ``text``; ``audio (noise, seed=1)`` -> ``noise``."""
    if label.startswith("text"):
        return "text"
    inner = label.split("(", 1)[-1].split(")", 1)[0]
    return inner.split(",")[0].strip()
