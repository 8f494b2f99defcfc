"""MMAU's released JSON read into :class:`MMAUItem` records, every problem named by item.

The file (``mmau-test-mini.json``, ``mmau-test.json``) is a JSON list of objects with
``id``, ``audio_id`` (``./test-mini-audios/{id}.wav``), ``question``, ``choices`` (a
list), ``answer`` (the text of one choice; absent from the ``test`` split, which the
authors score from a predictions file), ``dataset``, ``task`` (``sound`` | ``music`` |
``speech``), ``split``, ``category``, ``sub-category`` and ``difficulty`` (``easy`` |
``medium`` | ``hard``).

Kept as released: a choice repeated within an item (test-mini has one music and many
speech items with a repeated choice, a few repeating the answer) is shown twice, and
either copy of the answer counts as right (a warning names them).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .reading import json_value, reads_once
from .schema import (
    MAX_LISTED,
    DataValidationError,
    Question,
    normalize_answer,
    too_many_options,
)
from .validation import rows_to_questions

__all__ = [
    "MMAU_SUBSETS",
    "MMAU_FIELDS",
    "MMAUItem",
    "read_mmau_json",
    "looks_like_mmau",
    "select_subset",
    "as_question",
    "read_mmau_questions",
    "DEFAULT_QUESTION_SUBSET",
]

#: The ``task`` values of MMAU (``--metadata mmau_subset``; ``all`` keeps every item).
MMAU_SUBSETS: tuple[str, ...] = ("music", "sound", "speech")
#: Fields every item must have (``answer`` too, except in a file without any answer).
MMAU_FIELDS: tuple[str, ...] = ("id", "question", "choices", "task")
#: The subset ``pi`` and ``build`` read from an MMAU file (RUL-MMAU-music).
DEFAULT_QUESTION_SUBSET = "music"

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class MMAUItem:
    """One MMAU question as released.

    Attributes:
        id: The item's id (a UUID in the release).
        question: The question text.
        choices: The choices in the JSON's order.
        answer: The right choice's text; None in the unanswered ``test`` split.
        task: ``music``, ``sound`` or ``speech``.
        sub_category: ``sub-category`` (e.g. ``Harmony and Chord Progressions``).
        difficulty: ``easy``, ``medium`` or ``hard`` ("" when absent).
        category: ``Information Extraction`` or ``Reasoning`` ("" when absent).
        audio_id: The clip's path as released (``./test-mini-audios/{id}.wav``).
        dataset: The clip's source dataset (``musiccaps``, ``sdd`` ...).
        split: ``test-mini`` or ``test``.
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

    @property
    def gold(self) -> int | None:
        """Index of the answer in the JSON's order (its first copy); None: unanswered."""
        return None if self.answer is None else self.choices.index(self.answer)

    def released(self) -> dict[str, Any]:
        """The item in the release's own field names (what the authors' scorer reads)."""
        row: dict[str, Any] = {
            "id": self.id,
            "audio_id": self.audio_id,
            "question": self.question,
            "choices": list(self.choices),
        }
        if self.answer is not None:
            row["answer"] = self.answer
        row.update(
            {
                "dataset": self.dataset,
                "task": self.task,
                "split": self.split,
                "category": self.category,
                "sub-category": self.sub_category,
                "difficulty": self.difficulty,
            }
        )
        return row


def looks_like_mmau(raw: Any) -> bool:
    """Whether a parsed JSON value is MMAU's layout: a list of objects, most with
    ``choices`` (a list) and ``task``, none with RUL-MuChoMusic's ``correct_answer`` /
    ``distractors``."""
    if not isinstance(raw, list) or not raw:
        return False
    rows = [r for r in raw if isinstance(r, dict)]
    if not rows or any("distractors" in r or "correct_answer" in r for r in rows):
        return False
    # most items, not all: a file with a few broken items is MMAU's, its reader names them
    shaped = sum(isinstance(r.get("choices"), list) and "task" in r for r in rows)
    return 2 * shaped > len(rows)


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _item(position: int, row: Any, *, answered: bool, problems: list[str]) -> MMAUItem | None:
    if not isinstance(row, dict):
        problems.append(f"row {position}: expected an object, got {row!r:.60}")
        return None
    qid = _text(row.get("id")).strip()
    where = f"item {qid!r}" if qid else f"row {position}"
    fields = (*MMAU_FIELDS, "answer") if answered else MMAU_FIELDS
    missing = [f for f in fields if row.get(f) in (None, "")]
    if missing:
        problems.append(f"{where}: missing field(s) {', '.join(repr(m) for m in missing)}")
        return None
    choices = row["choices"]
    if not isinstance(choices, list) or not all(isinstance(c, str) for c in choices):
        problems.append(f"{where}: 'choices' must be a list of strings, got {choices!r:.60}")
        return None
    if len(choices) < 2 or any(not c.strip() for c in choices):
        problems.append(f"{where}: needs at least 2 non-empty choices, got {choices!r:.80}")
        return None
    crowded = too_many_options(where, len(choices))
    if crowded:
        problems.append(crowded)
        return None
    answer = row.get("answer") if answered else None
    if answer is not None and answer not in choices:
        problems.append(
            f"{where}: answer {answer!r} is not one of its choices {choices!r:.120}"
        )
        return None
    task = _text(row["task"]).strip()
    if task not in MMAU_SUBSETS:
        problems.append(f"{where}: task {task!r} is not one of {', '.join(MMAU_SUBSETS)}")
        return None
    return MMAUItem(
        id=qid,
        question=_text(row["question"]),
        choices=tuple(choices),
        answer=answer,
        task=task,
        sub_category=_text(row.get("sub-category")).strip(),
        difficulty=_text(row.get("difficulty")).strip(),
        category=_text(row.get("category")).strip(),
        audio_id=_text(row.get("audio_id")).strip(),
        dataset=_text(row.get("dataset")).strip(),
        split=_text(row.get("split")).strip(),
    )


@reads_once
def read_mmau_json(path: str | os.PathLike[str]) -> list[MMAUItem]:
    """Read MMAU's JSON (test-mini with answers, or test without), validating every item.

    A file where no item has an ``answer`` is read as the unanswered ``test`` split; in
    any other file every item needs one, and it must be one of its choices.

    Raises:
        DataValidationError: not MMAU's layout, or every malformed item by id, in one
            message; nothing is loaded then.
    """
    path = Path(path)
    try:
        raw = json_value(path)
    except json.JSONDecodeError as err:
        raise DataValidationError(path, [f"not valid JSON: {err}"]) from None
    if not looks_like_mmau(raw):
        shape = "a JSON object keyed by id" if isinstance(raw, dict) else f"{type(raw).__name__}"
        raise DataValidationError(
            path,
            [f"not MMAU's layout (a JSON list of items with 'question', 'choices', 'answer', "
             f"'task'); found {shape}"],
            hint="Give MMAU's mmau-test-mini.json (github.com/Sakshi113/MMAU), or leave "
            "mmau_data_path out to download it.",
        )  # fmt: skip
    answered = any(isinstance(r, dict) and r.get("answer") not in (None, "") for r in raw)
    problems: list[str] = []
    items: list[MMAUItem] = []
    seen: set[str] = set()
    for position, row in enumerate(raw):
        item = _item(position, row, answered=answered, problems=problems)
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
    return items


def select_subset(items: Sequence[MMAUItem], subset: str, path: str | Path) -> list[MMAUItem]:
    """The items of ``subset`` (a ``task`` value, or ``all``), in the file's order.

    Raises:
        DataValidationError: the file has no item of that subset.
    """
    chosen = list(items) if subset == "all" else [i for i in items if i.task == subset]
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
            [f"no item with task {subset!r} (the file has {', '.join(found)})"],
            hint="Pick another --metadata mmau_subset.",
        )
    return chosen


def _track(audio_id: str) -> str | None:
    """``test-mini-audios/{id}`` for ``./test-mini-audios/{id}.wav``: the clip's path inside
    ``audio_dir`` without its extension (the audio layouts try every extension)."""
    path = audio_id.strip()
    while path.startswith("./"):
        path = path[2:]
    stem, dot, _ = path.rpartition(".")
    return (stem if dot and "/" not in path[len(stem) :] else path) or None


def as_question(item: MMAUItem) -> Question:
    """The :class:`~lm_eval_rul.questions.Question` of an item (its answer first, the other
    choices in the JSON's order as distractors), for the shared document and audio code.

    An unanswered item (``test`` split) takes its first choice's place as "answer": the
    documents then replace the gold with none (:mod:`.documents`).
    """
    gold = item.gold if item.gold is not None else 0
    others = [c for i, c in enumerate(item.choices) if i != gold]
    return Question(
        id=item.id,
        question=item.question,
        correct_answer=item.choices[gold],
        distractors=tuple(others),
        track=_track(item.audio_id) if item.audio_id else None,
        source=item.dataset or None,
    )


def _distinct(question: Question) -> Question:
    """``question`` without repeated choices (nor copies of the answer) among its
    distractors, compared as :func:`~.schema.normalize_answer` does: what ``pi`` and
    ``build`` need (their validation refuses repeats), never what the tasks show."""
    seen = {normalize_answer(question.correct_answer)}
    kept = []
    for text in question.distractors:
        key = normalize_answer(text)
        if key not in seen:
            seen.add(key)
            kept.append(text.strip())
    return replace(question, distractors=tuple(kept))


@reads_once
def read_mmau_questions(
    path: str | os.PathLike[str],
    *,
    subset: str = DEFAULT_QUESTION_SUBSET,
    n_distractors: int | None = None,
) -> list[Question]:
    """The answered items of one MMAU ``subset`` as questions for ``pi`` and ``build``
    (:func:`as_question`; repeated choices kept once; ``n_distractors`` checked as the
    other readers check it).

    Raises:
        DataValidationError: not MMAU's layout, a malformed item, the unanswered ``test``
            split, or no item of ``subset``.
    """
    path = Path(path)
    items = select_subset(read_mmau_json(path), subset, path)
    if all(i.answer is None for i in items):
        raise DataValidationError(
            path,
            ["MMAU's test split has no answers, so no PI can be computed nor distractors "
             "built for it"],
            hint="Give mmau-test-mini.json (the split with answers).",
        )  # fmt: skip
    questions = [_distinct(as_question(i)) for i in items]
    logger.info("%s: %d %s item(s) of MMAU", path, len(questions), subset)
    rows = [
        {
            "id": q.id,
            "question": q.question,
            "correct_answer": q.correct_answer,
            "distractors": list(q.distractors),
            "track": q.track,
            "source": q.source,
        }
        for q in questions
    ]
    return rows_to_questions(path, rows, n_distractors=n_distractors)
