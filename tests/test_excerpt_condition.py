"""``audio=excerpt``: a stretch of the clip, the same samples on every path, logged.

``lalm``'s letters under an excerpt differ from its original's and its noise's; through
``lalm-api`` and the bridge, the adapter receives exactly the samples ``lalm`` feeds its
processor, which are ``original``'s samples cut at the excerpt's bounds; the bounds are
logged as ``audio_window``; a clip shorter than the excerpt is heard whole and counted.
"""

from __future__ import annotations

import logging
import os

import numpy as np
import pytest
from test_bridge_waveform import _fed_to_lalms_processor, _requests, probe  # noqa: F401

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def test_excerpt_bounds_and_the_word_parameter_are_checked_before_anything_loads():
    from lm_eval_rul.audio import AudioSpec
    from lm_eval_rul.audio.conditions.excerpt import excerpt_bounds
    from lm_eval_rul.errors import UserInputError
    from lm_eval_rul.models.api import check_model_args as api_args
    from lm_eval_rul.models.lalm import check_model_args as lalm_args

    assert excerpt_bounds(1000, 100, 2.0, "middle", 0, "q") == (400, 600)
    draws = {excerpt_bounds(1000, 100, 2.0, "random", 0, f"q{i}") for i in range(20)}
    assert len(draws) > 5 and all(b - a == 200 and 0 <= a <= 800 for a, b in draws)
    by_seed = {excerpt_bounds(1000, 100, 2.0, "random", s, "q1") for s in range(5)}
    assert len(by_seed) > 1  # the seed moves it; the same (seed, item) never does:
    assert excerpt_bounds(1000, 100, 2.0, "random", 3, "q1") in by_seed
    args = lalm_args({"audio": "excerpt", "excerpt_seconds": "3", "excerpt_at": "End"})
    assert args["excerpt_seconds"] == 3.0 and args["excerpt_at"] == "end"
    with pytest.raises(UserInputError) as caught:
        lalm_args({"audio": "excerpt", "excerpt_at": "late"})
    assert str(caught.value) == (
        "lalm: excerpt_at='late' must be one of: start, middle, end, random"
    )
    with pytest.raises(UserInputError, match=r"lalm-api: excerpt_seconds='0' must be"):
        api_args({"base_url": "http://127.0.0.1:9/v1", "model": "m", "excerpt_seconds": "0"})
    assert AudioSpec(16_000, 30.0, "excerpt", excerpt_at=" Middle").excerpt_at == "middle"
    with pytest.raises(UserInputError, match="excerpt_at='late' must be one of"):
        AudioSpec(16_000, 30.0, "excerpt", excerpt_at="late")
    spec = AudioSpec(16_000, 30.0, "excerpt", excerpt_seconds=2.0, excerpt_at="end")
    assert spec.settings() == {"excerpt_seconds": 2.0, "excerpt_at": "end", "seed": 0}
    from lm_eval_rul.models.core import audio_settings

    recorded = audio_settings(spec)
    assert recorded["audio_excerpt_seconds"] == 2.0 and recorded["audio_excerpt_at"] == "end"
    assert "audio_excerpt_at" not in audio_settings(AudioSpec(16_000, 30.0, "noise"))


def test_lalms_excerpt_letters_differ_from_original_and_noise_and_the_window_is_logged(
    tiny_audio_lm, audio_data, caplog
):
    from lm_eval.api.instance import Instance

    from lm_eval_rul.audio.decoding import report_trims
    from lm_eval_rul.audio.requests import heard_fields
    from lm_eval_rul.mcqa.tasks import doc_to_choice, doc_to_text, load_rul_muchomusic
    from lm_eval_rul.models.lalm import LALM

    docs = list(load_rul_muchomusic(0, **audio_data)["test"])[:4]
    requests = [
        Instance("loglikelihood", d, (doc_to_text(d), f" {c}"), i, ("rul_muchomusic_fold0", n, 1))
        for n, d in enumerate(docs)
        for i, c in enumerate(doc_to_choice(d))
    ]

    def letters(audio: str, **settings) -> list:
        model = LALM(
            pretrained=str(tiny_audio_lm), dtype="float32", device="cpu", audio=audio,
            results_cache="none", noise_seconds=1.5, **settings,
        )  # fmt: skip
        return [ll for ll, _ in model.loglikelihood(requests, disable_tqdm=True)]

    report_trims()
    original, noise = letters("original"), letters("noise")
    excerpt = letters("excerpt", excerpt_seconds=0.5, excerpt_at="end")
    assert excerpt != pytest.approx(original, abs=1e-4)
    assert excerpt != pytest.approx(noise, abs=1e-4)
    for doc in docs:  # the clips are 1.5 s: the last half second, in the item's file
        heard = heard_fields(doc)
        assert heard["audio_window"] == pytest.approx([1.0, 1.5], abs=1e-3)
        assert "excerpt 1.00-1.50 s (end)" in heard["audio_heard"]
    with caplog.at_level(logging.WARNING, logger="lm_eval_rul.audio.conditions.excerpt"):
        letters("excerpt", excerpt_seconds=5.0)  # longer than every clip: heard whole
        report_trims()  # the engines call it at the end of a run
    (line,) = [r.getMessage() for r in caplog.records if "heard whole" in r.getMessage()]
    clips = len({d["audio_ref"] for d in docs})
    assert line.startswith(f"audio=excerpt: {clips} clip(s) are no longer than excerpt_seconds=5")


@pytest.mark.parametrize("at", ["end", "random"])
def test_the_bridge_adapter_receives_exactly_the_excerpt(
    probe, tiny_audio_lm, audio_data, monkeypatch, at  # noqa: F811
):
    import hashlib

    from lm_eval_rul.audio.conditions.excerpt import excerpt_bounds
    from lm_eval_rul.models.api import LALMAPI

    requests = _requests(audio_data)
    settings = {"excerpt_seconds": 0.4, "excerpt_at": at}
    whole = _fed_to_lalms_processor(tiny_audio_lm, requests, "original", monkeypatch)
    monkeypatch.undo()
    for old in probe["heard"].iterdir():
        old.unlink()
    model = LALMAPI(
        base_url=probe["url"], model="probe", audio="excerpt", results_cache="none", **settings
    )
    model.generate_until(requests, disable_tqdm=True)
    assert model.get_model_info()["audio_excerpt_at"] == at
    for request in requests:
        question = request.args[0]
        name = probe["heard"] / hashlib.sha1(question.encode()).hexdigest()
        got = np.load(name.with_suffix(".npy"))
        full = whole[question]
        first, last = excerpt_bounds(
            full.shape[0], 16_000, 0.4, at, 0, str(request.doc["id"])
        )
        assert last - first == 6400 and got.dtype == np.float32
        np.testing.assert_array_equal(got, full[first:last])
