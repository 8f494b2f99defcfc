"""The datasets ``diagnose`` reads: any question file, or a distractor-pools file.

A ``DATASET`` argument is ``[NAME=]PATH``. The file is read with
:func:`~lm_eval_rul.questions.load_questions` (released RUL JSON, MuChoMusic CSV, JSONL /
CSV / parquet tables). Diagnosing means *reporting* bad options, not refusing them: a
JSON or JSONL file that fails only the option checks (a distractor equal to the correct
answer, repeated distractors: the released pools list their own correct answer in 10
pools) is read again as it is, with the same row validation but without those checks
and without any cleaning, so every candidate is compared and every duplicate is shown
with its text. Empty candidates are dropped and counted. Malformed rows (missing ids or
fields, duplicate ids) are refused as everywhere else.

A dataset whose questions do not all have the same number of distractors, or have more
than :data:`MAX_OPTIONS_DISTRACTORS`, is a *pools* dataset (labels only).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..errors import UserInputError
from ..questions import DataValidationError, Question, load_questions, read_as_released

__all__ = [
    "DiagnoseInputError",
    "DatasetInput",
    "MAX_OPTIONS_DISTRACTORS",
    "parse_dataset_spec",
    "load_dataset_inputs",
]

#: More distractors than this per question (or a varying number) makes a pools dataset.
MAX_OPTIONS_DISTRACTORS = 9
_SHOWN_PROBLEMS = 10


class DiagnoseInputError(UserInputError, ValueError):
    """Bad ``DATASET`` arguments (a name given twice, an empty name) or options."""


@dataclass
class DatasetInput:
    """One dataset to diagnose.

    Attributes:
        name: Label in the report (``NAME=`` of the argument, else the file stem).
        path: The file.
        kind: ``questions`` or ``pools``.
        questions: Its questions, options as released (empty candidates dropped).
        problems: What the strict readers refused (empty when the file passed them).
        n_empty: Empty candidates dropped, per question id.
    """

    name: str
    path: Path
    kind: str
    questions: list[Question]
    problems: list[str] = field(default_factory=list)
    n_empty: dict[str, int] = field(default_factory=dict)

    @property
    def n_distractors(self) -> int:
        return sum(len(q.distractors) for q in self.questions)

    def checks(self) -> dict:
        """JSON-ready summary of the strict checks and dropped empty candidates."""
        return {
            "passed": not self.problems,
            "n_problems": len(self.problems),
            "problems": self.problems[:_SHOWN_PROBLEMS],
            "n_empty_dropped": sum(self.n_empty.values()),
        }


def parse_dataset_spec(spec: str) -> tuple[str, Path]:
    """``NAME=PATH`` or ``PATH`` -> (name, path); the name defaults to the file stem.

    A ``=`` inside an existing path is part of the path.
    """
    name, sep, path = spec.partition("=")
    if not sep or Path(spec).exists():
        return Path(spec).stem, Path(spec)
    if not name.strip():
        raise DiagnoseInputError(f"dataset {spec!r}: empty NAME before '='; use NAME=PATH")
    return name.strip(), Path(path)


def _kind(questions: Sequence[Question]) -> str:
    counts = {len(q.distractors) for q in questions}
    if len(counts) > 1 or max(counts, default=0) > MAX_OPTIONS_DISTRACTORS:
        return "pools"
    return "questions"


def _load_one(name: str, path: Path) -> DatasetInput:
    try:
        questions = load_questions(path)
        problems: list[str] = []
    except DataValidationError as strict_error:
        if path.suffix.lower() not in (".json", ".jsonl"):
            raise
        try:
            questions = read_as_released(path)
        except (DataValidationError, UnicodeDecodeError):
            raise strict_error from None
        problems = strict_error.problems
    n_empty = {}
    for position, q in enumerate(questions):
        kept = tuple(d for d in q.distractors if d)
        if len(kept) != len(q.distractors):
            n_empty[q.id] = len(q.distractors) - len(kept)
            questions[position] = replace(q, distractors=kept)
    return DatasetInput(name, path, _kind(questions), questions, problems, n_empty)


def load_dataset_inputs(specs: Sequence[str]) -> list[DatasetInput]:
    """Read every ``[NAME=]PATH`` (all of them, before any model is loaded).

    Raises:
        DiagnoseInputError: No dataset, or two datasets with the same name.
        FileNotFoundError: A missing file.
        DataValidationError: A file no reader accepts (listing its bad rows).
    """
    if not specs:
        raise DiagnoseInputError("give at least one DATASET")
    parsed = [parse_dataset_spec(spec) for spec in specs]
    names = [name for name, _ in parsed]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise DiagnoseInputError(
            f"dataset name(s) {', '.join(map(repr, repeated))} given twice; label each file "
            "with NAME=PATH, e.g. muchomusic=muchomusic.csv rul=RUL-MuchoMusic.json"
        )
    return [_load_one(name, path) for name, path in parsed]
