"""Chunk windows of long recordings and the aggregation of per-chunk labels."""

from __future__ import annotations

import numpy as np
import pytest

from lm_eval_rul.factual.chunks import (
    aggregate_labels,
    chunk_windows,
    effective_chunk_seconds,
    split_waveform,
)
from lm_eval_rul.factual.lexicon import lexicon_for
from lm_eval_rul.factual.parser import parse_labels
from lm_eval_rul.testing.factual import FIXTURE_SR, LONG_SECONDS


def test_effective_chunk_seconds():
    assert effective_chunk_seconds() == 60.0
    assert effective_chunk_seconds(None, 30.0) == 30.0
    assert effective_chunk_seconds(20.0, 30.0) == 20.0
    with pytest.raises(ValueError, match="positive"):
        effective_chunk_seconds(0)


@pytest.mark.parametrize(
    "duration, chunk, n",
    [(30.0, 60.0, 1), (60.0, 60.0, 1), (60.5, 60.0, 2), (130.0, 60.0, 3), (447.0, 30.0, 15)],
)
def test_windows_are_equal_contiguous_and_within_the_limit(duration, chunk, n):
    windows = chunk_windows(duration, chunk)
    assert len(windows) == n
    assert windows[0][0] == 0.0 and windows[-1][1] == duration
    assert all(a[1] == b[0] for a, b in zip(windows, windows[1:], strict=False))
    lengths = [end - start for start, end in windows]
    assert max(lengths) <= chunk + 1e-9
    assert max(lengths) - min(lengths) < 1e-9


def test_windows_reject_bad_input():
    with pytest.raises(ValueError, match="duration"):
        chunk_windows(0.0, 60.0)
    with pytest.raises(ValueError, match="chunk_seconds"):
        chunk_windows(10.0, -1.0)


def test_split_waveform_tiles_the_long_fixture():
    wave = np.arange(int(LONG_SECONDS * FIXTURE_SR), dtype=np.float32)
    pieces = split_waveform(wave, FIXTURE_SR, 2.0)  # a tiny model's 2 s window
    assert len(pieces) == 5
    assert np.array_equal(np.concatenate(pieces), wave)
    assert max(p.size for p in pieces) <= 2 * FIXTURE_SR
    with pytest.raises(ValueError, match="mono"):
        split_waveform(np.zeros((2, 10)), FIXTURE_SR, 2.0)


def test_union_keeps_order_of_first_appearance():
    per_chunk = [["violin"], [], ["piano", "violin"], ["cello"]]
    assert aggregate_labels(per_chunk) == ("violin", "piano", "cello")
    assert aggregate_labels([]) == ()


def test_majority_is_more_than_half_and_ties_are_left_out():
    per_chunk = [["piano", "violin"], ["piano"], ["violin", "cello"], ["piano"]]
    # piano 3/4 kept; violin 2/4 is a tie: left out; cello 1/4
    assert aggregate_labels(per_chunk, rule="majority") == ("piano",)
    assert aggregate_labels([["a", "a"], ["b"], ["a"]], rule="majority") == ("a",)
    assert aggregate_labels([["x", "y"]], rule="majority") == ("x", "y")  # one chunk
    with pytest.raises(ValueError, match="union, majority"):
        aggregate_labels(per_chunk, rule="any")


def test_parsed_chunk_answers_aggregate():
    lexicon = lexicon_for("instrument")
    answers = ["A solo cello.", "Cello, no piano.", "I hear a piano and a cello."]
    per_chunk = [parse_labels(a, lexicon).labels for a in answers]
    assert aggregate_labels(per_chunk) == ("cello", "piano")
    assert aggregate_labels(per_chunk, rule="majority") == ("cello",)
