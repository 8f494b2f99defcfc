"""Audio in: decoding, conditions, the random-clip draw and the clip cache."""

from __future__ import annotations

import json
import logging
import warnings
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from lm_eval_rul import audio
from lm_eval_rul.audio import (
    AudioDecodeError,
    AudioSpec,
    MissingAudioError,
    check_audio_available,
    condition_audio,
    decode_audio,
    register_clip_pool,
)
from lm_eval_rul.audio.decoding import report_trims

SR = 16_000


def write_stereo(path: Path, *, seconds: float = 1.0, rate: int = 44_100, freq: float = 440.0):
    """Left channel a tone, right channel silent: the mono mix is half the tone."""
    t = np.arange(int(seconds * rate)) / rate
    left = 0.5 * np.sin(2 * np.pi * freq * t)
    data = np.stack([left, np.zeros_like(left)], axis=1).astype(np.float32)
    sf.write(path, data, rate)
    return path


@pytest.mark.parametrize("ext", ["wav", "flac", "mp3"])
def test_decode_stereo_44k_to_mono_16k(tmp_path, ext):
    path = write_stereo(tmp_path / f"clip.{ext}", seconds=1.0)
    wave = decode_audio(path, sampling_rate=SR)
    assert wave.dtype == np.float32 and wave.ndim == 1
    # mp3 decoders pad a few ms; wav/flac keep the exact length after resampling
    assert abs(wave.shape[0] - SR) <= (SR // 10 if ext == "mp3" else 1)
    # mono = the channel average: a 0.5-amplitude tone in one channel peaks near 0.25
    peak = float(np.abs(wave[SR // 10 : SR // 2]).max())
    assert 0.2 < peak < 0.3, peak
    # the 440 Hz tone survives the resampling
    spectrum = np.abs(np.fft.rfft(wave[: SR // 2]))
    assert abs(np.argmax(spectrum) * SR / (SR // 2) - 440) < 10


def test_over_long_audio_is_trimmed_with_one_warning_naming_the_file(tmp_path):
    """Old code: a UserWarning and a log warning for every trimmed clip."""
    report_trims()  # start from zero (earlier tests trimmed too)
    records: list[logging.LogRecord] = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = records.append  # type: ignore[method-assign]
    logger = logging.getLogger("lm_eval_rul.audio.decoding")
    logger.addHandler(handler)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no UserWarning any more
            for i in range(3):
                path = write_stereo(tmp_path / f"long{i}.wav", seconds=3.0, rate=SR)
                wave = decode_audio(path, sampling_rate=SR, max_seconds=1.5)
                assert wave.shape[0] == int(1.5 * SR)
        assert records == []  # nothing yet: the run's one warning comes at its end
        assert report_trims() == 3
    finally:
        logger.removeHandler(handler)
    assert len(records) == 1
    message = records[0].getMessage()
    assert message.startswith("3 clip(s) longer than the model's limit of 1.5 s were trimmed")
    assert "long0.wav (3.0 s) and 2 other clip(s)" in message


def test_empty_and_corrupt_files_raise_naming_the_file(tmp_path):
    empty = tmp_path / "empty.wav"
    empty.write_bytes(b"")
    with pytest.raises(AudioDecodeError, match=r"empty\.wav: is empty \(0 bytes\)"):
        decode_audio(empty, sampling_rate=SR)
    corrupt = tmp_path / "corrupt.flac"
    corrupt.write_bytes(b"\x01\xfe this is not audio at all" * 10)  # binary, not text
    with pytest.raises(AudioDecodeError, match=r"corrupt\.flac: cannot be decoded"):
        decode_audio(corrupt, sampling_rate=SR)
    no_frames = tmp_path / "noframes.wav"
    sf.write(no_frames, np.zeros((0, 1), dtype=np.float32), SR)
    with pytest.raises(AudioDecodeError, match=r"noframes\.wav"):
        decode_audio(no_frames, sampling_rate=SR)


def test_spec_rejects_unknown_condition():
    with pytest.raises(ValueError, match="audio='loud' is not a condition; use one of original"):
        AudioSpec(SR, 30.0, condition="loud")


def test_noise_is_reproducible_from_seed_and_id_and_differs_across_ids():
    spec = AudioSpec(SR, 30.0, condition="noise", seed=7, noise_seconds=2.0, noise_std=1.0)
    key_a, wave_a = condition_audio({"id": "448"}, spec)
    key_again, wave_again = condition_audio({"id": "448", "fold": 3}, spec)
    key_b, wave_b = condition_audio({"id": "665"}, spec)
    _, wave_other_seed = condition_audio({"id": "448"}, AudioSpec(SR, 30.0, "noise", seed=8))
    assert key_a == key_again and np.array_equal(wave_a, wave_again)
    assert key_a != key_b and not np.allclose(wave_a, wave_b)
    assert not np.allclose(wave_a, wave_other_seed[: wave_a.shape[0]])
    assert wave_a.shape == (2 * SR,) and wave_a.dtype == np.float32
    assert abs(float(wave_a.std()) - 1.0) < 0.02


def test_noise_longer_than_the_model_limit_is_cut_with_a_warning(caplog):
    spec = AudioSpec(SR, 30.0, condition="noise", noise_seconds=40.0)
    assert "noise_seconds=40 is longer than the model's limit of 30 s" in caplog.text
    assert condition_audio({"id": "9"}, spec)[1].shape == (30 * SR,)


def test_silence_and_none():
    spec = AudioSpec(SR, 30.0, condition="silence", noise_seconds=3.0)
    key_a, wave_a = condition_audio({"id": "1"}, spec)
    key_b, wave_b = condition_audio({"id": "2"}, spec)
    assert key_a == key_b and wave_a.shape == (3 * SR,) and not wave_a.any()
    assert condition_audio({"id": "1"}, AudioSpec(SR, 30.0, condition="none")) == (("none",), None)


def _pool_docs(tmp_path: Path, n_tracks: int = 6) -> list[dict]:
    """Two questions per track, each with its own file, as the loaders lay them out."""
    clips = []
    docs = []
    for t in range(n_tracks):
        path = tmp_path / f"track{t}.wav"
        sf.write(path, np.full(SR // 10, 0.01 * (t + 1), dtype=np.float32), SR)
        ref = audio.sources.file_ref(path)
        clips.append((ref, f"track{t}"))
        for q in range(2):
            docs.append({"id": f"{t}-{q}", "audio_ref": ref, "audio_track": f"track{t}"})
    pool = register_clip_pool(clips)
    for doc in docs:
        doc["audio_pool"] = pool
    return docs


def test_random_clip_is_never_the_own_track_and_stable_under_reordering(tmp_path):
    docs = _pool_docs(tmp_path)
    spec = AudioSpec(SR, 30.0, condition="random", seed=3)
    chosen = {d["id"]: condition_audio(d, spec)[0][1] for d in docs}
    for doc in docs:
        assert chosen[doc["id"]] != doc["audio_ref"]
    # the pool, not the run's documents, decides: a subset in another order draws the same
    pool = audio.conditions.pools._POOLS[docs[0]["audio_pool"]]
    pool_again = register_clip_pool(list(reversed(pool)))
    assert pool_again == docs[0]["audio_pool"]
    for doc in reversed(docs[:3]):
        assert condition_audio(doc, spec)[0][1] == chosen[doc["id"]]
    # another seed changes at least one draw; the draws cover more than one clip
    other = {d["id"]: condition_audio(d, AudioSpec(SR, 30.0, "random", seed=4))[0][1] for d in docs}
    assert other != chosen and len(set(chosen.values())) > 1


def test_random_clip_needs_another_track(tmp_path):
    docs = _pool_docs(tmp_path, n_tracks=1)
    with pytest.raises(audio.AudioError, match="needs a clip of another track"):
        condition_audio(docs[0], AudioSpec(SR, 30.0, condition="random"))


def test_clip_is_decoded_once_and_shared_read_only(tmp_path):
    docs = _pool_docs(tmp_path, n_tracks=2)
    audio.clear_audio_cache()
    spec = AudioSpec(SR, 30.0, condition="original")
    keys = [condition_audio(d, spec)[0] for d in docs + docs]
    assert audio.decode_count() == 2  # two tracks, eight requests
    assert keys[0] == keys[1] != keys[2]
    _, wave = condition_audio(docs[0], spec)
    assert not wave.flags.writeable


def test_check_audio_available_lists_missing_ids_and_paths():
    docs = [
        {"id": str(i), "audio_ref": None, "audio_tried": [f"/a/{i}.wav", f"/a/{i}.mp3"]}
        for i in range(12)
    ]
    docs.append({"id": "ok", "audio_ref": "x", "audio_tried": []})
    with pytest.raises(MissingAudioError) as info:
        check_audio_available(docs + docs, "original")  # folds repeat ids: counted once
    message = str(info.value)
    assert "No audio for 12 of 13 items: ids 0, 1, 2" in message
    assert "(+2 more)" in message and "id 0: tried /a/0.wav, /a/0.mp3" in message
    assert set(info.value.missing) == {str(i) for i in range(12)}
    check_audio_available(docs, "noise")  # needs no files
    with pytest.raises(MissingAudioError, match="pass --metadata"):
        check_audio_available([{"id": "2"}], "random")


def test_a_text_file_named_mp3_is_said_to_be_no_audio(tmp_path, capfd):
    from lm_eval_rul.audio.decoding import decode_audio
    from lm_eval_rul.audio.errors import AudioDecodeError
    from lm_eval_rul.audio.preflight import clip_header_problem

    fake = tmp_path / "7.mp3"
    fake.write_text("<!DOCTYPE html>\n<html><body>404 Not Found</body></html>\n")
    ref = json.dumps({"kind": "file", "path": str(fake)})
    assert clip_header_problem(ref) == (
        "is a text file, not audio (it starts '<!DOCTYPE html>'); replace it with the clip"
    )
    with pytest.raises(AudioDecodeError, match=r"7\.mp3: is a text file, not audio") as raised:
        decode_audio(str(fake), sampling_rate=16_000, name=str(fake))
    assert "ffmpeg" not in str(raised.value)
    printed = capfd.readouterr()
    assert "Note:" not in printed.err + printed.out  # no decoder ran (libmpg123's lines)
