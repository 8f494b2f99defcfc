"""The predictions file MMAU's authors score: their JSON items, each with ``model_output``.

The ``test`` split (9,000 items) has no answers; the authors score it from a JSON list
of its items with the model's free-text answer added as ``model_output`` (the key their
``evaluation.py`` reads; items without it are skipped there, so every item gets one). A
generation task's output is its generated text; a letter task's is the text of the
option it scored highest, which the string-match rule reads as that choice.

``lm-eval-rul run`` writes one file per MMAU task it ran (``mmau_music``, ``mmau_music_gen``:
the post-run file of MMAU's catalogue entry, ``tasks/mmau/benchmark.py``), on either split,
beside the model's results: ``{output_path}/{model}/mmau_predictions_{task}_{date_id}.json``
with the date id of the harness's ``results_{date_id}.json`` (:func:`write_predictions`);
on test-mini the authors' own scorer run on it gives the run's ``acc`` under
``mmau_protocol=official``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ...files import atomic_write
from ...harness_compat import sample_responses

__all__ = ["OUTPUT_KEY", "prediction_rows", "predictions_path", "write_predictions"]

#: The key the authors' scorer reads the answer from.
OUTPUT_KEY = "model_output"

logger = logging.getLogger(__name__)


def _output(sample: Mapping[str, Any]) -> str:
    doc, responses = sample["doc"], sample_responses(sample)  # either harness's layout
    if len(responses) == 1 and isinstance(responses[0], str):
        return responses[0]
    logliks = [float(r[0] if isinstance(r, (list, tuple)) else r) for r in responses]
    if not np.isfinite(logliks).any():
        return ""
    return str(doc["options"][int(np.argmax(logliks))])


def prediction_rows(samples: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One item per logged document (the first filter's), in the release's fields and
    order."""
    rows: dict[str, tuple[int, dict[str, Any]]] = {}
    for sample in samples:
        doc = sample["doc"]
        if str(doc["id"]) in rows:
            continue
        row: dict[str, Any] = {
            "id": doc["id"],
            "audio_id": doc.get("audio_id", ""),
            "question": doc["question"],
            "choices": list(doc["choices"]),
        }
        if doc.get("answer") is not None:
            row["answer"] = doc["answer"]
        row.update(
            {
                "dataset": doc.get("source") or "",
                "task": doc.get("mmau_task", ""),
                "split": doc.get("split", ""),
                "category": doc.get("category", ""),
                "sub-category": doc.get("sub_category", ""),
                "difficulty": doc.get("difficulty", ""),
                OUTPUT_KEY: _output(sample),
            }
        )
        rows[str(doc["id"])] = (doc.get("release_position", len(rows)), row)
    return [row for _, row in sorted(rows.values(), key=lambda pair: pair[0])]


def predictions_path(folder: Path, task: str, stamp: str) -> Path:
    """``{folder}/mmau_predictions_{task}_{stamp}.json``."""
    return Path(folder) / f"mmau_predictions_{task}_{stamp}.json"


def write_predictions(
    samples: Mapping[str, list[dict[str, Any]]], folder: Path, stamp: str
) -> list[Path]:
    """Write the predictions file of every MMAU task in ``samples``.

    Args:
        samples: Task -> its logged samples (the harness's ``results["samples"]``).
        folder: The folder of the model's results.
        stamp: The harness's date id of them (``results_{stamp}.json``).
    """
    written = []
    for task, rows in sorted(samples.items()):
        first = rows[0]["filter"] if rows else None
        items = prediction_rows(r for r in rows if r.get("filter") == first)
        path = predictions_path(folder, task, stamp)
        with atomic_write(path, "w") as handle:
            json.dump(items, handle, indent=1, ensure_ascii=False)
        logger.info("%s: wrote %d MMAU predictions (model_output) to %s", task, len(items), path)
        written.append(path)
    return written
