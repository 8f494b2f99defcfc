"""Logged samples of the tagging tasks as per-clip records the report scores.

A logged sample is a tagging one when its document names ``tagging_task``. Its clip
record (:func:`tagging_clip`) holds what the figures need: the form, the gold tags and the
vocabulary, and the tag scores (likelihood), the tags read (free text) or the answer's
correctness (letters, GTZAN free text).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..samples import RunReadError

__all__ = ["is_tagging_row", "tagging_clip", "FORM_METRIC"]

#: The figure each form's gains are taken on.
FORM_METRIC: dict[str, str] = {
    "likelihood": "roc_auc",
    "gen": "micro_f1",
    "letters": "acc",
    "genre": "acc",
}


def is_tagging_row(row: Mapping[str, Any]) -> bool:
    """Whether a logged sample is one of a tagging task."""
    return "tagging_task" in (row.get("doc") or {})


def tagging_clip(row: Mapping[str, Any], where: str) -> dict[str, Any]:
    """The clip record of one logged tagging sample.

    Raises:
        RunReadError: The sample lacks its task's metric values.
    """
    doc = row.get("doc") or {}
    base = {
        "id": str(doc.get("id")),
        "task": str(doc.get("tagging_task")),
        "gold": list(doc.get("gold_tags") or ()),
        "tags": list(doc.get("tags") or ()),
    }
    if isinstance(row.get("roc_auc"), Mapping):
        record = row["roc_auc"]
        return {
            **base,
            "form": "likelihood",
            "scores": list(record["scores"]),
            "predicted": list(record["predicted"]),
        }
    if isinstance(row.get("micro_f1"), Mapping):
        record = row["micro_f1"]
        return {
            **base,
            "form": "gen",
            "labels": list(record["labels"]),
            "unparsed": bool(record["unparsed"]),
        }
    if "acc" in row:
        if "letters" in doc:
            return {**base, "form": "letters", "acc": float(row["acc"])}
        # a single-label free-text answer: its parse failure is shown beside its accuracy
        return {
            **base,
            "form": "genre",
            "acc": float(row["acc"]),
            "unparsed": bool(row.get("parse_failure")),
        }
    raise RunReadError(
        f"{where}: logged tagging sample doc_id={row.get('doc_id')} has none of its metric "
        "values (roc_auc, micro_f1, acc); was it written by this plugin's tagging tasks?"
    )
