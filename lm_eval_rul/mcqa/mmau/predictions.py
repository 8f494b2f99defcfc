"""The predictions file an MMAU-layout benchmark's authors score: their items, each with the
model's free-text answer under the layout's key (MMAU's ``model_output``, MMAR's
``answer_prediction``).

MMAU's ``test`` split (9,000 items) has no answers; the authors score it from a JSON list
of its items with the answer added (their ``evaluation.py`` skips items without it, so
every item gets one); MMAR's ``evaluation.py`` reads the same from a JSON file. A
generation task's output is its generated text; a letter task's is the text of the option
it scored highest, which the string-match rule reads as that choice.

``lm-eval-rul run`` writes one file per layout task it ran (its documents carry
``layout``), on any file, ``{output_path}/{layout}_predictions_{task}.json``
(:func:`write_predictions`), and records each in the results under
``predictions_files``; the authors' own scorer run on it gives the run's ``acc`` under
``{layout}_protocol=official``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ...files import atomic_write
from ...questions.readers import LAYOUTS
from .documents import subset_key

__all__ = ["PREDICTION_TASKS", "prediction_rows", "write_predictions"]

#: The tasks and groups whose runs write the file (``run`` logs their samples for it).
PREDICTION_TASKS: tuple[str, ...] = (
    "mmau", "mmau_music", "mmau_music_gen", "mmar", "mmar_music", "mmar_music_gen",
)  # fmt: skip

logger = logging.getLogger(__name__)


def _output(sample: Mapping[str, Any]) -> str:
    doc, responses = sample["doc"], sample["filtered_resps"]
    if len(responses) == 1 and isinstance(responses[0], str):
        return responses[0]
    logliks = [float(r[0] if isinstance(r, (list, tuple)) else r) for r in responses]
    if not np.isfinite(logliks).any():
        return ""
    return str(doc["options"][int(np.argmax(logliks))])


def _release_row(doc: Mapping[str, Any], output: str) -> dict[str, Any]:
    """The item in its release's fields and order, with the answer under the layout's key."""
    layout = LAYOUTS[doc["layout"]]
    row: dict[str, Any] = {
        "id": doc["id"],
        layout.audio_field: doc.get("audio_id", ""),
        "question": doc["question"],
        "choices": list(doc["choices"]),
    }
    if doc.get("answer") is not None:
        row["answer"] = doc["answer"]
    row[layout.source_field] = doc.get("source") or ""
    row[layout.subset_field] = doc.get(subset_key(layout), "")
    labels = {"split": "split", "category": "category", "sub-category": "sub_category",
              "difficulty": "difficulty"}  # fmt: skip
    row.update({k: doc.get(v, "") for k, v in labels.items() if k in layout.release_fields})
    row.update(json.loads(doc.get("release_extra") or "{}"))
    row[layout.output_key] = output
    return row


def prediction_rows(samples: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One item per logged document (the first filter's), in the release's fields and
    order."""
    rows: dict[str, tuple[int, dict[str, Any]]] = {}
    for sample in samples:
        doc = sample["doc"]
        if str(doc["id"]) in rows:
            continue
        row = _release_row(doc, _output(sample))
        rows[str(doc["id"])] = (doc.get("release_position", len(rows)), row)
    return [row for _, row in sorted(rows.values(), key=lambda pair: pair[0])]


def write_predictions(results: dict[str, Any], output_path: str | None) -> list[Path]:
    """Write the predictions file of every layout task in ``results["samples"]``, and record
    each path in ``results["predictions_files"]`` (what ``report`` points to).

    Args:
        results: What ``simple_evaluate`` returned (with its samples).
        output_path: The run's ``--output_path``: a folder, or a results file whose
            folder is used. None: nothing is written (a warning says why).
    """
    samples = {
        k: v for k, v in (results.get("samples") or {}).items() if v and "layout" in v[0]["doc"]
    }
    if not samples:
        return []
    if not output_path:
        logger.warning("no --output_path: the authors' predictions file(s) not written")
        return []
    folder = Path(output_path)
    folder = folder.parent if folder.suffix == ".json" else folder
    written = []
    for task, rows in sorted(samples.items()):
        first = rows[0]["filter"] if rows else None
        items = prediction_rows(r for r in rows if r.get("filter") == first)
        layout = LAYOUTS[rows[0]["doc"]["layout"]]
        path = folder / f"{layout.name}_predictions_{task}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_write(path, "w") as handle:
            json.dump(items, handle, indent=1, ensure_ascii=False)
        logger.info("%s: wrote %d %s predictions (%s) to %s", task, len(items), layout.display,
                    layout.output_key, path)  # fmt: skip
        results.setdefault("predictions_files", {})[task] = str(path)
        written.append(path)
    return written
