"""Per-window records of a factual run, and the item predictions they add up to.

A harness document of a factual task is one *window* of one item (a recording longer
than ``chunk_seconds`` has several). Its answer is parsed into a **chunk record**, a
plain dict kept as the document's metric value (so the sample log holds it):

    {"id": "2186", "task": "instrument", "chunk": 0, "n_chunks": 5, "rule": "union",
     "labels": ["cello"], "gold": ["cello"]}

(genre records add ``"roots"``: the FMA root of every label and gold label, so the
same-tree figures, :func:`~lm_eval_rul.factual.metrics.tree_metrics`, need no
``genres.csv``). A window whose answer could not be read
(``labels`` None, or ``parse_status`` ``malformed``: an LLM parser's reply that stayed
malformed, :mod:`~lm_eval_rul.factual.reading.reparse`) is **unread**: it is left out of its item's
aggregation, and an item with no read window is left out of the figures (ours: a parser
failure is not a model that named nothing, so it is never scored as an empty prediction);
:func:`unread_counts` counts both. :func:`item_predictions` groups records by
item and aggregates the windows' labels (:func:`~lm_eval_rul.factual.chunks.aggregate_labels`,
union or majority); :func:`item_figures` scores the items
(:func:`~lm_eval_rul.factual.metrics.set_metrics`). The harness's aggregation functions
and the report both go through these two functions, so they agree.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .chunks import AGGREGATIONS, aggregate_labels
from .items import id_order
from .metrics import SetMetrics, precision_recall_f1, set_metrics, tree_metrics

__all__ = [
    "ItemPrediction",
    "SET_FIGURES",
    "TREE_FIGURES",
    "EXTRA_FIGURES",
    "figure_names",
    "item_predictions",
    "is_unread",
    "unread_counts",
    "item_figures",
    "set_figures",
]

logger = logging.getLogger(__name__)

#: Harness metric name -> the :class:`SetMetrics` field it reports.
SET_FIGURES: dict[str, str] = {
    "f1": "f1",
    "precision": "precision",
    "recall": "recall",
    "micro_f1": "micro_f1",
    "micro_precision": "micro_precision",
    "micro_recall": "micro_recall",
    "macro_f1": "macro_f1",
    "empty_share": "empty_share",
    "pred_size": "mean_pred_size",
}
#: Genre's same-tree figures (FMA roots), named ``tree_*``; the plain ones are same-node.
TREE_FIGURES: dict[str, str] = {
    "tree_f1": "f1",
    "tree_precision": "precision",
    "tree_recall": "recall",
    "tree_micro_f1": "micro_f1",
    "tree_macro_f1": "macro_f1",
}
#: Figures beside the set metrics: ``out_of_vocabulary``, the share of the items' predicted
#: labels that are outside the task's vocabulary (the records' ``oov``; 0 when nothing
#: was predicted, NaN when the records predate it).
EXTRA_FIGURES: tuple[str, ...] = ("out_of_vocabulary",)
_WARNED: set[tuple[str, int]] = set()


def figure_names(task: str) -> tuple[str, ...]:
    """The metric names a task reports (genre adds the same-tree ``tree_*`` figures)."""
    return (*SET_FIGURES, *EXTRA_FIGURES, *(TREE_FIGURES if task == "genre" else ()))


@dataclass(frozen=True)
class ItemPrediction:
    """One item's aggregated prediction.

    Attributes:
        id: Item id.
        task: Task key.
        gold: Gold labels.
        labels: The aggregated prediction.
        per_chunk: Each read window's labels, in window order.
        n_chunks: Windows the recording has.
        roots: Label -> FMA root (genre only; empty otherwise).
        unread: Windows whose answer could not be read (:func:`is_unread`), left out.
    """

    id: str
    task: str
    gold: tuple[str, ...]
    labels: tuple[str, ...]
    per_chunk: tuple[tuple[str, ...], ...]
    n_chunks: int
    roots: Mapping[str, str]
    unread: int = 0

    @property
    def complete(self) -> bool:
        """Every window was answered (``--limit`` can cut an item's windows)."""
        return len(self.per_chunk) + self.unread >= self.n_chunks

    def scores(self) -> tuple[float, float, float]:
        """P, R, F1 of the aggregated prediction (empty prediction: all zero)."""
        return precision_recall_f1(self.labels, self.gold)

    def tree(self, labels: Iterable[str]) -> tuple[str, ...]:
        """``labels`` as FMA roots, in order, without repeats (``?label`` when unknown)."""
        return tuple(dict.fromkeys(self.roots.get(label, f"?{label}") for label in labels))


def is_unread(record: Mapping[str, Any]) -> bool:
    """Whether a chunk record has no reading of its answer (a malformed parser reply)."""
    return record.get("labels") is None or record.get("parse_status") == "malformed"


def unread_counts(records: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """``{"windows": unread windows, "items": items none of whose windows was read}``.

    Examples
    --------
    >>> unread_counts([{"id": "1", "labels": None}, {"id": "1", "labels": ["piano"]},
    ...                {"id": "2", "labels": [], "parse_status": "malformed"}])
    {'windows': 2, 'items': 1}
    """
    read: dict[str, bool] = {}
    windows = 0
    for record in records:
        unread = is_unread(record)
        windows += unread
        read[str(record["id"])] = read.get(str(record["id"]), False) or not unread
    return {"windows": windows, "items": sum(not r for r in read.values())}


def item_predictions(records: Iterable[Mapping[str, Any]]) -> list[ItemPrediction]:
    """Group chunk records by item and aggregate each item's windows, in id order.

    Records of one item must agree on task, gold, window count and rule. Items missing
    some windows (a run with ``--limit``) are aggregated over the windows they have, with
    a warning. Unread windows (:func:`is_unread`) are left out of the aggregation, and an
    item without a read window is left out (never an empty prediction).

    Raises:
        ValueError: A record lacks a field, names an unknown rule, or disagrees with the
            other records of its item.
    """
    by_item: dict[str, list[Mapping[str, Any]]] = {}
    for record in records:
        try:
            by_item.setdefault(str(record["id"]), []).append(record)
        except (KeyError, TypeError):
            raise ValueError(f"not a factual chunk record (no 'id'): {record!r}") from None
    out = []
    for item_id in sorted(by_item, key=id_order):
        chunks = sorted(by_item[item_id], key=lambda r: int(r["chunk"]))
        first = chunks[0]
        for key in ("task", "gold", "n_chunks", "rule"):
            values = {repr(list(r[key]) if key == "gold" else r[key]) for r in chunks}
            if len(values) > 1:
                raise ValueError(f"item {item_id}: its windows disagree on {key}: {values}")
        if first["rule"] not in AGGREGATIONS:
            raise ValueError(
                f"item {item_id}: chunk rule {first['rule']!r} is not one of {AGGREGATIONS}"
            )
        read = [r for r in chunks if not is_unread(r)]
        if not read:
            continue
        per_chunk = tuple(tuple(r["labels"]) for r in read)
        roots: dict[str, str] = {}
        for record in chunks:
            roots.update(record.get("roots") or {})
        out.append(
            ItemPrediction(
                id=item_id,
                task=str(first["task"]),
                gold=tuple(first["gold"]),
                labels=aggregate_labels(per_chunk, rule=str(first["rule"])),
                per_chunk=per_chunk,
                n_chunks=int(first["n_chunks"]),
                roots=roots,
                unread=len(chunks) - len(read),
            )
        )
    _warn_incomplete(out)
    return out


def _warn_incomplete(items: Sequence[ItemPrediction]) -> None:
    partial = sum(not item.complete for item in items)
    key = (items[0].task if items else "", partial)
    if partial and key not in _WARNED:
        _WARNED.add(key)
        logger.warning(
            "factual %s: %d of %d items were scored on only some of their windows (was "
            "--limit given? use --metadata sample_size to evaluate fewer whole items)",
            key[0],
            partial,
            len(items),
        )


def set_figures(items: Sequence[ItemPrediction]) -> dict[str, SetMetrics]:
    """``{"node": SetMetrics}`` of the items, plus ``"tree"`` for genre.

    Raises:
        ValueError: No items.
    """
    if not items:
        raise ValueError("no items to score")
    preds, golds = [it.labels for it in items], [it.gold for it in items]
    out = {"node": set_metrics(preds, golds)}
    if items[0].task == "genre":  # same-tree: each label judged on its own, by its root
        roots: dict[str, str] = {}
        for item in items:
            roots.update(item.roots)
        out["tree"] = tree_metrics(preds, golds, lambda label: roots.get(label, f"?{label}"))
    return out


def _oov_share(records: Sequence[Mapping[str, Any]], items: Sequence[ItemPrediction]) -> float:
    """Share of the items' predicted labels that a record marks out of the vocabulary."""
    if not all("oov" in r for r in records if not is_unread(r)):
        return math.nan
    oov: dict[str, set[str]] = {}
    for record in records:
        oov.setdefault(str(record["id"]), set()).update(record.get("oov") or ())
    predicted = sum(len(item.labels) for item in items)
    outside = sum(len(set(item.labels) & oov.get(item.id, set())) for item in items)
    return outside / predicted if predicted else 0.0


def item_figures(records: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """Every metric of :func:`figure_names` from chunk records (the harness's aggregation).

    NaN for every metric when no item has a read window (nothing to score).

    Raises:
        ValueError: No records.
    """
    records = list(records)
    items = item_predictions(records)
    if records and not items:
        return dict.fromkeys(figure_names(str(records[0]["task"])), math.nan)
    figures = set_figures(items)
    out = {name: float(getattr(figures["node"], field)) for name, field in SET_FIGURES.items()}
    out["out_of_vocabulary"] = _oov_share(records, items)
    if "tree" in figures:
        out.update(
            {name: float(getattr(figures["tree"], field)) for name, field in TREE_FIGURES.items()}
        )
    return out
