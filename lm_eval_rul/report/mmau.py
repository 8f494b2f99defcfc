"""The MMAU-layout sections of the report (MMAU, MMAR): accuracy by the labels each
document names (MMAU: sub-category and difficulty; MMAR: category and sub-category), and
the always-the-same-letter baselines.

Both are read from the logged documents (:class:`~.samples.Sample` keeps their
``breakdown_fields`` as ``labels``), so they apply to the letter, generation and fold
tasks alike. The always-letter
baseline of letter X is the accuracy of answering X to every question in the order the
run showed (the JSON's order under ``official`` / ``lmms``: B is right in 134 of
test-mini's 334 music items; seeded under ``rul``), over the (question, fold) samples; a
letter beyond an item's options is wrong for it, and ``chance`` (the mean of each item's
``1 / n options``) is what the letters are read against when items have 2 to 6 options.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

from .runs import Run

__all__ = ["label_breakdowns", "always_letter_baselines"]


def label_breakdowns(runs: Sequence[Run], benchmark: str) -> dict[str, Any] | None:
    """``{dimension: {label: {run label: {"acc", "n_questions", "n_samples"}}}}`` over the
    documents' labels (their ``breakdown_fields``); None when no sample has one."""
    out: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    found = False
    for run in runs:
        cells: dict[tuple[str, str], tuple[list[float], set[str]]] = defaultdict(
            lambda: ([], set())
        )
        for sample in run.samples_of(benchmark):
            for dimension, label in sample.labels:
                values, ids = cells[(dimension, label)]
                values.append(sample.correct)
                ids.add(sample.id)
                found = True
        for (dimension, label), (values, ids) in cells.items():
            out[dimension].setdefault(label, {})[run.label] = {
                "acc": float(np.mean(values)),
                "n_questions": len(ids),
                "n_samples": len(values),
            }
    if not found:
        return None
    return {
        dim: dict(sorted(rows.items(), key=lambda kv: kv[0].lower()))
        for dim, rows in out.items()
        if rows
    }


def always_letter_baselines(runs: Sequence[Run], benchmark: str) -> dict[str, Any]:
    """Per option order (``rul``/``official``/``lmms`` for MMAU, ``seeded`` otherwise): the
    accuracy of always answering each letter, over the first run's samples in that order.

    Returns:
        ``{order: {"letters": {letter: acc}, "best": letter, "chance": mean 1/n options,
        "n_samples": n}}``.
    """
    seen: dict[str, dict[tuple[str, int], Any]] = defaultdict(dict)
    for run in runs:
        for sample in run.samples_of(benchmark):
            seen[sample.order].setdefault(sample.key, sample)
    out: dict[str, Any] = {}
    for order, by_key in sorted(seen.items()):
        samples = list(by_key.values())
        if not any(s.answer_letters for s in samples):
            continue
        width = max(s.n_options for s in samples)
        letters = [chr(ord("A") + i) for i in range(width)]
        accuracy = {x: float(np.mean([x in s.answer_letters for s in samples])) for x in letters}
        out[order] = {
            "letters": accuracy,
            "best": max(letters, key=lambda x: accuracy[x]),
            "chance": float(np.mean([1.0 / s.n_options for s in samples])),
            "n_samples": len(samples),
        }
    return out
