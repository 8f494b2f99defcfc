"""Two things a results file says about a task beyond its metrics: that it has no answers
to score (a predictions-only run), and the name its user gave its benchmark.

* A run on a question file without answers (MMAU's ``test`` split, any file without
  ``answer``) computes no ``acc``: ``lm-eval-rul run`` writes the authors' predictions
  file beside the harness's results, ``{layout}_predictions_{task}_{date_id}.json``; the
  report lists such a task as predictions only, pointing to that file, instead of reading
  a metric it lacks.
* ``music_mc``'s documents carry ``benchmark_name`` (``--metadata benchmark_name``) and
  ``benchmark_task``: the report keys the task by that name (``music_mc_gen`` on
  ``MMAU-sound`` is ``MMAU-sound_gen``), so two user benchmarks are two sections.
"""

from __future__ import annotations

import glob
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["predictions_only_entry", "named_benchmark"]


def predictions_only_entry(results: dict[str, Any], task: str, path: Path) -> dict[str, Any] | None:
    """``{"predictions_file", "n"}`` for a task of the results file ``path`` that has no
    ``acc`` and a predictions file beside it; None for a task with results to read."""
    row = (results.get("results") or {}).get(task) or {}
    stamp = path.stem.removeprefix("results_")
    found = sorted(path.parent.glob(f"*_predictions_{glob.escape(task)}_{glob.escape(stamp)}.json"))
    if not found or any(key.split(",")[0] == "acc" for key in row):
        return None
    try:  # the harness counts scored documents (none here): the file's items are the count
        n = len(json.loads(found[0].read_text("utf-8")))
    except (OSError, ValueError, TypeError):
        n = ((results.get("n-samples") or {}).get(task) or {}).get("original")
    return {"predictions_file": str(found[0]), "n": n}


def named_benchmark(benchmark: str, rows: Sequence[tuple[str, dict[str, Any]]]) -> str:
    """``benchmark`` with its task's name replaced by the documents' ``benchmark_name``."""
    doc = (rows[0][1].get("doc") or {}) if rows else {}
    name, task = doc.get("benchmark_name"), doc.get("benchmark_task")
    return benchmark.replace(str(task), str(name)) if name and task else benchmark
