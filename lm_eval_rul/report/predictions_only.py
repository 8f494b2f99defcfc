"""Two things a results file says about a task beyond its metrics: that it has no answers
to score (a predictions-only run), and the name its user gave its benchmark.

* A run on a question file without answers (MMAU's ``test`` split, any file without
  ``answer``) computes no ``acc``: ``lm-eval-rul run`` writes the authors' predictions
  file and records it under ``predictions_files``; the report lists such a task as
  predictions only, pointing to that file, instead of reading a metric it lacks.
* ``music_mc``'s documents carry ``benchmark_name`` (``--metadata benchmark_name``) and
  ``benchmark_task``: the report keys the task by that name (``music_mc_gen`` on
  ``MMAU-sound`` is ``MMAU-sound_gen``), so two user benchmarks are two sections.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["predictions_only_entry", "named_benchmark"]


def predictions_only_entry(results: dict[str, Any], task: str) -> dict[str, Any] | None:
    """``{"predictions_file", "n"}`` for a task that wrote predictions and has no ``acc``;
    None for a task with results to read."""
    file = (results.get("predictions_files") or {}).get(task)
    row = (results.get("results") or {}).get(task) or {}
    if not file or any(key.split(",")[0] == "acc" for key in row):
        return None
    try:  # the harness counts scored documents (none here): the file's items are the count
        n = len(json.loads(Path(file).read_text("utf-8")))
    except (OSError, ValueError, TypeError):
        n = ((results.get("n-samples") or {}).get(task) or {}).get("original")
    return {"predictions_file": str(file), "n": n}


def named_benchmark(benchmark: str, rows: Sequence[tuple[str, dict[str, Any]]]) -> str:
    """``benchmark`` with its task's name replaced by the documents' ``benchmark_name``."""
    doc = (rows[0][1].get("doc") or {}) if rows else {}
    name, task = doc.get("benchmark_name"), doc.get("benchmark_task")
    return benchmark.replace(str(task), str(name)) if name and task else benchmark
