"""Tagging metrics as pure functions (scikit-learn's definitions; :mod:`.ranking` computes
the ranking ones for every tag at once).

* :func:`macro_auc`: ROC-AUC and PR-AUC (average precision) per tag, averaged over the
  tags with at least one positive and one negative clip (the MIR convention; tags
  without both are left out and counted). Tied scores count half (ROC-AUC) and as one
  threshold (PR-AUC), so a model that gives a tag the same score on every clip gets
  exactly 0.5 ROC-AUC and the tag's prevalence as PR-AUC.
* :func:`set_scores`: micro precision, recall and F1 (``2·TP / (2·TP + FP + FN)`` summed
  over clips) and ``samples_f1`` (the mean of each clip's F1; a clip with neither gold nor
  predicted tags counts 1, one with only one of them 0).
* :func:`popularity_baseline`: the k most frequent tags of the evaluated labels
  (k = their mean count per clip, rounded, at least 1), predicted for every clip.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from .ranking import average_precision_columns, roc_auc_columns

__all__ = [
    "AucScores",
    "SetScores",
    "finite_scores",
    "macro_auc",
    "set_scores",
    "popularity_tags",
    "popularity_baseline",
]


@dataclass(frozen=True)
class AucScores:
    """Macro ROC-AUC / PR-AUC and the per-tag values they average.

    Attributes:
        roc_auc: Mean over the scored tags (NaN when none can be scored).
        pr_auc: Mean average precision over the same tags.
        per_tag: Tag -> (ROC-AUC, PR-AUC) of the scored tags.
        skipped: Tags left out (all clips positive, or all negative).
    """

    roc_auc: float
    pr_auc: float
    per_tag: dict[str, tuple[float, float]]
    skipped: tuple[str, ...]


def macro_auc(
    tags: Sequence[str],
    scores: np.ndarray | Sequence[Sequence[float]],
    gold: Sequence[Iterable[str]],
) -> AucScores:
    """Macro ROC-AUC and PR-AUC of a (clips × tags) score matrix.

    Args:
        tags: The columns' tags.
        scores: One row per clip, one score per tag (higher: more likely).
        gold: Each clip's true tags.

    >>> r = macro_auc(["a", "b"], [[0.9, 0.1], [0.2, 0.8], [0.1, 0.5]], [["a"], ["b"], []])
    >>> r.roc_auc, r.pr_auc
    (1.0, 1.0)
    >>> macro_auc(["a"], [[0.3], [0.3], [0.3]], [["a"], [], []]).roc_auc
    0.5
    """
    matrix = finite_scores(np.asarray(scores, dtype=float).reshape(len(gold), len(tags)))
    if np.isnan(matrix).any():  # scikit-learn's metrics refuse them too
        bad = sorted({tags[j] for j in np.nonzero(np.isnan(matrix))[1]})
        raise ValueError(
            f"tag scores must be numbers; {int(np.isnan(matrix).sum())} are NaN "
            f"(tags {', '.join(bad[:5])}{' ...' if len(bad) > 5 else ''})"
        )
    column = {tag: j for j, tag in enumerate(tags)}
    truth = np.zeros(matrix.shape, dtype=bool)
    for i, labels in enumerate(gold):
        truth[i, [column[t] for t in set(labels) if t in column]] = True
    roc = roc_auc_columns(matrix, truth)
    precision = average_precision_columns(matrix, truth)
    scored = np.isfinite(roc)
    per_tag = {tag: (float(roc[j]), float(precision[j])) for j, tag in enumerate(tags) if scored[j]}
    skipped = tuple(tag for j, tag in enumerate(tags) if not scored[j])
    if not per_tag:
        return AucScores(float("nan"), float("nan"), {}, skipped)
    return AucScores(float(roc[scored].mean()), float(precision[scored].mean()), per_tag, skipped)


def finite_scores(matrix: np.ndarray) -> np.ndarray:
    """The scores with ``±inf`` (one answer left out of a served model's top tokens) put
    just past every finite score: the rankings are the same and every figure stays finite.
    NaN (no score at all) is left for the caller to refuse.

    >>> finite_scores(np.array([[np.inf, -1.0], [2.0, -np.inf], [1.0, 0.5]])).tolist()
    [[3.0, -1.0], [2.0, -2.0], [1.0, 0.5]]
    """
    infinite = np.isinf(matrix)
    if not infinite.any():
        return matrix
    finite = matrix[np.isfinite(matrix)]
    low, high = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 0.0)
    return np.where(
        infinite, np.where(matrix > 0, max(high, 0.0) + 1.0, min(low, 0.0) - 1.0), matrix
    )


@dataclass(frozen=True)
class SetScores:
    """Micro precision / recall / F1 and samples F1 of predicted tag sets."""

    micro_precision: float
    micro_recall: float
    micro_f1: float
    samples_f1: float
    tp: int
    fp: int
    fn: int


def _f1(tp: int, fp: int, fn: int) -> float:
    return 2 * tp / (2 * tp + fp + fn) if (2 * tp + fp + fn) else 1.0


def set_scores(predicted: Sequence[Iterable[str]], gold: Sequence[Iterable[str]]) -> SetScores:
    """Micro P/R/F1 summed over clips, and the mean per-clip F1.

    Precision is 0 when nothing was predicted at all (recall likewise without gold tags);
    a clip with neither predicted nor gold tags has F1 1.

    >>> s = set_scores([["a", "b"], []], [["a"], ["c"]])
    >>> s.micro_precision, s.micro_recall, round(s.micro_f1, 4), s.samples_f1
    (0.5, 0.5, 0.5, 0.3333333333333333)
    """
    if len(predicted) != len(gold):
        raise ValueError(f"{len(predicted)} predictions for {len(gold)} clips")
    tp = fp = fn = 0
    per_clip = []
    for pred, true in zip(predicted, gold, strict=True):
        p, g = set(pred), set(true)
        a, b, c = len(p & g), len(p - g), len(g - p)
        tp, fp, fn = tp + a, fp + b, fn + c
        per_clip.append(_f1(a, b, c))
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    micro = 2 * tp / (2 * tp + fp + fn) if (2 * tp + fp + fn) else 0.0
    samples = float(np.mean(per_clip)) if per_clip else float("nan")
    return SetScores(precision, recall, micro, samples, tp, fp, fn)


def popularity_tags(gold: Sequence[Iterable[str]], order: Sequence[str] = ()) -> tuple[str, ...]:
    """The k most frequent tags of ``gold`` (k = mean tags per clip, rounded half up, at
    least 1); ties broken by ``order`` (the vocabulary), then by name.

    >>> popularity_tags([["rock", "pop"], ["rock"], ["jazz", "rock", "pop"]])
    ('rock', 'pop')
    """
    sets = [set(g) for g in gold]
    if not sets:
        return ()
    counts: dict[str, int] = {}
    for tags in sets:
        for tag in tags:
            counts[tag] = counts.get(tag, 0) + 1
    k = max(1, int(np.floor(np.mean([len(s) for s in sets]) + 0.5)))
    rank = {tag: i for i, tag in enumerate(order)}
    ranked = sorted(counts, key=lambda t: (-counts[t], rank.get(t, len(rank)), t))
    return tuple(ranked[:k])


def popularity_baseline(gold: Sequence[Iterable[str]], order: Sequence[str] = ()) -> SetScores:
    """:func:`set_scores` of predicting :func:`popularity_tags` for every clip."""
    gold = [list(g) for g in gold]
    top = popularity_tags(gold, order)
    return set_scores([top] * len(gold), gold)
