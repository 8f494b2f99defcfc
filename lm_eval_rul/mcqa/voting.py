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

__all__ = [
    "majority_vote",
    "majority_vote_accuracy",
    "majority_from_answers",
    "plurality_answer_release",
    "plurality_vote_release",
    "plurality_from_answers",
]


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


def plurality_answer_release(answers: Sequence[Hashable | None]) -> Hashable | None:
    """The authors' leave-one-out answer: the plurality of the parsed answers.

    Args:
        answers: One answer per fold IN FOLD ORDER (option text; None = unparsed, dropped).

    Returns:
        The most common answer, a tie going to the one seen first (the earliest fold);
        None when no answer was parsed.

    Examples
    --------
    >>> plurality_answer_release(["harp", "piano", "piano", "harp"])
    'harp'
    >>> plurality_answer_release([None, "flute", None, None])
    'flute'
    >>> plurality_answer_release([None, None]) is None
    True
    """
    counts: dict[Hashable, int] = {}
    for answer in answers:
        if answer is not None:
            counts[answer] = counts.get(answer, 0) + 1
    if not counts:
        return None
    best = max(counts.values())
    return next(answer for answer, count in counts.items() if count == best)


def plurality_vote_release(answers: Sequence[Hashable | None], correct: Hashable) -> bool:
    """Whether the authors' plurality answer (:func:`plurality_answer_release`) is correct.

    Examples
    --------
    >>> plurality_vote_release(["piano", "harp", "harp", "piano"], "piano")
    True
    >>> majority_vote(["piano", "harp", "harp", "piano"], "piano")
    False
    """
    return plurality_answer_release(answers) == correct


def plurality_from_answers(
    answers: Iterable[tuple[str, int, str | None, str | None]],
) -> dict[str, Any]:
    """The authors' leave-one-out accuracy from ``(question id, fold, chosen, correct)``.

    Args:
        answers: One tuple per (question, fold); folds are put in order before voting, so
            the earliest fold wins a tie whatever the order given here.

    Returns:
        ``{"plurality_acc_release": float, "n_items": int}``.

    >>> plurality_from_answers([("1", 1, "y", "x"), ("1", 0, "x", "x")])
    {'plurality_acc_release': 1.0, 'n_items': 1}
    """
    by_item: dict[str, list[tuple[int, str | None]]] = {}
    correct: dict[str, str] = {}
    for item, fold, answer, right in answers:
        by_item.setdefault(str(item), []).append((int(fold), answer))
        correct[str(item)] = str(right)
    if not by_item:
        raise ValueError("no answers to vote on")
    hits = [
        plurality_vote_release([a for _, a in sorted(folds, key=lambda x: x[0])], correct[item])
        for item, folds in by_item.items()
    ]
    return {"plurality_acc_release": float(np.mean(hits)), "n_items": len(by_item)}
