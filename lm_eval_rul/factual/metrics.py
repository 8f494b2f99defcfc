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

Genre: ``same_node`` compares FMA titles exactly; ``same_tree`` (:func:`tree_metrics`)
judges each label on its own, as the paper defines it ("a prediction is counted correct if
it matches any node in the same subtree as the ground-truth label"): with ``root`` the
top-level ancestor of an FMA title (an unknown title is a root of its own, matching
nothing), per item

* precision side: a predicted label is right when its root is the root of some gold
  label; ``P = right predicted labels / |S|``;
* recall side: a gold label is found when some predicted label has its root;
  ``R = found gold labels / |G|``;
* ``F1 = 2PR / (P + R)`` (0 when both are 0); an empty prediction scores 0.

Both sides are never collapsed to their roots first: that would merge predictions ("Punk,
Post-Punk, Jazz" for gold "Rock" is two right labels of three, P = 2/3, not the roots'
"Rock, Jazz", P = 1/2), and merge gold labels likewise. "Punk" for gold "Rock" is right
under same-tree and wrong under same-node.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass

import numpy as np

from .reading.genres import GenreTree

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
    "tree_scores",
    "tree_metrics",
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


def _tree_counts(
    pred: Iterable[str], gold: Iterable[str], root_of: Callable[[str], str]
) -> tuple[list[str], list[str], list[str], list[str]]:
    """(predicted labels, the right ones, gold labels, the found ones), each label once."""
    s, g = list(dict.fromkeys(pred)), list(dict.fromkeys(gold))
    if not g:
        raise ValueError("the gold set must not be empty")
    gold_roots = {root_of(label) for label in g}
    pred_roots = {root_of(label) for label in s}
    right = [label for label in s if root_of(label) in gold_roots]
    found = [label for label in g if root_of(label) in pred_roots]
    return s, right, g, found


def _harmonic(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r else 0.0


def tree_scores(
    pred: Iterable[str], gold: Iterable[str], root_of: Callable[[str], str]
) -> tuple[float, float, float]:
    """Same-tree P, R, F1 of one item, each label judged on its own (module docstring).

    Examples
    --------
    >>> roots = {"Punk": "Rock", "Post-Punk": "Rock", "Rock": "Rock", "Jazz": "Jazz"}
    >>> tree_scores(["Punk", "Post-Punk", "Jazz"], ["Rock"], roots.get)
    (0.6666666666666666, 1.0, 0.8)
    >>> tree_scores(["Rock"], ["Punk", "Post-Punk", "Jazz"], roots.get)
    (1.0, 0.6666666666666666, 0.8)
    """
    s, right, g, found = _tree_counts(pred, gold, root_of)
    if not s:
        return 0.0, 0.0, 0.0
    p, r = len(right) / len(s), len(found) / len(g)
    return p, r, _harmonic(p, r)


def tree_metrics(
    preds: Sequence[Iterable[str]],
    golds: Sequence[Iterable[str]],
    root_of: Callable[[str], str],
) -> SetMetrics:
    """Every figure of :class:`SetMetrics` under same-tree, each label judged on its own.

    Micro: pooled right predicted labels over predicted labels, found gold labels over
    gold labels, and their harmonic mean. Per label (an FMA title): precision = the share
    of its predictions that were right, recall = the share of the items with it in gold
    where it was found, F1 their harmonic mean; macro F1 over the gold labels.
    """
    p_sets, g_sets = _sets(preds, golds)
    counts = [_tree_counts(s, g, root_of) for s, g in zip(preds, golds, strict=True)]
    scores = np.array([tree_scores(s, g, root_of) for s, g in zip(preds, golds, strict=True)])
    n_pred = sum(len(c[0]) for c in counts)
    micro_p = sum(len(c[1]) for c in counts) / n_pred if n_pred else 0.0
    micro_r = sum(len(c[3]) for c in counts) / sum(len(c[2]) for c in counts)
    predicted, right, support, found = Counter(), Counter(), Counter(), Counter()
    for s, r, g, f in counts:
        predicted.update(s)
        right.update(r)
        support.update(g)
        found.update(f)
    per_label = {}
    for label in sorted(set(predicted) | set(support)):
        lp = right[label] / predicted[label] if predicted[label] else 0.0
        lr = found[label] / support[label] if support[label] else 0.0
        per_label[label] = LabelScore(lp, lr, _harmonic(lp, lr), support[label], predicted[label])
    gold_labels = sorted(support)
    return SetMetrics(
        n=len(p_sets),
        precision=float(scores[:, 0].mean()),
        recall=float(scores[:, 1].mean()),
        f1=float(scores[:, 2].mean()),
        micro_precision=micro_p,
        micro_recall=micro_r,
        micro_f1=_harmonic(micro_p, micro_r),
        macro_f1=float(np.mean([per_label[label].f1 for label in gold_labels])),
        empty_share=empty_share(p_sets),
        mean_pred_size=mean_set_size(p_sets),
        mean_gold_size=mean_set_size(g_sets),
        per_label=per_label,
    )


def genre_metrics(
    preds: Sequence[Iterable[str]], golds: Sequence[Iterable[str]], tree: GenreTree
) -> dict[str, SetMetrics]:
    """``{"same_node": ..., "same_tree": ...}`` for FMA genre predictions."""

    def root_of(label: str) -> str:
        return tree.root(label) or f"?{label}"

    return {
        "same_node": set_metrics(preds, golds),
        "same_tree": tree_metrics(preds, golds, root_of),
    }
