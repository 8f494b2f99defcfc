"""The "MMAU layout": released question files whose items list their ``choices`` and give
the ``answer`` as the text of one of them, read into :class:`LayoutItem` records, every
problem named by item.

Two benchmarks share it, each described by one :class:`Layout` (its own field names):
MMAU (:mod:`.mmau`: a JSON list, ``task``, ``audio_id``, ``dataset``) and MMAR
(:mod:`.mmar`: JSON lines, ``modality``, ``audio_path``, ``source``). A file is read as a
JSON list when it starts with ``[``, else as JSON lines, whichever layout it holds.

An empty choice (MMAR lists a trailing ``""`` in 4 items) is left out of the item's
options, with a warning naming the items. Kept as released: a choice repeated within an
item is shown twice, and either copy of the answer counts as right (a warning names them).
A file where no item has an ``answer`` (MMAU's ``test`` split) is read as unanswered: its
items have ``answer`` None.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .reading import json_value, jsonl_values, read_text
from .schema import MAX_LISTED, DataValidationError, too_many_options

__all__ = [
    "ANY_SUFFIX",
    "Layout",
    "LayoutItem",
    "describe_layout",
    "describe_layout_file",
    "looks_like",
    "file_rows",
    "is_layout_file",
    "read_layout",
    "select_subset",
    "unanswered_notice",
]

#: ``{modality}_any`` subsets keep every item whose ``-``-joined mix names that modality.
ANY_SUFFIX = "_any"

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Layout:
    """One benchmark's release in the MMAU layout.

    Attributes:
        name: Lower-case name (``mmau``): the option-order seed and the metadata keys'
            prefix (``{name}_data_path``, ``{name}_subset``, ``{name}_protocol``).
        display: Name in messages (``MMAU``).
        subset_field: The field ``--metadata {name}_subset`` selects on (``task``).
        audio_field: The clip's released path (``audio_id``: ``./test-mini-audios/{id}.wav``).
        source_field: The clip's source (``dataset``).
        subsets: The subset values; ``all`` keeps every item; ``X_any`` (:data:`ANY_SUFFIX`)
            the items whose ``-``-joined value names ``X``, when listed here.
        allowed: The only values ``subset_field`` may take (empty: any).
        release_fields: Which of ``split``, ``category``, ``sub-category``, ``difficulty``
            the release has (the predictions file writes those).
        extra_fields: Other released fields kept for the predictions file.
        output_key: The key of the model's free-text answer in the authors' predictions file.
        breakdowns: The document fields the report breaks accuracy down by.
        hint: What to give instead, for a file that is not this layout.
        repository: The authors' GitHub repository (``owner/name``) holding the files.
        files: ``(split, file name)`` of each released question file at the repository's
            root, the default first (``{name}_split`` chooses when there are several).
    """

    name: str
    display: str
    subset_field: str
    audio_field: str
    source_field: str
    subsets: tuple[str, ...]
    allowed: tuple[str, ...]
    release_fields: tuple[str, ...]
    extra_fields: tuple[str, ...]
    output_key: str
    breakdowns: tuple[str, ...]
    hint: str
    repository: str
    files: tuple[tuple[str, str], ...]

    def release_keys(self) -> dict[str, Any]:
        """What the predictions file needs of the layout, carried by each document
        (``release_layout``), so the file is written from the logged documents alone."""
        return {
            "name": self.name,
            "display": self.display,
            "audio_field": self.audio_field,
            "source_field": self.source_field,
            "subset_field": self.subset_field,
            "release_fields": list(self.release_fields),
            "output_key": self.output_key,
        }

    def selects(self, subset: str, value: str) -> bool:
        """Whether an item with ``subset_field`` ``value`` is in ``subset``."""
        if subset == "all":
            return True
        if subset.endswith(ANY_SUFFIX):
            return subset.removesuffix(ANY_SUFFIX) in value.split("-")
        return value == subset


@dataclass(frozen=True)
class LayoutItem:
    """One released question.

    Attributes:
        id: The item's id.
        question: The question text.
        choices: The choices in the release's order (2 or more).
        answer: The right choice's text; None in an unanswered file.
        task: The layout's ``subset_field`` value (MMAU's ``task``, MMAR's ``modality``).
        sub_category: ``sub-category``.
        difficulty: ``difficulty`` ("" when absent, as in MMAR).
        category: ``category``.
        audio_id: The clip's path as released (the layout's ``audio_field``).
        dataset: The clip's source (the layout's ``source_field``).
        split: ``split`` ("" when absent).
        extra: The layout's ``extra_fields`` as released, as (field, value) pairs.
    """

    id: str
    question: str
    choices: tuple[str, ...]
    answer: str | None
    task: str
    sub_category: str = ""
    difficulty: str = ""
    category: str = ""
    audio_id: str = ""
    dataset: str = ""
    split: str = ""
    extra: tuple[tuple[str, Any], ...] = ()

    @property
    def gold(self) -> int | None:
        """Index of the answer in the release's order (its first copy); None: unanswered."""
        return None if self.answer is None else self.choices.index(self.answer)


def looks_like(raw: Any, layout: Layout) -> bool:
    """Whether parsed rows are ``layout``'s: a list of objects, most with ``choices`` (a
    list) and the layout's ``subset_field``, none with RUL-MuChoMusic's ``correct_answer`` /
    ``distractors``."""
    if not isinstance(raw, list) or not raw:
        return False
    rows = [r for r in raw if isinstance(r, dict)]
    if not rows or any("distractors" in r or "correct_answer" in r for r in rows):
        return False
    # most items, not all: a file with a few broken items is the layout's, its reader names them
    shaped = sum(isinstance(r.get("choices"), list) and layout.subset_field in r for r in rows)
    return 2 * shaped > len(rows)


def describe_layout(raw: list[Any], layout: Layout) -> str:
    """``layout``'s release in words, with its item count and the count of its default
    subset (``raw``: the parsed rows)."""
    subset = layout.subsets[0]
    counted = sum(isinstance(r, dict) and r.get(layout.subset_field) == subset for r in raw)
    return (
        f"{layout.display}'s released layout ({len(raw):,} items with 'choices' and "
        f"{layout.subset_field!r}, {counted:,} of them {subset})"
    )


def describe_layout_file(path: str | os.PathLike[str], layout: Layout) -> str:
    """:func:`describe_layout` of the file at ``path`` (a reader's ``describe``)."""
    return describe_layout(file_rows(Path(path)), layout)


def file_rows(path: Path) -> Any:
    """The parsed rows of a JSON list or a JSON-lines file (a line that is not JSON raises).

    Raises:
        DataValidationError: the file is not valid JSON (or a line is not).
    """
    if read_text(path).lstrip().startswith("["):
        try:
            return json_value(path)
        except json.JSONDecodeError as err:
            raise DataValidationError(path, [f"not valid JSON: {err}"]) from None
    rows = []
    for lineno, value in jsonl_values(path):
        if isinstance(value, json.JSONDecodeError):
            raise DataValidationError(path, [f"line {lineno}: not valid JSON: {value}"])
        rows.append(value)
    return rows


def is_layout_file(path: str | os.PathLike[str], layout: Layout) -> bool:
    """Whether a JSON or JSON-lines file holds ``layout``'s release (from its content)."""
    path = Path(path)
    # JSON or JSON lines start with "[" or "{" (file_kinds.question_format's rule, not
    # imported: file_kinds names this layout's files)
    if path.suffix.lower() == ".parquet" or read_text(path).lstrip()[:1] not in ("[", "{"):
        return False
    try:
        return looks_like(file_rows(path), layout)
    except DataValidationError:
        return False


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _item(
    position: int,
    row: Any,
    layout: Layout,
    *,
    answered: bool,
    problems: list[str],
    blanks: list[str],
) -> LayoutItem | None:
    if not isinstance(row, dict):
        problems.append(f"row {position}: expected an object, got {row!r:.60}")
        return None
    qid = _text(row.get("id")).strip()
    where = f"item {qid!r}" if qid else f"row {position}"
    fields = ("id", "question", "choices", layout.subset_field, *(("answer",) * answered))
    missing = [f for f in fields if row.get(f) in (None, "")]
    if missing:
        problems.append(f"{where}: missing field(s) {', '.join(repr(m) for m in missing)}")
        return None
    choices = row["choices"]
    if not isinstance(choices, list) or not all(isinstance(c, str) for c in choices):
        problems.append(f"{where}: 'choices' must be a list of strings, got {choices!r:.60}")
        return None
    if any(not c.strip() for c in choices):
        blanks.append(qid)  # MMAR has 4 items with a trailing "" choice: never shown
        choices = [c for c in choices if c.strip()]
    if len(choices) < 2:
        problems.append(f"{where}: needs at least 2 non-empty choices, got {row['choices']!r:.80}")
        return None
    crowded = too_many_options(where, len(choices))
    if crowded:
        problems.append(crowded)
        return None
    answer = row.get("answer") if answered else None
    if answer is not None and answer not in choices:
        problems.append(f"{where}: answer {answer!r} is not one of its choices {choices!r:.120}")
        return None
    task = _text(row[layout.subset_field]).strip()
    if layout.allowed and task not in layout.allowed:
        problems.append(
            f"{where}: {layout.subset_field} {task!r} is not one of {', '.join(layout.allowed)}"
        )
        return None
    return LayoutItem(
        id=qid,
        question=_text(row["question"]),
        choices=tuple(choices),
        answer=answer,
        task=task,
        sub_category=_text(row.get("sub-category")).strip(),
        difficulty=_text(row.get("difficulty")).strip(),
        category=_text(row.get("category")).strip(),
        audio_id=_text(row.get(layout.audio_field)).strip(),
        dataset=_text(row.get(layout.source_field)).strip(),
        split=_text(row.get("split")).strip(),
        extra=tuple((f, row[f]) for f in layout.extra_fields if f in row),
    )


def read_layout(path: str | os.PathLike[str], layout: Layout) -> list[LayoutItem]:
    """Read a release in ``layout``, validating every item.

    A file where no item has an ``answer`` is read as unanswered; in any other file every
    item needs one, and it must be one of its choices.

    Raises:
        DataValidationError: not the layout, or every malformed item by id, in one message;
            nothing is loaded then.
    """
    path = Path(path)
    raw = file_rows(path)
    if not looks_like(raw, layout):
        shape = "a JSON object keyed by id" if isinstance(raw, dict) else f"{type(raw).__name__}"
        from .releases import released_benchmark  # every descriptor's reader is asked

        other = released_benchmark(path)
        if other is not None and other.folder != layout.name:
            shape = f"{other.description}: {other.name}'s question file"
            hint = f"Give it as --metadata {other.key}=... instead." if other.key else ""
        else:
            hint = layout.hint
        raise DataValidationError(
            path,
            [
                f"not {layout.display}'s layout (a JSON list or JSON lines of items with "
                f"'question', 'choices', 'answer', '{layout.subset_field}'); found {shape}"
            ],
            hint=hint,
        )
    answered = any(isinstance(r, dict) and r.get("answer") not in (None, "") for r in raw)
    problems: list[str] = []
    blanks: list[str] = []
    items: list[LayoutItem] = []
    seen: set[str] = set()
    for position, row in enumerate(raw):
        item = _item(position, row, layout, answered=answered, problems=problems, blanks=blanks)
        if item is None:
            continue
        if item.id in seen:
            problems.append(f"item {item.id!r}: appears more than once")
            continue
        seen.add(item.id)
        items.append(item)
    if problems:
        raise DataValidationError(
            path, problems, hint="Fix or remove these items; nothing was loaded."
        )
    if blanks:
        logger.warning(
            "%s: %d item(s) list an empty choice, left out of their options: %s",
            path,
            len(blanks),
            ", ".join(blanks[:MAX_LISTED]) + (" ..." if len(blanks) > MAX_LISTED else ""),
        )
    return items


def select_subset(
    items: Sequence[LayoutItem],
    subset: str,
    path: str | Path,
    layout: Layout,
    key: str | None = None,
) -> list[LayoutItem]:
    """The items of ``subset`` (:meth:`Layout.selects`), in the file's order (``key``: the
    ``--metadata`` key that chose it, default ``{name}_subset``).

    Raises:
        DataValidationError: the file has no item of that subset.
    """
    chosen = [i for i in items if layout.selects(subset, i.task)]
    repeated = [i.id for i in chosen if len(set(i.choices)) < len(i.choices)]
    if repeated:
        logger.warning(
            "%s: %d %s item(s) repeat a choice, shown as released (either copy of the answer "
            "counts as right): %s",
            path,
            len(repeated),
            subset,
            ", ".join(repeated[:MAX_LISTED]) + (" ..." if len(repeated) > MAX_LISTED else ""),
        )
    if not chosen:
        found = sorted({i.task for i in items})
        raise DataValidationError(
            path,
            [f"no item with {layout.subset_field} {subset!r} (the file has {', '.join(found)})"],
            hint=f"Pick another --metadata {key or layout.name + '_subset'}.",
        )
    return chosen


def unanswered_notice(path: str | Path, layout: Layout, n_items: int) -> str:
    """The one line said at the start of a run on a file without answers."""
    return (
        f"{path} has no answers ({layout.display}'s test split, or a file without 'answer'): "
        f"this run writes predictions only ({n_items} items, the {layout.display} predictions "
        f"file with '{layout.output_key}'); no acc, perceptual_index or baseline is computed"
    )
