"""Distractor-to-answer similarity and duplicate options: small pure functions.

The RUListening paper's check: a good perception-hard distractor is *close* to the
correct answer as text (T5) but *spread* from it in a music-aware space (CLAP's text
tower). A distractor near-identical to the correct answer in *both* spaces is likely the
correct answer in disguise; an exact or case-only copy certainly is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..questions import normalize_answer

__all__ = [
    "DEFAULT_NEAR",
    "Duplicate",
    "cosine_similarity",
    "option_similarities",
    "summarize",
    "near_identical",
    "find_duplicates",
]

#: Default cosine above which a distractor counts as near-identical, per space.
DEFAULT_NEAR: dict[str, float] = {"t5": 0.95, "clap": 0.95}


def cosine_similarity(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cosine similarity of ``a`` and ``b`` (same shape, or ``b`` one vector).

    Zero vectors have similarity 0 with everything.

    >>> cosine_similarity(np.array([[1.0, 0.0], [1.0, 1.0]]), np.array([1.0, 0.0])).round(3)
    array([1.   , 0.707])
    """
    a = np.atleast_2d(np.asarray(a, dtype=np.float64))
    b = np.asarray(b, dtype=np.float64)
    b = np.broadcast_to(b, a.shape)
    norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    dots = np.einsum("ij,ij->i", a, b)
    return np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)


def option_similarities(
    correct: str, distractors: Sequence[str], index: Mapping[str, int], unit: np.ndarray
) -> np.ndarray:
    """Cosine of each distractor to ``correct``, from unit-normalised embeddings.

    Args:
        correct: The correct answer.
        distractors: The distractors (or pool candidates).
        index: Text -> row of ``unit``.
        unit: Unit-normalised embeddings (zero rows allowed).

    Returns:
        One similarity per distractor, clipped to [-1, 1].
    """
    if not distractors:
        return np.zeros(0)
    rows = unit[[index[d] for d in distractors]].astype(np.float64)
    return np.clip(rows @ unit[index[correct]].astype(np.float64), -1.0, 1.0)


def summarize(values: Sequence[float] | np.ndarray) -> dict[str, float | int]:
    """``n``, ``mean``, ``std``, ``min``, ``p05``, ``q1``, ``median``, ``q3``, ``p95``, ``max``.

    >>> summarize([0.0, 0.5, 1.0])["median"]
    0.5
    """
    data = np.asarray(values, dtype=np.float64)
    if data.size == 0:
        return {"n": 0}
    p05, q1, med, q3, p95 = np.percentile(data, [5, 25, 50, 75, 95])
    return {
        "n": int(data.size),
        "mean": float(data.mean()),
        "std": float(data.std(ddof=1)) if data.size > 1 else 0.0,
        "min": float(data.min()),
        "p05": float(p05),
        "q1": float(q1),
        "median": float(med),
        "q3": float(q3),
        "p95": float(p95),
        "max": float(data.max()),
    }


def near_identical(
    similarities: Mapping[str, Sequence[float]], thresholds: Mapping[str, float]
) -> list[bool]:
    """Per distractor: at or above the threshold in *every* space given.

    Args:
        similarities: Space -> one similarity per distractor (same length in each space).
        thresholds: Space -> cosine threshold.

    >>> near_identical({"t5": [0.99, 0.99], "clap": [0.97, 0.5]}, {"t5": 0.95, "clap": 0.95})
    [True, False]
    """
    if not similarities:
        return []
    lengths = {len(v) for v in similarities.values()}
    if len(lengths) != 1:
        raise ValueError(f"one similarity per distractor in every space, got lengths {lengths}")
    stacked = [np.asarray(similarities[s]) >= thresholds[s] for s in similarities]
    return [bool(x) for x in np.logical_and.reduce(stacked)]


@dataclass(frozen=True)
class Duplicate:
    """An option that repeats another one of the same question.

    Attributes:
        index: Position of the distractor in the question's distractors.
        of: ``"correct_answer"`` or ``"distractors[j]"`` (the earlier option it repeats).
        kind: ``exact`` (same text), ``case`` (differs only in letter case) or
            ``normalised`` (differs only in case, spacing or trailing punctuation).
    """

    index: int
    of: str
    kind: str

    def to_dict(self) -> dict:
        return {"index": self.index, "of": self.of, "kind": self.kind}


_KINDS = ("exact", "case", "normalised")


def _keys(text: str) -> tuple[str, str, str]:
    return text, text.lower(), normalize_answer(text)


def find_duplicates(correct: str, distractors: Sequence[str]) -> list[Duplicate]:
    """Distractors that repeat the correct answer or an earlier distractor.

    >>> found = find_duplicates("Tom-tom", ["Tom-Tom", "Snare", "snare."])
    >>> [(d.index, d.of, d.kind) for d in found]
    [(0, 'correct_answer', 'case'), (2, 'distractors[1]', 'normalised')]
    """
    correct_keys = _keys(correct)
    earlier: list[dict[str, int]] = [{}, {}, {}]
    found = []
    for i, text in enumerate(distractors):
        keys = _keys(text)
        hit = next((k for k in range(3) if keys[k] == correct_keys[k]), None)
        if hit is not None:
            found.append(Duplicate(i, "correct_answer", _KINDS[hit]))
        else:
            hit = next((k for k in range(3) if keys[k] in earlier[k]), None)
            if hit is not None:
                found.append(Duplicate(i, f"distractors[{earlier[hit][keys[hit]]}]", _KINDS[hit]))
        for k in range(3):
            earlier[k].setdefault(keys[k], i)
    return found
