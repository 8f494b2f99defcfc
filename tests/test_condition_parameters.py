"""A new audio condition with a parameter of its own is one class, and nothing else.

The class below is declared here, in the test, as a user would declare it in a module the
package imports: its ``parameters`` make ``tone_hz`` a model argument of every audio model
(checked before anything loads, recorded in the results, part of the cache keys), and
``lalm`` and ``lalm-api`` run it without any other change. The loopback server
(``doubles.openai_server``) runs the same checkpoint as ``lalm``.
"""

from __future__ import annotations

import os
from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np
import pytest

from lm_eval_rul.audio import AudioSpec, Condition, Parameter, register_condition
from lm_eval_rul.audio.conditions import NOTHING, registry

os.environ.setdefault("HF_HUB_OFFLINE", "1")

TONE_HZ = Parameter("tone_hz", float, 440.0, low=0, above=True, unit="hertz", doc="pitch")


class Tone(Condition):
    """One second of a sine tone at ``tone_hz``."""

    name = "tone_for_test"
    description = "a one-second sine tone at tone_hz"
    reads = NOTHING
    parameters = (TONE_HZ,)
    report_order = 990
    colour = "#010203"

    def key(self, doc: Mapping[str, Any], spec: Any) -> Hashable:
        return ("tone_for_test", float(spec.tone_hz), int(spec.sampling_rate))

    def waveform(self, key: tuple[Any, ...], doc: Mapping[str, Any], spec: Any) -> np.ndarray:
        t = np.arange(int(spec.sampling_rate)) / spec.sampling_rate
        wave = (0.5 * np.sin(2 * np.pi * spec.tone_hz * t)).astype(np.float32)
        wave.flags.writeable = False
        return wave

    def describe(self, key: tuple[Any, ...]) -> str:
        return f"tone ({key[1]:g} Hz)"


@pytest.fixture
def tone():
    register_condition(Tone)
    yield Tone
    registry._REGISTRY.pop(Tone.name)  # the other tests see the built-in conditions only


def _requests(audio_data: dict[str, str]) -> list:
    from lm_eval.api.instance import Instance

    from lm_eval_rul.mcqa.tasks import doc_to_choice, doc_to_text, load_rul_muchomusic

    docs = list(load_rul_muchomusic(0, **audio_data)["test"])[:3]
    return [
        Instance("loglikelihood", d, (doc_to_text(d), f" {c}"), i, ("rul_muchomusic_fold0", n, 1))
        for n, d in enumerate(docs)
        for i, c in enumerate(doc_to_choice(d))
    ]


def test_the_parameter_is_a_checked_model_argument_of_every_audio_model(tone):
    from lm_eval_rul.errors import UserInputError
    from lm_eval_rul.models.api import check_model_args as api_args
    from lm_eval_rul.models.lalm import check_model_args as lalm_args

    assert lalm_args({"audio": tone.name, "tone_hz": "220"})["tone_hz"] == 220.0
    with pytest.raises(UserInputError, match=r"lalm: tone_hz='-5' must be a finite number"):
        lalm_args({"audio": tone.name, "tone_hz": "-5"})
    with pytest.raises(UserInputError, match="lalm-api: tone_hz='nan'"):
        api_args({"base_url": "http://127.0.0.1:9/v1", "model": "m", "tone_hz": "nan"})
    # the built-in conditions' records and keys do not change when a condition is added
    noise = AudioSpec(16_000, 2.0, "noise")
    from lm_eval_rul.models.core import audio_settings

    assert "audio_tone_hz" not in audio_settings(noise)
    assert audio_settings(AudioSpec(16_000, 2.0, tone.name, tone_hz=220.0))["audio_tone_hz"] == 220


def test_a_new_condition_runs_on_lalm_and_lalm_api(tone, tiny_audio_lm, audio_data, tmp_path):
    from doubles.openai_server import OpenAIAudioServer

    from lm_eval_rul.models.api import LALMAPI
    from lm_eval_rul.models.lalm import LALM

    requests = _requests(audio_data)
    cache = tmp_path / "lalm.sqlite"

    def lalm(hz: float) -> Any:
        return LALM(
            pretrained=str(tiny_audio_lm), dtype="float32", device="cpu", audio=tone.name,
            tone_hz=hz, results_cache=str(cache),
        )  # fmt: skip

    low = lalm(220.0)
    low_scores = low.loglikelihood(requests, disable_tqdm=True)
    high_scores = lalm(880.0).loglikelihood(requests, disable_tqdm=True)
    assert low_scores != high_scores  # the parameter reaches the waveform and the keys
    again = lalm(220.0)
    assert again.loglikelihood(requests, disable_tqdm=True) == low_scores
    assert again._stored.reused == len(requests)  # read back, under its own key
    info = low.get_model_info()
    assert info["audio_condition"] == tone.name and info["audio_tone_hz"] == 220.0
    with OpenAIAudioServer(tiny_audio_lm, served_model="tiny-audio") as server:
        api = LALMAPI(
            base_url=server.url, model="tiny-audio", audio=tone.name, tone_hz=220.0,
            results_cache="none", retry_backoff=0,
        )  # fmt: skip
        served = api.loglikelihood(requests, disable_tqdm=True)
    for (ll, greedy), (want, want_greedy) in zip(served, low_scores, strict=True):
        assert ll == pytest.approx(want, abs=1e-4) and greedy == want_greedy
    assert api.get_model_info()["audio_tone_hz"] == 220.0


def test_audio_with_no_value_is_refused_listing_the_conditions():
    """44.4: ``audio=`` with an empty value is not run as ``none``."""
    from lm_eval_rul.audio import UnknownConditionError, condition_names
    from lm_eval_rul.models.lalm import check_model_args

    with pytest.raises(UnknownConditionError) as caught:
        check_model_args({"audio": ""})
    line = str(caught.value)
    assert "audio=''" in line and all(name in line for name in condition_names())
    assert "\n" not in line
    assert check_model_args({"audio": None})["audio"] == "none"  # lm-eval's parse of none
