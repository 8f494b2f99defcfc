"""A multiple-choice benchmark as it is published, questions and audio from one source.

Sources (:func:`read_table`): a CSV or TSV file, JSON / JSON lines rows, a parquet file or
folder, a ``save_to_disk`` folder, or a hub name already in the ``datasets`` cache. Each
table's columns are placed in their roles (:mod:`.columns`), and each row becomes a
:class:`~.schema.Question` whose ``audio`` says where its clip is: a path written in the
row (read inside ``audio_dir``, else the file's folder), or the row's cell of a dataset's
``Audio`` column (bytes or a path; read with ``Audio(decode=False)``, decoded by the audio
layer with soundfile / librosa). Every row's problem is named in one error.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .answer_base import answer_base_value, names_an_option, unsettled_base
from .columns import (
    ColumnMap,
    answer_position,
    choice_cells,
    index_base,
    map_columns,
    parse_mc_columns,
    repeated_answer,
)
from .datasets_io import choose_split, is_local_dataset, load_dataset_splits, open_dataset
from .reading import csv_reader, read_text
from .schema import AudioLocation, Question
from .validation import rows_to_questions

__all__ = ["Table", "read_table", "read_published", "is_dataset_source", "HUB_NAME", "tsv_table"]

#: A hub dataset name (``owner/name``), read from the ``datasets`` cache when not a path.
HUB_NAME = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
_FILE_SUFFIXES = (".json", ".jsonl", ".csv", ".tsv", ".txt", ".parquet", ".arrow")


@dataclass(frozen=True)
class Table:
    """A table's rows as read.

    Attributes:
        columns: Its column names, in order.
        rows: One mapping per row (a dataset's audio cells left out).
        audio_columns: The dataset's audio columns (``Audio`` feature, or bytes/path cells).
        dataset: ``(source, split)`` of a dataset (its clips are cells), else None.
        base: The folder relative audio paths are read from.
    """

    columns: list[str]
    rows: list[dict[str, Any]]
    audio_columns: tuple[str, ...] = ()
    dataset: tuple[str, str] | None = None
    base: str = ""
    problems: list[str] = field(default_factory=list)


def is_dataset_source(source: str | os.PathLike[str]) -> bool:
    """Whether ``source`` names a dataset (a parquet file or folder, a ``save_to_disk``
    folder, or a hub name that is not a local path)."""
    path = Path(os.path.expanduser(str(source)))
    if path.exists():
        return is_local_dataset(path)
    # a mistyped local path (``data/bench.csv``, ``clips/x``) is not a hub name
    local = path.suffix.lower() in _FILE_SUFFIXES or Path(path.parts[0]).is_dir()
    return bool(HUB_NAME.match(str(source))) and not local


def tsv_table(path: Path) -> tuple[list[str], list[dict[str, Any]]]:
    """``(header, rows)`` of a tab-separated file."""
    reader = csv_reader(read_text(path), delimiter="\t")
    rows = list(reader)
    return list(reader.fieldnames or []), rows


def is_tsv(path: Path) -> bool:
    """A ``.tsv`` file, or a text file whose first line has tabs and no commas."""
    if path.suffix.lower() == ".tsv":
        return True
    if path.suffix.lower() in (".json", ".jsonl", ".parquet"):
        return False
    first = read_text(path).lstrip().partition("\n")[0]
    return "\t" in first and "," not in first and first[:1] not in ("{", "[")


def _audio_like(feature: Any) -> bool:
    import datasets

    if isinstance(feature, datasets.Audio):
        return True
    return isinstance(feature, dict) and {"bytes", "path"} <= set(feature)


def _dataset_table(source: str, split: str | None) -> Table:
    path = Path(os.path.expanduser(source))
    name = str(path.resolve()) if path.exists() else source
    chosen = choose_split(
        load_dataset_splits(name, key="mc_data_path"), split, source, "mc_data_path"
    )
    dataset = open_dataset(name, chosen, key="mc_data_path", split_key="mc_split")
    audio = tuple(c for c, f in dataset.features.items() if _audio_like(f))
    rows = dataset.remove_columns(list(audio)).to_list() if audio else dataset.to_list()
    base = str(path.resolve() if path.is_dir() else path.resolve().parent) if path.exists() else ""
    return Table(list(dataset.column_names), rows, audio, (name, chosen), base)


def read_table(
    source: str | os.PathLike[str],
    *,
    split: str | None = None,
    json_rows: Callable[[Path], list[Any]] | None = None,
) -> Table:
    """The rows of ``source`` (see the module docstring); ``json_rows`` reads a JSON or
    JSON-lines file's rows (the readers' own, with their checks)."""
    text = str(source)
    if is_dataset_source(text):
        return _dataset_table(text, split)
    path = Path(os.path.expanduser(text))
    base = str(path.resolve().parent)
    if read_text(path).lstrip()[:1] in ("{", "[") and json_rows is not None:
        rows = json_rows(path)
        kept = [r for r in rows if isinstance(r, dict)]
        problems = [
            f"row {i}: expected an object, got {r!r:.60}"
            for i, r in enumerate(rows)
            if not isinstance(r, dict)
        ]
        columns = list(dict.fromkeys(k for r in kept[:200] for k in r))
        return Table(columns, kept, base=base, problems=problems)
    if is_tsv(path):
        header, rows = tsv_table(path)
    else:
        from .reading import csv_table

        header, rows = csv_table(path)
    return Table(list(header), [dict(r) for r in rows], base=base)


def _location(
    table: Table, mapping: ColumnMap, row: Mapping[str, Any], position: int
) -> AudioLocation | None:
    if mapping.audio is None:
        return None
    if mapping.audio in table.audio_columns and table.dataset is not None:
        source, split = table.dataset
        return AudioLocation(dataset=source, split=split, column=mapping.audio, row=position)
    value = row.get(mapping.audio)
    if isinstance(value, Mapping):  # a bytes/path cell read as a plain mapping
        value = value.get("path")
    if value is None or not str(value).strip():
        return None
    return AudioLocation(path=str(value).strip(), base=table.base)


def read_published(
    source: str | os.PathLike[str],
    *,
    columns: Any = None,
    split: str | None = None,
    n_distractors: int | None = None,
    json_rows: Callable[[Path], list[Any]] | None = None,
    answer_base: Any = None,
) -> list[Question]:
    """The questions of a published table (``columns``: ``--metadata mc_columns``;
    ``answer_base``: ``--metadata mc_answer_base``, where numeric answers count from).

    Raises:
        DataValidationError: its columns cannot be placed, or rows whose choices or answer
            cannot be read (every one named).
    """
    where = str(source)
    table = read_table(source, split=split, json_rows=json_rows)
    mapping = map_columns(
        where,
        table.columns,
        parse_mc_columns(columns, where),
        audio_columns=table.audio_columns,
        n_rows=len(table.rows),
    )
    options = [choice_cells(row, mapping.choices) for row in table.rows]
    numeric = [
        (a, o)
        for a, o in zip((row.get(mapping.answer) for row in table.rows), options, strict=True)
        if not names_an_option(a, o)
    ]
    base = answer_base_value(answer_base, where)
    if base is None:
        base = index_base([(a, len(o)) for a, o in numeric], mapping.index_base)
    if base is None:
        unsettled_base(where, mapping.answer, mapping.choices, numeric)
    prepared = []
    for position, (row, shown) in enumerate(zip(table.rows, options, strict=True)):
        qid = row.get(mapping.id) if mapping.id else position
        where_row = f"id {str(qid).strip()!r}" if mapping.id else f"row {position}"
        answer = row.get(mapping.answer)
        gold = answer_position(answer, shown, base)
        base_row = {
            "id": qid,
            "question": row.get(mapping.question),
            "_audio": _location(table, mapping, row, position),
        }
        if gold is None:
            # checked with every other row's problems (a repeated id, repeated options),
            # so one pass names them all
            repeats = repeated_answer(answer, shown)
            problem = (
                f"{where_row}: answer {answer!r} ({mapping.answer!r}) names choices "
                f"{' and '.join(str(i + 1) for i in repeats)}, which repeat the same text; "
                "make the options differ"
                if repeats
                else f"{where_row}: answer {answer!r} ({mapping.answer!r}) is not one of its "
                f"{sum(o is not None for o in shown)} choices, nor their letter or index "
                f"(from {base})"
            )
            prepared.append(
                {**base_row, "correct_answer": "?", "distractors": [], "_problem": problem}
            )
            continue
        kept = [o for i, o in enumerate(shown) if o is not None and i != gold]
        prepared.append({**base_row, "correct_answer": shown[gold], "distractors": kept})
    return rows_to_questions(
        Path(where), prepared, n_distractors=n_distractors, problems=table.problems
    )
