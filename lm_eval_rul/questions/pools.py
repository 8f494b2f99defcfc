"""Distractor pools: the one cleaning rule for candidate lists (released or generated).

A pool is a question whose ``distractors`` are candidates to choose four from. Cleaning
de-duplicates after :func:`~lm_eval_rul.questions.schema.normalize_answer`, drops empty
candidates and those equal to the correct answer, and counts what it dropped per id.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from .schema import PoolCleaningReport, Question, normalize_answer

__all__ = ["clean_candidate", "CleanedPool", "clean_pool", "clean_pools"]

def clean_candidate(text: str) -> str:
    """Normalise one extracted candidate for display: unescape, collapse spaces, strip
    list markers and wrapping quotes.

    >>> clean_candidate('  1.  "Solo   violin"  ')
    'Solo violin'
    """
    text = html.unescape(str(text))
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"^(?:[-*\u2022]|\(?\d{1,2}[.)])\s+", "", text)
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'`":
        text = text[1:-1].strip()
    return text


@dataclass
class CleanedPool:
    """A question's candidates after cleaning, with what was dropped."""

    candidates: list[str]
    n_in: int = 0
    equal_to_correct: int = 0
    duplicates: int = 0
    empty: int = 0


def clean_pool(candidates: Sequence[str], correct_answer: str, *, tidy: bool = True) -> CleanedPool:
    """The one cleaning rule of distractor pools (generated ones and ``read_pools``).

    De-duplicate (after :func:`~lm_eval_rul.questions.schema.normalize_answer`, keeping the first),
    drop empty candidates and those equal to the correct answer.

    Args:
        candidates: The pool, in order.
        correct_answer: The question's correct answer.
        tidy: Also tidy each kept candidate's text with :func:`clean_candidate`
            (generated candidates). ``False`` keeps the text as given, only stripped
            (released pools: removing quotes there would set distractors apart from a
            quoted correct answer).

    >>> clean_pool(["Oboe", "oboe.", "Cello", ""], "cello").candidates
    ['Oboe']
    >>> clean_pool(['"Oboe"', "oboe"], "cello", tidy=False).candidates
    ['"Oboe"', 'oboe']
    """
    correct = normalize_answer(correct_answer)
    out = CleanedPool(candidates=[], n_in=len(candidates))
    seen: set[str] = set()
    for candidate in candidates:
        text = clean_candidate(candidate) if tidy else str(candidate).strip()
        norm = normalize_answer(text)
        if not norm:
            out.empty += 1
        elif norm == correct:
            out.equal_to_correct += 1
        elif norm in seen:
            out.duplicates += 1
        else:
            seen.add(norm)
            out.candidates.append(text)
    return out


def clean_pools(
    questions: Sequence[Question], *, tidy: bool = True
) -> tuple[list[Question], PoolCleaningReport]:
    """:func:`clean_pool` on every question's distractors, with the counts per id.

    Args:
        questions: Questions whose ``distractors`` are candidate pools.
        tidy: See :func:`clean_pool`.

    Returns:
        The questions with cleaned pools (in the given order, empty pools kept) and a
        :class:`~lm_eval_rul.questions.schema.PoolCleaningReport`.
    """
    report = PoolCleaningReport(n_questions=len(questions))
    cleaned = []
    for q in questions:
        result = clean_pool(q.distractors, q.correct_answer, tidy=tidy)
        report.n_candidates_in += result.n_in
        report.n_candidates_out += len(result.candidates)
        for name in ("equal_to_correct", "duplicates", "empty"):
            if getattr(result, name):
                getattr(report, name)[q.id] = getattr(result, name)
        cleaned.append(replace(q, distractors=tuple(result.candidates)))
    return cleaned, report

