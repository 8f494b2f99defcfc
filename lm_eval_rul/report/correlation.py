"""Pearson's r with its interval and p-value (PI against accuracy), on :mod:`scipy.stats`."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
from scipy import stats

from .stats import score_array

__all__ = ["Correlation", "pearson"]


@dataclass(frozen=True)
class Correlation:
    """Pearson r with its interval and p-value (NaN where undefined)."""

    r: float
    low: float
    high: float
    pvalue: float
    n: int
    confidence_level: float

    def to_dict(self) -> dict[str, float | int]:
        return asdict(self)


def pearson(
    x: Sequence[float] | np.ndarray,
    y: Sequence[float] | np.ndarray,
    *,
    confidence_level: float = 0.95,
) -> Correlation:
    """Pearson r, its Fisher-z confidence interval and two-sided p-value (scipy).

    Args:
        x, y: Paired values (e.g. per-question PI and accuracy).
        confidence_level: Coverage of the interval.

    Returns:
        A :class:`Correlation`; NaN everywhere (with a warning) when fewer than 3 pairs
        or either input is constant, where r is undefined.

    Examples
    --------
    >>> round(pearson([1, 2, 3, 4], [2, 4, 6, 8]).r, 6)
    1.0
    """
    u, v = score_array(x, "x"), score_array(y, "y")
    if u.size != v.size:
        raise ValueError(f"x and y need equal lengths, got {u.size} and {v.size}")
    if u.size < 3 or np.ptp(u) == 0 or np.ptp(v) == 0:
        warnings.warn(
            f"Pearson r is undefined for {u.size} pairs with constant or too few values "
            "(need >= 3 pairs and spread in both); reported as NaN",
            RuntimeWarning,
            stacklevel=2,
        )
        nan = float("nan")
        return Correlation(nan, nan, nan, nan, int(u.size), confidence_level)
    result = stats.pearsonr(u, v)
    ci = result.confidence_interval(confidence_level=confidence_level)
    return Correlation(
        float(result.statistic),
        float(ci.low),
        float(ci.high),
        float(result.pvalue),
        int(u.size),
        confidence_level,
    )
