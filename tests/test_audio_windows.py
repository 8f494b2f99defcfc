"""Documents that ask about one window of a clip: the audio layer plays only that window."""

from __future__ import annotations

import numpy as np
import pytest

from lm_eval_rul import audio
from lm_eval_rul.audio import AudioError, AudioSpec, condition_audio, condition_key, cut_window
from lm_eval_rul.audio.sources import file_ref
from lm_eval_rul.testing.audio import synth_clip, write_clip

SR = 16_000


@pytest.fixture(scope="module")
def clips(tmp_path_factory):
    """A 9 s clip and a 3 s clip (written at the models' rate: no resampling)."""
    root = tmp_path_factory.mktemp("windows")
    long = write_clip(root / "long.wav", synth_clip("sweep", seconds=9.0, sr=SR), SR)
    short = write_clip(root / "short.wav", synth_clip("chord", seconds=3.0, sr=SR, seed=2), SR)
    return {"long": file_ref(long), "short": file_ref(short)}


def doc(clips, window, **extra):
    return {"id": "7", "audio_ref": clips["long"], "audio_window": window, **extra}


def test_cut_window_clips_and_never_returns_nothing():
    wave = np.arange(100, dtype=np.float32)
    assert cut_window(wave, 10, (2.0, 4.0)).tolist() == list(range(20, 40))
    assert cut_window(wave, 10, (8.0, 12.0)).tolist() == list(range(80, 100))  # clipped
    assert cut_window(wave, 10, (11.0, 13.0)).tolist() == list(range(80, 100))  # past the end
    assert cut_window(wave, 10, (0.0, 30.0)).size == 100


def test_original_plays_exactly_the_window(clips):
    audio.clear_audio_cache()
    whole = condition_audio({"id": "7", "audio_ref": clips["long"]}, AudioSpec(SR, None))[1]
    spec = AudioSpec(SR, 2.0)
    key, wave = condition_audio(doc(clips, [3.6, 5.4]), spec)
    assert key == condition_key(doc(clips, [3.6, 5.4]), spec)
    assert key[1] == clips["long"] and key[-2:] == (3.6, 5.4)
    np.testing.assert_array_equal(wave, whole[int(3.6 * SR) : int(5.4 * SR)])
    # two windows of one clip are two keys, each decoding only its own frames, once
    other = condition_key(doc(clips, [5.4, 7.2]), spec)
    assert other != key
    condition_audio(doc(clips, [5.4, 7.2]), spec)
    assert audio.decode_count() == 3  # the whole clip above, then one per window
    condition_audio(doc(clips, [3.6, 5.4]), spec)
    assert audio.decode_count() == 3


def test_random_plays_the_window_of_the_named_clip_clipped_to_its_length(clips):
    spec = AudioSpec(SR, 2.0, condition="random")
    short = condition_audio({"id": "x", "audio_ref": clips["short"]}, AudioSpec(SR, None))[1]
    named = doc(clips, [1.0, 2.5], audio_random_ref=clips["short"])
    key, wave = condition_audio(named, spec)
    assert key[1] == clips["short"]
    np.testing.assert_array_equal(wave, short[SR : int(2.5 * SR)])
    # a window starting after the 3 s clip ends hears the clip's last 1.8 s
    late = condition_audio(doc(clips, [7.2, 9.0], audio_random_ref=clips["short"]), spec)[1]
    np.testing.assert_array_equal(late, short[-int(1.8 * SR) :])


def test_a_window_longer_than_the_model_hears_is_an_error_naming_chunk_seconds(clips):
    with pytest.raises(AudioError, match=r"6\.0 s long.*at most 2 s.*chunk_seconds"):
        condition_key(doc(clips, [0.0, 6.0]), AudioSpec(SR, 2.0))
    # a model without a limit hears any window
    assert condition_audio(doc(clips, [0.0, 6.0]), AudioSpec(SR, None))[1].size == 6 * SR


@pytest.mark.parametrize("bad", [[2.0, 1.0], [-1.0, 1.0], ["a", 1], [1.0]])
def test_malformed_windows_are_named(clips, bad):
    with pytest.raises(AudioError, match="audio_window"):
        condition_key(doc(clips, bad), AudioSpec(SR, None))


@pytest.mark.parametrize("condition", ["noise", "silence", "none"])
def test_conditions_without_a_recording_ignore_windows(clips, condition):
    spec = AudioSpec(SR, 2.0, condition=condition, noise_seconds=1.0)
    windowed = condition_audio(doc(clips, [0.0, 6.0]), spec)
    plain = condition_audio({"id": "7"}, spec)
    assert windowed[0] == plain[0]
    if condition != "none":
        np.testing.assert_array_equal(windowed[1], plain[1])


def test_docstring_examples():
    import doctest

    from lm_eval_rul.audio import windows

    result = doctest.testmod(windows)
    assert result.attempted > 0 and result.failed == 0
