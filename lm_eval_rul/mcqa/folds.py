"""Turn questions into harness documents: option order, folds and the gold letter.

RUL-MuChoMusic is evaluated in four leave-one-out folds: fold ``k`` drops distractor
``k`` and shows the correct answer with the other three. Options are shuffled with a
seed derived from (seed, benchmark, question id, fold), so the order is the same in
every run, whatever the data order or ``--limit``. The documents are listed in the seeded
sample order of :func:`~lm_eval_rul.questions.sample_order`, so ``--limit N`` runs a
seeded sample of the whole benchmark, not the head of the file.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..questions import DEFAULT_SEED, Question, item_rng, normalize_answer, sample_order
from .prompts import letters_for

__all__ = ["N_FOLDS", "shuffled_options", "content_shuffled", "make_doc", "make_docs"]

N_FOLDS = 4


def shuffled_options(
    correct: str, distractors: Sequence[str], *, seed: int, key: Sequence[object]
) -> tuple[list[str], int]:
    """Correct answer and distractors in a seeded order; returns (options, gold index)."""
    options = [correct, *distractors]
    order = item_rng("options", seed, *key).permutation(len(options))
    shuffled = [options[i] for i in order]
    return shuffled, int(list(order).index(0))


def content_shuffled(
    question: str, correct: str, distractors: Sequence[str], *, seed: int
) -> tuple[list[str], int]:
    """The options in an order seeded by ``seed``, the question's text and the SET of its
    options alone (``music_mc``): the same whatever the order the file lists them in, the
    file's shape, its ids or the benchmark's name. Returns (options, gold index).

    >>> a = content_shuffled("Which?", "x", ["y", "z"], seed=1)
    >>> b = content_shuffled("Which?", "x", ["z", "y"], seed=1)
    >>> a == b and a[0][a[1]] == "x"
    True
    """
    options = sorted([correct, *distractors])
    order = item_rng("content-options", seed, normalize_answer(question), *options).permutation(
        len(options)
    )
    shuffled = [options[i] for i in order]
    return shuffled, shuffled.index(correct)


def make_doc(
    question: Question,
    *,
    benchmark: str,
    fold: int | None,
    seed: int = DEFAULT_SEED,
    by_content: bool = False,
) -> dict[str, Any]:
    """One harness document.

    Args:
        question: The question with all its distractors.
        benchmark: Name used in the seed and logged with the doc (``muchomusic`` ...).
        fold: Index of the distractor to leave out, or ``None`` to show all of them.
        seed: Base seed of the option order.
        by_content: Seed the order from the question's text and its set of options only
            (:func:`content_shuffled`: ``music_mc``), not from (benchmark, id, fold).
    """
    distractors = list(question.distractors)
    dropped = None
    if fold is not None:
        if not 0 <= fold < len(distractors):
            raise ValueError(
                f"question {question.id!r}: fold {fold} needs at least {fold + 1} distractors, "
                f"has {len(distractors)}"
            )
        dropped = distractors.pop(fold)
    if by_content:
        options, gold = content_shuffled(
            question.question, question.correct_answer, distractors, seed=seed
        )
    else:
        options, gold = shuffled_options(
            question.correct_answer,
            distractors,
            seed=seed,
            key=(benchmark, question.id, -1 if fold is None else fold),
        )
    letters = list(letters_for(len(options)))
    return {
        "id": question.id,
        "benchmark": benchmark,
        "fold": -1 if fold is None else fold,
        "question": question.question,
        "options": options,
        "letters": letters,
        "gold": gold,
        "gold_letter": letters[gold],
        "correct_answer": question.correct_answer,
        "dropped_distractor": dropped,
        "caption": question.caption,
        "source_pi": question.pi,
        "track": question.track,
        "source": question.source,
    }


def make_docs(
    questions: Sequence[Question],
    *,
    benchmark: str,
    fold: int | None,
    seed: int = DEFAULT_SEED,
    by_content: bool = False,
) -> list[dict[str, Any]]:
    """:func:`make_doc` for every question, in the seeded sample order of (``seed``, id)
    (:func:`~lm_eval_rul.questions.sample_order`): every task loader builds its documents
    here, so ``--limit N`` is the same seeded sample of N questions in all of them."""
    ordered = sample_order(questions, seed=seed, item_id=lambda q: q.id)
    return [
        make_doc(q, benchmark=benchmark, fold=fold, seed=seed, by_content=by_content)
        for q in ordered
    ]
