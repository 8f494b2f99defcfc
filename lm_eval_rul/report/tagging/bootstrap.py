"""The tagging gains' bootstrap, all resamples as arrays.

A resample draws ``n`` of the ``n`` paired clips with replacement (``rng.integers(0, n,
n)``, one row per resample, in the order a loop over resamples would draw them) and is
held as a count vector: how often each clip was drawn. Each form's figure of a resample
is then a function of those counts (:mod:`lm_eval_rul.tagging.ranking` for ROC-AUC,
a matrix product for micro-F1 and accuracy), computed for a chunk of resamples at a time
so that memory stays bounded (:data:`CHUNK_CELLS` counts per chunk) whatever the clip
count: time is linear in resamples × clips × tags.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from ...tagging.metrics import finite_scores
from ...tagging.ranking import ResampledAuc
from ...tagging.records import score_matrix

__all__ = ["CHUNK_CELLS", "clip_counts", "resampled_figure"]

#: Clip counts held at once (resamples × clips), about 16 MB of int64.
CHUNK_CELLS = 2_000_000


def clip_counts(rng: np.random.Generator, n: int, resamples: int) -> Iterator[np.ndarray]:
    """Chunks (rows × ``n``) of the resamples' clip counts, ``resamples`` rows in all."""
    rows = max(1, CHUNK_CELLS // max(n, 1))
    for start in range(0, resamples, rows):
        size = min(rows, resamples - start)
        picks = rng.integers(0, n, (size, n))
        offsets = (np.arange(size) * n)[:, None]
        yield np.bincount((picks + offsets).ravel(), minlength=size * n).reshape(size, n)


def _truth(tags: Sequence[str], gold: Sequence[Sequence[str]]) -> np.ndarray:
    column = {tag: j for j, tag in enumerate(tags)}
    truth = np.zeros((len(gold), len(tags)), dtype=bool)
    for i, labels in enumerate(gold):
        for tag in labels:
            if tag in column:
                truth[i, column[tag]] = True
    return truth


class _MacroAuc:
    def __init__(self, clips: Sequence[Mapping[str, Any]]) -> None:
        tags, scores, gold = score_matrix(clips)
        self._auc = ResampledAuc(finite_scores(scores), _truth(tags, gold))

    def __call__(self, counts: np.ndarray) -> np.ndarray:
        per_tag = self._auc.per_tag(counts)
        scored = np.isfinite(per_tag)
        total = np.where(scored, per_tag, 0.0).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            return total / scored.sum(axis=1)  # NaN when no tag has both classes


class _MicroF1:
    """``2·TP / (2·TP + FP + FN)`` over the drawn clips (0 when all three are 0)."""

    def __init__(self, clips: Sequence[Mapping[str, Any]], field: str) -> None:
        rows = []
        for clip in clips:
            predicted, gold = set(clip[field]), set(clip["gold"])
            rows.append((len(predicted & gold), len(predicted - gold), len(gold - predicted)))
        self._counts = np.array(rows, dtype=np.int64).reshape(len(clips), 3)

    def __call__(self, counts: np.ndarray) -> np.ndarray:
        tp, fp, fn = (counts @ self._counts).T
        denominator = 2 * tp + fp + fn
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(denominator > 0, 2 * tp / denominator, 0.0)


class _Accuracy:
    def __init__(self, clips: Sequence[Mapping[str, Any]]) -> None:
        self._acc = np.array([float(c["acc"]) for c in clips])

    def __call__(self, counts: np.ndarray) -> np.ndarray:
        return counts @ self._acc / counts.sum(axis=1)


def resampled_figure(clips: Sequence[Mapping[str, Any]], metric: str):
    """A function: clip counts (resamples × clips) -> the figure ``metric`` of each
    resample of ``clips`` (the gains' metric of their form, :data:`~.runs.FORM_METRIC`)."""
    form = clips[0]["form"]
    if form == "likelihood" and metric == "roc_auc":
        return _MacroAuc(clips)
    if form == "gen" and metric == "micro_f1":
        return _MicroF1(clips, "labels")
    if form in ("letters", "genre") and metric == "acc":
        return _Accuracy(clips)
    raise ValueError(f"no resampled {metric!r} for tagging form {form!r}")
