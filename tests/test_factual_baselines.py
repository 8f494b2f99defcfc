"""Majority and label-frequency baselines; the exact expectation against brute force."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from lm_eval_rul.factual.baselines import (
    expected_item_scores,
    frequency_baseline,
    label_frequencies,
    majority_baseline,
    majority_label,
    poisson_binomial_pmf,
)
from lm_eval_rul.factual.metrics import micro_scores, precision_recall_f1

GOLDS = [["4/4"], ["4/4"], ["4/4"], ["3/4"], ["4/4", "6/8"]]


def test_label_frequencies_and_majority():
    assert label_frequencies(GOLDS) == {"4/4": 0.8, "3/4": 0.2, "6/8": 0.2}
    assert majority_label(GOLDS) == "4/4"
    assert majority_label([["b"], ["a"]]) == "a"  # tie: sorted order


def test_majority_baseline_by_hand():
    m = majority_baseline(GOLDS)
    # per item F1: 1, 1, 1, 0, 2/3 ; precision 1,1,1,0,1 ; recall 1,1,1,0,1/2
    assert m.f1 == pytest.approx((3 + 2 / 3) / 5)
    assert m.precision == pytest.approx(0.8)
    assert m.recall == pytest.approx(3.5 / 5)
    assert m.empty_share == 0.0 and m.mean_pred_size == 1.0


def test_poisson_binomial_pmf():
    assert poisson_binomial_pmf([]).tolist() == [1.0]
    pmf = poisson_binomial_pmf([0.2, 0.5, 0.9])
    assert pmf.sum() == pytest.approx(1.0)
    assert pmf[3] == pytest.approx(0.2 * 0.5 * 0.9)
    assert pmf[0] == pytest.approx(0.8 * 0.5 * 0.1)
    with pytest.raises(ValueError):
        poisson_binomial_pmf([1.5])


def _brute_force(gold, freqs):
    """E[P], E[R], E[F1] by enumerating every prediction set with its probability."""
    labels = list(freqs)
    totals = np.zeros(3)
    for mask in itertools.product([0, 1], repeat=len(labels)):
        prob = np.prod(
            [freqs[lb] if bit else 1 - freqs[lb] for lb, bit in zip(labels, mask, strict=True)]
        )
        chosen = [lb for lb, bit in zip(labels, mask, strict=True) if bit]
        totals += prob * np.array(precision_recall_f1(chosen, gold))
    return totals


@pytest.mark.parametrize(
    "gold",
    [["a"], ["a", "b"], ["c", "d", "e"], ["a", "e"], ["f"]],  # "f" is never predicted
)
def test_expected_item_scores_match_brute_force(gold):
    freqs = {"a": 0.7, "b": 0.25, "c": 0.5, "d": 0.1, "e": 0.35}
    exact = expected_item_scores(gold, freqs)
    assert exact == pytest.approx(tuple(_brute_force(gold, freqs)), abs=1e-12)


def test_frequency_baseline_matches_brute_force_over_items():
    golds = [["a"], ["a", "b"], ["b", "c"], ["a"], ["c"]]
    result = frequency_baseline(golds)
    freqs = label_frequencies(golds)
    assert freqs == {"a": 0.6, "b": 0.4, "c": 0.4}
    expected = np.mean([_brute_force(g, freqs) for g in golds], axis=0)
    assert (result.precision, result.recall, result.f1) == pytest.approx(tuple(expected))
    assert result.mean_pred_size == pytest.approx(1.4)  # = mean gold size
    assert result.empty_share == pytest.approx(0.4 * 0.6 * 0.6)
    # micro recall is exact: E[hits] / Σ|G|
    hits = sum(freqs[lb] for g in golds for lb in g)
    assert result.micro_recall == pytest.approx(hits / 7)


def test_frequency_baseline_micro_is_the_large_sample_limit():
    golds = [["a"], ["a", "b"], ["b", "c"]]
    result = frequency_baseline(golds)
    freqs = label_frequencies(golds)
    rng = np.random.default_rng(0)
    labels = list(freqs)
    reps = 4000
    preds = [[lb for lb in labels if rng.random() < freqs[lb]] for _ in range(reps) for _ in golds]
    sampled = micro_scores(preds, golds * reps)
    assert sampled == pytest.approx(
        (result.micro_precision, result.micro_recall, result.micro_f1), abs=0.01
    )


def test_time_signature_prior():
    """With 86% 4/4 the majority baseline beats chance by far: the prior a model can answer."""
    golds = [["4/4"]] * 86 + [["3/4"]] * 7 + [["6/8"]] * 7
    assert majority_baseline(golds).f1 == pytest.approx(0.86)
    assert frequency_baseline(golds).f1 < majority_baseline(golds).f1
