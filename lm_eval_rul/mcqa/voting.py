"""Majority vote over the leave-one-out folds of a question.

RUL-MuChoMusic shows each question in four folds with its options in a different order,
so folds vote with the chosen option's TEXT, not its letter. A question is right when
its correct answer has strictly more votes than any other answer: a tie is wrong (no
random tie-break) and an unparsed answer casts no vote.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["majority_vote", "majority_vote_accuracy", "majority_from_answers"]


def majority_vote(answers: Sequence[Hashable | None], correct: Hashable) -> bool:
    """Whether ``correct`` wins the plurality of ``answers`` (one per fold).

    Args:
        answers: The answer given in each fold, as option *text* (letters differ between
            folds because the options are reshuffled); None for an unparsed answer,
            which casts no vote.
        correct: The correct answer's text.

    Returns:
        True when the correct answer has strictly more votes than any other answer;
        a tie is wrong (no random tie-break), as is a question with no votes.

    Examples
    --------
    >>> majority_vote(["piano", "piano", "harp", "flute"], "piano")
    True
    >>> majority_vote(["piano", "piano", "harp", "harp"], "piano")
    False
    """
    votes = Counter(a for a in answers if a is not None)
    best = votes.get(correct, 0)
    return best > 0 and all(count < best for answer, count in votes.items() if answer != correct)


def majority_vote_accuracy(
    answers_by_question: Mapping[Hashable, Sequence[Hashable | None]],
    correct_by_question: Mapping[Hashable, Hashable],
) -> float:
    """Share of questions whose majority vote over folds is correct (:func:`majority_vote`).

    Args:
        answers_by_question: Question id -> answers given over its folds.
        correct_by_question: Question id -> correct answer text.

    Examples
    --------
    >>> majority_vote_accuracy({"1": ["a", "a", "b"], "2": ["c", "d", "d"]}, {"1": "a", "2": "c"})
    0.5
    """
    if not answers_by_question:
        raise ValueError("answers_by_question is empty: no question to vote on")
    missing = [q for q in answers_by_question if q not in correct_by_question]
    if missing:
        raise ValueError(f"no correct answer for {len(missing)} question(s), e.g. {missing[:5]}")
    hits = [majority_vote(v, correct_by_question[q]) for q, v in answers_by_question.items()]
    return float(np.mean(hits))


def majority_from_answers(
    answers: Iterable[tuple[str, str | None, str | None]],
) -> dict[str, Any]:
    """Majority-vote accuracy over folds from ``(question id, chosen, correct)`` triples.

    Args:
        answers: One triple per (question, fold): the question id, the option text the
            model chose (None: unparsed, casts no vote) and the correct option's text.

    Returns:
        ``{"majority_acc": float, "n_items": int, "max_folds": int}``: the share of
        questions :func:`majority_vote` calls right, the number of
        questions, and the most folds any question was answered in.

    >>> majority_from_answers([("1", "x", "x"), ("1", "y", "x"), ("1", "x", "x")])
    {'majority_acc': 1.0, 'n_items': 1, 'max_folds': 3}
    """
    by_item: dict[str, list[str | None]] = {}
    correct: dict[str, str] = {}
    for item, answer, right in answers:
        by_item.setdefault(str(item), []).append(answer)
        correct[str(item)] = str(right)
    return {
        "majority_acc": majority_vote_accuracy(by_item, correct),
        "n_items": len(by_item),
        "max_folds": max(len(v) for v in by_item.values()),
    }
