"""Set metrics of parsed predictions against gold labels, in scikit-learn's shape.

Per item, with prediction set S and gold set G (never empty):
``P = |S ∩ G| / |S|``, ``R = |S ∩ G| / |G|``, ``F1 = 2 |S ∩ G| / (|S| + |G|)``;
an empty prediction scores ``P = R = F1 = 0`` (ours: "no answer" is never rewarded,
and the item still counts in every mean).

Over items: the *mean* of the per-item scores (the paper's figures) and the
*micro* figures from pooled counts, ``P = Σ|S∩G| / Σ|S|``, ``R = Σ|S∩G| / Σ|G|``,
``F1 = 2 Σ|S∩G| / (Σ|S| + Σ|G|)``. Per label: ``F1_l = 2 tp / (2 tp + fp + fn)``; the
macro F1 averages it over the labels present in the gold sets (labels only ever
predicted are listed per label but not averaged). Also: the share of empty
predictions and the mean predicted-set size.

Genre: ``same_node`` compares FMA titles exactly; ``same_tree`` compares them after
:meth:`~lm_eval_rul.factual.genres.GenreTree.to_roots` (a sub-genre counts as its
root, so "Punk" for gold "Rock" is right under same-tree and wrong under same-node).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

import numpy as np

from .genres import GenreTree

__all__ = [
    "precision_recall_f1",
    "item_scores",
    "micro_scores",
    "per_label_scores",
    "macro_f1",
    "empty_share",
    "mean_set_size",
    "LabelScore",
    "SetMetrics",
    "set_metrics",
    "genre_metrics",
]


def _sets(
    preds: Sequence[Iterable[str]], golds: Sequence[Iterable[str]]
) -> tuple[list[set[str]], list[set[str]]]:
    p, g = [set(x) for x in preds], [set(x) for x in golds]
    if len(p) != len(g):
        raise ValueError(f"preds and golds need one entry per item: {len(p)} vs {len(g)}")
    if not g:
        raise ValueError("preds and golds must not be empty")
    empty = [i for i, x in enumerate(g) if not x]
    if empty:
        raise ValueError(f"gold sets must not be empty; empty at item index(es) {empty[:10]}")
    return p, g


def precision_recall_f1(pred: Iterable[str], gold: Iterable[str]) -> tuple[float, float, float]:
    """P, R, F1 of one item (empty prediction: all zero).

    Examples
    --------
    >>> precision_recall_f1(["piano", "violin", "drums"], ["piano", "violin", "cello", "viola"])
    (0.6666666666666666, 0.5, 0.5714285714285714)
    >>> precision_recall_f1([], ["piano"])
    (0.0, 0.0, 0.0)
    """
    s, g = set(pred), set(gold)
    if not g:
        raise ValueError("the gold set must not be empty")
    if not s:
        return 0.0, 0.0, 0.0
    hit = len(s & g)
    return hit / len(s), hit / len(g), 2 * hit / (len(s) + len(g))


def item_scores(
    preds: Sequence[Iterable[str]], golds: Sequence[Iterable[str]]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-item P, R, F1 arrays (pair them across conditions by item)."""
    p, g = _sets(preds, golds)
    scores = np.array([precision_recall_f1(s, t) for s, t in zip(p, g, strict=True)])
    return scores[:, 0], scores[:, 1], scores[:, 2]


def micro_scores(
    preds: Sequence[Iterable[str]], golds: Sequence[Iterable[str]]
) -> tuple[float, float, float]:
    """P, R, F1 from counts pooled over items.

    Examples
    --------
    >>> micro_scores([["a", "b"], []], [["a"], ["b", "c"]])
    (0.5, 0.3333333333333333, 0.4)
    """
    p, g = _sets(preds, golds)
    hit = sum(len(s & t) for s, t in zip(p, g, strict=True))
    n_pred, n_gold = sum(map(len, p)), sum(map(len, g))
    precision = hit / n_pred if n_pred else 0.0
    return precision, hit / n_gold, 2 * hit / (n_pred + n_gold)


@dataclass(frozen=True)
class LabelScore:
    """One label's counts and scores over items (``support`` = items with it in gold)."""

    precision: float
    recall: float
    f1: float
    support: int
    predicted: int


def per_label_scores(
    preds: Sequence[Iterable[str]],
    golds: Sequence[Iterable[str]],
    *,
    labels: Sequence[str] | None = None,
) -> dict[str, LabelScore]:
    """Precision, recall, F1 of each label (default: every gold or predicted label)."""
    p, g = _sets(preds, golds)
    tp, n_pred, n_gold = Counter(), Counter(), Counter()
    for s, t in zip(p, g, strict=True):
        tp.update(s & t)
        n_pred.update(s)
        n_gold.update(t)
    if labels is None:
        labels = sorted(set(n_gold) | set(n_pred))
    out = {}
    for label in labels:
        hit, guessed, true = tp[label], n_pred[label], n_gold[label]
        out[label] = LabelScore(
            hit / guessed if guessed else 0.0,
            hit / true if true else 0.0,
            2 * hit / (guessed + true) if guessed + true else 0.0,
            true,
            guessed,
        )
    return out


def macro_f1(
    preds: Sequence[Iterable[str]],
    golds: Sequence[Iterable[str]],
    *,
    labels: Sequence[str] | None = None,
) -> float:
    """Mean per-label F1 over ``labels`` (default: the labels present in the gold sets)."""
    _, g = _sets(preds, golds)
    if labels is None:
        labels = sorted(set().union(*g))
    scores = per_label_scores(preds, golds, labels=labels)
    return float(np.mean([scores[label].f1 for label in labels])) if labels else 0.0


def empty_share(preds: Sequence[Iterable[str]]) -> float:
    """Share of items with an empty prediction."""
    if not preds:
        raise ValueError("preds must not be empty")
    return sum(1 for s in preds if not set(s)) / len(preds)


def mean_set_size(preds: Sequence[Iterable[str]]) -> float:
    """Mean number of distinct labels predicted per item."""
    if not preds:
        raise ValueError("preds must not be empty")
    return float(np.mean([len(set(s)) for s in preds]))


@dataclass(frozen=True)
class SetMetrics:
    """Every figure of one task and condition (see the module docstring)."""

    n: int
    precision: float
    recall: float
    f1: float
    micro_precision: float
    micro_recall: float
    micro_f1: float
    macro_f1: float
    empty_share: float
    mean_pred_size: float
    mean_gold_size: float
    per_label: dict[str, LabelScore]

    def to_dict(self) -> dict[str, object]:
        """Plain numbers for JSON."""
        return asdict(self)


def set_metrics(
    preds: Sequence[Iterable[str]],
    golds: Sequence[Iterable[str]],
    *,
    labels: Sequence[str] | None = None,
) -> SetMetrics:
    """All figures at once; ``labels`` restricts the macro F1 (default: gold labels).

    Examples
    --------
    >>> m = set_metrics([["piano"], []], [["piano", "violin"], ["cello"]])
    >>> m.f1, m.micro_f1, m.macro_f1, m.empty_share
    (0.3333333333333333, 0.5, 0.3333333333333333, 0.5)
    """
    p, r, f = item_scores(preds, golds)
    micro = micro_scores(preds, golds)
    return SetMetrics(
        n=len(preds),
        precision=float(p.mean()),
        recall=float(r.mean()),
        f1=float(f.mean()),
        micro_precision=micro[0],
        micro_recall=micro[1],
        micro_f1=micro[2],
        macro_f1=macro_f1(preds, golds, labels=labels),
        empty_share=empty_share(preds),
        mean_pred_size=mean_set_size(preds),
        mean_gold_size=mean_set_size(golds),
        per_label=per_label_scores(preds, golds),
    )


def genre_metrics(
    preds: Sequence[Iterable[str]], golds: Sequence[Iterable[str]], tree: GenreTree
) -> dict[str, SetMetrics]:
    """``{"same_node": ..., "same_tree": ...}`` for FMA genre predictions."""
    return {
        "same_node": set_metrics(preds, golds),
        "same_tree": set_metrics(
            [tree.to_roots(s) for s in preds], [tree.to_roots(t) for t in golds]
        ),
    }
