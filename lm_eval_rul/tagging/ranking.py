"""Per-tag ROC-AUC and average precision of a (clips × tags) score matrix, every tag at
once, and ROC-AUC under bootstrap resamples given as clip counts.

scikit-learn's ``roc_auc_score`` and ``average_precision_score`` are the definitions
(tests/test_tagging_ranking.py holds the two to 1e-9); this module computes the same
numbers with one sort per tag instead of one call per tag and resample:

* ROC-AUC is the Mann-Whitney form: with average ranks (ties share their mean rank),
  ``(sum of the positives' ranks - P(P+1)/2) / (P·N)``; a tied (positive, negative) pair
  counts half.
* Average precision is ``sum over distinct thresholds of (R_k - R_(k-1))·P_k``, thresholds
  being the distinct scores (tied clips enter together), as scikit-learn sums it.
* A bootstrap resample is a clip count vector ``w`` (how often each clip was drawn): the
  resample's ROC-AUC is ``sum_(pos i, neg k) w_i·w_k·K(s_i, s_k) / (W_pos·W_neg)`` with
  ``K`` 1 when ``s_i > s_k``, 1/2 on a tie: exactly the figure of the resampled clips
  (duplicates are ties of a clip with itself). Per tag the negatives are sorted once; a
  resample costs one cumulative sum of its negatives' counts.

A tag whose clips (or resampled clips) are all positive or all negative has no ROC-AUC
or average precision: NaN here, left out of the macro means by the callers.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata

__all__ = ["roc_auc_columns", "average_precision_columns", "ResampledAuc"]


def _inputs(scores: np.ndarray, truth: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    scores = np.asarray(scores, dtype=float)
    truth = np.asarray(truth, dtype=bool)
    if scores.ndim != 2 or scores.shape != truth.shape:
        raise ValueError(f"scores {scores.shape} and truth {truth.shape}: expected equal 2-D")
    return scores, truth


def roc_auc_columns(scores: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """ROC-AUC of every column (NaN where a column lacks a positive or a negative).

    >>> roc_auc_columns(np.array([[0.9, 0.3], [0.2, 0.3], [0.1, 0.3]]),
    ...                 np.array([[1, 1], [0, 0], [1, 0]])).tolist()
    [0.5, 0.5]
    """
    scores, truth = _inputs(scores, truth)
    positives = truth.sum(axis=0)
    negatives = truth.shape[0] - positives
    ranks = rankdata(scores, method="average", axis=0)
    rank_sum = np.where(truth, ranks, 0.0).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        auc = (rank_sum - positives * (positives + 1) / 2) / (positives * negatives)
    return np.where((positives > 0) & (negatives > 0), auc, np.nan)


def average_precision_columns(scores: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Average precision of every column (NaN where a column lacks a positive or a negative).

    >>> average_precision_columns(np.array([[0.9], [0.5], [0.5], [0.1]]),
    ...                           np.array([[1], [0], [1], [0]])).round(4).tolist()
    [0.8333]
    """
    scores, truth = _inputs(scores, truth)
    n = scores.shape[0]
    order = np.argsort(-scores, axis=0, kind="stable")
    ranked = np.take_along_axis(scores, order, axis=0)
    hits = np.take_along_axis(truth, order, axis=0).astype(float)
    tp = np.cumsum(hits, axis=0)
    # each clip takes the precision at the end of its run of tied scores (one threshold)
    last = np.ones_like(ranked, dtype=bool)
    last[:-1] = ranked[1:] != ranked[:-1]
    end = np.where(last, np.arange(n)[:, None], n)
    end = np.minimum.accumulate(end[::-1], axis=0)[::-1]
    precision = np.take_along_axis(tp, end, axis=0) / (end + 1)
    positives = tp[-1] if n else np.zeros(scores.shape[1])
    with np.errstate(divide="ignore", invalid="ignore"):
        ap = (hits * precision).sum(axis=0) / positives
    return np.where((positives > 0) & (positives < n), ap, np.nan)


class ResampledAuc:
    """ROC-AUC per tag of bootstrap resamples of one score matrix.

    Built once per (scores, truth): per tag the negatives sorted by score and, for each
    positive, how many negatives score below it and how many below or level with it.

    >>> auc = ResampledAuc(np.array([[0.9], [0.2], [0.1]]), np.array([[1], [0], [1]]))
    >>> auc.per_tag(np.array([[1, 1, 1], [2, 1, 0]])).tolist()
    [[0.5], [1.0]]
    """

    def __init__(self, scores: np.ndarray, truth: np.ndarray) -> None:
        scores, truth = _inputs(scores, truth)
        self.n_clips, self.n_tags = scores.shape
        self._tags = []
        for j in range(self.n_tags):
            column, hit = scores[:, j], truth[:, j]
            negatives = np.flatnonzero(~hit)
            negatives = negatives[np.argsort(column[negatives], kind="stable")]
            level = column[negatives]
            positives = np.flatnonzero(hit)
            below = np.searchsorted(level, column[positives], side="left")
            through = np.searchsorted(level, column[positives], side="right")
            self._tags.append((positives, negatives, below, through))

    def per_tag(self, counts: np.ndarray) -> np.ndarray:
        """(resamples × tags) ROC-AUC of the resamples ``counts`` (resamples × clips, each
        row how often each clip was drawn); NaN where a resample lacks a class of a tag."""
        counts = np.asarray(counts)
        if counts.ndim != 2 or counts.shape[1] != self.n_clips:
            raise ValueError(f"counts {counts.shape}: expected (resamples, {self.n_clips})")
        # clips as rows: a tag's clips are gathered as whole rows of contiguous memory
        drawn = np.ascontiguousarray(counts.T, dtype=np.int32)  # sums stay <= clips
        out = np.full((counts.shape[0], self.n_tags), np.nan)
        for j, (positives, negatives, below, through) in enumerate(self._tags):
            if not len(positives) or not len(negatives):
                continue
            cumulative = np.zeros((len(negatives) + 1, drawn.shape[1]), dtype=np.int32)
            np.cumsum(drawn[negatives], axis=0, out=cumulative[1:])
            weight = drawn[positives]
            # twice the count of (positive, negative) pairs won, ties counting half
            won = cumulative[below]
            if np.array_equal(below, through):
                won2 = 2 * np.einsum("ij,ij->j", weight, won, dtype=np.int64)
            else:
                won += cumulative[through]
                won2 = np.einsum("ij,ij->j", weight, won, dtype=np.int64)
            pos_total = weight.sum(axis=0, dtype=np.int64)
            neg_total = cumulative[-1].astype(np.int64)
            with np.errstate(divide="ignore", invalid="ignore"):
                auc = won2 / (2.0 * pos_total * neg_total)
            out[:, j] = np.where((pos_total > 0) & (neg_total > 0), auc, np.nan)
        return out
