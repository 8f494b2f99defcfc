"""A subset of a question file, written in the file's own layout (``lm-eval-rul subset``).

:func:`write_subset` keeps the records of the chosen ids and writes them as the source
wrote them: a JSON object keyed by id (the RUL JSON) or a JSON list of records (MMAU's,
MMAR's, ours), JSON lines (each kept line byte for byte), a CSV or TSV (the same header,
the same delimiter; MuChoMusic's CSV too) or a parquet file. A record's id is its key, or
its ``id`` / ``question_id`` / ``qid`` field (the column ``mc_columns`` names for ``id``).

The written file is then read back with the readers the benchmark uses
(:func:`~lm_eval_rul.questions.load_questions`): it must hold exactly the chosen ids, or
nothing is kept. A source whose ids are not fields of its records (a dataset folder, a hub
dataset, a table whose ids are row numbers) cannot keep its layout: its chosen questions
are written as our own table of ``id, question, correct_answer, distractors`` (with
``track`` when known; JSON lines for a ``.jsonl`` name, else a JSON list), and the result
says so.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..files import atomic_write, write_text_atomic
from .file_kinds import question_format
from .loading import load_questions
from .reading import json_value, read_text
from .schema import DataValidationError, Question

__all__ = ["SubsetWritten", "write_subset", "ID_FIELDS", "TABLE_LAYOUT"]

#: The fields a record's id is read from, in order (as the readers do).
ID_FIELDS: tuple[str, ...] = ("id", "question_id", "qid", "")
#: The layout of the fallback: our own table (JSON lines for a ``.jsonl`` name, else JSON).
TABLE_LAYOUT = "our own table (id, question, correct_answer, distractors)"


@dataclass(frozen=True)
class SubsetWritten:
    """What :func:`write_subset` wrote: the file, its layout, and its questions' ids."""

    path: Path
    layout: str
    ids: tuple[str, ...]
    kept_layout: bool


def _id_of(record: Any, field: str | None) -> str | None:
    if not isinstance(record, Mapping):
        return None
    fields = (field,) if field else ID_FIELDS
    for name in fields:
        if name in record and record[name] not in (None, ""):
            return str(record[name])
    return None


def _from_json(path: Path, ids: Collection[str], field: str | None) -> tuple[str, str] | None:
    raw = json_value(path)
    if isinstance(raw, dict):
        kept = {key: value for key, value in raw.items() if str(key) in ids}
        return json.dumps(kept, indent=2, ensure_ascii=False) + "\n", "json object keyed by id"
    if isinstance(raw, list) and all(_id_of(r, field) is not None for r in raw):
        kept_rows = [r for r in raw if _id_of(r, field) in ids]
        return json.dumps(kept_rows, indent=2, ensure_ascii=False) + "\n", "json list"
    return None


def _from_jsonl(path: Path, ids: Collection[str], field: str | None) -> tuple[str, str] | None:
    kept = []
    for line in read_text(path).splitlines():
        if not line.strip():
            continue
        qid = _id_of(json.loads(line), field)
        if qid is None:
            return None
        if qid in ids:
            kept.append(line)
    return "".join(line + "\n" for line in kept), "jsonl"


def _from_table(path: Path, ids: Collection[str], field: str | None) -> tuple[str, str] | None:
    from .published import is_tsv

    delimiter = "\t" if is_tsv(path) else ","
    reader = csv.reader(io.StringIO(read_text(path), newline=""), delimiter=delimiter)
    rows = list(reader)
    if not rows:
        return None
    header = rows[0]
    column = next((c for c in ((field,) if field else ID_FIELDS) if c in header), None)
    if column is None:
        return None
    at = header.index(column)
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter=delimiter, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(row for row in rows[1:] if len(row) > at and row[at] in ids)
    return buffer.getvalue(), "tsv" if delimiter == "\t" else "csv"


def _table_rows(questions: list[Question], ids: Collection[str], out: Path) -> str:
    """Our own rows of the chosen questions: JSON lines for a ``.jsonl`` name, else a JSON
    list (one JSON line alone would read as a file keyed by id)."""
    rows = []
    for q in questions:
        if q.id in ids:
            row: dict[str, Any] = {
                "id": q.id,
                "question": q.question,
                "correct_answer": q.correct_answer,
                "distractors": list(q.distractors),
            }
            row.update({k: v for k, v in (("track", q.track), ("caption", q.caption)) if v})
            rows.append(row)
    if out.suffix.lower() == ".jsonl":
        return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    return json.dumps(rows, indent=2, ensure_ascii=False) + "\n"


def write_subset(
    source: str | os.PathLike[str],
    ids: Collection[str],
    out: str | os.PathLike[str],
    *,
    columns: Any = None,
    split: str | None = None,
    subset: str | None = None,
    subset_key: str | None = None,
) -> SubsetWritten:
    """Write the questions of ``source`` whose ids are ``ids`` to ``out``, in ``source``'s
    layout when it can be kept (see the module doc).

    Args:
        source: The question file (or dataset) the runs read.
        ids: The ids to keep; each must be one of ``source``'s.
        out: The file to write (never ``source`` itself).
        columns, split, subset, subset_key: How the benchmark reads ``source``
            (``mc_columns``, ``mc_split``, ``mc_subset``), passed to
            :func:`~lm_eval_rul.questions.load_questions`.

    Raises:
        DataValidationError: An id is not in ``source``, or the written file does not
            read back as exactly ``ids``.
    """
    options = {"columns": columns, "split": split, "subset": subset, "subset_key": subset_key}
    questions = load_questions(source, **options)
    wanted = {str(i) for i in ids}
    unknown = sorted(wanted - {q.id for q in questions})
    if unknown:
        raise DataValidationError(
            Path(str(source)),
            [f"{len(unknown)} chosen id(s) are not in the file (e.g. {unknown[:5]})"],
            hint="The report was made on another question file; give the one the runs read.",
        )
    out = Path(out)
    local = Path(os.path.expanduser(str(source)))
    if local.is_file() and local.resolve() == out.resolve():
        raise DataValidationError(
            out, ["the subset would overwrite its own source"], hint="Choose another --out."
        )
    if isinstance(columns, str):
        columns = json.loads(columns) if columns.strip().startswith("{") else None
    field = str(columns.get("id")) if isinstance(columns, Mapping) and columns.get("id") else None
    written = None
    if local.is_file():
        fmt = question_format(local)
        if fmt == "parquet":
            written = _write_parquet(local, wanted, out, field)
        else:
            reader = {"json": _from_json, "jsonl": _from_jsonl}.get(fmt, _from_table)
            made = reader(local, wanted, field)
            if made is not None:
                write_text_atomic(out, made[0])
                written = made[1]
    if written is not None:
        back = {q.id for q in load_questions(out, **options)}
        if back == wanted:
            return SubsetWritten(out, written, tuple(sorted(wanted)), True)
    if out.suffix.lower() == ".parquet":
        raise DataValidationError(
            out,
            ["the source's layout cannot be kept (its ids are no field of its records)"],
            hint="Name --out .json or .jsonl for a table of our own.",
        )
    write_text_atomic(out, _table_rows(questions, wanted, out))  # the layout cannot be kept
    back = {q.id for q in load_questions(out)}
    if back != wanted:
        raise DataValidationError(
            out, [f"reads back as {len(back)} question(s), not the {len(wanted)} chosen"]
        )
    return SubsetWritten(out, TABLE_LAYOUT, tuple(sorted(wanted)), False)


def _write_parquet(path: Path, ids: Collection[str], out: Path, field: str | None) -> str | None:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    names = (field,) if field else ID_FIELDS
    column = next((c for c in names if c in table.column_names), None)
    if column is None:
        return None
    keep = pc.is_in(pc.cast(table[column], pa.string()), value_set=pa.array(sorted(ids)))
    with atomic_write(out, "wb") as handle:
        pq.write_table(table.filter(keep), handle)
    return "parquet"
