"""The report's figures (matplotlib, Agg backend): one function per figure, one PNG each.

Every function takes plain numbers, writes ``path`` and returns it; nothing here reads
runs or computes statistics (see :mod:`.summary` and :mod:`.stats`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

__all__ = ["accuracy_bars", "condition_bars", "pi_histograms", "pi_accuracy_scatter"]

_DPI = 120


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _errors(estimates, lows, highs) -> np.ndarray:
    est, low, high = (np.asarray(v, dtype=np.float64) for v in (estimates, lows, highs))
    return np.vstack([np.clip(est - low, 0, None), np.clip(high - est, 0, None)])


def _save(fig, path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=_DPI)
    _pyplot().close(fig)
    return path


def accuracy_bars(
    path: str | Path,
    labels: Sequence[str],
    estimates: Sequence[float],
    lows: Sequence[float],
    highs: Sequence[float],
    *,
    chance: float | None = None,
    title: str = "",
    confidence_level: float = 0.95,
) -> Path:
    """Accuracy per run as bars with confidence-interval whiskers and a chance line.

    Args:
        path: PNG to write.
        labels: One label per bar (e.g. ``model [condition]``).
        estimates, lows, highs: Accuracy and its interval per bar.
        chance: Accuracy of a uniform guess, drawn as a dashed line.
        title: Figure title.
        confidence_level: Shown in the axis label.
    """
    if not (len(labels) == len(estimates) == len(lows) == len(highs)) or not labels:
        raise ValueError("accuracy_bars needs one estimate, low and high per label (>= 1 label)")
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(4.0, 0.9 * len(labels) + 2), 3.8))
    x = np.arange(len(labels))
    ax.bar(x, estimates, color="#4C72B0", yerr=_errors(estimates, lows, highs), capsize=4)
    if chance is not None:
        ax.axhline(chance, color="#C44E52", linestyle="--", label=f"chance ({chance:.2f})")
        ax.legend(loc="upper right", fontsize=8)
    ax.set_xticks(x, labels, rotation=30, ha="right", fontsize=8)
    ax.set_ylim(0, 1)
    ax.set_ylabel(f"accuracy ({confidence_level:.0%} CI)")
    ax.set_title(title, fontsize=10)
    return _save(fig, path)


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

    Args:
        path: PNG to write.
        models: One group per model.
        conditions: One bar per condition within each group (missing pairs are left empty).
        values: ``(model, condition) -> (estimate, low, high)``.
        chance: Chance accuracy, drawn as a dashed line.
        title: Figure title.
        confidence_level: Shown in the axis label.
    """
    if not models or not conditions:
        raise ValueError("condition_bars needs at least one model and one condition")
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(5.5, 0.6 * len(models) * len(conditions) + 3.5), 3.8))
    width = 0.8 / len(conditions)
    x = np.arange(len(models))
    for index, condition in enumerate(conditions):
        present = [m for m in models if (m, condition) in values]
        if not present:
            continue
        pos = (
            np.array([x[models.index(m)] for m in present])
            + (index - (len(conditions) - 1) / 2) * width
        )
        est, low, high = zip(*(values[(m, condition)] for m in present), strict=True)
        ax.bar(pos, est, width, yerr=_errors(est, low, high), capsize=3, label=condition)
    if chance is not None:
        ax.axhline(
            chance, color="black", linestyle="--", linewidth=1, label=f"chance ({chance:.2f})"
        )
    ax.set_xticks(x, models, rotation=20, ha="right", fontsize=8)
    ax.set_ylim(0, 1)
    ax.set_ylabel(f"accuracy ({confidence_level:.0%} CI)")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return _save(fig, path)


def pi_histograms(
    path: str | Path,
    distributions: Mapping[str, Sequence[float]],
    *,
    bins: int = 20,
    title: str = "Perceptual Index",
    chance: float | None = 0.75,
) -> Path:
    """Overlaid PI histograms (e.g. MuChoMusic vs RUL-MuChoMusic), means in the legend.

    Bars show the share of each benchmark's questions, so benchmarks of different sizes
    compare.

    Args:
        path: PNG to write.
        distributions: Label -> per-question PI values in [0, 1].
        bins: Bins over [0, 1].
        title: Figure title.
        chance: PI at chance (0.75 with four options), drawn as a dashed line; None: none.
    """
    if not distributions or any(len(v) == 0 for v in distributions.values()):
        raise ValueError("pi_histograms needs at least one non-empty distribution")
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    edges = np.linspace(0.0, 1.0, bins + 1)
    for label, values in distributions.items():
        data = np.asarray(values, dtype=np.float64)
        ax.hist(
            data,
            bins=edges,
            weights=np.full(data.size, 1.0 / data.size),
            alpha=0.5,
            label=f"{label} (n={data.size}, mean {data.mean():.3f})",
        )
    if chance is not None:
        ax.axvline(
            chance, color="black", linestyle="--", linewidth=1, label=f"chance ({chance:.2f})"
        )
    ax.set_xlabel("PI (1 - p(correct) of a text-only model)")
    ax.set_ylabel("share of questions")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="upper left")
    return _save(fig, path)


def pi_accuracy_scatter(
    path: str | Path,
    groups: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    *,
    title: str = "PI vs accuracy",
    annotations: Mapping[str, str] | None = None,
) -> Path:
    """Per-question PI (x) vs accuracy (y), one colour per group, each with its fitted line.

    Args:
        path: PNG to write.
        groups: Group label -> (PI per question, accuracy per question).
        title: Figure title.
        annotations: Group label -> extra legend text (e.g. ``r = -0.74``).
    """
    from scipy import stats

    if not groups:
        raise ValueError("pi_accuracy_scatter needs at least one group")
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 3.8))
    for label, (pis, accs) in groups.items():
        x, y = np.asarray(pis, dtype=np.float64), np.asarray(accs, dtype=np.float64)
        extra = (annotations or {}).get(label, "")
        points = ax.scatter(x, y, s=14, alpha=0.6, label=f"{label} {extra}".strip())
        if x.size >= 2 and np.ptp(x) > 0:
            fit = stats.linregress(x, y)
            line = np.linspace(x.min(), x.max(), 50)
            ax.plot(line, fit.intercept + fit.slope * line, color=points.get_facecolor()[0])
    ax.set_xlabel("Perceptual Index")
    ax.set_ylabel("accuracy (mean over runs and folds)")
    ax.set_ylim(-0.05, 1.05)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return _save(fig, path)
