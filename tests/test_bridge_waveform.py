"""One condition, one waveform on every path: what a bridge adapter receives through
``lalm-api`` (float WAV by default) equals what ``lalm`` feeds its processor, for noise,
silence and a clip, and ``audio=none`` arrives as no audio. A PCM WAV (for an endpoint that
refuses float WAV) clips noise to +-1: warned once and recorded in the results' config."""

from __future__ import annotations

import hashlib
import logging

import numpy as np
import pytest
from doubles.bridge import MINIMAL_PACKAGES, isolated_python, start_bridge

#: An adapter that keeps each waveform it is given, named by the prompt's digest.
PROBE = """\
import hashlib, os
import numpy as np

NAME = "probe"
HEARD = {heard!r}

def generate(audio, sampling_rate, prompt, max_new_tokens):
    name = os.path.join(HEARD, hashlib.sha1(prompt.encode()).hexdigest())
    if audio is None:
        open(name + ".none", "w").close()
    else:
        np.save(name + ".npy", audio)
    return "A"
"""


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    """The written bridge serving :data:`PROBE` from an env with numpy and soundfile only."""
    from lm_eval_rul.bridge import write_server

    root = tmp_path_factory.mktemp("bridge_waveform")
    heard = root / "heard"
    heard.mkdir()
    adapter = root / "probe.py"
    adapter.write_text(PROBE.format(heard=str(heard)))
    python = isolated_python(root / "env", MINIMAL_PACKAGES)
    server = write_server(root / "bridge.py")
    process, url = start_bridge(python, server, adapter, root / "console.log")
    yield {"url": url, "heard": heard}
    process.terminate()
    process.wait(timeout=30)


def _requests(audio_data: dict) -> list:
    from lm_eval.api.instance import Instance

    from lm_eval_rul.mcqa.tasks import doc_to_text, load_rul_muchomusic

    docs = list(load_rul_muchomusic(0, **audio_data)["test"])[:3]
    gen_kwargs = {"max_gen_toks": 2, "until": ["\n"]}
    return [
        Instance("generate_until", doc, (doc_to_text(doc), dict(gen_kwargs)), 0,
                 ("rul_muchomusic_gen_fold0", n, 1))
        for n, doc in enumerate(docs)
    ]  # fmt: skip


def _fed_to_lalms_processor(tiny_audio_lm, requests, audio: str, monkeypatch) -> dict:
    """question text -> the waveform ``lalm`` passed to its processor (None: no audio)."""
    from lm_eval_rul.models.lalm import LALM

    fed: list[tuple[str, object]] = []
    original = LALM._model_inputs

    def recording(self, texts, waves):
        for n, text in enumerate(texts):
            fed.append((text, None if waves is None else np.array(waves[n], copy=True)))
        return original(self, texts, waves)

    monkeypatch.setattr(LALM, "_model_inputs", recording)
    model = LALM(
        pretrained=str(tiny_audio_lm), dtype="float32", device="cpu", audio=audio,
        noise_seconds=1.0, results_cache="none",
    )  # fmt: skip
    model.generate_until(requests, disable_tqdm=True)
    info = model.get_model_info()
    assert info["audio_sent_encoding"] == "float32 array (in process)"
    assert info["audio_sent_lossless"] is True
    by_question = {}
    for request in requests:
        question = request.args[0]
        (wave,) = {id(w): w for text, w in fed if question in text}.values()
        by_question[question] = wave
    return by_question


def _heard_by_the_adapter(probe, requests, audio: str, **settings) -> tuple[dict, dict]:
    """(question text -> the waveform the adapter received, the run's model info)."""
    from lm_eval_rul.models.api import LALMAPI

    for old in probe["heard"].iterdir():
        old.unlink()
    model = LALMAPI(
        base_url=probe["url"], model="probe", audio=audio, noise_seconds=1.0,
        results_cache="none", **settings,
    )  # fmt: skip
    assert model.generate_until(requests, disable_tqdm=True) == ["A"] * len(requests)
    heard = {}
    for request in requests:
        name = probe["heard"] / hashlib.sha1(request.args[0].encode()).hexdigest()
        assert name.with_suffix(".npy").exists() != name.with_suffix(".none").exists()
        heard[request.args[0]] = (
            np.load(name.with_suffix(".npy")) if name.with_suffix(".npy").exists() else None
        )
    return heard, model.get_model_info()


def _rms(wave) -> float:
    return float(np.sqrt(np.mean(np.square(wave, dtype=np.float64))))


@pytest.mark.parametrize("audio", ["noise", "silence", "original", "none"])
def test_the_adapter_hears_what_lalm_feeds_its_processor(
    probe, tiny_audio_lm, audio_data, monkeypatch, audio
):
    requests = _requests(audio_data)
    fed = _fed_to_lalms_processor(tiny_audio_lm, requests, audio, monkeypatch)
    heard, info = _heard_by_the_adapter(probe, requests, audio)  # the default wav_subtype
    assert info["audio_sent_encoding"] == "wav/FLOAT" and info["audio_sent_lossless"] is True
    assert info["audio_sent_clipped_samples"] == 0
    for question, wave in fed.items():
        got = heard[question]
        if audio == "none":
            assert wave is None and got is None  # no audio, not an empty waveform
            continue
        assert got.dtype == np.float32 and got.shape == wave.shape
        assert _rms(got) == pytest.approx(_rms(wave), rel=0.03, abs=1e-9)
        assert np.abs(got).max() == pytest.approx(np.abs(wave).max(), rel=0.03, abs=1e-9)
        np.testing.assert_array_equal(got, wave)  # float WAV: the samples themselves
    if audio == "noise":  # sigma 1: lalm's noise goes beyond +-1, and so does the adapter's
        assert all(_rms(w) > 0.9 and np.abs(w).max() > 2 for w in heard.values())


def test_a_pcm_wav_is_lalms_clip_to_its_precision_and_clipped_noise_is_warned_and_recorded(
    probe, tiny_audio_lm, audio_data, monkeypatch, caplog
):
    from lm_eval_rul.models.api_payload import WAV_PRECISION

    requests = _requests(audio_data)
    fed = _fed_to_lalms_processor(tiny_audio_lm, requests, "original", monkeypatch)
    heard, info = _heard_by_the_adapter(probe, requests, "original", wav_subtype="PCM_16")
    for question, wave in fed.items():  # a clip inside +-1: one quantisation step at most
        assert np.abs(heard[question] - wave).max() <= WAV_PRECISION["PCM_16"]
    assert info["audio_sent_lossless"] is False and info["audio_sent_clipped_samples"] == 0

    fed = _fed_to_lalms_processor(tiny_audio_lm, requests, "noise", monkeypatch)
    with caplog.at_level(logging.WARNING, logger="lm_eval_rul.models.api_payload"):
        heard, info = _heard_by_the_adapter(probe, requests, "noise", wav_subtype="PCM_16")
    warned = [r for r in caplog.records if "clips the waveform to +-1" in r.getMessage()]
    assert len(warned) == 1  # once per run, not once per clip
    assert info["audio_sent_encoding"] == "wav/PCM_16"
    assert info["audio_sent_clipped_waveforms"] == len(requests)
    beyond = sum(int(np.count_nonzero(np.abs(w) > 1)) for w in fed.values())
    assert info["audio_sent_clipped_samples"] == beyond > 0
    for question, wave in fed.items():  # what the issue measured: RMS 1.00 heard as ~0.72
        assert np.abs(heard[question]).max() <= 1.0
        assert _rms(heard[question]) < 0.8 * _rms(wave)
