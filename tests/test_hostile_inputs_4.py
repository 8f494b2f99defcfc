"""Hostile inputs, fourth pass (issue 36, items 5-17): numeric model arguments, impossible
log-probabilities, bad dtypes and world sizes, credentials in data locations, lone
surrogates, HTTP-date ``Retry-After`` (tiny real models, loopback servers, temp folders).
The bridge, MMAU and clip items are in ``test_hostile_inputs_4b.py``."""

from __future__ import annotations

import json
import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")


# ----------------------------------------------------------------- numeric model arguments


@pytest.mark.parametrize(
    "bad, words",
    [
        ("noise_std=nan", "must be a finite number, at least 0"),
        ("noise_std=inf", "noise_std=inf must be a finite number, at least 0"),
        ("noise_seconds=nan", "must be a finite number of seconds, above 0"),
        ("noise_seconds=1e12", "at most 3600"),
        ("max_audio_seconds=inf", "Leave it out (or none) for the model's own limit"),
        ("max_gen_toks=0", "max_gen_toks=0 must be at least 1"),
    ],
)
def test_every_numeric_lalm_argument_is_finite_and_in_range_before_the_model(
    bad, words, tiny_audio_lm, audio_data, tmp_path, capsys, constructions
):
    from lm_eval_rul.testing.harness import cli_error_line

    line = cli_error_line(
        ["run", "--model", "lalm", "--model_args",
         f"pretrained={tiny_audio_lm},audio=noise,results_cache=none,{bad}",
         "--tasks", "rul_muchomusic_fold0", "--metadata", json.dumps(audio_data),
         "--output_path", tmp_path / "out"],  # fmt: skip
        capsys,
    )
    assert words in line and constructions == []


@pytest.mark.parametrize(
    "bad, words",
    [
        ({"noise_std": "nan"}, "noise_std='nan' must be a finite number"),
        ({"sampling_rate": "0"}, "sampling_rate='0' must be at least 1000"),
        ({"max_audio_seconds": "inf"}, "max_audio_seconds='inf' must be a finite number"),
        ({"max_gen_toks": "0"}, "max_gen_toks='0' must be at least 1"),
    ],
)
def test_every_numeric_lalm_api_argument_is_finite_and_in_range(bad, words):
    from lm_eval_rul.models.api import LALMAPI
    from lm_eval_rul.models.api_args import check_api_model_args
    from lm_eval_rul.models.args import LALMArgumentError

    args = {"base_url": "http://127.0.0.1:9/v1", "model": "m", **bad}
    with pytest.raises(LALMArgumentError, match="^lalm-api: ") as caught:
        check_api_model_args(args, LALMAPI)
    assert words in str(caught.value) and "\n" not in str(caught.value)
