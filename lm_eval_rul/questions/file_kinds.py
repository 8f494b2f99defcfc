"""What a data file looks like, so a file given to the wrong flag is named for what it is.

The project's commands read several JSON layouts that are easy to mix up: question files
(RUL-MuChoMusic: exactly four distractors per question), distractor pools (the released
``distractors.json``: many candidates per question), ``lm-eval-rul pi`` output (one PI
per question), MuChoMusic's CSV, the harness's results, and each benchmark's own released
layout (MMAU's, MMAR's: every catalogue descriptor's ``Reader.detect`` is asked,
:mod:`.releases`). :func:`sniff_data_file` tells them apart from their rows alone (no
validation), for error messages such as "--pools is a question file (4 distractors per
question), but --pools expects distractor pools".
"""

from __future__ import annotations

import csv
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .reading import csv_table, json_value, jsonl_values, read_text, reads_once
from .releases import released_benchmark
from .schema import DataValidationError

__all__ = [
    "DataFileKind",
    "sniff_data_file",
    "question_format",
    "MUCHOMUSIC_COLUMNS",
    "POOLS",
    "QUESTIONS",
    "CSV",
    "PI",
    "RESULTS",
    "RELEASE",
    "MMAU",
]

#: The columns that make a CSV MuChoMusic's own (``muchomusic.csv``).
MUCHOMUSIC_COLUMNS = (
    "question",
    "dataset",
    "dataset_identifier",
    "correct_answer",
    "distractor_1_answer",
    "distractor_2_answer",
    "distractor_3_answer",
)
#: What :func:`question_format` returns.
JSON_FORMAT, JSONL_FORMAT, MUCHOMUSIC_CSV_FORMAT, CSV_FORMAT, PARQUET_FORMAT = (
    "json",
    "jsonl",
    "muchomusic_csv",
    "csv",
    "parquet",
)

POOLS = "pools"
QUESTIONS = "questions"
CSV = "csv"
PI = "pi"
RESULTS = "results"
#: A benchmark's own released layout (a catalogue descriptor's reader detects it).
RELEASE = "release"
MMAU = RELEASE  # the kind's former name (MMAU's was the first such layout)
UNKNOWN = "unknown"
#: Distractors a question file has per question; a pool has more.
QUESTION_DISTRACTORS = 4


@dataclass(frozen=True)
class DataFileKind:
    """What :func:`sniff_data_file` found.

    Attributes:
        kind: :data:`POOLS`, :data:`QUESTIONS`, :data:`CSV`, :data:`PI`, :data:`RESULTS`,
            :data:`RELEASE` (a benchmark's own layout: MMAU's, MMAR's...), or
            ``"unknown"`` (not readable, or none of these).
        description: The file in words, e.g. ``"a distractor pools file (8 questions,
            9-10 candidates each; the released distractors.json layout)"``.
    """

    kind: str
    description: str


@reads_once
def question_format(path: str | os.PathLike[str]) -> str:
    """How a question or pools file is written, from its content: ``"json"`` (one JSON
    value), ``"jsonl"`` (a ``.jsonl`` file, or JSON lines in another name),
    ``"muchomusic_csv"`` (a CSV with MuChoMusic's columns), ``"csv"`` (any other table,
    e.g. ``id, question, correct_answer, distractors``) or ``"parquet"`` (by suffix).
    Every command decides with this one function, whatever the file is called.

    Raises:
        FileEncodingError: the file is not UTF-8.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        return PARQUET_FORMAT
    if suffix == ".jsonl":
        return JSONL_FORMAT
    head = read_text(path).lstrip()[:1]
    if head in ("{", "["):
        try:
            json_value(path)
        except json.JSONDecodeError:
            values = jsonl_values(path)
            several = len(values) > 1 and not any(isinstance(v, Exception) for _, v in values)
            return JSONL_FORMAT if several else JSON_FORMAT  # JSON: its reader names the error
        return JSON_FORMAT
    header = csv_table(path)[0]
    if all(c in header for c in MUCHOMUSIC_COLUMNS):
        return MUCHOMUSIC_CSV_FORMAT
    return CSV_FORMAT


def _rows(path: Path) -> list[Any] | dict[str, Any] | None:
    fmt = question_format(path)
    if fmt == JSON_FORMAT:
        try:
            return json_value(path)
        except json.JSONDecodeError:
            return None
    values = [v for _, v in jsonl_values(path)]
    return None if any(isinstance(v, Exception) for v in values) else values


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _span(counts: list[int]) -> str:
    low, high = min(counts), max(counts)
    return str(low) if low == high else f"{low}-{high}"


def _csv_kind(path: Path) -> DataFileKind:
    header, rows = csv_table(path)
    columns = {c.strip().lower() for c in header}
    if all(c in header for c in MUCHOMUSIC_COLUMNS):
        return DataFileKind(CSV, "MuChoMusic's CSV (questions with their three distractors)")
    numbered = [c for c in columns if c.startswith("distractor")]
    if {"question", "correct_answer"} <= columns and ("distractors" in columns or numbered):
        return DataFileKind(
            QUESTIONS,
            f"a question file (CSV, {_n(len(rows), 'question')}; columns {', '.join(header[:6])})",
        )
    return DataFileKind(CSV, f"a CSV table (columns {', '.join(header[:6])})")


@reads_once
def sniff_data_file(path: str | os.PathLike[str]) -> DataFileKind:
    """What ``path`` holds, from its rows (see :class:`DataFileKind`); never raises for
    unreadable or unexpected content (``"unknown"``)."""
    path = Path(path)
    try:
        if question_format(path) in (CSV_FORMAT, MUCHOMUSIC_CSV_FORMAT):
            return _csv_kind(path)
        if question_format(path) == PARQUET_FORMAT:
            return DataFileKind(UNKNOWN, "a parquet table")
        raw = _rows(path)
    except (OSError, DataValidationError, csv.Error):
        return DataFileKind(UNKNOWN, "a file that cannot be read as text")
    if isinstance(raw, dict) and "results" in raw and "config" in raw:
        return DataFileKind(RESULTS, "an lm-eval results file (results_*.json)")
    if isinstance(raw, dict) and "n" in raw and "mean" in raw and "histogram" in raw:
        return DataFileKind(PI, "a PI summary written by lm-eval-rul pi (*.summary.json)")
    if (release := released_benchmark(path)) is not None:  # each descriptor's Reader.detect
        return DataFileKind(RELEASE, release.description)
    if isinstance(raw, dict):
        rows = [v for v in raw.values() if isinstance(v, dict)]
    elif isinstance(raw, list):
        rows = [r for r in raw if isinstance(r, dict)]
    else:
        return DataFileKind(UNKNOWN, "not a JSON object, JSON list or JSONL file")
    if not rows:
        return DataFileKind(UNKNOWN, "a JSON file without question rows")
    if all("pi" in r and "question" not in r for r in rows):
        return DataFileKind(PI, f"PI rows written by lm-eval-rul pi ({_n(len(rows), 'question')})")
    counts = [len(r["distractors"]) for r in rows if isinstance(r.get("distractors"), list)]
    if counts and all(1 <= c <= QUESTION_DISTRACTORS for c in counts):
        return DataFileKind(
            QUESTIONS,
            f"a question file ({_n(len(rows), 'question')}, {_span(counts)} distractors each; "
            "the RUL-MuChoMusic layout)",
        )
    marked = any("build_failure" in r for r in rows)  # pools written by `build` stages
    if counts and (marked or 2 * sum(c > QUESTION_DISTRACTORS for c in counts) > len(counts)):
        return DataFileKind(
            POOLS,
            f"a distractor pools file ({_n(len(rows), 'question')}, {_span(counts)} "
            "candidates each; the released distractors.json layout)",
        )
    if counts:  # mostly 1-4 distractors, some rows longer or empty: the readers name them
        return DataFileKind(
            UNKNOWN, f"questions with {_span(counts)} distractors each ({_n(len(rows), 'row')})"
        )
    if all("question" in r for r in rows):
        rows_text = _n(len(rows), "row")
        return DataFileKind(QUESTIONS, f"a question file without distractors ({rows_text})")
    return DataFileKind(UNKNOWN, "a JSON file whose rows are not questions")
