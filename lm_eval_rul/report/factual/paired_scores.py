"""Correct vs random audio: is the model's F1 with the real clip really higher?

The per-item F1 of two runs of one model (``audio=original`` and ``audio=random``) is
paired by item id; the report gives the mean difference with a paired bootstrap
interval resampled by item (:func:`~lm_eval_rul.report.stats.paired_difference_ci`) and the
two-sided Wilcoxon signed-rank p-value (:func:`~lm_eval_rul.report.stats.wilcoxon_pvalue`).
"Statistically indistinguishable" (the paper's finding for time signature) reads as an
interval containing zero.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..stats import DEFAULT_N_RESAMPLES, Interval, paired_difference_ci, wilcoxon_pvalue

__all__ = ["ConditionComparison", "pair_by_id", "compare_conditions"]


@dataclass(frozen=True)
class ConditionComparison:
    """Original minus random F1 on the same items.

    Attributes:
        difference: Mean paired difference with its bootstrap interval.
        pvalue: Wilcoxon signed-rank p-value (1.0 when every difference is zero).
        mean_original, mean_random: Mean F1 of each run on the paired items.
        n: Number of paired items.
    """

    difference: Interval
    pvalue: float
    mean_original: float
    mean_random: float
    n: int

    def to_dict(self) -> dict[str, object]:
        return {
            "difference": self.difference.to_dict(),
            "pvalue": self.pvalue,
            "mean_original": self.mean_original,
            "mean_random": self.mean_random,
            "n": self.n,
        }


def pair_by_id(
    original: Mapping[str, float], random: Mapping[str, float]
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Item ids both runs scored (sorted) and their two score arrays.

    Raises:
        ValueError: The runs share no item.
    """
    shared = sorted(set(original) & set(random))
    if not shared:
        raise ValueError("the two runs share no item id; were they run on the same task?")
    return (
        shared,
        np.array([original[k] for k in shared], dtype=float),
        np.array([random[k] for k in shared], dtype=float),
    )


def compare_conditions(
    original: Mapping[str, float],
    random: Mapping[str, float],
    *,
    confidence_level: float = 0.95,
    n_resamples: int = DEFAULT_N_RESAMPLES,
    seed: int = 0,
) -> ConditionComparison:
    """Compare per-item F1 ``{item id: F1}`` with the real clip and with a random one.

    Examples
    --------
    >>> c = compare_conditions({"a": 1.0, "b": 0.5}, {"a": 1.0, "b": 0.5}, n_resamples=99)
    >>> c.difference.estimate, c.difference.contains_zero, c.pvalue
    (0.0, True, 1.0)
    """
    _, a, b = pair_by_id(original, random)
    difference = paired_difference_ci(
        a, b, confidence_level=confidence_level, n_resamples=n_resamples, seed=seed
    )
    return ConditionComparison(
        difference, wilcoxon_pvalue(a, b), float(a.mean()), float(b.mean()), int(a.size)
    )
