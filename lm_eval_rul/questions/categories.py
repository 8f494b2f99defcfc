"""MuChoMusic's question categories: knowledge and reasoning dimensions, genre, source.

MuChoMusic's CSV labels each question with the ``music_knowledge`` and
``music_reasoning`` categories it tests (stringified Python lists; a question can be in
several, or none), its ``genre`` and its source ``dataset`` (``sdd`` = Song Describer,
``musiccaps``). The official evaluation breaks accuracy down by each of them; the report
does the same for every MuChoMusic and RUL-MuChoMusic run (RUL ids are MuChoMusic ids).
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass
from pathlib import Path

from .readers import _ID_COLUMNS
from .reading import csv_table, reads_once
from .schema import DataValidationError

__all__ = ["CATEGORY_DIMENSIONS", "QuestionCategories", "read_muchomusic_categories"]

#: The breakdowns, in the official evaluation's order, and the CSV column of each.
CATEGORY_DIMENSIONS: dict[str, str] = {
    "music_knowledge": "music_knowledge",
    "music_reasoning": "music_reasoning",
    "genre": "genre",
    "source": "dataset",
}
_SOURCE_NAMES = {"sdd": "Song Describer (sdd)", "musiccaps": "MusicCaps"}


@dataclass(frozen=True)
class QuestionCategories:
    """The categories of one MuChoMusic question.

    Attributes:
        music_knowledge: Knowledge categories (empty when it tests none).
        music_reasoning: Reasoning categories (empty when it tests none).
        genre: The track's genre ("" when the CSV has none).
        source: The audio source dataset, named (``Song Describer (sdd)``, ``MusicCaps``).
    """

    music_knowledge: tuple[str, ...]
    music_reasoning: tuple[str, ...]
    genre: str
    source: str

    def labels(self, dimension: str) -> tuple[str, ...]:
        """The labels of ``dimension`` (one of :data:`CATEGORY_DIMENSIONS`)."""
        value = getattr(self, dimension)
        if isinstance(value, tuple):
            return value
        return (value,) if value else ()


def _category_list(text: str, where: str, problems: list[str]) -> tuple[str, ...]:
    """``"['Melody', 'Rhythm']"`` -> ``("Melody", "Rhythm")``; empty cells are no category."""
    if not text.strip():
        return ()
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        problems.append(f"{where}: {text!r} is not a list literal such as ['Melody']")
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list | tuple):
        problems.append(f"{where}: {text!r} is not a list")
        return ()
    return tuple(str(v).strip() for v in value if str(v).strip())


@reads_once
def read_muchomusic_categories(path: str | os.PathLike[str]) -> dict[str, QuestionCategories]:
    """Question id -> :class:`QuestionCategories` from MuChoMusic's CSV.

    Raises:
        DataValidationError: A missing column, or category cells that are not lists.
    """
    path = Path(path)
    header, table = csv_table(path)  # read once per command (reading.read_once)
    wanted = list(CATEGORY_DIMENSIONS.values())
    missing = [c for c in wanted if c not in header]
    id_column = next((c for c in _ID_COLUMNS if c in header), None)
    if missing or id_column is None:
        problems = [f"missing column(s) {', '.join(missing)}"] if missing else []
        if id_column is None:
            problems.append("no question id column (one of id, question_id, qid)")
        raise DataValidationError(
            path,
            problems,
            hint="The report's breakdowns read MuChoMusic's muchomusic.csv "
            "(huggingface.co/datasets/mulab-mir/muchomusic).",
        )
    problems: list[str] = []
    out: dict[str, QuestionCategories] = {}
    for line, row in enumerate(table, start=2):
        qid = str(row[id_column]).strip()
        where = f"row {line} (id {qid})"
        source = str(row["dataset"] or "").strip()
        out[qid] = QuestionCategories(
            music_knowledge=_category_list(row["music_knowledge"] or "", where, problems),
            music_reasoning=_category_list(row["music_reasoning"] or "", where, problems),
            genre=str(row["genre"] or "").strip(),
            source=_SOURCE_NAMES.get(source.lower(), source),
        )
    if problems:
        raise DataValidationError(path, problems)
    return out
