"""What a question is: the :class:`Question` record, the pool-cleaning report, the data
errors and the answer normalisation every reader and scorer shares."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..errors import UserInputError

__all__ = [
    "Question",
    "AudioLocation",
    "PoolCleaningReport",
    "DataValidationError",
    "DataSourceError",
    "normalize_answer",
    "MAX_LISTED",
    "natural_id_key",
    "OPTION_LETTERS",
    "too_many_options",
]

#: The letters options are shown with: a question offers at most 26 options.
OPTION_LETTERS: tuple[str, ...] = tuple("ABCDEFGHIJKLMNOPQRSTUVWXYZ")


def too_many_options(where: str, n_options: int) -> str | None:
    """The problem of a question offering more options than there are letters, or None
    (every reader asks this, so the item is named when the file is read, before a model
    loads, whatever protocol then shows it).

    >>> too_many_options("item '7'", 30)
    "item '7': 30 choices, more than the 26 option letters A-Z can show; keep at most 26"
    >>> too_many_options("item '7'", 26) is None
    True
    """
    limit = len(OPTION_LETTERS)
    if n_options <= limit:
        return None
    return (
        f"{where}: {n_options} choices, more than the {limit} option letters "
        f"A-{OPTION_LETTERS[-1]} can show; keep at most {limit}"
    )

#: How many problems (ids, rows) an error message lists before "... and N more".
MAX_LISTED = 10


def natural_id_key(item_id: str) -> tuple:
    """Sort key of ids in messages: numbers by value (``"rul:9"`` before ``"rul:10"``), so a
    list of ids reads in order whatever order the documents are in."""
    return tuple(
        (0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.findall(r"\d+|\D+", item_id)
    )


@dataclass(frozen=True)
class AudioLocation:
    """Where a question file itself says an item's clip is (an audio path column, or a
    cell of a Hugging Face dataset's ``Audio`` column); the audio layer turns it into a
    clip reference (:func:`lm_eval_rul.audio.attach_audio`).

    Attributes:
        path: A path as the file writes it (relative paths are read inside ``audio_dir``
            when given, else inside ``base``).
        base: The folder of the question file (or of the dataset).
        dataset: The dataset holding the clip in a cell (a folder, a parquet file or
            folder, a hub name), with its ``split``, ``column`` and ``row``.
    """

    path: str | None = None
    base: str | None = None
    dataset: str | None = None
    split: str | None = None
    column: str | None = None
    row: int | None = None


@dataclass(frozen=True)
class Question:
    """One multiple-choice music question.

    Attributes:
        id: Question id as a string (the MuChoMusic question id for RUL rows).
        question: The question text.
        correct_answer: The correct option's text.
        distractors: Wrong options, in their released order (fold k drops index k).
        caption: The audio caption the question was written from, when known.
        pi: The Perceptual Index stored with the row (``PI`` in the released JSON).
        track: Audio clip key: the MuChoMusic ``dataset_identifier`` stem, when known.
        source: Audio source dataset (``sdd`` or ``musiccaps``), when known.
        audio: Where the question file says its clip is (:class:`AudioLocation`), when it
            says (an audio column); None: the clip is found by ``--metadata``.
    """

    id: str
    question: str
    correct_answer: str
    distractors: tuple[str, ...]
    caption: str | None = None
    pi: float | None = None
    track: str | None = None
    source: str | None = None
    audio: AudioLocation | None = None


@dataclass
class PoolCleaningReport:
    """What :func:`read_pools` removed from the distractor pools, with counts per id."""

    n_questions: int = 0
    n_candidates_in: int = 0
    n_candidates_out: int = 0
    equal_to_correct: dict[str, int] = field(default_factory=dict)
    duplicates: dict[str, int] = field(default_factory=dict)
    empty: dict[str, int] = field(default_factory=dict)

    def summary(self) -> str:
        return (
            f"{self.n_questions} pools, {self.n_candidates_in} candidates in, "
            f"{self.n_candidates_out} kept; dropped {sum(self.equal_to_correct.values())} equal "
            f"to the correct answer (in {len(self.equal_to_correct)} pools), "
            f"{sum(self.duplicates.values())} duplicates, {sum(self.empty.values())} empty"
        )


class DataValidationError(UserInputError, ValueError):
    """A data file has malformed rows; ``problems`` lists each one with its id."""

    def __init__(self, path: str | os.PathLike[str], problems: Sequence[str], hint: str = ""):
        self.path = str(path)
        self.problems = list(problems)
        if len(self.problems) == 1:  # one mistake, one line
            problem = self.problems[0].rstrip(".")
            super().__init__(f"1 problem in {self.path}: {problem}." + (f" {hint}" if hint else ""))
            return
        shown = "\n".join(f"  - {p}" for p in self.problems[:MAX_LISTED])
        more = len(self.problems) - MAX_LISTED
        tail = f"\n  ... and {more} more" if more > 0 else ""
        hint = f"\n{hint}" if hint else ""
        super().__init__(f"{len(self.problems)} problem(s) in {self.path}:\n{shown}{tail}{hint}")


class DataSourceError(UserInputError, RuntimeError):
    """A default public dataset could not be fetched (offline, moved, or private)."""


_SPACES = re.compile(r"\s+")


def normalize_answer(text: str) -> str:
    """Case-, space- and trailing-punctuation-insensitive form of an answer.

    >>> normalize_answer("  Electric  Guitar. ")
    'electric guitar'
    """
    text = _SPACES.sub(" ", str(text)).strip().lower()
    return text.rstrip(".!;:,").strip()
