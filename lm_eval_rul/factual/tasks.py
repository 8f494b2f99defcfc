"""The factual task functions the YAMLs point to (via ``tasks/factual/utils.py``).

* :func:`load_factual` (``custom_dataset``): reads the dataset from ``--metadata``
  (:func:`~lm_eval_rul.factual.datasets.sources.prepare_task`: sample, random clips, audio
  checked before any model loads) and makes one document per window
  (:func:`~lm_eval_rul.factual.documents.make_documents`);
* :func:`process_results`: parses one window's answer with the lexicon parser into a
  chunk record (:mod:`~lm_eval_rul.factual.records`), the value of every metric;
* the aggregation functions (:data:`AGGREGATIONS_BY_METRIC`, exported by name: ``f1``,
  ``precision``, ...): group the records by item, aggregate the windows' labels
  (``chunk_rule``) and score the items;
* :func:`add_item_predictions`: after a run, writes each item's aggregated prediction
  and scores into its logged samples (``lm-eval-rul run`` calls it).

``--metadata`` keys (:data:`FACTUAL_METADATA_KEYS`): those of
:func:`~lm_eval_rul.factual.datasets.sources.prepare_task` plus ``chunk_seconds``,
``chunk_rule``, ``factual_protocol`` (or ``protocol``), ``max_audio_seconds`` and ``chunked``
(:func:`~lm_eval_rul.factual.documents.run_options`).
"""

from __future__ import annotations

import functools
import json
import logging
import os
from collections.abc import Mapping, Sequence
from typing import Any

from .datasets.sources import METADATA_KEYS, PreparedTask, describe_dropped, prepare_task
from .documents import describe_windows, make_documents, run_options
from .errors import AudioFilesError, FactualInputError
from .reading.genres import GenreTree, read_genre_tree
from .reading.labels import out_of_vocabulary, task_info
from .reading.lexicon import lexicon_for
from .reading.parser import parse_labels
from .records import (
    EXTRA_FIGURES,
    SET_FIGURES,
    TREE_FIGURES,
    figure_names,
    item_figures,
    item_predictions,
)

__all__ = [
    "FACTUAL_METADATA_KEYS",
    "load_factual",
    "process_results",
    "AGGREGATIONS_BY_METRIC",
    "ItemAggregation",
    "add_item_predictions",
    "is_factual_doc",
    "check_tasks_audio",
    "prepared_task",
    "genre_tree_of",
    "attach_genres_csv",
]

#: ``--metadata`` keys that change what :func:`prepare_task` returns (besides the paths).
_PREPARE_KEYS = ("sample_size", "sample_seed", "verify_checksums", "on_audio_problem")
#: Every ``--metadata`` key the factual tasks read (``lm-eval-rul run`` refuses others).
FACTUAL_METADATA_KEYS: tuple[str, ...] = (
    *(key for keys in METADATA_KEYS.values() for key in keys),
    *_PREPARE_KEYS,
    "chunk_seconds",
    "chunk_rule",
    "protocol",  # accepted when the factual tasks are the only family with protocols
    "factual_protocol",
    "max_audio_seconds",
    "chunked",
    "audio",  # the condition; "none" for a text-only model (no audio to check)
)

logger = logging.getLogger(__name__)


def is_factual_doc(doc: Mapping[str, Any]) -> bool:
    """Whether a harness document (or a logged sample's ``doc``) is a window of a label-set
    task (open, list, phrasings; the binary and true/false studies carry ``study``)."""
    return "factual_task" in doc and "chunk" in doc and "study" not in doc


def prepared_task(task: str, condition: str, metadata: Mapping[str, Any]) -> PreparedTask:
    """:func:`~lm_eval_rul.factual.datasets.sources.prepare_task`, read once per process and
    options."""
    keys = (*METADATA_KEYS[task_info(task).dataset], *_PREPARE_KEYS)
    relevant = {k: metadata[k] for k in keys if k in metadata}
    return _prepared_cached(task, condition, json.dumps(relevant, sort_keys=True, default=str))


@functools.lru_cache(maxsize=16)
def _prepared_cached(task: str, condition: str, metadata_json: str) -> PreparedTask:
    # the variants of a task and the run's pre-flight checks share one reading of the
    # tables and one check of the audio files
    return prepare_task(task, json.loads(metadata_json), condition=condition)


def check_tasks_audio(tasks: Sequence[str], metadata: Mapping[str, Any]) -> None:
    """Read every factual task of a run and check its audio, naming every problem at once.

    Args:
        tasks: Factual task keys (``mood``, ``instrument``...), repeats allowed.
        metadata: The run's ``--metadata`` merged with its ``--model_args``.

    Raises:
        AudioFilesError: One task's files have problems (all of them named).
        FactualInputError: Several tasks' files do: each task's problems, with counts.
    """
    condition = run_options(metadata).condition
    errors: list[AudioFilesError] = []
    for task in dict.fromkeys(tasks):
        try:
            prepared_task(task, condition, metadata)
        except AudioFilesError as error:
            errors.append(error)
    if len(errors) == 1:
        raise errors[0]
    if errors:
        parts = [str(e).rsplit("\n", 1)[0] for e in errors]  # without the repeated "Fix:" line
        raise FactualInputError(
            f"the audio of {len(errors)} factual tasks cannot be used:\n"
            + "\n".join(parts)
            + "\n"
            + str(errors[0]).rsplit("\n", 1)[1]
        )


def attach_genres_csv(docs: Sequence[dict[str, Any]], metadata: Mapping[str, Any]) -> None:
    """Give each genre document the path of FMA's ``genres.csv`` (the tree, re-read when
    its answers are scored and by ``reparse``)."""
    folder = os.path.expanduser(str(metadata["fma_metadata_dir"]))
    path = os.path.abspath(os.path.join(folder, "genres.csv"))
    for doc in docs:
        doc["genres_csv"] = path


def load_factual(factual_task: str, variant: str, **metadata: Any) -> dict[str, Any]:
    """``custom_dataset`` of ``factual_{factual_task}_{variant}``.

    Raises:
        FactualInputError: Missing ``--metadata`` keys or tables, bad options, or (an
            ``AudioFilesError``) audio files that are missing, unreadable or fail their
            checksum, all named at once.
    """
    import datasets

    options = run_options(metadata)
    prepared = prepared_task(factual_task, options.condition, metadata)
    task_name = f"factual_{factual_task}_{variant}"
    docs = make_documents(prepared, task_name=task_name, variant=variant, options=options)
    if factual_task == "genre":  # process_results reads the tree again for the roots
        attach_genres_csv(docs, metadata)
    logger.info(
        "%s: %d items, %d documents (condition %s, %s, chunk rule %s); %s",
        task_name,
        len(prepared.items),
        len(docs),
        options.condition,
        describe_windows(options),
        options.chunk_rule,
        ", ".join(f"{k}={v}" for k, v in prepared.counts.items()),
    )
    if prepared.dropped:  # a warning when the audio check dropped items of the sample
        audio_dropped = any(not key.startswith("skipped_") for key in prepared.dropped)
        level = logging.WARNING if audio_dropped else logging.INFO
        logger.log(level, "%s: %s", task_name, describe_dropped(prepared.dropped))
    return {"test": datasets.Dataset.from_list(docs)}


@functools.lru_cache(maxsize=4)
def _tree(path: str, mtime: float) -> GenreTree:
    return read_genre_tree(path)


def genre_tree_of(doc: Mapping[str, Any]) -> GenreTree:
    """The FMA tree of a genre document (read from its ``genres_csv``, cached)."""
    path = doc.get("genres_csv")
    if not path:
        raise ValueError(f"genre document {doc.get('id')!r} lacks 'genres_csv'")
    return _tree(str(path), os.stat(str(path)).st_mtime)


def process_results(doc: dict[str, Any], results: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Parse one window's answer into its chunk record, the value of every metric.

    An answer that names no label is an empty prediction (never a guess). The parser's
    evidence (labels, dropped mentions and why, parser version) is added to the document
    as ``parsed``, so ``--log_samples`` shows it.
    """
    task = str(doc["factual_task"])
    tree = genre_tree_of(doc) if task == "genre" else None
    parsed = parse_labels(str(results[0]), lexicon_for(task, tree))
    doc["parsed"] = parsed.to_log()
    record: dict[str, Any] = {
        "id": str(doc["id"]),
        "task": task,
        "chunk": int(doc["chunk"]),
        "n_chunks": int(doc["n_chunks"]),
        "rule": str(doc["chunk_rule"]),
        "labels": list(parsed.labels),
        "gold": list(doc["gold"]),
        "oov": out_of_vocabulary(task, parsed.labels, tree.all_titles if tree else None),
    }
    if tree is not None:
        labels = dict.fromkeys([*parsed.labels, *doc["gold"]])
        record["roots"] = {label: tree.to_roots([label])[0] for label in labels}
    return {name: record for name in figure_names(task)}


class ItemAggregation:
    """The harness aggregation of one metric: chunk records -> the item-level figure.

    Args:
        name: A metric of :func:`~lm_eval_rul.factual.records.figure_names`.
    """

    def __init__(self, name: str) -> None:
        self.name = self.__name__ = name

    def __call__(self, records: Sequence[Mapping[str, Any]]) -> float:
        return item_figures(records)[self.name]

    def __repr__(self) -> str:  # what the results JSON records as the aggregation
        return f"lm_eval_rul.factual.tasks.ItemAggregation({self.name!r})"


#: Metric name -> its harness aggregation.
AGGREGATIONS_BY_METRIC: dict[str, ItemAggregation] = {
    name: ItemAggregation(name) for name in (*SET_FIGURES, *EXTRA_FIGURES, *TREE_FIGURES)
}


def add_item_predictions(samples: Mapping[str, list[dict[str, Any]]]) -> int:
    """Write each item's aggregated prediction into its logged samples (in place).

    Each factual sample gets ``item_prediction``: ``{"labels", "precision", "recall",
    "f1", "windows_answered", "windows_unread", "n_chunks"}`` of its item. An item none of
    whose windows could be read (a malformed parser reply) has no prediction: its labels
    and scores are None (it is left out of the figures, not scored as empty).

    Args:
        samples: ``results["samples"]`` of a harness run (task -> logged samples).

    Returns:
        The number of items written.
    """
    written = 0
    for rows in samples.values():
        factual = [r for r in rows if is_factual_doc(r.get("doc") or {})]
        if not factual:
            continue
        by_filter: dict[str, list[dict[str, Any]]] = {}
        for row in factual:
            by_filter.setdefault(str(row.get("filter")), []).append(row)
        for group in by_filter.values():
            name = figure_names(str(group[0]["doc"]["factual_task"]))[0]
            predictions = {p.id: p for p in item_predictions(row[name] for row in group)}
            unread = {str(r["doc"]["id"]) for r in group if str(r["doc"]["id"]) not in predictions}
            for row in group:
                item = predictions.get(str(row["doc"]["id"]))
                if item is None:  # no window of the item was read: no prediction
                    row["item_prediction"] = {
                        **dict.fromkeys(("labels", "precision", "recall", "f1")),
                        "windows_answered": 0,
                        "windows_unread": sum(
                            str(r["doc"]["id"]) == str(row["doc"]["id"]) for r in group
                        ),
                        "n_chunks": int(row[name]["n_chunks"]),
                    }
                    continue
                precision, recall, f1 = item.scores()
                row["item_prediction"] = {
                    "labels": list(item.labels),
                    "precision": precision,
                    "recall": recall,
                    "f1": f1,
                    "windows_answered": len(item.per_chunk),
                    "windows_unread": item.unread,
                    "n_chunks": item.n_chunks,
                }
            written += len(predictions) + len(unread)
    return written
