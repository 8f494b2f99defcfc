"""Chunk windows of long recordings and the aggregation of per-chunk labels."""

from __future__ import annotations

import numpy as np
import pytest

from lm_eval_rul.audio.windows import cut_window
from lm_eval_rul.factual.chunks import (
    aggregate_labels,
    chunk_windows,
    effective_chunk_seconds,
    plan_windows,
)
from lm_eval_rul.factual.documents import run_options
from lm_eval_rul.factual.errors import FactualInputError
from lm_eval_rul.factual.reading.lexicon import lexicon_for
from lm_eval_rul.factual.reading.parser import parse_labels
from lm_eval_rul.testing.factual import FIXTURE_SR, LONG_SECONDS


def test_effective_chunk_seconds():
    # not asked for: no windows (each recording heard whole, up to the model's limit)
    assert effective_chunk_seconds() is None and effective_chunk_seconds("", 30.0) is None
    # a chunked model (the paper's LTU-AS, MU-LLaMA, LLaMA-Adapter): 60 s, or its limit
    assert effective_chunk_seconds(None, chunked=True) == 60.0
    assert effective_chunk_seconds(None, 30.0, chunked=True) == 30.0
    assert effective_chunk_seconds(20.0, 30.0) == effective_chunk_seconds("20", 30.0) == 20.0
    assert effective_chunk_seconds(90.0) == 90.0  # no known limit: as given
    for bad in (0, -1, "ten", float("nan"), float("inf")):
        with pytest.raises(FactualInputError, match="positive number of seconds"):
            effective_chunk_seconds(bad)
    # a window longer than the model hears is refused, never capped in silence
    with pytest.raises(FactualInputError, match="chunk_seconds=40 is longer than the 30 s"):
        effective_chunk_seconds(40, 30.0)


def test_the_tasks_and_the_cli_share_the_window_length():
    """The tasks' documents (plain ``lm_eval``) read ``chunk_seconds`` through the same
    function ``lm-eval-rul run`` sets it with."""
    assert run_options({}).chunk_seconds == effective_chunk_seconds() is None
    assert run_options({"chunk_seconds": "12.5"}).chunk_seconds == 12.5
    assert run_options({"chunked": "true", "max_audio_seconds": 10}).chunk_seconds == 10.0
    with pytest.raises(FactualInputError, match="positive number of seconds"):
        run_options({"chunk_seconds": 0})
    with pytest.raises(FactualInputError, match="chunk_seconds=20 is longer than the 10 s"):
        run_options({"chunk_seconds": 20, "max_audio_seconds": "10"})


@pytest.mark.parametrize(
    "protocol, limit, chunk, windows, heard, cut",
    [
        # heard whole, up to the model's limit (Audio Flamingo 3: 600 s), under both
        ("rul", 600.0, None, [None], 70.0, False),
        ("paper", 600.0, None, [None], 70.0, False),
        ("rul", None, None, [None], 70.0, False),  # no known limit
        # longer than the limit: cut as the model cuts it, under both protocols (windows
        # only when asked for), and the plan says so
        ("paper", 30.0, None, [(0.0, 30.0)], 30.0, True),
        ("rul", 30.0, None, [(0.0, 30.0)], 30.0, True),
        # asked for (chunk_seconds, or a chunked model): the paper's 60 s segments vs ours
        ("paper", None, 60.0, [(0.0, 60.0), (60.0, 70.0)], 70.0, False),
        ("rul", None, 60.0, [(0.0, 35.0), (35.0, 70.0)], 70.0, False),
    ],
)
def test_what_a_model_hears_of_a_70_s_recording(protocol, limit, chunk, windows, heard, cut):
    plan = plan_windows(70.0, chunk_seconds=chunk, max_seconds=limit, protocol=protocol)
    assert [w if w is None else pytest.approx(w) for w in plan.windows] == windows
    assert (plan.recording_seconds, plan.heard_seconds, plan.cut) == (70.0, heard, cut)


def test_an_unknown_protocol_is_one_clear_error():
    with pytest.raises(
        FactualInputError, match=r"protocol='papers' is not a factual protocol.*rul.*paper"
    ):
        run_options({"protocol": "papers"})
    assert run_options({"protocol": "PAPER"}).protocol == "paper"
    assert run_options({}).protocol == "rul"


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


@pytest.mark.parametrize("chunk", [2.0, 3.0, 4.5, 60.0])
def test_the_played_windows_tile_the_long_fixture(chunk):
    """What the audio layer plays (``cut_window`` of each window of ``chunk_windows``)
    covers the recording exactly: no sample lost or heard twice, none over the limit."""
    wave = np.arange(int(LONG_SECONDS * FIXTURE_SR), dtype=np.float32)
    windows = chunk_windows(wave.size / FIXTURE_SR, chunk)
    pieces = [cut_window(wave, FIXTURE_SR, window) for window in windows]
    assert len(pieces) == int(np.ceil(LONG_SECONDS / chunk))
    assert np.array_equal(np.concatenate(pieces), wave)
    assert max(p.size for p in pieces) <= chunk * FIXTURE_SR


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
