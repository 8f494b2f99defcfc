"""Only what the model hears is decoded: the first ``max_seconds`` of a long file, or one
window's frames, equal the same samples of a whole decode and resample."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

from lm_eval_rul import audio
from lm_eval_rul.audio import decode_audio
from lm_eval_rul.audio.decoding import load_window
from lm_eval_rul.audio.sources import file_ref

SR = 16_000


def _whole(path, rate_out: int) -> np.ndarray:
    """The old way: decode the whole file, average the channels, resample it all."""
    import librosa

    data, rate = sf.read(path, dtype="float32", always_2d=True)
    return librosa.resample(data.mean(axis=1), orig_sr=rate, target_sr=rate_out)


@pytest.fixture(scope="module")
def long_file(tmp_path_factory):
    """20 s of stereo noise at 44.1 kHz (a stand-in for a 20-minute recording)."""
    rng = np.random.default_rng(0)
    path = tmp_path_factory.mktemp("ranges") / "long.wav"
    sf.write(path, (0.2 * rng.standard_normal((20 * 44_100, 2))).astype(np.float32), 44_100)
    return path


def test_a_trimmed_decode_equals_the_start_of_a_whole_decode(long_file, monkeypatch):
    whole = _whole(long_file, SR)
    read_frames: list[int] = []
    original = sf.SoundFile.read

    def counting(self, frames=-1, *args, **kwargs):
        data = original(self, frames, *args, **kwargs)
        read_frames.append(len(data))
        return data

    monkeypatch.setattr(sf.SoundFile, "read", counting)
    wave = decode_audio(long_file, sampling_rate=SR, max_seconds=5.0)
    assert wave.shape == (5 * SR,)
    np.testing.assert_allclose(wave, whole[: 5 * SR], atol=1e-5)
    assert sum(read_frames) < 6 * 44_100  # 5 s and a margin, not the 20 s of the file


@pytest.mark.parametrize("window", [(7.3, 12.1), (0.0, 2.0), (18.5, 25.0), (30.0, 33.0)])
def test_a_window_equals_the_slice_of_a_whole_decode(long_file, window):
    audio.clear_audio_cache()
    whole = _whole(long_file, SR)
    wave = load_window(file_ref(long_file), sampling_rate=SR, window=window)
    expected = audio.cut_window(whole, SR, window)  # clipped; past the end: the last stretch
    assert wave.shape == expected.shape
    np.testing.assert_allclose(wave, expected, atol=1e-5)
