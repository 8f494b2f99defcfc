"""Join a Hugging Face audio dataset to the questions (``--metadata audio_hf_dataset``).

Rows are found by the normalised question text (``audio_question_column``, default
``instruction``) or by an id column (``audio_id_column``). Rows sharing a question are
told apart by every field both sides have (:func:`match_hf_rows`). ``choices`` may be a
list of option texts or one string of ``(A) x`` lines, and ``answer`` a letter, a
lettered option (``(A) x``), the option text or an index, as the public copies write
them (``lmms-lab/muchomusic``: ``choices`` printed as lines, ``answer`` like
``"(A) Four on the floor"``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..questions import normalize_answer
from .errors import AMBIGUOUS, AudioError
from .sources import hf_audio_dataset, hf_ref

__all__ = ["match_hf_rows", "resolve_hf_rows"]


#: An option's letter prefix as datasets write it: ``(A) x``, ``A. x``, ``A) x``, ``A: x``.
_LETTER_PREFIX = re.compile(r"^\s*(?:\(([A-Z])\)|([A-Z])[.):])\s*")
#: ``(A) `` markers of several options written on one line.
_INLINE_MARKER = re.compile(r"(?:^|(?<=\s))\(([A-Z])\)\s")


def _strip_letter(text: str) -> tuple[str | None, str]:
    """``("A", "x")`` for ``"(A) x"`` / ``"A. x"``; ``(None, text)`` without a prefix."""
    match = _LETTER_PREFIX.match(text)
    if match is None or not text[match.end() :].strip():
        return None, text
    return match.group(1) or match.group(2), text[match.end() :]


def _split_options(text: str) -> list[str]:
    """One option per line, or ``(A) x (B) y`` on one line; else the text as one option."""
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) > 1:
        return lines
    markers = list(_INLINE_MARKER.finditer(text))
    if len(markers) > 1 and [m.group(1) for m in markers] == [
        chr(ord("A") + i) for i in range(len(markers))
    ]:
        ends = [m.start() for m in markers[1:]] + [len(text)]
        return [text[m.start() : end] for m, end in zip(markers, ends, strict=True)]
    return [text]


def _choices_text(value: Any) -> list[str]:
    """The normalised option texts of a row's ``choices``, in letter order.

    A list (or its JSON text, or a mapping), or one string with an option per line or
    ``(A) x (B) y`` markers (as ``lmms-lab/muchomusic`` prints them); ``(A) ``, ``A. ``
    prefixes are dropped.

    >>> _choices_text("(A) Four on the floor\\n(B) Scat singing")
    ['four on the floor', 'scat singing']
    >>> _choices_text(["A. Piano", "B. Violin"]), _choices_text(None)
    (['piano', 'violin'], [])
    """
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            parsed = None
        value = parsed if isinstance(parsed, (list, dict)) else _split_options(value)
    if isinstance(value, Mapping):
        value = list(value.values())
    return [normalize_answer(_strip_letter(str(v))[1]) for v in (value or [])]


def _row_answer(answer: Any, choices: Any) -> str | None:
    """The normalised correct-answer text of an HF row.

    ``answer`` may be an index into ``choices``, a letter (``A``, ``(A)``, ``A.``), a
    lettered option (``(A) Four on the floor``, as ``lmms-lab/muchomusic`` stores it) or
    the option text itself; ``None`` when it cannot be read.

    >>> _row_answer("(B) Scat singing", "(A) Four on the floor\\n(B) Scat singing")
    'scat singing'
    >>> _row_answer("B", ["Four on the floor", "Scat singing"]), _row_answer(0, ["x", "y"])
    ('scat singing', 'x')
    """
    texts = _choices_text(choices)
    if isinstance(answer, int) and not isinstance(answer, bool):
        return texts[answer] if 0 <= answer < len(texts) else None
    if answer is None:
        return None
    text = str(answer).strip()
    if normalize_answer(text) in texts:
        return normalize_answer(text)
    letter, rest = _strip_letter(text)
    if letter is not None:  # "(A) text": the text decides when it is one of the options
        if normalize_answer(rest) in texts or not texts:
            return normalize_answer(rest)
    else:
        match = re.fullmatch(r"\(?([A-Z])\)?[.):]?", text)
        letter = match.group(1) if match else None
    index = None if letter is None else ord(letter) - ord("A")
    return texts[index] if index is not None and index < len(texts) else None


def _column(dataset: Any, *names: str) -> list[Any] | None:
    found = next((n for n in names if n in dataset.column_names), None)
    return None if found is None else list(dataset[found])


def _narrow(rows: list[int], keep: Callable[[int], bool]) -> list[int]:
    """The rows that pass ``keep``; all of them when none does (the field cannot decide)."""
    kept = [r for r in rows if keep(r)]
    return kept or rows


def match_hf_rows(
    question: Any,
    rows: Sequence[int],
    columns: Mapping[str, list[Any] | None],
    known_options: Sequence[str] = (),
) -> list[int]:
    """Tell apart Hugging Face rows that share a question's text, with every shared field.

    In order, each step keeping the rows that agree (or all, when none does): the correct
    answer (``answer`` as text, letter, lettered option ``(A) text`` or index into
    ``choices``, else the answer among the ``choices``; ``choices`` a list or one string
    of ``(A) x`` lines); the most option texts in common (the question's correct answer and
    distractors, plus ``known_options``, e.g. MuChoMusic's own options of a RUL row);
    the caption; the track (``dataset_identifier`` stem).

    Args:
        question: Has ``correct_answer``, ``distractors``, ``caption``, ``track``.
        rows: Candidate row indices (same normalised question text).
        columns: ``choices``, ``answer``, ``caption``, ``track`` columns (None if absent).
        known_options: More option texts the question is known to have been shown with.

    Examples
    --------
    >>> from types import SimpleNamespace as Q
    >>> q = Q(correct_answer="male", distractors=("Soprano", "Female"), caption=None, track=None)
    >>> cols = {"choices": [["Male", "Tenor"], ["Male", "Female"]], "answer": ["A", "A"]}
    >>> match_hf_rows(q, [0, 1], cols)
    [1]
    """
    rows = list(rows)
    gold = normalize_answer(question.correct_answer)
    choices, answers = columns.get("choices"), columns.get("answer")
    if answers is not None:
        rows = _narrow(
            rows, lambda r: _row_answer(answers[r], None if choices is None else choices[r]) == gold
        )
    elif choices is not None:
        rows = _narrow(rows, lambda r: gold in _choices_text(choices[r]))
    if choices is not None and len(rows) > 1:
        mine = {normalize_answer(t) for t in (question.correct_answer, *question.distractors)}
        mine |= {normalize_answer(t) for t in known_options}
        overlap = {r: len(mine.intersection(_choices_text(choices[r]))) for r in rows}
        best = max(overlap.values())
        rows = [r for r in rows if overlap[r] == best]
    captions = columns.get("caption")
    if captions is not None and getattr(question, "caption", None) and len(rows) > 1:
        caption = normalize_answer(question.caption)
        rows = _narrow(rows, lambda r: normalize_answer(str(captions[r] or "")) == caption)
    tracks = columns.get("track")
    if tracks is not None and getattr(question, "track", None) and len(rows) > 1:
        track = str(question.track)
        rows = _narrow(rows, lambda r: Path(str(tracks[r] or "")).stem == track)
    return rows


def resolve_hf_rows(
    questions: Sequence[Any],
    metadata: Mapping[str, Any],
    known_options: Mapping[str, Sequence[str]],
) -> list[tuple[str | None, list[str]]]:
    """Each question's clip reference in ``metadata["audio_hf_dataset"]``, or ``None`` and
    what was tried (``(no row)``, or the ambiguous rows, marked with :data:`AMBIGUOUS`).

    Raises:
        AudioError: the dataset lacks the audio, question or id column named.
    """
    source = str(metadata["audio_hf_dataset"])
    split = str(metadata.get("audio_split", "test"))
    column = str(metadata.get("audio_column", "context"))
    dataset = hf_audio_dataset(source, split, column)
    id_column = metadata.get("audio_id_column")
    question_column = str(metadata.get("audio_question_column", "instruction"))
    where = f"{source}[{split}]"
    index: dict[str, list[int]] = {}
    if id_column:
        if str(id_column) not in dataset.column_names:
            raise AudioError(
                f"--metadata audio_hf_dataset={source!r}: no id column {str(id_column)!r} "
                f"(columns: {dataset.column_names}); set audio_id_column to the column of "
                "question ids, or leave it out to join on the question text"
            )
        for row, value in enumerate(dataset[str(id_column)]):
            index.setdefault(str(value), []).append(row)
    else:
        if question_column not in dataset.column_names:
            raise AudioError(
                f"--metadata audio_hf_dataset={source!r}: no question column "
                f"{question_column!r} to join on (columns: {dataset.column_names}); set "
                "audio_question_column, or audio_id_column to join on ids"
            )
        for row, value in enumerate(dataset[question_column]):
            index.setdefault(normalize_answer(str(value)), []).append(row)
    columns = {
        "choices": _column(dataset, "choices"),
        "answer": _column(dataset, "answer"),
        "caption": _column(dataset, "caption"),
        "track": _column(dataset, "dataset_identifier", "track"),
    }
    out: list[tuple[str | None, list[str]]] = []
    for q in questions:
        key = str(q.id) if id_column else normalize_answer(q.question)
        rows = index.get(key, [])
        if len(rows) > 1 and not id_column:
            rows = match_hf_rows(q, rows, columns, known_options.get(str(q.id), ()))
        label = f"{where} {id_column or question_column}={key!r}"
        if len(rows) == 1:
            out.append((hf_ref(source, split, column, rows[0]), []))
        elif not rows:
            out.append((None, [f"{label} (no row)"]))
        else:
            out.append(
                (
                    None,
                    [
                        f"{label} {AMBIGUOUS} rows {rows[:5]} agree on every field both sides "
                        "have)"
                    ],
                )
            )
    return out
