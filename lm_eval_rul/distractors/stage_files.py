"""The files between stages: pools files with their reports and upstream failures."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ..questions import DEFAULT_SEED, PoolCleaningReport, Question, read_pools
from ..questions.file_kinds import question_format
from ..questions.reading import json_value, jsonl_values
from .checkpoint import file_digest, write_json
from .config import BuildConfig

__all__ = [
    "progress_bar",
    "failure_record",
    "report_path",
    "write_pools",
    "read_stage_pools",
]


def progress_bar(total: int, desc: str, enabled: bool) -> Any:
    """A per-question bar that ends once (:mod:`lm_eval_rul.progress`)."""
    from ..progress import progress_bar as ends_once

    return ends_once(total, desc, enabled=enabled, unit="q")


def _pools_json(
    questions: Iterable[Question], failures: dict[str, dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    """Pools in the released layout; a question that failed upstream keeps its row, with
    ``build_failure`` (stage, error) so that later stages report it."""
    out: dict[str, dict[str, Any]] = {}
    for q in questions:
        row: dict[str, Any] = {
            "question": q.question,
            "caption": q.caption or "",
            "correct_answer": q.correct_answer,
            "distractors": list(q.distractors),
        }
        if q.id in failures:
            failure = failures[q.id]
            row["build_failure"] = {"stage": failure["stage"], "error": failure["error"]}
        out[q.id] = row
    return out


def failure_record(q: Question, stage: str, error: str) -> dict[str, Any]:
    return {
        "id": q.id,
        "question": q.question,
        "caption": q.caption,
        "correct_answer": q.correct_answer,
        "status": "failed",
        "stage": stage,
        "error": error,
    }


def report_path(path: Path) -> Path:
    return path.with_name(path.stem + ".report.json")


def write_pools(
    config: BuildConfig,
    pools: Sequence[Question],
    failures: dict[str, dict[str, Any]],
    extra: dict[str, Any],
) -> dict[str, Any]:
    """Write a stage's pools file and its ``<stem>.report.json`` (counts, failures)."""
    write_json(config.output, _pools_json(pools, failures))
    report = {
        **extra,
        "pools_digest": file_digest(config.output),
        "n_questions": len(pools),
        "failures": [
            {"id": f["id"], "stage": f["stage"], "error": f["error"]} for f in failures.values()
        ],
    }
    write_json(report_path(config.output), report)
    return report


def read_stage_pools(
    path: Path, limit: int | None = None, seed: int = DEFAULT_SEED
) -> tuple[list[Question], PoolCleaningReport, dict[str, dict[str, Any]], dict[str, Any]]:
    """Read ``--pools``: cleaned pools (empty ones kept), their upstream failure records
    (``build_failure``), and the counts of the stage that wrote them (its report, when it
    still describes this very file). With ``limit`` (``build --limit``) only the seeded
    sample of ``limit`` pools of ``seed`` (as a task's ``--limit``, in the file's order) is
    cleaned, and every count is of those pools alone."""
    pools, cleaning = read_pools(path, allow_empty=True, limit=limit, seed=seed)
    if question_format(path) == "json":  # the file as read_pools read it (read once)
        raw = json_value(path)
        rows = [{"id": k, **v} for k, v in raw.items()] if isinstance(raw, dict) else raw
    else:
        rows = [value for _, value in jsonl_values(path)]
    marks = {str(r["id"]).strip(): r.get("build_failure") for r in rows}
    failures = {}
    for q in pools:
        mark = marks.get(q.id)
        if mark:
            failures[q.id] = failure_record(q, str(mark.get("stage")), str(mark.get("error")))
    prior: dict[str, Any] = {}
    counts_path = report_path(path)
    if counts_path.is_file():
        candidate = json.loads(counts_path.read_text(encoding="utf-8"))
        if isinstance(candidate, dict) and candidate.get("pools_digest") == file_digest(path):
            prior = candidate
    if prior.get("cleaning"):
        earlier = PoolCleaningReport(**prior["cleaning"])
        if limit is not None:
            earlier = _restrict_cleaning(earlier, [q.id for q in pools], cleaning.n_candidates_in)
        cleaning = _merge_cleaning(earlier, cleaning)
    extra = {k: prior[k] for k in ("generation",) if k in prior}
    return pools, cleaning, failures, extra


def _restrict_cleaning(
    report: PoolCleaningReport, ids: list[str], n_left: int
) -> PoolCleaningReport:
    """An earlier cleaning pass's counts over the pools ``ids`` alone, which hold ``n_left``
    candidates after it."""
    kept = set(ids)
    restricted = PoolCleaningReport(n_questions=len(ids), n_candidates_out=n_left)
    for name in ("equal_to_correct", "duplicates", "empty"):
        setattr(restricted, name, {q: n for q, n in getattr(report, name).items() if q in kept})
    removed = sum(
        sum(getattr(restricted, n).values()) for n in ("equal_to_correct", "duplicates", "empty")
    )
    restricted.n_candidates_in = n_left + removed
    return restricted


def _merge_cleaning(first: PoolCleaningReport, then: PoolCleaningReport) -> PoolCleaningReport:
    """Counts of two cleaning passes over the same pools (a cleaned file read again)."""
    merged = PoolCleaningReport(
        n_questions=first.n_questions,
        n_candidates_in=first.n_candidates_in,
        n_candidates_out=then.n_candidates_out,
    )
    for name in ("equal_to_correct", "duplicates", "empty"):
        counts = dict(getattr(first, name))
        for qid, n in getattr(then, name).items():
            counts[qid] = counts.get(qid, 0) + n
        setattr(merged, name, counts)
    return merged
