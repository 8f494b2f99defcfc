"""Both filtering strategies as pure functions, with hand-made scorers of known probabilities."""

from __future__ import annotations

import numpy as np
import pytest

from lm_eval_rul.distractors.filtering import (
    TooFewCandidates,
    chunk_filter,
    filter_pool,
    tournament_filter,
)
from lm_eval_rul.questions import item_rng

CORRECT = "the answer"


def weight_scorer(weights: dict[str, float], log: list | None = None):
    """p(option) proportional to its weight: a scorer with known probabilities."""

    def score(option_sets):
        if log is not None:
            log.append([list(s) for s in option_sets])
        out = []
        for options in option_sets:
            w = np.array([weights[o] for o in options], dtype=float)
            out.append(w / w.sum())
        return out

    return score


def pool_of(n: int) -> tuple[list[str], dict[str, float]]:
    pool = [f"cand{i:02d}" for i in range(n)]
    weights = {c: float(i + 1) for i, c in enumerate(pool)}
    weights[CORRECT] = 1000.0  # the most probable option is the correct one: must not matter
    return pool, weights


def test_chunk_filter_keeps_top_two_per_chunk_of_six():
    pool, weights = pool_of(12)
    log: list = []
    result = chunk_filter(pool, CORRECT, weight_scorer(weights, log), seed=5, question_id="q1")
    shuffled = [pool[i] for i in item_rng("filter-release", 5, "q1").permutation(12)]
    chunks = [shuffled[:6], shuffled[6:]]
    expected = [c for chunk in chunks for c in sorted(chunk, key=weights.get, reverse=True)[:2]]
    assert result.distractors == expected
    assert result.n_prompts == 2 and len(log) == 1  # one call for the round
    for options in log[0]:
        assert len(options) == 7 and options.count(CORRECT) == 1  # options A-G


def test_chunk_filter_scores_survivors_when_more_than_four():
    pool, weights = pool_of(14)  # chunks of 6, 6, 2 -> 6 survivors -> final prompt
    log: list = []
    result = chunk_filter(pool, CORRECT, weight_scorer(weights, log), seed=0, question_id="q2")
    survivors = log[1][0]
    assert len(log) == 2 and len(survivors) == 7  # 6 survivors + the correct answer
    top4 = sorted((o for o in survivors if o != CORRECT), key=weights.get, reverse=True)[:4]
    assert result.distractors == top4
    assert "cand13" in result.distractors  # the global favourite always survives


@pytest.mark.parametrize("n", [5, 6, 7])
def test_chunk_filter_small_pools_are_scored_in_one_prompt(n):
    pool, weights = pool_of(n)
    result = chunk_filter(pool, CORRECT, weight_scorer(weights), seed=0, question_id="s")
    assert sorted(result.distractors) == sorted(pool[-4:])  # top 4 by weight
    assert result.n_prompts == 1


@pytest.mark.parametrize("n, schedule", [(50, [17, 6, 4]), (13, [5, 4]), (6, [4]), (4, [])])
def test_tournament_rounds_reduce_to_exactly_four(n, schedule):
    pool, weights = pool_of(n)
    log: list = []
    result = tournament_filter(pool, CORRECT, weight_scorer(weights, log), seed=1, question_id="t")
    assert len(result.rounds) == len(schedule) == len(log)
    assert len(result.distractors) == 4 and len(set(result.distractors)) == 4
    assert set(result.distractors) <= set(pool) and CORRECT not in result.distractors
    if n > 4:
        assert f"cand{n - 1:02d}" in result.distractors  # the strongest can never lose a set
    for round_sets in log:
        for options in round_sets:
            assert options.count(CORRECT) == 1 and 3 <= len(options) <= 4  # triples or a pair


def test_tournament_keeps_the_most_probable_distractor_of_each_set():
    pool, weights = pool_of(
        9
    )  # 3 triples -> 3 winners + ... schedule 9 -> 4: e=5 -> 2 triples, 1 pair
    result = tournament_filter(pool, CORRECT, weight_scorer(weights), seed=2, question_id="k")
    (trace,) = result.rounds
    winners = []
    for shown in trace:
        distractors = [o for o in shown["options"] if o != CORRECT]
        winners.append(max(distractors, key=weights.get))
    in_sets = {o for shown in trace for o in shown["options"]}
    byes = [c for c in pool if c not in in_sets]
    assert sorted(result.distractors) == sorted(winners + byes)


@pytest.mark.parametrize("strategy", ["paper", "release"])
def test_filters_are_seeded_by_seed_and_question(strategy):
    pool, weights = pool_of(30)
    score = weight_scorer(weights)

    def shown(seed, qid):
        kwargs = dict(strategy=strategy, seed=seed, question_id=qid)
        result = filter_pool(pool, CORRECT, score, **kwargs)
        return str(result.rounds), tuple(result.distractors)

    assert shown(0, "a") == shown(0, "a")
    assert shown(0, "a")[0] != shown(1, "a")[0]
    assert shown(0, "a")[0] != shown(0, "b")[0]


@pytest.mark.parametrize("strategy", ["paper", "release"])
def test_too_few_or_dirty_pools_are_refused(strategy):
    score = weight_scorer({})
    with pytest.raises(TooFewCandidates, match="'x': 3 clean candidate"):
        filter_pool(["a", "b", "c"], CORRECT, score, strategy=strategy, seed=0, question_id="x")
    with pytest.raises(ValueError, match="correct answer"):
        filter_pool(
            ["a", "b", "c", CORRECT, "d"],
            CORRECT,
            score,
            strategy=strategy,
            seed=0,
            question_id="y",
        )
    with pytest.raises(ValueError, match="strategy"):
        filter_pool(["a"] * 4, CORRECT, score, strategy="best", seed=0, question_id="z")


def test_chunk_filter_runs_more_rounds_until_the_final_prompt_fits_the_letters():
    from lm_eval_rul.mcqa import letters_for

    pool, weights = pool_of(100)  # 17 chunks -> 34 survivors: 35 options would not fit A-Z
    log: list = []
    base = weight_scorer(weights, log)

    def score(option_sets):
        for options in option_sets:
            letters_for(len(options))  # what the real scorer does: raises past 26 options
        return base(option_sets)

    result = chunk_filter(pool, CORRECT, score, seed=0, question_id="big")
    assert len(result.distractors) == 4 and len(set(result.distractors)) == 4
    assert max(len(options) for call in log for options in call) <= 26
    assert len(log) == 3  # two chunk rounds, then the final prompt
    assert result.distractors[0] == "cand99"  # the global favourite always survives
    again = chunk_filter(pool, CORRECT, weight_scorer(weights), seed=0, question_id="big")
    assert again.distractors == result.distractors


def positional_scorer(weights: dict[str, float], log: list | None = None):
    """A scorer whose probabilities depend on the letter too (as a text-only LM's do), so
    the position of the correct answer changes which distractors win."""
    bias = [3.0, 0.5, 2.0, 0.7, 1.5, 0.9, 1.2, 0.4, 2.5, 0.8, 1.1, 0.6, 1.9, 0.3] * 2

    def score(option_sets):
        if log is not None:
            log.append([list(s) for s in option_sets])
        out = []
        for options in option_sets:
            w = np.array([weights[o] * bias[i] for i, o in enumerate(options)], dtype=float)
            out.append(w / w.sum())
        return out

    return score


def authors_select_best_distractors(shuffled: list[str], correct: str, score, n_final: int = 4):
    """The released ``select_best_distractors``, replayed from its description: the pool
    (already shuffled) in chunks of six, each shown as ``chunk + [correct_answer]``, the top
    two distractors of each chunk by probability (Python's stable sort, most probable
    first); then ``best + [correct_answer]`` and the top four."""
    best: list[str] = []
    for start in range(0, len(shuffled), 6):
        options = shuffled[start : start + 6] + [correct]
        (probs,) = score([options])
        ranked = sorted(
            ((o, p) for o, p in zip(options, probs, strict=True) if o != correct),
            key=lambda pair: pair[1],
            reverse=True,
        )
        best.extend(o for o, _ in ranked[:2])
    if len(best) > n_final:
        options = best + [correct]
        (probs,) = score([options])
        ranked = sorted(
            ((o, p) for o, p in zip(options, probs, strict=True) if o != correct),
            key=lambda pair: pair[1],
            reverse=True,
        )
        best = [o for o, _ in ranked[:n_final]]
    return best


@pytest.mark.parametrize("n, qid", [(14, "a"), (24, "b"), (50, "c"), (71, "d"), (9, "e")])
def test_release_strategy_replays_the_authors_select_best_distractors(n, qid):
    """Same shuffled pool, same position-sensitive scorer: the same prompts, in the same
    order, and the same four distractors as the released algorithm."""
    pool, weights = pool_of(n)
    ours_log: list = []
    ours = chunk_filter(
        pool, CORRECT, positional_scorer(weights, ours_log), seed=7, question_id=qid
    )
    shuffled = [pool[i] for i in item_rng("filter-release", 7, qid).permutation(n)]
    theirs_log: list = []
    theirs = authors_select_best_distractors(
        shuffled, CORRECT, positional_scorer(weights, theirs_log)
    )
    assert ours.distractors == theirs
    assert [o for call in ours_log for o in call] == [o for call in theirs_log for o in call]
    for call in ours_log:
        for options in call:
            assert options[-1] == CORRECT and options.count(CORRECT) == 1


def test_release_strategy_final_prompt_keeps_the_chunk_winners_order():
    pool, weights = pool_of(14)  # chunks of 6, 6, 2 -> 6 survivors -> final prompt
    log: list = []
    chunk_filter(pool, CORRECT, weight_scorer(weights, log), seed=3, question_id="order")
    first_round, (final,) = log
    winners = [
        o
        for options in first_round
        for o in sorted(options[:-1], key=weights.get, reverse=True)[:2]
    ]
    assert final == [*winners, CORRECT]


def test_paper_strategy_still_puts_the_correct_answer_anywhere():
    pool, weights = pool_of(30)
    log: list = []
    tournament_filter(pool, CORRECT, weight_scorer(weights, log), seed=0, question_id="p")
    positions = {options.index(CORRECT) for call in log for options in call}
    assert len(positions) > 1
