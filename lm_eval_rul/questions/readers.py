"""Readers for every question format we take, with validation.

Formats (see ``docs/method.md``, "Data"):

* the released RUL-MuChoMusic JSON: ``{id: {question, caption, correct_answer,
  distractors[4], PI}}`` (a list of such rows with an ``id`` field is accepted too);
* the released distractor pools: the same layout with 24–71 ``distractors``;
* a benchmark's own layout, read by the reader its descriptor declares
  (:attr:`lm_eval_rul.catalogue.Benchmark.readers`: MMAU's released JSON, ``question,
  choices, answer, task``, by :mod:`.mmau`);
* the MuChoMusic CSV (``question, dataset, dataset_identifier, correct_answer,
  distractor_{1,2,3}_answer, ...`` plus a question id);
* a JSONL / CSV / parquet of ``id, question, correct_answer, distractors[, caption]``.

Readers return :class:`~lm_eval_rul.questions.schema.Question` objects; every malformed
row is reported in one :class:`~lm_eval_rul.questions.schema.DataValidationError` that
names the file, the ids and the fix.
"""

from __future__ import annotations

import ast
import json
import logging
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from .file_kinds import MUCHOMUSIC_COLUMNS, question_format
from .pools import clean_pools
from .reading import csv_table, json_value, jsonl_values, reads_once
from .schema import (
    DataValidationError,
    PoolCleaningReport,
    Question,
)
from .seeding import DEFAULT_SEED, limited_sample
from .sources import MUCHOMUSIC_HF_REPO
from .validation import rows_to_questions

__all__ = [
    "MUCHOMUSIC_COLUMNS",
    "read_rul_json",
    "read_pools",
    "read_muchomusic_csv",
    "read_questions_table",
    "own_layout_reader",
    "attach_tracks",
    "read_as_released",
]

logger = logging.getLogger(__name__)

_ID_COLUMNS = ("id", "question_id", "qid", "")


# ----------------------------------------------------------------------------- readers


def _read_json_rows(path: Path) -> list[dict[str, Any]]:
    """Rows of a dict-of-dicts or list-of-dicts JSON file, each with an ``id``."""
    try:
        raw = json_value(path)
    except json.JSONDecodeError as err:
        raise DataValidationError(path, [f"not valid JSON: {err}"]) from None
    problems = [f"id {k!r}: appears more than once" for k in getattr(raw, "duplicate_keys", ())]
    if isinstance(raw, dict):
        items = list(raw.items())
    elif isinstance(raw, list):
        items = [(r.get("id") if isinstance(r, dict) else None, r) for r in raw]
    else:
        raise DataValidationError(path, ["expected a JSON object keyed by id, or a list of rows"])
    rows = []
    for position, (key, value) in enumerate(items):
        where = f"id {key!r}" if key is not None else f"row {position}"
        if not isinstance(value, dict):
            problems.append(f"{where}: expected an object with question fields, got {value!r:.80}")
            continue
        duplicates = getattr(value, "duplicate_keys", ())
        problems += [f"{where}: field {k!r} appears more than once" for k in duplicates]
        rows.append({"id": key, **value} if isinstance(raw, dict) else dict(value))
    if problems:
        raise DataValidationError(path, problems)
    return rows


def _read_jsonl_rows(path: Path) -> list[dict[str, Any]]:
    rows = []
    problems = []
    for lineno, value in jsonl_values(path):
        if isinstance(value, json.JSONDecodeError):
            problems.append(f"line {lineno}: not valid JSON ({value.msg})")
        else:
            rows.append(dict(value) if isinstance(value, dict) else value)
    if problems:
        raise DataValidationError(path, problems)
    return rows


def _read_rows(path: Path) -> list[dict[str, Any]]:
    """Rows of a JSON or JSONL file (decided by :func:`question_format`)."""
    return _read_json_rows(path) if question_format(path) == "json" else _read_jsonl_rows(path)


def _parse_list_cell(value: Any) -> Any:
    """CSV/parquet cells holding a list: JSON, a Python literal, or ``a|b|c``."""
    if not isinstance(value, str):
        return list(value) if hasattr(value, "__iter__") else value
    text = value.strip()
    if text.startswith("["):
        for parse in (json.loads, ast.literal_eval):
            try:
                return list(parse(text))
            except (ValueError, SyntaxError):
                continue
    return [part.strip() for part in text.split("|") if part.strip()]



@reads_once
def read_rul_json(path: str | os.PathLike[str], *, n_distractors: int | None = 4) -> list[Question]:
    """Read the released RUL-MuChoMusic JSON (or any file of the same schema).

    Args:
        path: The JSON file, ``{id: {question, caption, correct_answer, distractors, PI}}``
            or a list of rows carrying ``id``.
        n_distractors: Exact number of distractors each row must have (``None``: any).

    Raises:
        DataValidationError: listing every malformed row by id.
    """
    path = Path(path)
    return rows_to_questions(path, _read_json_rows(path), n_distractors=n_distractors)


@reads_once
def read_pools(
    path: str | os.PathLike[str],
    *,
    allow_empty: bool = False,
    limit: int | None = None,
    seed: int = DEFAULT_SEED,
) -> tuple[list[Question], PoolCleaningReport]:
    """Read distractor pools (the released ``distractors.json`` format) and clean them.

    Cleaning (:func:`~lm_eval_rul.questions.pools.clean_pools`, without re-tidying the text),
    counted per id in the returned report: strip whitespace, drop empty candidates, drop
    candidates equal to the correct answer after :func:`normalize_answer` (10 such pools
    in the release), drop repeats keeping the first.

    Args:
        path: The pools file (JSON keyed by id, a JSON list of rows, or JSONL).
        allow_empty: Keep pools that are (or end up) empty instead of refusing the file
            (``lm-eval-rul build`` turns them into per-question failure records).
        limit: Only ``limit`` pools are cleaned and counted (``build --limit``), the seeded
            sample of :func:`~lm_eval_rul.questions.limited_sample` (the questions a task's
            ``--limit`` runs), kept in the file's order; every row is still validated.
            None: all.
        seed: The sample's seed (the tasks' ``shuffle_seed``, ``build --seed``).

    Raises:
        DataValidationError: for malformed rows, or (unless ``allow_empty``) a pool left
            with no candidate.
    """
    path = Path(path)
    questions = rows_to_questions(
        path,
        _read_rows(path),
        n_distractors=None,
        min_distractors=0 if allow_empty else 1,
        check_options=False,
    )
    questions = limited_sample(questions, limit=limit, seed=seed, item_id=lambda q: q.id)
    cleaned, report = clean_pools(questions, tidy=False)
    empty_pools = [
        f"id {q.id!r}: no candidate left after cleaning" for q in cleaned if not q.distractors
    ]
    if empty_pools and not allow_empty:
        raise DataValidationError(path, empty_pools)
    first = f"a sample of {len(cleaned)} " if limit is not None else ""
    logger.info("Cleaned %sdistractor pools from %s: %s", first, path, report.summary())
    return cleaned, report


def _muchomusic_track(dataset_identifier: str) -> str:
    return re.sub(r"\.json$", "", dataset_identifier.strip())


@reads_once
def read_muchomusic_csv(path: str | os.PathLike[str]) -> list[Question]:
    """Read MuChoMusic's ``muchomusic.csv`` (the three original distractors, in order).

    The question id comes from a column named ``id``, ``question_id`` or ``qid`` (or the
    unnamed index column pandas writes). ``track`` is the ``dataset_identifier`` stem.
    """
    path = Path(path)
    header, table = csv_table(path)
    missing = [c for c in MUCHOMUSIC_COLUMNS if c not in header]
    if missing:
        raise DataValidationError(
            path,
            [f"missing column(s) {', '.join(missing)}; found {', '.join(header)}"],
            hint="Expected MuChoMusic's muchomusic.csv (huggingface.co/datasets/"
            f"{MUCHOMUSIC_HF_REPO}).",
        )
    id_column = next((c for c in _ID_COLUMNS if c in header), None)
    if id_column is None:
        raise DataValidationError(
            path,
            [f"no question id column (one of id, question_id, qid); found {', '.join(header)}"],
        )
    rows = []
    for row in table:
        rows.append(
            {
                "id": row[id_column],
                "question": row["question"],
                "correct_answer": row["correct_answer"],
                "distractors": [row[f"distractor_{i}_answer"] or "" for i in (1, 2, 3)],
                "track": _muchomusic_track(row["dataset_identifier"] or ""),
                "source": row["dataset"],
            }
        )
    for row in rows:
        if any(d == "" for d in row["distractors"]):
            row["distractors"] = [d for d in row["distractors"] if d]  # reported as too few
    return rows_to_questions(path, rows, n_distractors=3)


@reads_once
def read_questions_table(
    path: str | os.PathLike[str], *, n_distractors: int | None = None
) -> list[Question]:
    """Read a JSONL, CSV or parquet of ``id, question, correct_answer, distractors[, caption]``.

    In CSV and parquet, ``distractors`` may be a JSON list, a Python list literal or
    ``a|b|c``; columns ``distractor_1`` ... are accepted instead.
    """
    path = Path(path)
    fmt = question_format(path)
    if fmt in ("jsonl", "json"):
        rows = _read_rows(path)
    elif fmt in ("csv", "muchomusic_csv"):
        rows = [dict(row) for row in csv_table(path)[1]]
    else:
        import pyarrow.parquet as pq

        rows = pq.read_table(path).to_pylist()
    for row in rows:
        if isinstance(row.get("distractors"), str) and fmt not in ("jsonl", "json"):
            row["distractors"] = _parse_list_cell(row["distractors"])
        if "distractors" not in row:
            numbered = {
                int(m.group(1)): k
                for k in row
                if (m := re.fullmatch(r"distractor_?(\d+)(?:_answer)?", k))
            }
            if numbered:  # empty trailing cells: items with fewer options (44.13)
                cells = [row[numbered[i]] or "" for i in sorted(numbered)]
                while cells and not str(cells[-1]).strip():
                    cells.pop()
                row["distractors"] = cells  # a gap before a filled cell stays, and is named
    return rows_to_questions(path, rows, n_distractors=n_distractors)


def own_layout_reader(path: Path) -> Callable[..., list[Question]] | None:
    """The reader of a benchmark's own file layout that ``path`` is in (MMAU's released
    JSON...), from the benchmark catalogue (:attr:`lm_eval_rul.catalogue.Benchmark.readers`);
    None for the generic layouts read here."""
    from ..catalogue import benchmarks, load_function

    for benchmark in benchmarks():
        for reader in benchmark.readers:
            if load_function(reader.detect)(path):
                return load_function(reader.read)
    return None


def _as_row(question: Question) -> dict[str, Any]:
    return {
        "id": question.id,
        "question": question.question,
        "correct_answer": question.correct_answer,
        "distractors": list(question.distractors),
    }


def attach_tracks(questions: Sequence[Question], reference: Sequence[Question]) -> list[Question]:
    """Copy ``track``/``source`` from MuChoMusic rows onto RUL rows with the same id.

    Rows whose id is absent from ``reference`` keep ``track=None``; the caller decides
    whether that is an error (it is for audio runs that look clips up by track).
    """
    by_id = {q.id: q for q in reference}
    return [
        replace(q, track=by_id[q.id].track, source=by_id[q.id].source) if q.id in by_id else q
        for q in questions
    ]


@reads_once
def read_as_released(path: str | os.PathLike[str]) -> list[Question]:
    """A JSON / JSONL question or pools file exactly as released: ids, fields and
    duplicates are validated like every reader's, but options are neither checked nor
    cleaned (a distractor equal to the answer, repeats and empty candidates stay), so a
    diagnosis can report them.

    Raises:
        DataValidationError: listing every malformed row.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"question file not found: {path}")
    rows = _read_rows(path)
    return rows_to_questions(
        path, rows, n_distractors=None, min_distractors=0, check_options=False
    )
