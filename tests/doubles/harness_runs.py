"""Harness output folders written as ``hf`` writes them (a results JSON and its samples), for
the report tests that need a run without running a model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["mc_doc", "fake_run"]


def mc_doc(i: int, question: str, n_options: int = 4, **extra: Any) -> dict[str, Any]:
    options = [f"{question} option {k}" for k in range(n_options)]
    return {
        "id": f"q{i}", "question": question, "options": options,
        "letters": [chr(65 + k) for k in range(n_options)], "correct_answer": options[0],
        **extra,
    }  # fmt: skip


def fake_run(
    folder: Path,
    task: str,
    docs: list[dict[str, Any]],
    *,
    metadata: dict[str, Any] | None = None,
    stamp: str = "2026-01-01T00-00-00.000001",
    model_args: str = "pretrained=org/tiny",
    top: dict[str, Any] | None = None,
) -> Path:
    """``folder/org__tiny/results_STAMP.json`` and its samples, as ``hf`` writes them: the
    model answers the first option of even items (right) and the second of odd ones."""
    out = folder / "org__tiny"
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for i, doc in enumerate(docs):
        right = i % 2 == 0
        chosen = 0 if right else 1
        lls = [[-0.1 if k == chosen else -3.0, False] for k in range(len(doc["options"]))]
        rows.append({"doc_id": i, "doc": doc, "acc": float(right), "filtered_resps": lls,
                     "filter": "none"})  # fmt: skip
    acc = sum(r["acc"] for r in rows) / len(rows)
    results = {
        "results": {task: {"alias": task, "acc,none": acc, "acc_stderr,none": 0.1}},
        "configs": {task: {"task": task, "output_type": "multiple_choice",
                           "metadata": {"version": 1.0, **(metadata or {})}}},
        "config": {"model": "hf", "model_args": model_args},
        "n-samples": {task: {"original": len(rows), "effective": len(rows)}},
        **(top or {}),
    }  # fmt: skip
    (out / f"results_{stamp}.json").write_text(json.dumps(results))
    (out / f"samples_{task}_{stamp}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder
