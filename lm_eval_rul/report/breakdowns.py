"""Accuracy by MuChoMusic's question categories, as the official evaluation reports it.

For every benchmark whose descriptor declares ``category_keys``
(:attr:`lm_eval_rul.catalogue.Benchmark.category_keys`: MuChoMusic's and
RUL-MuChoMusic's), each run's accuracy over its (question, fold) samples per
knowledge category, reasoning category (a question counts in each of its categories;
``any`` = every question with at least one, the official "overall"), genre and source
dataset. The categories come from MuChoMusic's CSV: ``report --muchomusic-csv FILE``, or
the CSV the runs were given under one of those keys (``--metadata muchomusic_csv`` /
``muchomusic_data_path``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..questions import CATEGORY_DIMENSIONS, QuestionCategories, read_muchomusic_categories
from .runs import Run
from .samples import RunReadError

__all__ = [
    "ANY_CATEGORY",
    "category_keys",
    "categories_csv",
    "load_categories",
    "category_breakdowns",
]

#: The row of every question with at least one knowledge (reasoning) category.
ANY_CATEGORY = "any"


def category_keys(question_set: str) -> tuple[str, ...]:
    """The ``--metadata`` keys that may name ``question_set``'s category CSV, as its
    benchmark's descriptor declares them (none: the benchmark has no categories)."""
    from .run_keys import descriptor_of

    descriptor = descriptor_of(question_set)
    return descriptor.category_keys if descriptor is not None else ()


def categories_csv(runs: Iterable[Run], explicit: str | Path | None) -> Path | None:
    """The MuChoMusic CSV to read: ``explicit``, else one the runs' ``--metadata`` named."""
    if explicit is not None:
        return Path(explicit)
    for run in runs:
        for task in run.tasks.values():
            for key in category_keys(task.question_set or task.benchmark):
                value = task.metadata.get(key)
                if isinstance(value, str) and value.lower().endswith(".csv"):
                    path = Path(value).expanduser()
                    if path.is_file():
                        return path
    return None


def load_categories(
    runs: Sequence[Run], explicit: str | Path | None, notes: list[str]
) -> tuple[dict[str, QuestionCategories], str | None]:
    """The categories by question id and where they came from (empty when no CSV)."""
    path = categories_csv(runs, explicit)
    if path is None:
        notes.append(
            "no category breakdowns: give MuChoMusic's CSV with --muchomusic-csv (or run the "
            "tasks with --metadata muchomusic_csv=...)"
        )
        return {}, None
    if not path.is_file():
        raise RunReadError(f"--muchomusic-csv {str(path)!r}: no such file")
    return read_muchomusic_categories(path), str(path)


def _accuracy(values: list[float], ids: set[str]) -> dict[str, Any]:
    return {"acc": float(np.mean(values)), "n_questions": len(ids), "n_samples": len(values)}


def category_breakdowns(
    runs: Sequence[Run],
    benchmark: str,
    categories: dict[str, QuestionCategories],
    notes: list[str],
) -> dict[str, Any] | None:
    """Per dimension, per category label, per run: accuracy, questions and samples.

    Returns:
        ``{dimension: {label: {run label: {"acc", "n_questions", "n_samples"}}}}``, labels
        sorted (``any`` first); None when no question of ``benchmark`` is in the CSV.
    """
    if not categories:
        return None
    out: dict[str, dict[str, dict[str, Any]]] = {dim: {} for dim in CATEGORY_DIMENSIONS}
    matched = False
    for run in runs:
        samples = run.samples_of(benchmark)
        missing = sorted({s.id for s in samples if s.id not in categories})
        if missing:
            notes.append(
                f"{run.label} on {benchmark}: {len(missing)} question(s) are not in the "
                f"MuChoMusic CSV (e.g. {missing[:5]}); the category breakdowns leave them out"
            )
        per_label: dict[tuple[str, str], tuple[list[float], set[str]]] = defaultdict(
            lambda: ([], set())
        )
        for sample in samples:
            found = categories.get(sample.id)
            if found is None:
                continue
            matched = True
            for dimension in CATEGORY_DIMENSIONS:
                labels = list(found.labels(dimension))
                if labels and dimension in ("music_knowledge", "music_reasoning"):
                    labels.append(ANY_CATEGORY)
                for label in labels:
                    values, ids = per_label[(dimension, label)]
                    values.append(sample.correct)
                    ids.add(sample.id)
        for (dimension, label), (values, ids) in per_label.items():
            out[dimension].setdefault(label, {})[run.label] = _accuracy(values, ids)
    if not matched:
        return None
    return {
        dimension: {
            label: rows[label]
            for label in sorted(rows, key=lambda x: (x != ANY_CATEGORY, x.lower()))
        }
        for dimension, rows in out.items()
    }
