"""Which column of a published multiple-choice table plays which role, and how its cells
read: the question, its choices, its answer, its id and its audio.

Published benchmarks name their columns in a few common ways (:data:`ROLE_NAMES`): ours
(``id, question, choices, answer, audio``), lmms-lab's (``instruction, choices, answer,
context``), spreadsheets with one column per choice (``choice_a`` .. ``choice_d``,
``option_1`` .., or columns ``A`` .. ``D``). Any other table names its columns with
``--metadata mc_columns`` (a JSON object role -> column; ``choices`` may list several
columns). A table whose roles cannot all be placed is one line naming the columns found,
the roles still missing and the ``mc_columns`` to give (:func:`unplaced`).

Cells: ``choices`` a list, its JSON text, one option per line, ``(A) x (B) y`` on one line
or ``a|b|c``; ``(A)`` / ``A.`` prefixes carried by every option are dropped. ``answer`` the
option's text, a letter (``B``, ``(B)``, ``(B) text``) or an index: numbered choice columns
give the index base (``option_1``: 1); an answer 0 says 0, an answer equal to its item's
number of options says 1; a file that settles neither is refused unless ``--metadata
mc_answer_base`` (0 or 1) says where its numbers count from. Empty choice cells (a
spreadsheet whose items have 3 and 4 options) are left out.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .schema import OPTION_LETTERS, DataValidationError, normalize_answer

__all__ = [
    "ROLES",
    "ROLE_NAMES",
    "ColumnMap",
    "map_columns",
    "parse_mc_columns",
    "choice_cells",
    "answer_position",
    "index_base",
    "unplaced",
    "OUR_FIELDS",
]

#: The roles a table's columns play (``--metadata mc_columns`` keys).
ROLES: tuple[str, ...] = ("id", "question", "choices", "answer", "audio")
_REQUIRED_ROLES = ("question", "choices", "answer")
#: The column names each role is recognised by, in order of preference.
ROLE_NAMES: dict[str, tuple[str, ...]] = {
    "id": ("id", "question_id", "qid", "idx", "uid", "item_id", ""),
    "question": ("question", "instruction", "prompt", "query", "question_text"),
    "choices": ("choices", "options", "candidates"),
    "answer": ("answer", "label", "gold", "answer_idx", "answer_index", "correct", "solution"),
    "audio": (
        "audio",
        "audio_path",
        "audio_file",
        "audio_filename",
        "context",
        "clip",
        "file",
        "file_path",
        "filename",
        "path",
        "wav",
    ),
}
#: The fields of our own schema (RUL JSON, generic tables): read by the older readers.
OUR_FIELDS = ("id", "question", "correct_answer", "distractors")
_LETTERED = re.compile(r"^(choice|option|opt|answer_choice)[ _-]?([a-z]|\d+)$", re.IGNORECASE)
_LETTER_PREFIX = re.compile(r"^\s*(?:\(([A-Z])\)|([A-Z])[.):])\s+")
_INLINE_MARKER = re.compile(r"(?:^|(?<=\s))\(([A-Z])\)\s")
_LETTER = re.compile(r"^\(?([A-Z])\)?[.):]?$")


@dataclass(frozen=True)
class ColumnMap:
    """The column of each role.

    Attributes:
        question: The question text's column.
        choices: One column holding the list, or one column per choice in letter order.
        answer: The answer's column.
        id: The id's column (None: the row's position, from 0).
        audio: The audio column (None: the clip is found by ``--metadata``).
        index_base: The first number of numbered choice columns (None: not numbered).
    """

    question: str
    choices: str | tuple[str, ...]
    answer: str
    id: str | None = None
    audio: str | None = None
    index_base: int | None = None


def _lettered_columns(columns: Sequence[str]) -> tuple[tuple[str, ...], int | None]:
    """The choice columns (``choice_a``.., ``option_1``.., ``A``..) in order, and the first
    number of numbered ones; ``()`` when there are fewer than two."""
    groups: dict[str, list[tuple[int, str]]] = {}
    numbered: dict[str, bool] = {}
    for column in columns:
        match = _LETTERED.match(column.strip())
        if match is None:
            continue
        prefix, mark = match.group(1).lower(), match.group(2)
        key = int(mark) if mark.isdigit() else ord(mark.lower()) - ord("a")
        groups.setdefault(prefix, []).append((key, column))
        numbered[prefix] = mark.isdigit()
    best = max(groups, key=lambda p: len(groups[p]), default=None)
    if best is not None and len(groups[best]) >= 2:
        ordered = sorted(groups[best])
        base = ordered[0][0] if numbered[best] else None
        return tuple(c for _, c in ordered), base
    bare = [c for c in columns if c.strip() in OPTION_LETTERS]
    letters = sorted(bare, key=lambda c: c.strip())
    if len(letters) >= 2 and [c.strip() for c in letters] == list(OPTION_LETTERS[: len(letters)]):
        return tuple(letters), None
    return (), None


def parse_mc_columns(value: Any, where: str) -> dict[str, Any]:
    """``--metadata mc_columns`` as a role -> column mapping (a JSON object or its text).

    Raises:
        DataValidationError: not an object, an unknown role or a value that is not a name.
    """
    if value in (None, "", {}):
        return {}
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            value = None
    if not isinstance(value, Mapping):
        raise DataValidationError(
            where,
            [
                "--metadata mc_columns must be a JSON object role -> column, e.g. "
                '{"question": "prompt", "answer": "solution", "audio": "clip"}'
            ],
        )
    unknown = [k for k in value if k not in ROLES]
    bad = [k for k, v in value.items() if k in ROLES and not _names(v, k == "choices")]
    if unknown or bad:
        what = (
            f"unknown role(s) {', '.join(map(repr, unknown))}"
            if unknown
            else f"role(s) {', '.join(map(repr, bad))} need a column name"
        )
        raise DataValidationError(
            where,
            [
                f"--metadata mc_columns: {what}; the roles are {', '.join(ROLES)} "
                "(choices may list several columns)"
            ],
        )
    return dict(value)


def _names(value: Any, several: bool) -> bool:
    if isinstance(value, str):
        return True
    return several and isinstance(value, list) and len(value) >= 2 and all(
        isinstance(v, str) for v in value
    )


def _found(columns: Sequence[str], role: str, audio_columns: Sequence[str]) -> str | None:
    if role == "audio" and audio_columns:
        return audio_columns[0]
    by_name = {c.strip().lower(): c for c in columns}
    return next((by_name[n] for n in ROLE_NAMES[role] if n in by_name), None)


def map_columns(
    where: str | Path,
    columns: Sequence[str],
    given: Mapping[str, Any] | None = None,
    *,
    audio_columns: Sequence[str] = (),
    n_rows: int = 0,
) -> ColumnMap:
    """Each role's column: ``given`` (``mc_columns``) first, then the recognised names.

    Raises:
        DataValidationError: a column ``given`` names is not in the table, or a required
            role has no column (:func:`unplaced`).
    """
    given = dict(given or {})
    absent = [
        f"{role} = {name!r}"
        for role, value in given.items()
        for name in ([value] if isinstance(value, str) else value)
        if name not in columns
    ]
    if absent:
        raise DataValidationError(
            where,
            [
                f"--metadata mc_columns names column(s) the table does not have "
                f"({', '.join(absent)}); its columns are {', '.join(map(repr, columns))}"
            ],
        )
    found: dict[str, Any] = {}
    base = None
    for role in ROLES:
        if role in given:
            found[role] = given[role] if isinstance(given[role], str) else tuple(given[role])
            if role == "choices" and not isinstance(given[role], str):
                base = _lettered_columns(list(given[role]))[1]
            continue
        column = _found(columns, role, audio_columns)
        if role == "choices" and column is None:
            lettered, base = _lettered_columns(columns)
            column = lettered or None
        if column is not None:
            found[role] = column
    missing = [r for r in _REQUIRED_ROLES if r not in found]
    if missing:
        unplaced(where, columns, n_rows, found, missing)
    return ColumnMap(
        question=found["question"],
        choices=found["choices"],
        answer=found["answer"],
        id=found.get("id"),
        audio=found.get("audio"),
        index_base=base,
    )


def unplaced(
    where: str | Path,
    columns: Sequence[str],
    n_rows: int,
    found: Mapping[str, Any],
    missing: Sequence[str],
) -> None:
    """Raise the one line of a table whose roles cannot all be placed.

    Raises:
        DataValidationError: naming the columns found, the roles placed and missing, and
            the ``mc_columns`` to give.
    """
    from .validation import ACCEPTED_SCHEMAS

    ours = [f for f in OUR_FIELDS if f not in columns]
    placed = "; ".join(
        f"{role} = {value!r}" if isinstance(value, str) else f"{role} = {list(value)}"
        for role, value in found.items()
    )
    example = {r: "<column>" for r in missing}
    roles = f"the role {missing[0]} has" if len(missing) == 1 else (
        f"the roles {', '.join(missing)} have")
    schemas = "" if "choices" in found else (
        "Question files are " + "; ".join(ACCEPTED_SCHEMAS) + ". Rename the columns, or ")
    raise DataValidationError(
        where,
        [
            f"no row has the field(s) {', '.join(map(repr, ours))} (its {n_rows} row(s) hold "
            f"{', '.join(map(repr, columns)) or 'no fields'}), and {roles} no column "
            f"({'placed: ' + placed if placed else 'none placed'}): the file is not in a question "
            "schema this tool reads"
        ],
        hint=f"{schemas}{'map' if schemas else 'Map'} the columns: --metadata "
        f"mc_columns='{json.dumps(example)}' (roles: {', '.join(ROLES)}; "
        "docs/your_own_benchmark.md).",
    )


def _split_options(text: str) -> list[str]:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if len(lines) > 1:
        return lines
    markers = list(_INLINE_MARKER.finditer(text))
    if len(markers) > 1 and [m.group(1) for m in markers] == list(OPTION_LETTERS[: len(markers)]):
        ends = [m.start() for m in markers[1:]] + [len(text)]
        return [text[m.start() : end].strip() for m, end in zip(markers, ends, strict=True)]
    if "|" in text:
        return [part.strip() for part in text.split("|")]
    return [text.strip()]


def _list_cell(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, Mapping):
        return list(value.values())
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            for parse in (json.loads, ast.literal_eval):
                try:
                    parsed = parse(text)
                except (ValueError, SyntaxError):
                    continue
                if isinstance(parsed, list):
                    return parsed
        return _split_options(text) if text else []
    if hasattr(value, "__iter__"):
        return list(value)
    return [value]


def _without_letters(options: list[str | None]) -> list[str | None]:
    """The options without ``(A) `` / ``A. `` prefixes, when every option has its own."""
    shown = [o for o in options if o]
    marks = [_LETTER_PREFIX.match(o) for o in shown]
    letters = [m and (m.group(1) or m.group(2)) for m in marks]
    if not shown or letters != list(OPTION_LETTERS[: len(shown)]):
        return options
    return [o[_LETTER_PREFIX.match(o).end() :] if o else o for o in options]  # type: ignore[union-attr]


def choice_cells(row: Mapping[str, Any], choices: str | tuple[str, ...]) -> list[str | None]:
    """The row's options in letter order, an empty cell as None (kept in place, so a
    letter answer still points at its column)."""
    cells = [row.get(c) for c in choices] if isinstance(choices, tuple) else _list_cell(
        row.get(choices)
    )
    options = [None if c is None or str(c).strip() == "" else str(c).strip() for c in cells]
    return _without_letters(options)


def _as_number(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"\s*\d+\s*", value):
        return int(value)
    return None


def _text_position(text: str, options: Sequence[str | None]) -> int | None:
    for same in (lambda o: o == text, lambda o: normalize_answer(o) == normalize_answer(text)):
        hits = [i for i, o in enumerate(options) if o is not None and same(o)]
        if len(hits) == 1:
            return hits[0]
    return None


def repeated_answer(value: Any, options: Sequence[str | None]) -> list[int]:
    """The positions of the options the answer's text names when it names several (the
    options repeat, so no one of them is the answer); ``[]`` otherwise.

    >>> repeated_answer("piano", ["piano", "Piano", "drums"])
    [0, 1]
    """
    if not isinstance(value, str) or not value.strip():
        return []
    text = normalize_answer(value.strip())
    hits = [i for i, o in enumerate(options) if o is not None and normalize_answer(o) == text]
    return hits if len(hits) > 1 else []


def index_base(rows: Sequence[tuple[Any, int]], numbered: int | None) -> int | None:
    """The base of the file's numeric answers (``rows``: (answer, number of options)):
    0 when an answer is 0, numbered choice columns' first number, 1 when an answer equals
    its item's number of options; None when numeric answers leave it open (``2, 3, 1``
    over ``choice_a..d`` reads as B, C, A or as C, D, B: a guess would shift every gold
    answer by one)."""
    numbers = [(_as_number(a), n) for a, n in rows]
    numbers = [(a, n) for a, n in numbers if a is not None]
    if any(a == 0 for a, _ in numbers):
        return 0
    if numbered is not None:
        return numbered
    if any(a == n for a, n in numbers):
        return 1
    return None if numbers else 0


def answer_position(value: Any, options: Sequence[str | None], base: int) -> int | None:
    """The position of the answer among ``options`` (text first, then a letter or a
    lettered option, then an index counted from ``base``); None when it names none."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    position: int | None = None
    if isinstance(value, str):
        text = value.strip()
        position = _text_position(text, options)
        prefix = _LETTER_PREFIX.match(text)
        letter = _LETTER.match(text)
        if position is None and prefix is not None:
            rest = _text_position(text[prefix.end() :].strip(), options)
            position = rest if rest is not None else OPTION_LETTERS.index(
                prefix.group(1) or prefix.group(2)
            )
        elif position is None and letter is not None:
            position = OPTION_LETTERS.index(letter.group(1))
    number = _as_number(value)
    if position is None and number is not None:
        position = number - base
    if position is None or not 0 <= position < len(options) or options[position] is None:
        return None
    return position
