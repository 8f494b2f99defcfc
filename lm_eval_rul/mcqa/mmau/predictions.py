"""The predictions file an MMAU-layout benchmark's authors score: their items, each with
the model's free-text answer under the layout's key (MMAU's ``model_output``, MMAR's
``answer_prediction``).

MMAU's ``test`` split (9,000 items) has no answers; the authors score it from a JSON list
of its items with the answer added (their ``evaluation.py`` skips items without it, so every
item gets one); MMAR's ``evaluation.py`` reads the same. A generation task's output is its
generated text; a letter task's is the text of the option it scored highest, which the
string-match rule reads as that choice. The documents say which layout they come from
(``release_layout``), so one writer serves every layout.

``lm-eval-rul run`` writes one file per layout task it ran (the post-run file of the
benchmark's catalogue entry, ``tasks/mmau/benchmark.py``, ``tasks/mmar/benchmark.py``),
beside the model's results:
``{output_path}/{model}/{layout}_predictions_{task}_{date_id}.json`` with the date id of
the harness's ``results_{date_id}.json`` (:func:`write_predictions`); the authors' own
scorer run on it gives the run's ``acc`` under ``{layout}_protocol=official``.
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

__all__ = ["prediction_rows", "predictions_path", "write_predictions"]

logger = logging.getLogger(__name__)


def _output(sample: Mapping[str, Any]) -> str:
    doc, responses = sample["doc"], sample_responses(sample)  # either harness's layout
    if len(responses) == 1 and isinstance(responses[0], str):
        return responses[0]
    logliks = [float(r[0] if isinstance(r, (list, tuple)) else r) for r in responses]
    if not np.isfinite(logliks).any():
        return ""
    return str(doc["options"][int(np.argmax(logliks))])


def _release_row(doc: Mapping[str, Any], output: str) -> dict[str, Any]:
    """The item in its release's fields and order, with the answer under the layout's key."""
    layout = json.loads(doc["release_layout"])
    row: dict[str, Any] = {
        "id": doc["id"],
        layout["audio_field"]: doc.get("audio_id", ""),
        "question": doc["question"],
        "choices": list(doc["choices"]),
    }
    if doc.get("answer") is not None:
        row["answer"] = doc["answer"]
    row[layout["source_field"]] = doc.get("source") or ""
    row[layout["subset_field"]] = doc.get(f"{layout['name']}_{layout['subset_field']}", "")
    labels = {
        "split": "split",
        "category": "category",
        "sub-category": "sub_category",
        "difficulty": "difficulty",
    }
    row.update({k: doc.get(v, "") for k, v in labels.items() if k in layout["release_fields"]})
    row.update(json.loads(doc.get("release_extra") or "{}"))
    row[layout["output_key"]] = output
    return row


def prediction_rows(samples: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One item per logged document (the first filter's), in the release's fields and
    order."""
    rows: dict[str, tuple[int, dict[str, Any]]] = {}
    for sample in samples:
        doc = sample["doc"]
        if str(doc["id"]) not in rows:
            row = _release_row(doc, _output(sample))
            rows[str(doc["id"])] = (doc.get("release_position", len(rows)), row)
    return [row for _, row in sorted(rows.values(), key=lambda pair: pair[0])]


def predictions_path(folder: Path, task: str, stamp: str, layout: str = "mmau") -> Path:
    """``{folder}/{layout}_predictions_{task}_{stamp}.json``."""
    return Path(folder) / f"{layout}_predictions_{task}_{stamp}.json"


def write_predictions(
    samples: Mapping[str, list[dict[str, Any]]], folder: Path, stamp: str
) -> list[Path]:
    """Write the predictions file of every MMAU-layout task in ``samples``.

    Args:
        samples: Task -> its logged samples (the harness's ``results["samples"]``).
        folder: The folder of the model's results.
        stamp: The harness's date id of them (``results_{stamp}.json``).
    """
    written = []
    for task, rows in sorted(samples.items()):
        first = rows[0]["filter"] if rows else None
        items = prediction_rows(r for r in rows if r.get("filter") == first)
        layout = json.loads(rows[0]["doc"]["release_layout"])
        path = predictions_path(folder, task, stamp, layout["name"])
        with atomic_write(path, "w") as handle:
            json.dump(items, handle, indent=1, ensure_ascii=False)
        logger.info(
            "%s: wrote %d %s predictions (%s) to %s",
            task,
            len(items),
            layout["display"],
            layout["output_key"],
            path,
        )
        written.append(path)
    return written
