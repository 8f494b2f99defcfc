import math

import numpy as np
import pytest

from lm_eval_rul.mcqa import (
    choice_probabilities,
    is_correct,
    mean_perceptual_index,
    perceptual_index,
)


def test_uniform_choices_give_chance_pi():
    assert perceptual_index([-1.0, -1.0, -1.0, -1.0], 0) == pytest.approx(0.75)
    assert perceptual_index([0.0, 0.0, 0.0], 2) == pytest.approx(2 / 3)


def test_pi_matches_hand_computed_softmax():
    logliks = [math.log(0.1), math.log(0.2), math.log(0.3), math.log(0.4)]
    assert perceptual_index(logliks, 3) == pytest.approx(0.6)
    assert perceptual_index(logliks, 0) == pytest.approx(0.9)
    # log-likelihoods need not be normalised: a shift changes nothing
    shifted = [x - 7.0 for x in logliks]
    assert perceptual_index(shifted, 3) == pytest.approx(0.6)


def test_probabilities_sum_to_one_and_are_order_equivariant():
    logliks = np.array([-3.2, -0.5, -9.0, -1.1])
    probs = choice_probabilities(logliks)
    assert probs.sum() == pytest.approx(1.0)
    order = [2, 0, 3, 1]
    assert choice_probabilities(logliks[order]) == pytest.approx(probs[order])


def test_is_correct_picks_argmax():
    assert is_correct([-2.0, -0.1, -3.0, -4.0], 1)
    assert not is_correct([-2.0, -0.1, -3.0, -4.0], 0)


def test_mean_perceptual_index_over_prompts():
    assert mean_perceptual_index([0.5, 0.25, 0.75, 0.5]) == pytest.approx(0.5)


@pytest.mark.parametrize(
    "call",
    [
        lambda: perceptual_index([], 0),
        lambda: perceptual_index([0.0, 0.0], 2),
        lambda: perceptual_index([float("nan"), 0.0], 0),
        lambda: mean_perceptual_index([]),
        lambda: mean_perceptual_index([1.5]),
    ],
)
def test_invalid_inputs_raise(call):
    with pytest.raises(ValueError):
        call()
