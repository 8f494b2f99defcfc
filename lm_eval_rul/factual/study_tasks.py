"""The task functions of the binary-choice and true/false studies (``tasks/factual/utils.py``).

* :func:`load_factual_binary`, :func:`load_factual_truefalse` (``custom_dataset``): the
  same reading and audio check as the label-set tasks, then the study's documents
  (:mod:`~lm_eval_rul.factual.studies`);
* :func:`process_results_binary`, :func:`process_results_truefalse`: one window's answer,
  generated text or the harness's multiple-choice log-likelihoods (`` A``/`` B``,
  `` true``/`` false``), into a window record, the value of every metric:

      binary:    {"id", "task", "chunk", "n_chunks", "gold_index", "options",
                  "choice": 0 | 1 | None, "p_first": float | None, "labels": [...]}
      truefalse: {"id", "task", "label", "chunk", "n_chunks", "gold": bool,
                  "answer": bool | None, "p_true": float | None}

* the aggregation functions (:data:`BINARY_AGGREGATIONS`, :data:`TRUEFALSE_AGGREGATIONS`,
  exported by name in ``utils.py``) group the records by item (or (item, label)),
  combine the windows and compute the figures of :mod:`~lm_eval_rul.factual.reading.binary` and
  :mod:`~lm_eval_rul.factual.reading.truefalse`.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from typing import Any

from .documents import RunOptions, describe_windows, run_options
from .errors import FactualInputError
from .prompts import BINARY_LETTERS, SCORINGS, TRUEFALSE_WORDS
from .reading.binary import (
    BINARY_FIGURES,
    BINARY_SET_FIGURES,
    binary_figures,
    binary_items,
    read_binary_answer,
)
from .reading.lexicon import lexicon_for
from .reading.parser import parse_labels
from .reading.truefalse import (
    TRUEFALSE_FIGURES,
    label_answers,
    read_truefalse_answer,
    truefalse_figures,
)
from .studies import make_binary_documents, make_truefalse_documents
from .tasks import attach_genres_csv, genre_tree_of, prepared_task

__all__ = [
    "is_study_doc",
    "load_factual_binary",
    "load_factual_truefalse",
    "process_results_binary",
    "process_results_truefalse",
    "binary_choices",
    "truefalse_choices",
    "StudyAggregation",
    "BINARY_AGGREGATIONS",
    "TRUEFALSE_AGGREGATIONS",
]

logger = logging.getLogger(__name__)


def is_study_doc(doc: Mapping[str, Any]) -> bool:
    """Whether a harness document (or a logged sample's ``doc``) belongs to a study."""
    return "factual_task" in doc and "study" in doc


def _load(factual_task: str, study: str, scoring: str, metadata: Mapping[str, Any]):
    import datasets

    if scoring not in SCORINGS:
        raise FactualInputError(f"scoring must be one of {', '.join(SCORINGS)}, got {scoring!r}")
    options: RunOptions = run_options(metadata)
    prepared = prepared_task(factual_task, options.condition, metadata)
    suffix = "" if scoring == "loglikelihood" else "_gen"
    task_name = f"factual_{factual_task}_{study}{suffix}"
    if study == "binary":
        docs = make_binary_documents(
            prepared, task_name=task_name, scoring=scoring, options=options
        )
    else:
        docs = make_truefalse_documents(
            prepared, task_name=task_name, scoring=scoring, options=options
        )
    if factual_task == "genre":  # a generated binary answer is read with the genre lexicon
        attach_genres_csv(docs, metadata)
    logger.info(
        "%s: %d items, %d documents (condition %s, %s)",
        task_name,
        len(prepared.items),
        len(docs),
        options.condition,
        describe_windows(options),
    )
    return {"test": datasets.Dataset.from_list(docs)}


def load_factual_binary(factual_task: str, scoring: str, **metadata: Any) -> dict[str, Any]:
    """``custom_dataset`` of ``factual_{task}_binary`` (``scoring=loglikelihood``) and
    ``factual_{task}_binary_gen`` (``scoring=generate``).

    Raises:
        FactualInputError: As the label-set tasks (missing keys, tables or audio files).
    """
    return _load(factual_task, "binary", scoring, metadata)


def load_factual_truefalse(factual_task: str, scoring: str, **metadata: Any) -> dict[str, Any]:
    """``custom_dataset`` of ``factual_{task}_truefalse`` and ``factual_{task}_truefalse_gen``.

    Raises:
        FactualInputError: As the label-set tasks.
    """
    return _load(factual_task, "truefalse", scoring, metadata)


def binary_choices(doc: Mapping[str, Any]) -> list[str]:
    """``doc_to_choice`` of the log-likelihood binary tasks: the option letters."""
    return list(BINARY_LETTERS)


def truefalse_choices(doc: Mapping[str, Any]) -> list[str]:
    """``doc_to_choice`` of the log-likelihood true/false tasks: ``true``, ``false``."""
    return list(TRUEFALSE_WORDS)


def _two_way(results: Sequence[Any]) -> tuple[int | None, float | None]:
    """The log-likelihood reading of a two-way choice: (index of the likelier continuation,
    probability of the first renormalised over the two), or ``(None, None)``.

    A score that is not finite (an API's top-k tokens did not contain that letter or word:
    ``lalm-api`` on the ``top`` path gives it ``-inf``) carries no probability. Exactly one
    finite score is the only continuation the model gave a probability to: it is chosen
    (the other gets probability 0). Neither finite: no answer (never a default to the
    first), counted in ``parse_failure`` like an unreadable generated answer.

    Examples
    --------
    >>> none = float("-inf")
    >>> _two_way([(-0.5, True), (-2.0, False)])[0], _two_way([(none, False), (-3.0, False)])
    (0, (1, 0.0))
    >>> _two_way([(none, False), (none, False)])
    (None, None)
    """
    first, second = (float(r[0]) for r in results)
    if not (math.isfinite(first) or math.isfinite(second)):
        return None, None
    top = max(s for s in (first, second) if math.isfinite(s))
    weights = [math.exp(s - top) if math.isfinite(s) else 0.0 for s in (first, second)]
    p_first = weights[0] / (weights[0] + weights[1])
    return (0 if weights[0] >= weights[1] else 1), p_first


def _window(doc: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "id": str(doc["id"]),
        "task": str(doc["factual_task"]),
        "chunk": int(doc["chunk"]),
        "n_chunks": int(doc["n_chunks"]),
    }


def process_results_binary(doc: dict[str, Any], results: Sequence[Any]) -> dict[str, Any]:
    """One window's choice (generated and read, or the likelier letter) as its record.

    A log-likelihood window in which neither letter has a probability (:func:`_two_way`)
    has no choice (None), as an unreadable generated answer. ``labels``: the chosen
    option, or for a generated answer without a choice every label the parser reads in
    it (the paper's F1, :data:`~lm_eval_rul.factual.reading.binary.BINARY_SET_FIGURES`, which
    the generated tasks report).

    The reading is added to the document as ``parsed`` (``{"choice": label or None,
    "labels": [...]}``).
    """
    options = list(doc["options"])
    p_first = None
    labels: list[str] = []
    if doc["scoring"] == "loglikelihood":
        choice, p_first = _two_way(results)
        names = BINARY_FIGURES
    else:
        tree = genre_tree_of(doc) if doc["factual_task"] == "genre" else None
        lexicon = lexicon_for(str(doc["factual_task"]), tree)
        choice = read_binary_answer(str(results[0]), options, lexicon)
        if choice is None:
            labels = list(parse_labels(str(results[0]), lexicon).labels)
        names = (*BINARY_FIGURES, *BINARY_SET_FIGURES)
    if choice is not None:
        labels = [options[choice]]
    doc["parsed"] = {"choice": None if choice is None else options[choice], "labels": labels}
    record = {
        **_window(doc),
        "gold_index": int(doc["gold_index"]),
        "options": options,
        "choice": choice,
        "p_first": p_first,
        "labels": labels,
    }
    return {name: record for name in names}


def process_results_truefalse(doc: dict[str, Any], results: Sequence[Any]) -> dict[str, Any]:
    """One window's answer about one label (generated and read, or the likelier word;
    None when it is unreadable, or when neither word has a probability)."""
    p_true = None
    if doc["scoring"] == "loglikelihood":
        index, p_true = _two_way(results)
        answer: bool | None = None if index is None else index == 0
    else:
        answer = read_truefalse_answer(str(results[0]))
    doc["parsed"] = {"answer": answer}
    record = {
        **_window(doc),
        "label": str(doc["label"]),
        "gold": bool(doc["label_gold"]),
        "answer": answer,
        "p_true": p_true,
    }
    return {name: record for name in TRUEFALSE_FIGURES}


class StudyAggregation:
    """The harness aggregation of one study metric: window records -> the figure.

    Args:
        study: ``binary`` or ``truefalse``.
        name: A metric of :data:`~lm_eval_rul.factual.reading.binary.BINARY_FIGURES` or
            :data:`~lm_eval_rul.factual.reading.truefalse.TRUEFALSE_FIGURES`.
    """

    def __init__(self, study: str, name: str) -> None:
        self.study, self.name = study, name
        self.__name__ = f"{study}_{name}"

    def __call__(self, records: Sequence[Mapping[str, Any]]) -> float:
        if self.study == "binary":
            return binary_figures(binary_items(records))[self.name]
        return truefalse_figures(label_answers(records))[self.name]

    def __repr__(self) -> str:  # what the results JSON records as the aggregation
        return f"lm_eval_rul.factual.study_tasks.StudyAggregation({self.study!r}, {self.name!r})"


#: Metric name -> its harness aggregation.
BINARY_AGGREGATIONS: dict[str, StudyAggregation] = {
    name: StudyAggregation("binary", name) for name in (*BINARY_FIGURES, *BINARY_SET_FIGURES)
}
TRUEFALSE_AGGREGATIONS: dict[str, StudyAggregation] = {
    name: StudyAggregation("truefalse", name) for name in TRUEFALSE_FIGURES
}
