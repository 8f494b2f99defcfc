"""Harness documents of the binary-choice and true/false studies.

Both start from the label-set documents (:func:`~lm_eval_rul.factual.documents.make_documents`:
one per window of each item's recording, under the run's audio condition) and add what
the study asks:

* **binary** (:func:`make_binary_documents`): the offered pair
  (:func:`~lm_eval_rul.factual.reading.binary.binary_pairs`) in ``options``, ``gold_index`` and
  the question; documents are listed in the balanced order (``position``, then window), so
  a ``--limit`` prefix is balanced too;
* **true/false** (:func:`make_truefalse_documents`): one document per (item, window,
  label) of the task's vocabulary, item then window then vocabulary order, with the
  label's gold (:func:`~lm_eval_rul.factual.reading.truefalse.gold_true_labels`) and the
  statement. All the documents of one window share the audio, so a model that caches
  the audio prefix (``lalm``) encodes it once per window and scores each label with one
  short row.

Every study document carries ``study`` (``binary`` / ``truefalse``) and ``scoring``
(``generate`` / ``loglikelihood``), which tell them apart from the label-set windows.
"""

from __future__ import annotations

from typing import Any

from .datasets.sources import PreparedTask
from .documents import RunOptions, make_documents
from .prompts import binary_prompt, candidate_labels, truefalse_prompt
from .reading.binary import binary_pairs
from .reading.truefalse import gold_true_labels

__all__ = ["STUDIES", "make_binary_documents", "make_truefalse_documents"]

#: The study names written into the documents' ``study`` field.
STUDIES: tuple[str, ...] = ("binary", "truefalse")


def make_binary_documents(
    prepared: PreparedTask, *, task_name: str, scoring: str, options: RunOptions
) -> list[dict[str, Any]]:
    """The binary-choice documents of ``prepared``, in the balanced order.

    Args:
        prepared: The checked sample (:func:`~lm_eval_rul.factual.datasets.sources.prepare_task`).
        task_name: The harness task name.
        scoring: ``generate`` or ``loglikelihood`` (the prompt's tail differs).
        options: The run's options (condition, windows).

    The pairs depend on the item and ``prepared.sample_seed`` only (never the model's seed).
    """
    task, tree = prepared.task, prepared.genre_tree
    pairs = binary_pairs(
        prepared.items,
        candidate_labels(task, tree),
        seed=prepared.sample_seed,
        group_of=tree.root if tree is not None else None,
    )
    by_id = {pair.item_id: pair for pair in pairs}
    docs = make_documents(
        prepared, task_name=task_name, variant="binary", options=options, question=""
    )
    for doc in docs:
        pair = by_id[doc["id"]]
        doc.update(
            study="binary",
            scoring=scoring,
            options=list(pair.options),
            gold_index=pair.gold_index,
            binary_gold=pair.gold,
            distractor=pair.distractor,
            position=pair.position,
            prompt=binary_prompt(task, *pair.options, scoring=scoring),
        )
    docs.sort(key=lambda doc: (doc["position"], doc["chunk"]))
    return docs


def make_truefalse_documents(
    prepared: PreparedTask, *, task_name: str, scoring: str, options: RunOptions
) -> list[dict[str, Any]]:
    """One document per (item, window, label), in item, window, vocabulary order.

    Args:
        prepared: The checked sample.
        task_name: The harness task name.
        scoring: ``generate`` or ``loglikelihood``.
        options: The run's options.
    """
    task, tree = prepared.task, prepared.genre_tree
    labels = candidate_labels(task, tree)
    prompts = {label: truefalse_prompt(task, label, scoring=scoring) for label in labels}
    docs: list[dict[str, Any]] = []
    windows = make_documents(
        prepared, task_name=task_name, variant="truefalse", options=options, question=""
    )
    for window in windows:
        true_labels = gold_true_labels(window["gold"], tree)
        for label in labels:
            gold = label in true_labels
            docs.append(
                {
                    **window,
                    "study": "truefalse",
                    "scoring": scoring,
                    "label": label,
                    "label_gold": gold,
                    "target": 0 if gold else 1,
                    "n_labels": len(labels),
                    "prompt": prompts[label],
                }
            )
    return docs
