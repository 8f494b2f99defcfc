"""Reading any question file: :func:`load_questions` chooses the reader from the file's
content (our schemas, a benchmark's own layout, a published table or dataset), and
:func:`load_questions_without_distractors` reads questions to generate distractors for."""

from __future__ import annotations

import inspect
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .file_kinds import question_format
from .readers import (
    _as_row,
    _read_rows,
    own_layout_reader,
    read_muchomusic_csv,
    read_questions_table,
    read_rul_json,
)
from .reading import csv_table, json_value, reads_once
from .schema import Question
from .validation import rows_to_questions

__all__ = ["load_questions", "load_questions_without_distractors"]


def _ours(rows: Sequence[Any]) -> bool:
    """Whether rows are in our own schema (``correct_answer`` / ``distractors``), read by
    the readers above; other rows are a published layout (:mod:`.published`)."""
    return any(
        isinstance(r, dict)
        and (
            "correct_answer" in r
            or "distractors" in r
            or any(re.fullmatch(r"distractor_?\d+(?:_answer)?", k) for k in r)
        )
        for r in rows[:200]
    )


@reads_once
def load_questions(
    path: str | os.PathLike[str],
    *,
    n_distractors: int | None = None,
    columns: Any = None,
    split: str | None = None,
    subset: str | None = None,
    subset_key: str | None = None,
    answer_base: Any = None,
) -> list[Question]:
    """Read any supported question file, choosing the reader from its content
    (:func:`~lm_eval_rul.questions.file_kinds.question_format`), not its name.

    One JSON value: the released RUL / pools layout; a CSV with MuChoMusic's columns:
    :func:`read_muchomusic_csv`; any other table of our schema: :func:`read_questions_table`;
    a benchmark's own layout (MMAU, MMAR: ``subset`` filters it, default its own); a
    published table (CSV/TSV with choice columns, a parquet file or folder, a
    ``save_to_disk`` folder, a cached hub name): :func:`~.published.read_published`
    (``columns``: ``--metadata mc_columns``; ``split``: the dataset's split;
    ``answer_base``: ``--metadata mc_answer_base``).
    """
    from .published import is_dataset_source, is_tsv, read_published, read_table

    def published() -> list[Question]:
        return read_published(
            path,
            columns=columns,
            split=split,
            n_distractors=n_distractors,
            json_rows=_read_rows,
            answer_base=answer_base,
        )

    local = Path(os.path.expanduser(str(path)))
    if not local.is_file():
        if is_dataset_source(path):
            return published()
        raise FileNotFoundError(f"question file not found: {path}")
    if columns or local.suffix.lower() == ".parquet" or is_tsv(local):
        if not columns and _ours(read_table(local).rows):
            return read_questions_table(local, n_distractors=n_distractors)
        return published()
    path = local
    own = own_layout_reader(path)
    if own is not None:
        extra = {} if subset is None else {"subset": subset, "subset_key": subset_key}
        accepted = inspect.signature(own).parameters  # a descriptor's reader may take neither
        extra = {k: v for k, v in extra.items() if k in accepted}
        return own(path, n_distractors=n_distractors, **extra)
    fmt = question_format(path)
    if fmt == "muchomusic_csv":
        questions = read_muchomusic_csv(path)
        if n_distractors not in (None, 3):
            rows_to_questions(  # the usual "expected N distractors" for each question
                path, [_as_row(q) for q in questions], n_distractors=n_distractors
            )
        return questions
    rows = _read_rows(path) if fmt in ("json", "jsonl") else csv_table(path)[1]
    if fmt == "json" and not isinstance(json_value(path), list):
        return read_rul_json(path, n_distractors=n_distractors)
    if not _ours(rows):
        return published()
    if fmt == "json":
        return read_rul_json(path, n_distractors=n_distractors)
    return read_questions_table(path, n_distractors=n_distractors)


@reads_once
def load_questions_without_distractors(path: str | os.PathLike[str]) -> list[Question]:
    """Questions to generate distractors for: like :func:`load_questions`, but in JSON and
    JSONL files ``distractors`` may be absent (or empty) on any row.

    Rows that do carry distractors get the usual option checks; ids, fields and
    duplicates are validated by the same rules as every other reader. CSV and parquet
    files go through :func:`load_questions` unchanged.

    Raises:
        DataValidationError: listing every malformed row.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"question file not found: {path}")
    if question_format(path) not in ("json", "jsonl") or own_layout_reader(path):
        return load_questions(path)
    rows = _read_rows(path)
    prepared = []
    for row in rows:
        if not isinstance(row, dict):
            prepared.append({"_bad": row})
        elif row.get("distractors") is None:
            prepared.append({**row, "distractors": []})
        else:
            prepared.append(row)
    return rows_to_questions(path, prepared, n_distractors=None, min_distractors=0)
