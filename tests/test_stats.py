"""The report's statistics as pure functions, on known values and properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from lm_eval_rul.mcqa import majority_vote, majority_vote_accuracy
from lm_eval_rul.report import (
    accuracy_ci,
    leakage_ci,
    paired_difference_ci,
    pearson,
    wilcoxon_pvalue,
)
from lm_eval_rul.report.stats import cluster_sums

FIXED = (np.random.default_rng(7).random(300) < 0.6).astype(float)


def direct_percentile_interval(values: np.ndarray, n_resamples: int, seed: int) -> tuple:
    """A percentile bootstrap written out by hand, to compare scipy's against."""
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, values.size, (n_resamples, values.size))].mean(axis=1)
    return np.percentile(means, 2.5), np.percentile(means, 97.5)


def test_accuracy_interval_matches_a_direct_percentile_bootstrap():
    ci = accuracy_ci(FIXED, n_resamples=20_000, seed=3)
    low, high = direct_percentile_interval(FIXED, 20_000, seed=11)
    assert ci.estimate == pytest.approx(FIXED.mean())
    assert ci.low == pytest.approx(low, abs=0.01)
    assert ci.high == pytest.approx(high, abs=0.01)
    # and with the normal approximation of a proportion's interval
    se = math.sqrt(FIXED.mean() * (1 - FIXED.mean()) / FIXED.size)
    assert ci.high - ci.low == pytest.approx(2 * 1.96 * se, rel=0.1)
    assert (ci.n, ci.n_clusters, ci.confidence_level) == (300, 300, 0.95)


def test_two_item_sample_has_the_hand_computed_interval():
    # resampled means of [0, 1] are 0, 0.5, 1 with probability 1/4, 1/2, 1/4:
    # the 2.5th and 97.5th percentiles are 0 and 1.
    ci = accuracy_ci([0.0, 1.0], n_resamples=4000, seed=0)
    assert (ci.estimate, ci.low, ci.high) == (0.5, 0.0, 1.0)


def test_constant_scores_give_a_point_interval():
    ci = accuracy_ci([1, 1, 1, 1, 1])
    assert (ci.low, ci.high) == (1.0, 1.0)


def test_same_seed_same_interval_other_seed_other_draws():
    a = accuracy_ci(FIXED, n_resamples=999, seed=5)
    b = accuracy_ci(FIXED, n_resamples=999, seed=5)
    c = accuracy_ci(FIXED, n_resamples=999, seed=6, confidence_level=0.8)
    assert a == b
    assert (c.low, c.high) != (a.low, a.high)


def test_one_item_per_cluster_is_the_plain_bootstrap():
    plain = accuracy_ci(FIXED, n_resamples=999, seed=1)
    clustered = accuracy_ci(
        FIXED, groups=[str(i) for i in range(FIXED.size)], n_resamples=999, seed=1
    )
    assert (plain.low, plain.high) == (clustered.low, clustered.high)


def test_cluster_bootstrap_widens_the_interval_of_correlated_items():
    # 50 questions x 4 folds, every fold of a question scored alike: 50 independent units
    per_question = (np.random.default_rng(2).random(50) < 0.5).astype(float)
    scores = np.repeat(per_question, 4)
    groups = np.repeat(np.arange(50), 4)
    by_item = accuracy_ci(scores, n_resamples=4000, seed=0)
    by_question = accuracy_ci(scores, groups=groups, n_resamples=4000, seed=0)
    assert by_question.n_clusters == 50 and by_question.n == 200
    assert (by_question.high - by_question.low) > 1.6 * (by_item.high - by_item.low)


def test_cluster_sums_counts_per_cluster_in_first_seen_order():
    (sums,), counts = cluster_sums([np.array([1.0, 0.0, 1.0, 1.0])], ["b", "a", "b", "c"])
    assert sums.tolist() == [2.0, 0.0, 1.0]
    assert counts.tolist() == [2.0, 1.0, 1.0]


def test_paired_difference_of_zero_contains_zero_and_is_flagged():
    a = [1, 0, 1, 1, 0, 0, 1]
    ci = paired_difference_ci(a, a, n_resamples=999)
    assert (ci.estimate, ci.low, ci.high) == (0.0, 0.0, 0.0)
    assert ci.contains_zero and ci.to_dict()["contains_zero"] is True


def test_paired_difference_pairs_items():
    # b = a with two answers lost: every resample keeps the difference >= 0, unlike an
    # unpaired bootstrap of two samples with this spread
    a = np.array([1, 1, 0, 1, 0, 1, 1, 0, 1, 1] * 5, dtype=float)
    b = a.copy()
    b[[0, 1]] = 0
    ci = paired_difference_ci(a, b, n_resamples=2000, seed=0)
    assert ci.estimate == pytest.approx(2 / 50)
    assert ci.low >= 0.0 and ci.high > 0
    strong = paired_difference_ci(np.ones(40), np.zeros(40), n_resamples=500)
    assert (strong.low, strong.high) == (1.0, 1.0) and not strong.contains_zero


def test_leakage_is_clipped_at_zero():
    text = np.array([1, 1, 1, 0, 1, 1] * 4, dtype=float)
    worse = np.zeros_like(text)
    assert leakage_ci(worse, text, n_resamples=500).estimate == 0.0
    better = np.ones_like(text)
    leak = leakage_ci(better, text, n_resamples=500, seed=1)
    assert leak.estimate == pytest.approx(1 - text.mean())
    assert 0.0 <= leak.low <= leak.estimate <= leak.high


@pytest.mark.parametrize("fn", [paired_difference_ci, leakage_ci, wilcoxon_pvalue])
def test_paired_functions_need_aligned_inputs(fn):
    with pytest.raises(ValueError, match="a has 3, b has 2|equal lengths"):
        fn([1, 0, 1], [1, 0])


def test_wilcoxon_matches_scipy_and_is_one_for_identical_scores():
    a = np.array([0.75, 0.5, 1.0, 0.25, 1.0, 0.75, 0.5, 1.0])
    b = np.array([0.25, 0.5, 0.5, 0.0, 0.75, 0.25, 0.5, 0.25])
    assert wilcoxon_pvalue(a, b) == pytest.approx(sps.wilcoxon(a, b).pvalue)
    assert wilcoxon_pvalue(a, a) == 1.0


def test_pearson_perfect_and_known_correlations():
    perfect = pearson([0.1, 0.4, 0.5, 0.9], [1, 4, 5, 9])
    assert perfect.r == pytest.approx(1.0) and perfect.pvalue < 1e-6
    anti = pearson([1, 2, 3, 4, 5], [5, 4, 3, 2, 1])
    assert anti.r == pytest.approx(-1.0)
    x = np.arange(20.0)
    y = np.sin(x) + 0.1 * x
    result = pearson(x, y, confidence_level=0.9)
    reference = sps.pearsonr(x, y)
    ci = reference.confidence_interval(confidence_level=0.9)
    assert (result.r, result.pvalue) == pytest.approx((reference.statistic, reference.pvalue))
    assert (result.low, result.high) == pytest.approx((ci.low, ci.high))
    assert result.n == 20


def test_pearson_of_constant_input_is_nan_with_a_warning():
    with pytest.warns(RuntimeWarning, match="undefined"):
        result = pearson([0.2, 0.5, 0.9], [1, 1, 1])
    assert math.isnan(result.r) and math.isnan(result.pvalue)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"scores": []}, "non-empty"),
        ({"scores": [1.0, float("nan")]}, "finite"),
        ({"scores": [1, 0], "confidence_level": 1.5}, "confidence_level"),
        ({"scores": [1, 0], "n_resamples": 0}, "n_resamples"),
        ({"scores": [1, 0], "method": "normal"}, "method"),
        ({"scores": [1, 0], "groups": ["a"]}, "groups has 1 labels for 2"),
    ],
)
def test_bad_input_is_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        accuracy_ci(**kwargs)


def test_majority_vote_rules():
    assert majority_vote(["piano", "piano", "harp", "flute"], "piano")
    assert not majority_vote(["piano", "piano", "harp", "harp"], "piano")  # tie is wrong
    assert majority_vote(["piano", None, None, "harp", "piano"], "piano")
    assert not majority_vote([None, None, None, None], "piano")
    assert not majority_vote(["harp", "harp", "piano"], "piano")
    assert (
        majority_vote_accuracy({"1": ["a", "a", "b"], "2": ["c", "d", "d"]}, {"1": "a", "2": "c"})
        == 0.5
    )
    with pytest.raises(ValueError, match="no correct answer"):
        majority_vote_accuracy({"1": ["a"]}, {})
