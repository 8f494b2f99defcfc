"""Pick the four most tempting distractors of a pool with a text-only scorer.

Two seeded strategies, as pure functions of a pool and a scorer callable:

* :func:`tournament_filter` (the paper): random sets of three candidates, each scored
  with the correct answer in random order; the most probable distractor of each set
  survives; repeat on the survivors until four remain.
* :func:`chunk_filter` (the released code, ``select_best_distractors``): shuffle, split
  into chunks of six, score each chunk in its order with the correct answer as the last
  option (``chunk + [correct_answer]``: options A-G, the correct one G), keep the top two
  of each chunk; if more than four survive, score the survivors in their order with the
  correct answer last and keep the top four. (ours) Pools of 5-7 go straight to that
  final prompt, and survivors that would exceed the 26 option letters get further chunk
  rounds first.

``score(option_sets)`` receives a list of option lists (each holds the correct answer
and some candidates, in the order shown) and returns one probability vector per list.
All sets of one round are sent in one call. Randomness comes only from
``item_rng(strategy, seed, question id)``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..mcqa.prompts import LETTERS
from ..questions import item_rng

__all__ = [
    "STRATEGIES",
    "RELEASE_OPTION_ORDER",
    "N_KEEP",
    "Scorer",
    "FilterResult",
    "TooFewCandidates",
    "tournament_filter",
    "chunk_filter",
    "filter_pool",
]

STRATEGIES: tuple[str, ...] = ("paper", "release")
#: How ``release`` shows its options; part of the filter checkpoint's fingerprint, so a
#: checkpoint of the earlier ``release`` (correct answer at a random position) is refused.
RELEASE_OPTION_ORDER = "candidates in chunk order, correct answer last"
N_KEEP = 4
SET_SIZE = 3
CHUNK_SIZE = 6
KEEP_PER_CHUNK = 2
#: Most options one prompt can show (one letter each, A-Z).
MAX_OPTIONS = len(LETTERS)

#: ``score(option_sets) -> [probabilities per option set]``.
Scorer = Callable[[Sequence[Sequence[str]]], Sequence[np.ndarray]]


class TooFewCandidates(ValueError):
    """A pool has fewer clean candidates than the number of distractors to keep."""


@dataclass
class FilterResult:
    """The kept distractors and how they were chosen.

    Attributes:
        distractors: The ``N_KEEP`` kept candidates, most tempting first where scored.
        n_prompts: Prompts scored.
        rounds: Per round, the option sets shown and each option's probability.
    """

    distractors: list[str]
    n_prompts: int = 0
    rounds: list[list[dict[str, Any]]] = field(default_factory=list)


def _score_sets(
    score: Scorer,
    correct: str,
    sets: list[list[str]],
    rng: np.random.Generator | None,
) -> tuple[list[np.ndarray], list[list[str]], list[dict[str, Any]]]:
    """Score each candidate set with the correct answer.

    With ``rng`` (the paper's tournament) each set is shown with the correct answer in a
    random order. Without it (the released code's ``chunk + [correct_answer]``) the
    candidates keep their order and the correct answer is the last option.

    Returns the probability of each *candidate* (same order as in ``sets``), the
    option lists shown and a trace.
    """
    shown, where = [], []
    for candidates in sets:
        options = [correct, *candidates]
        if rng is None:
            order = np.array([*range(1, len(options)), 0])  # candidates, then the correct one
        else:
            order = rng.permutation(len(options))
        shown.append([options[i] for i in order])
        where.append(order)
    probs = list(score(shown))
    if len(probs) != len(shown):
        raise RuntimeError(f"scorer returned {len(probs)} results for {len(shown)} option sets")
    per_candidate, trace = [], []
    for options, order, p in zip(shown, where, probs, strict=True):
        p = np.asarray(p, dtype=np.float64)
        if p.shape != (len(options),):
            raise RuntimeError(f"scorer returned shape {p.shape} for {len(options)} options")
        # position of original element k is where order == k; candidate k is element k + 1.
        inverse = np.argsort(order)
        per_candidate.append(p[inverse[1:]])
        trace.append({"options": options, "probabilities": [round(float(x), 6) for x in p]})
    return per_candidate, shown, trace


def _check_pool(pool: Sequence[str], correct: str, question_id: str, n_keep: int) -> list[str]:
    pool = list(pool)
    if len(pool) < n_keep:
        raise TooFewCandidates(
            f"question {question_id!r}: {len(pool)} clean candidate(s), {n_keep} needed"
        )
    if len(set(pool)) != len(pool):
        raise ValueError(f"question {question_id!r}: the pool has repeated candidates; clean it")
    if correct in pool:
        raise ValueError(f"question {question_id!r}: the pool contains the correct answer")
    return pool


def _eliminations(n: int, n_keep: int) -> tuple[int, int]:
    """(triples, pairs) of a tournament round over ``n`` survivors.

    A set of three eliminates two, a pair one; the round eliminates as many as a
    partition into threes allows, but never goes below ``n_keep``.
    """
    full = 2 * (n // SET_SIZE) + (1 if n % SET_SIZE == 2 else 0)
    eliminate = min(n - n_keep, full)
    return eliminate // 2, eliminate % 2


def tournament_filter(
    pool: Sequence[str],
    correct: str,
    score: Scorer,
    *,
    seed: int,
    question_id: str,
    n_keep: int = N_KEEP,
) -> FilterResult:
    """The paper's tournament of random triples.

    Each round shuffles the survivors and groups them into sets of three (a pair, and
    byes for the remaining candidates, in the last round so that exactly ``n_keep``
    remain); each set is shown with the correct answer, in random order, and its most
    probable distractor survives (ties: the first shown).

    Args:
        pool: Clean, distinct candidates without the correct answer.
        correct: The correct answer.
        score: Scorer callable (see the module docstring).
        seed: Base seed; the stream is ``item_rng("filter-paper", seed, question_id)``.
        question_id: The question's id (seeds the stream, names the item in errors).
        n_keep: Distractors to keep.

    Raises:
        TooFewCandidates: when the pool has fewer than ``n_keep`` candidates.

    Examples
    --------
    >>> pool = ["a", "b", "c", "d", "e", "f"]
    >>> weight = {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6, "ok": 1}
    >>> def score(sets):
    ...     return [np.array([weight[o] for o in s]) / sum(weight[o] for o in s) for s in sets]
    >>> kept = tournament_filter(pool, "ok", score, seed=0, question_id="1").distractors
    >>> len(kept), "f" in kept  # the most tempting candidate always survives
    (4, True)
    """
    survivors = _check_pool(pool, correct, question_id, n_keep)
    rng = item_rng("filter-paper", seed, question_id)
    result = FilterResult(distractors=[])
    while len(survivors) > n_keep:
        order = rng.permutation(len(survivors))
        shuffled = [survivors[i] for i in order]
        triples, pairs = _eliminations(len(shuffled), n_keep)
        sets, at = [], 0
        for size in [SET_SIZE] * triples + [2] * pairs:
            sets.append(shuffled[at : at + size])
            at += size
        byes = shuffled[at:]
        probs, _, trace = _score_sets(score, correct, sets, rng)  # random positions
        result.n_prompts += len(sets)
        result.rounds.append(trace)
        survivors = [s[int(np.argmax(p))] for s, p in zip(sets, probs, strict=True)] + byes
    result.distractors = survivors
    return result


def _top(candidates: Sequence[str], probs: np.ndarray, k: int) -> list[str]:
    """The ``k`` most probable candidates, most probable first (stable on ties)."""
    order = np.argsort(-np.asarray(probs), kind="stable")[:k]
    return [candidates[i] for i in order]


def chunk_filter(
    pool: Sequence[str],
    correct: str,
    score: Scorer,
    *,
    seed: int,
    question_id: str,
    n_keep: int = N_KEEP,
) -> FilterResult:
    """The released code's chunks of six (``select_best_distractors``).

    Shuffle the pool once, split it into chunks of six (the last may be smaller) and show
    each chunk as the released code does, ``chunk + [correct_answer]``: the candidates in
    their shuffled order, the correct answer last (G after a full chunk). Keep the two most
    probable of each chunk (most probable first, chunk by chunk); if more than ``n_keep``
    survive, show the survivors in that order with the correct answer last and keep the
    ``n_keep`` most probable. Ties keep the earlier option, as Python's stable ``sorted``
    does in the released code.

    Our extensions (the released code has no answer for these pools): a pool whose chunks
    leave fewer than ``n_keep`` (5-7 candidates) goes straight to the final prompt; when
    the survivors and the correct answer would not fit the 26 option letters (pools of
    more than 73 candidates), the survivors are shuffled again and go through further
    chunk rounds until they do. Pools of 8-73 candidates follow the released code exactly.

    Args:
        pool: Clean, distinct candidates without the correct answer.
        correct: The correct answer.
        score: Scorer callable (see the module docstring).
        seed: Base seed; the stream is ``item_rng("filter-release", seed, question_id)``.
        question_id: The question's id.
        n_keep: Distractors to keep.

    Raises:
        TooFewCandidates: when the pool has fewer than ``n_keep`` candidates.
    """
    pool = _check_pool(pool, correct, question_id, n_keep)
    rng = item_rng("filter-release", seed, question_id)
    result = FilterResult(distractors=[])
    if len(pool) == n_keep:
        result.distractors = [pool[i] for i in rng.permutation(len(pool))]
        return result
    survivors = [pool[i] for i in rng.permutation(len(pool))]
    first = True
    # The final prompt shows every survivor and the correct answer, one letter each: run
    # chunk rounds until that fits (one round for pools of up to 73 candidates, as released).
    while first or len(survivors) + 1 > MAX_OPTIONS:
        if not first:
            survivors = [survivors[i] for i in rng.permutation(len(survivors))]
        first = False
        chunks = [survivors[i : i + CHUNK_SIZE] for i in range(0, len(survivors), CHUNK_SIZE)]
        if sum(min(KEEP_PER_CHUNK, len(c)) for c in chunks) < n_keep:
            break  # 5-7 candidates: straight to the final prompt
        probs, _, trace = _score_sets(score, correct, chunks, None)  # correct answer last
        result.n_prompts += len(chunks)
        result.rounds.append(trace)
        survivors = [
            c
            for chunk, p in zip(chunks, probs, strict=True)
            for c in _top(chunk, p, KEEP_PER_CHUNK)
        ]
    if len(survivors) > n_keep:
        (probs,), _, trace = _score_sets(score, correct, [survivors], None)
        result.n_prompts += 1
        result.rounds.append(trace)
        survivors = _top(survivors, probs, n_keep)
    result.distractors = survivors
    return result


def filter_pool(
    pool: Sequence[str],
    correct: str,
    score: Scorer,
    *,
    strategy: str,
    seed: int,
    question_id: str,
    n_keep: int = N_KEEP,
) -> FilterResult:
    """Run ``strategy``: ``paper`` (:func:`tournament_filter`) or ``release`` (chunks)."""
    if strategy == "paper":
        fn = tournament_filter
    elif strategy == "release":
        fn = chunk_filter
    else:
        raise ValueError(f"strategy must be one of {STRATEGIES}, got {strategy!r}")
    return fn(pool, correct, score, seed=seed, question_id=question_id, n_keep=n_keep)
