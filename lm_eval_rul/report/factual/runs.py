"""The logged windows of a factual task (``samples_factual_*.jsonl``), read for the report.

Each logged sample of a factual task is one window of one item: its document, the
model's raw answer, and the chunk record (:mod:`lm_eval_rul.factual.records`) that
``process_results`` made of it (the value of every metric, e.g. ``row["f1"]``). The
report rebuilds each item's aggregated prediction from the records with
:func:`~lm_eval_rul.factual.records.item_predictions`, as the harness's aggregation did.

The binary-choice and true/false studies log one window (true/false: one window and
label) per sample, with their own records (:mod:`lm_eval_rul.factual.study_tasks`), read
as :class:`StudyWindow`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...factual.records import figure_names
from ...factual.study_tasks import is_study_doc
from ...factual.tasks import is_factual_doc
from ..samples import RunReadError

__all__ = [
    "FactualWindow",
    "is_factual_row",
    "factual_window",
    "StudyWindow",
    "is_study_row",
    "study_window",
]


@dataclass(frozen=True)
class FactualWindow:
    """One logged window of one item.

    Attributes:
        id: Item id.
        task: Factual task key (``instrument``...).
        variant: Prompt variant (``open``, ``list``...).
        chunk: Window index.
        record: The chunk record (``labels``, ``gold``, ``n_chunks``, ``rule``...).
        response: The model's raw answer.
        condition: Audio condition the document was made for.
        random_disjoint: Whether the item's random clip shares none of its gold labels.
        items_dropped: The task's items the run left out, by reason
            (:data:`~lm_eval_rul.factual.datasets.sources.DROP_REASONS`; empty for older logs).
        protocol: The factual protocol the documents were made under (``rul`` for logs
            older than the choice).
        cut: Whether the played recording was cut at the model's limit (``paper``).
        recording_seconds, heard_seconds: Its length and how much of it was heard
            (None for older logs and for conditions that play no recording).
    """

    id: str
    task: str
    variant: str
    chunk: int
    record: Mapping[str, Any] = field(repr=False)
    response: str
    condition: str
    random_disjoint: bool | None
    items_dropped: Mapping[str, int] = field(default_factory=dict)
    protocol: str = "rul"
    cut: bool = False
    recording_seconds: float | None = None
    heard_seconds: float | None = None


def _dropped(doc: Mapping[str, Any]) -> dict[str, int]:
    found = doc.get("items_dropped") or {}
    return {str(k): int(v) for k, v in found.items() if v} if isinstance(found, Mapping) else {}


def _seconds(value: Any) -> float | None:
    return None if value is None else float(value)


def is_factual_row(row: Mapping[str, Any]) -> bool:
    """Whether a logged sample is a window of a factual task."""
    return is_factual_doc(row.get("doc") or {})


def _response(row: Mapping[str, Any]) -> str:
    responses = row.get("filtered_resps") or row.get("resps") or [""]
    first = responses[0]
    while isinstance(first, list | tuple) and first:
        first = first[0]
    return str(first)


def factual_window(row: Mapping[str, Any], where: str) -> FactualWindow:
    """A :class:`FactualWindow` from one logged sample.

    Raises:
        RunReadError: The sample lacks its chunk record or a document field.
    """
    doc = row["doc"]
    task = str(doc.get("factual_task"))
    try:
        record = row[figure_names(task)[0]]
        window = FactualWindow(
            id=str(doc["id"]),
            task=task,
            variant=str(doc.get("variant", "")),
            chunk=int(doc["chunk"]),
            record=record,
            response=_response(row),
            condition=str(doc.get("condition", "")),
            random_disjoint=doc.get("random_disjoint"),
            items_dropped=_dropped(doc),
            protocol=str(doc.get("protocol") or "rul"),
            cut=bool(doc.get("cut")),
            recording_seconds=_seconds(doc.get("recording_seconds")),
            heard_seconds=_seconds(doc.get("heard_seconds")),
        )
        for key in ("id", "labels", "gold", "n_chunks", "rule", "chunk"):
            record[key]
    except (KeyError, TypeError, ValueError) as error:
        raise RunReadError(
            f"{where}: logged factual window of item {doc.get('id')!r} lacks its chunk record "
            f"({type(error).__name__}: {error}); was the file edited? rerun with --log_samples"
        ) from None
    return window


@dataclass(frozen=True)
class StudyWindow:
    """One logged window of a binary-choice or true/false task.

    Attributes:
        id: Item id.
        task: Factual task key.
        study: ``binary`` or ``truefalse``.
        scoring: ``generate`` or ``loglikelihood``.
        record: The window record (the value of every metric of the task).
        response: The raw answer (generation), or "" (log-likelihood).
        condition: Audio condition the document was made for.
        items_dropped: As :attr:`FactualWindow.items_dropped`.
    """

    id: str
    task: str
    study: str
    scoring: str
    record: Mapping[str, Any] = field(repr=False)
    response: str
    condition: str
    items_dropped: Mapping[str, int] = field(default_factory=dict)


def is_study_row(row: Mapping[str, Any]) -> bool:
    """Whether a logged sample is a window of a binary-choice or true/false task."""
    return is_study_doc(row.get("doc") or {})


def study_window(row: Mapping[str, Any], where: str) -> StudyWindow:
    """A :class:`StudyWindow` from one logged sample.

    Raises:
        RunReadError: The sample lacks its record or a document field.
    """
    doc = row["doc"]
    try:
        metric = "acc" if doc["study"] == "binary" else "base_rate"
        record = row[metric]
        for key in ("id", "chunk", "n_chunks"):
            record[key]
        return StudyWindow(
            id=str(doc["id"]),
            task=str(doc["factual_task"]),
            study=str(doc["study"]),
            scoring=str(doc["scoring"]),
            record=record,
            response=_response(row) if doc["scoring"] == "generate" else "",
            condition=str(doc.get("condition", "")),
            items_dropped=_dropped(doc),
        )
    except (KeyError, TypeError) as error:
        raise RunReadError(
            f"{where}: logged {doc.get('study')} window of item {doc.get('id')!r} lacks its "
            f"record ({type(error).__name__}: {error}); was the file edited? rerun with "
            "--log_samples"
        ) from None
