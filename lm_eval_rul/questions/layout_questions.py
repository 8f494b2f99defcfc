"""MMAU-layout items (:mod:`.layout`) as :class:`~.schema.Question` records: for the shared
document and audio code (:func:`as_question`, every choice as released) and for ``pi`` and
``build`` (:func:`layout_questions`, the answered items, repeated choices kept once)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from .layout import Layout, LayoutItem, describe_layout, file_rows
from .schema import DataValidationError, Question, normalize_answer
from .validation import rows_to_questions

__all__ = ["as_question", "layout_questions"]

logger = logging.getLogger(__name__)


def _track(audio_id: str) -> str | None:
    """``test-mini-audios/{id}`` for ``./test-mini-audios/{id}.wav``: the clip's path inside
    ``audio_dir`` without its extension (the audio layouts try every extension)."""
    path = audio_id.strip()
    while path.startswith("./"):
        path = path[2:]
    stem, dot, _ = path.rpartition(".")
    return (stem if dot and "/" not in path[len(stem) :] else path) or None


def as_question(item: LayoutItem) -> Question:
    """The :class:`~lm_eval_rul.questions.Question` of an item (its answer first, the other
    choices in the release's order as distractors), for the shared document and audio code.

    An unanswered item takes its first choice's place as "answer": the documents then
    replace the gold with none (:mod:`lm_eval_rul.mcqa.mmau.documents`).
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


def layout_questions(
    path: Path,
    items: Sequence[LayoutItem],
    layout: Layout,
    subset: str,
    n_distractors: int | None,
) -> list[Question]:
    """The answered ``items`` as questions for ``pi`` and ``build`` (:func:`as_question`;
    repeated choices kept once; ``n_distractors`` checked as the other readers check it).

    Raises:
        DataValidationError: the file has no answers, or a malformed question.
    """
    if all(i.answer is None for i in items):
        raise DataValidationError(
            path,
            [
                f"no answers ({layout.display}'s test split has no answers, nor has any file "
                "without 'answer'), so no PI can be computed nor distractors built for it"
            ],
            hint="Give a file with answers (MMAU's mmau-test-mini.json, MMAR-meta.jsonl).",
        )
    questions = [_distinct(as_question(i)) for i in items]
    if n_distractors is not None and all(len(q.distractors) != n_distractors for q in questions):
        # a reader wanting another layout (rul_muchomusic: 4 distractors): one line, not one
        # "expected 4 distractors" per item
        raise DataValidationError(
            path,
            [
                f"the file is {describe_layout(file_rows(path), layout)}, not questions with "
                f"{n_distractors} distractors each"
            ],
            hint=f"The {layout.name}_music tasks read it (--metadata {layout.name}_data_path); "
            "`lm-eval-rul build` makes a file with 4 distractors per question from it, for "
            f"rul_{layout.name}_music.",
        )
    logger.info("%s: %d %s item(s) of %s", path, len(questions), subset, layout.display)
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
