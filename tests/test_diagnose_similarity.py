"""Cosine similarities, summaries, near-identical distractors and duplicate options."""

from __future__ import annotations

import numpy as np
import pytest

from lm_eval_rul.diagnose.similarity import (
    cosine_similarity,
    find_duplicates,
    near_identical,
    option_similarities,
    summarize,
)


def test_cosine_similarity_known_values_and_zero_vectors():
    a = np.array([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0], [-3.0, 0.0]])
    np.testing.assert_allclose(cosine_similarity(a, np.array([2.0, 0.0])), [1, 0, 0, -1])
    rng = np.random.default_rng(0)
    x = rng.normal(size=(5, 7))
    np.testing.assert_allclose(cosine_similarity(x, x), np.ones(5))


def test_option_similarities_read_unit_rows():
    unit = np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]])
    index = {"piano": 0, "keys": 1, "drums": 2}
    np.testing.assert_allclose(option_similarities("piano", ["keys", "drums"], index, unit),
                               [0.6, 0.0])  # fmt: skip
    assert option_similarities("piano", [], index, unit).size == 0


def test_summarize_is_order_invariant_and_handles_empty():
    values = [0.2, 0.9, 0.4, 0.4, 1.0]
    assert summarize(values) == summarize(values[::-1])
    s = summarize(values)
    assert s["n"] == 5 and s["median"] == pytest.approx(0.4) and s["max"] == 1.0
    assert s["mean"] == pytest.approx(0.58)
    assert summarize([]) == {"n": 0}
    assert summarize([0.5])["std"] == 0.0


def test_near_identical_needs_every_space():
    sims = {"t5": [0.99, 0.99, 0.2], "clap": [0.96, 0.5, 0.99]}
    assert near_identical(sims, {"t5": 0.95, "clap": 0.95}) == [True, False, False]
    assert near_identical({"t5": [0.96]}, {"t5": 0.95}) == [True]
    assert near_identical({}, {}) == []
    with pytest.raises(ValueError, match="one similarity per distractor"):
        near_identical({"t5": [0.1], "clap": [0.1, 0.2]}, {"t5": 0.9, "clap": 0.9})


@pytest.mark.parametrize(
    "correct, distractors, expected",
    [
        ("Tom-tom", ["Tom-Tom", "Snare"], [(0, "correct_answer", "case")]),
        ("Cello", ["Viola", "Viola"], [(1, "distractors[0]", "exact")]),
        ("Cello", ["Son Cubano", "Son cubano"], [(1, "distractors[0]", "case")]),
        ("Cello", ["Oboe", "oboe."], [(1, "distractors[0]", "normalised")]),
        ("Cello", ["Cello"], [(0, "correct_answer", "exact")]),
        ("Cello", ["Viola", "Oboe", "Flute"], []),
    ],
)
def test_find_duplicates(correct, distractors, expected):
    found = find_duplicates(correct, distractors)
    assert [(d.index, d.of, d.kind) for d in found] == expected
