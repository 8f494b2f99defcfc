"""Statistics for the report, as small pure functions built on :mod:`scipy.stats`.

* :func:`accuracy_ci`: mean score with a bootstrap interval, resampled by question
  (or by track: a cluster bootstrap) through :func:`scipy.stats.bootstrap`.
* :func:`paired_difference_ci`: ``mean(a) - mean(b)`` on the same items, paired bootstrap;
  :func:`leakage_ci`: the MMStar-style ``max(0, S_without_audio - S_text_backbone)``.
* :func:`wilcoxon_pvalue`: Wilcoxon signed-rank test of paired per-question scores.

Pearson's r (PI against accuracy) is in :mod:`.correlation`.

A cluster bootstrap is a bootstrap over clusters of the per-cluster sums and counts,
with the ratio ``sum(sums) / sum(counts)`` as statistic: with one score per cluster it
is the plain bootstrap of the mean, and with the four folds of a question as one
cluster it resamples questions, not (question, fold) pairs. Every resampling takes
its generator from ``seed``, so numbers are reproducible.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Sequence
from dataclasses import asdict, dataclass

import numpy as np
from scipy import stats

__all__ = [
    "Interval",
    "DEFAULT_N_RESAMPLES",
    "CI_METHODS",
    "accuracy_ci",
    "paired_difference_ci",
    "leakage_ci",
    "wilcoxon_pvalue",
    "cluster_sums",
    "score_array",
]

DEFAULT_N_RESAMPLES = 9999
#: The interval methods of :func:`scipy.stats.bootstrap` the report offers.
CI_METHODS: tuple[str, ...] = ("percentile", "basic", "BCa")
_BATCH = 1000  # resamples per vectorised batch: bounds memory on full benchmarks


@dataclass(frozen=True)
class Interval:
    """A point estimate with its confidence interval.

    Attributes:
        estimate: The statistic on the observed data.
        low, high: Interval bounds (equal to ``estimate`` when the data have no spread).
        confidence_level: E.g. 0.95.
        n: Number of scored items (e.g. (question, fold) pairs).
        n_clusters: Number of resampled units (questions or tracks).
    """

    estimate: float
    low: float
    high: float
    confidence_level: float
    n: int
    n_clusters: int

    @property
    def contains_zero(self) -> bool:
        """Whether ``low <= 0 <= high``: the difference is not distinguishable from zero."""
        return self.low <= 0.0 <= self.high

    def to_dict(self) -> dict[str, float | int | bool]:
        """Plain numbers for JSON (``contains_zero`` included)."""
        return {**asdict(self), "contains_zero": self.contains_zero}


def score_array(values: Sequence[float] | np.ndarray, name: str) -> np.ndarray:
    """``values`` as a non-empty 1-D float array of finite scores (``name`` in errors)."""
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1 or array.size == 0:
        raise ValueError(
            f"{name} must be a non-empty 1-D sequence of scores, got shape {array.shape}"
        )
    if not np.isfinite(array).all():
        raise ValueError(f"{name} must be finite; found {int((~np.isfinite(array)).sum())} NaN/inf")
    return array


def _check_options(confidence_level: float, n_resamples: int, method: str) -> None:
    if not 0.0 < confidence_level < 1.0:
        raise ValueError(f"confidence_level must be in (0, 1), got {confidence_level!r}")
    if int(n_resamples) < 1:
        raise ValueError(f"n_resamples must be a positive integer, got {n_resamples!r}")
    if method not in CI_METHODS:
        raise ValueError(f"method must be one of {CI_METHODS}, got {method!r}")


def cluster_sums(
    columns: Sequence[np.ndarray], groups: Sequence[Hashable] | None
) -> tuple[list[np.ndarray], np.ndarray]:
    """Per-cluster sums of each column and per-cluster counts.

    Args:
        columns: Equal-length 1-D arrays of per-item scores.
        groups: Cluster label of each item (None: every item is its own cluster).

    Returns:
        ``(sums, counts)``: one array of cluster sums per column, and the cluster sizes,
        clusters in order of first appearance.
    """
    n = len(columns[0])
    if groups is None:
        return [np.asarray(c, dtype=np.float64) for c in columns], np.ones(n)
    if len(groups) != n:
        raise ValueError(f"groups has {len(groups)} labels for {n} scores; give one per score")
    order: dict[Hashable, int] = {}
    index = np.array([order.setdefault(g, len(order)) for g in groups])
    counts = np.bincount(index, minlength=len(order)).astype(np.float64)
    sums = [np.bincount(index, weights=c, minlength=len(order)) for c in columns]
    return sums, counts


def _ratio(*arrays: np.ndarray, axis: int = -1) -> np.ndarray:
    *sums, counts = arrays
    return sums[0].sum(axis=axis) / counts.sum(axis=axis)


def _ratio_difference(s_a: np.ndarray, s_b: np.ndarray, counts: np.ndarray, axis: int = -1):
    total = counts.sum(axis=axis)
    return (s_a.sum(axis=axis) - s_b.sum(axis=axis)) / total


def _ratio_leakage(s_a: np.ndarray, s_b: np.ndarray, counts: np.ndarray, axis: int = -1):
    return np.maximum(0.0, _ratio_difference(s_a, s_b, counts, axis=axis))


def _bootstrap(
    data: tuple[np.ndarray, ...],
    statistic,
    *,
    confidence_level: float,
    n_resamples: int,
    seed: int,
    method: str,
) -> tuple[float, float]:
    observed = float(statistic(*data))
    if data[0].size < 2 or all(np.ptp(d) == 0 for d in data[:-1]) and np.ptp(data[-1]) == 0:
        return observed, observed  # one cluster, or no spread: nothing to resample
    kwargs = dict(
        statistic=statistic,
        paired=True,
        vectorized=True,
        confidence_level=confidence_level,
        n_resamples=int(n_resamples),
        method=method,
        batch=_BATCH,
    )
    rng = np.random.default_rng(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=RuntimeWarning)
        try:
            result = stats.bootstrap(data, rng=rng, **kwargs)
        except TypeError:  # scipy < 1.15 calls it random_state
            result = stats.bootstrap(data, random_state=rng, **kwargs)
    ci = result.confidence_interval
    low, high = float(ci.low), float(ci.high)
    if math.isnan(low) or math.isnan(high):
        warnings.warn(
            f"the {method} bootstrap interval is undefined for these data (degenerate "
            "resamples); use method='percentile'",
            RuntimeWarning,
            stacklevel=3,
        )
    return low, high


def accuracy_ci(
    scores: Sequence[float] | np.ndarray,
    *,
    groups: Sequence[Hashable] | None = None,
    confidence_level: float = 0.95,
    n_resamples: int = DEFAULT_N_RESAMPLES,
    seed: int = 0,
    method: str = "percentile",
) -> Interval:
    """Mean score with a bootstrap confidence interval.

    Args:
        scores: One score per item (1.0 correct, 0.0 wrong; any float works).
        groups: Cluster of each item, resampled as a unit: the question id when the
            items are (question, fold) pairs, or the track. None resamples items.
        confidence_level: Coverage of the interval.
        n_resamples: Bootstrap resamples.
        seed: Seed of the resampling generator.
        method: ``"percentile"`` (default), ``"basic"`` or ``"BCa"`` (see
            :func:`scipy.stats.bootstrap`).

    Returns:
        An :class:`Interval` whose ``estimate`` is the plain mean of ``scores``.

    Examples
    --------
    >>> ci = accuracy_ci([1, 1, 1, 1], n_resamples=99)
    >>> (ci.estimate, ci.low, ci.high)
    (1.0, 1.0, 1.0)
    """
    values = score_array(scores, "scores")
    _check_options(confidence_level, n_resamples, method)
    (sums,), counts = cluster_sums([values], groups)
    low, high = _bootstrap(
        (sums, counts),
        _ratio,
        confidence_level=confidence_level,
        n_resamples=n_resamples,
        seed=seed,
        method=method,
    )
    return Interval(float(values.mean()), low, high, confidence_level, values.size, counts.size)


def _paired(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    statistic,
    *,
    groups,
    confidence_level: float,
    n_resamples: int,
    seed: int,
    method: str,
) -> Interval:
    x, y = score_array(a, "a"), score_array(b, "b")
    if x.size != y.size:
        raise ValueError(
            f"paired scores need the same items: a has {x.size}, b has {y.size}; "
            "align them on the shared (question, fold) keys first"
        )
    _check_options(confidence_level, n_resamples, method)
    (s_a, s_b), counts = cluster_sums([x, y], groups)
    low, high = _bootstrap(
        (s_a, s_b, counts),
        statistic,
        confidence_level=confidence_level,
        n_resamples=n_resamples,
        seed=seed,
        method=method,
    )
    estimate = float(statistic(s_a, s_b, counts))
    return Interval(estimate, low, high, confidence_level, x.size, counts.size)


def paired_difference_ci(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    *,
    groups: Sequence[Hashable] | None = None,
    confidence_level: float = 0.95,
    n_resamples: int = DEFAULT_N_RESAMPLES,
    seed: int = 0,
    method: str = "percentile",
) -> Interval:
    """``mean(a) - mean(b)`` on the same items, with a paired bootstrap interval.

    Args:
        a, b: Scores of two runs, aligned item by item (same question, same fold).
        groups: Cluster of each item (question id or track), resampled as a unit.
        confidence_level, n_resamples, seed, method: As in :func:`accuracy_ci`.

    Returns:
        An :class:`Interval`; ``contains_zero`` flags a difference the data cannot
        tell from zero.

    Examples
    --------
    >>> paired_difference_ci([1, 0, 1], [1, 0, 1], n_resamples=99).contains_zero
    True
    """
    return _paired(
        a,
        b,
        _ratio_difference,
        groups=groups,
        confidence_level=confidence_level,
        n_resamples=n_resamples,
        seed=seed,
        method=method,
    )


def leakage_ci(
    without_audio: Sequence[float] | np.ndarray,
    text_backbone: Sequence[float] | np.ndarray,
    *,
    groups: Sequence[Hashable] | None = None,
    confidence_level: float = 0.95,
    n_resamples: int = DEFAULT_N_RESAMPLES,
    seed: int = 0,
    method: str = "percentile",
) -> Interval:
    """MMStar's multimodal leakage ``max(0, S_without - S_text)`` with a paired interval.

    Args:
        without_audio: Scores of the audio model given no audio (``audio=none``).
        text_backbone: Scores of its text-only backbone on the same items.
        groups, confidence_level, n_resamples, seed, method: As in
            :func:`paired_difference_ci`.

    Examples
    --------
    >>> leakage_ci([0, 0, 1, 0], [1, 1, 1, 0], n_resamples=99).estimate
    0.0
    """
    return _paired(
        without_audio,
        text_backbone,
        _ratio_leakage,
        groups=groups,
        confidence_level=confidence_level,
        n_resamples=n_resamples,
        seed=seed,
        method=method,
    )


def wilcoxon_pvalue(
    a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray, *, zero_method: str = "wilcox"
) -> float:
    """Two-sided Wilcoxon signed-rank p-value of paired scores (:func:`scipy.stats.wilcoxon`).

    Args:
        a, b: Paired per-question scores (e.g. accuracy over the folds of each question).
        zero_method: How zero differences are treated (scipy's option).

    Returns:
        The p-value; 1.0 when every difference is zero (nothing to test).

    Examples
    --------
    >>> wilcoxon_pvalue([1, 0, 1], [1, 0, 1])
    1.0
    """
    x, y = score_array(a, "a"), score_array(b, "b")
    if x.size != y.size:
        raise ValueError(f"paired scores need equal lengths, got {x.size} and {y.size}")
    if np.all(x == y):
        return 1.0
    return float(stats.wilcoxon(x, y, zero_method=zero_method).pvalue)
