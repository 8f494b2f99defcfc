"""Model-free baselines of each task: the majority label and the label-frequency guesser.

Both read only the gold sets of the evaluated items (they know the label
distribution, not the audio), so they say what a model that ignores the recording
could score.

* **Majority label** (ours): predict ``{l*}`` for every item, ``l*`` the label in the
  most gold sets (ties: the first in sorted order). Scored with
  :func:`~lm_eval_rul.factual.metrics.set_metrics`.
* **Label frequency** (ours): include each label ``l`` independently with probability
  ``p_l`` = the share of items whose gold set has ``l``. Its expected set size equals
  the mean gold-set size, and its expected per-item scores are computed exactly: for
  an item with gold set G (``g = |G|``), the hits ``X = |S ∩ G|`` and the misses
  ``Y = |S \\ G|`` are independent Poisson-binomial counts, and

      E[P]  = Σ_{x+y>0} Pr(X=x) Pr(Y=y) · x / (x + y)     (P = 0 when S is empty)
      E[R]  = Σ_{l∈G} p_l / g
      E[F1] = Σ_{x,y}   Pr(X=x) Pr(Y=y) · 2x / (x + y + g)

  The micro recall ``E[Σ hits] / Σ g`` is exact as well; the micro precision and F1
  are reported as ratios of expected counts (their values as the number of items grows).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

import numpy as np

from .metrics import SetMetrics, set_metrics

__all__ = [
    "label_frequencies",
    "majority_label",
    "majority_baseline",
    "poisson_binomial_pmf",
    "expected_item_scores",
    "FrequencyBaseline",
    "frequency_baseline",
]


def label_frequencies(golds: Sequence[Iterable[str]]) -> dict[str, float]:
    """``{label: share of items whose gold set has it}``, most frequent first.

    Examples
    --------
    >>> label_frequencies([["a"], ["a", "b"], ["c"], ["a"]])
    {'a': 0.75, 'b': 0.25, 'c': 0.25}
    """
    sets = [set(g) for g in golds]
    if not sets:
        raise ValueError("golds must not be empty")
    counts = Counter(label for g in sets for label in g)
    return {
        label: count / len(sets)
        for label, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    }


def majority_label(golds: Sequence[Iterable[str]]) -> str:
    """The label in the most gold sets (ties: first in sorted order)."""
    return next(iter(label_frequencies(golds)))


def majority_baseline(golds: Sequence[Iterable[str]]) -> SetMetrics:
    """Scores of predicting :func:`majority_label` for every item."""
    label = majority_label(golds)
    return set_metrics([[label]] * len(golds), golds)


def poisson_binomial_pmf(probs: Sequence[float]) -> np.ndarray:
    """``pmf[k] = Pr(k successes)`` of independent Bernoulli trials (exact convolution).

    Examples
    --------
    >>> poisson_binomial_pmf([0.5, 0.5]).tolist()
    [0.25, 0.5, 0.25]
    """
    pmf = np.ones(1)
    for p in probs:
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"probabilities must be in [0, 1], got {p!r}")
        pmf = np.convolve(pmf, [1.0 - p, p])
    return pmf


def expected_item_scores(
    gold: Iterable[str], frequencies: dict[str, float]
) -> tuple[float, float, float]:
    """Exact E[P], E[R], E[F1] of the label-frequency guesser on one item.

    Args:
        gold: The item's gold labels (labels missing from ``frequencies`` have p = 0).
        frequencies: ``{label: probability of predicting it}``.
    """
    gold = set(gold)
    if not gold:
        raise ValueError("the gold set must not be empty")
    pmf_x = poisson_binomial_pmf([frequencies.get(label, 0.0) for label in sorted(gold)])
    pmf_y = poisson_binomial_pmf([p for label, p in frequencies.items() if label not in gold])
    x = np.arange(pmf_x.size)[:, None]
    y = np.arange(pmf_y.size)[None, :]
    joint = pmf_x[:, None] * pmf_y[None, :]
    size = x + y
    precision = np.divide(x, size, out=np.zeros(joint.shape), where=size > 0)
    g = len(gold)
    expected_p = float((joint * precision).sum())
    expected_r = float(sum(frequencies.get(label, 0.0) for label in gold) / g)
    expected_f1 = float((joint * (2 * x / (size + g))).sum())
    return expected_p, expected_r, expected_f1


@dataclass(frozen=True)
class FrequencyBaseline:
    """Expected scores of the label-frequency guesser over a task's items.

    ``precision``/``recall``/``f1`` are exact expectations of the per-item means;
    ``micro_recall`` is exact; ``micro_precision``/``micro_f1`` are ratios of
    expected counts. ``empty_share`` is the expected share of empty predictions and
    ``mean_pred_size`` the expected set size.
    """

    n: int
    precision: float
    recall: float
    f1: float
    micro_precision: float
    micro_recall: float
    micro_f1: float
    empty_share: float
    mean_pred_size: float

    def to_dict(self) -> dict[str, float | int]:
        return asdict(self)


def frequency_baseline(
    golds: Sequence[Iterable[str]], *, frequencies: dict[str, float] | None = None
) -> FrequencyBaseline:
    """Expected scores of the label-frequency guesser (see the module docstring).

    Args:
        golds: Gold sets of the evaluated items.
        frequencies: The guesser's label probabilities (default:
            :func:`label_frequencies` of ``golds``).
    """
    sets = [frozenset(g) for g in golds]
    freqs = label_frequencies(sets) if frequencies is None else dict(frequencies)
    per_set = {g: expected_item_scores(g, freqs) for g in set(sets)}
    scores = np.array([per_set[g] for g in sets])
    n_gold = sum(len(g) for g in sets)
    expected_hits = sum(freqs.get(label, 0.0) for g in sets for label in g)
    expected_pred = len(sets) * sum(freqs.values())
    return FrequencyBaseline(
        n=len(sets),
        precision=float(scores[:, 0].mean()),
        recall=float(scores[:, 1].mean()),
        f1=float(scores[:, 2].mean()),
        micro_precision=expected_hits / expected_pred if expected_pred else 0.0,
        micro_recall=expected_hits / n_gold,
        micro_f1=2 * expected_hits / (expected_pred + n_gold),
        empty_share=float(np.prod([1.0 - p for p in freqs.values()])),
        mean_pred_size=float(sum(freqs.values())),
    )
