"""Only finite log-probabilities are scored or stored by ``lalm-api`` (issue 29, point 1).

Python's ``json`` reads ``Infinity`` and turns ``1e400`` into ``inf``; every number of a
reply goes through one reader (:func:`lm_eval_rul.models.api_http.finite_number`), the
resume cache refuses such a number, and an entry holding one (written by an earlier
version) is asked again rather than replayed.
"""

from __future__ import annotations

import json
import os
import sqlite3

import pytest
from doubles.openai_server import OpenAIAudioServer

from lm_eval_rul.models.api_payload import (
    MalformedLogprobsError,
    prompt_path_score,
    top_logprobs_of,
)
from lm_eval_rul.testing.harness import cli_error_line

os.environ.setdefault("HF_HUB_OFFLINE", "1")

MODEL = "tiny-audio"


def _values(path) -> list[str]:
    if not path.exists():
        return []
    with sqlite3.connect(str(path)) as db:
        return [row[0] for row in db.execute("SELECT value FROM results")]


def _letter_requests(metadata: dict[str, str], n: int = 2) -> list:
    from lm_eval.api.instance import Instance

    from lm_eval_rul.mcqa.tasks import doc_to_choice, doc_to_text, load_rul_muchomusic

    docs = list(load_rul_muchomusic(0, **metadata)["test"])[:n]
    return [
        Instance("loglikelihood", doc, (doc_to_text(doc), f" {letter}"), i, ("rul", k, 1))
        for k, doc in enumerate(docs)
        for i, letter in enumerate(doc_to_choice(doc))
    ]


def _api(server: OpenAIAudioServer, cache, **kwargs):
    from lm_eval_rul.models.api import LALMAPI

    settings = {"wav_subtype": "FLOAT", "retry_backoff": 0, "results_cache": str(cache)}
    return LALMAPI(base_url=server.url, model=MODEL, **{**settings, **kwargs})


@pytest.mark.parametrize(
    "value", [float("inf"), float("-inf"), float("nan"), 10**400, json.loads("1e400")]
)
def test_a_logprob_that_is_not_finite_is_malformed(value):
    first = {"token": " A", "top_logprobs": [{"token": " A", "logprob": value}]}
    top = {"choices": [{"logprobs": {"content": [first]}}]}
    with pytest.raises(MalformedLogprobsError, match="'logprob' is not finite"):
        top_logprobs_of(top)
    prompt = {"prompt_logprobs": [None, {"7": {"decoded_token": " A", "logprob": value}}]}
    with pytest.raises(MalformedLogprobsError, match="'logprob' is not finite"):
        prompt_path_score(prompt, " A")


def test_finite_terms_summing_past_the_float_range_and_infinite_ranks_are_malformed():
    huge = [
        {"1": {"decoded_token": " ", "logprob": -1e308}},
        {"2": {"decoded_token": "A", "logprob": -1e308}},
    ]
    with pytest.raises(MalformedLogprobsError, match="sum is malformed.*not finite"):
        prompt_path_score({"prompt_logprobs": huge}, " A")
    ranks = {"7": {"decoded_token": " A", "logprob": -1.0, "rank": float("inf")},
             "8": {"decoded_token": " B", "logprob": -0.1, "rank": 1}}  # fmt: skip
    assert prompt_path_score({"prompt_logprobs": [ranks]}, " A") == (-1.0, False)


def test_scoring_refuses_a_log_likelihood_of_plus_infinity_as_it_refuses_nan():
    from lm_eval_rul.mcqa.scoring import choice_probabilities, perceptual_index

    for bad in (float("inf"), float("nan")):  # whatever model produced them
        with pytest.raises(ValueError, match="NaN or \\+inf"):
            perceptual_index([bad, -1.0, -2.0, -3.0], 0)
    assert choice_probabilities([0.0, float("-inf")]).tolist() == [1.0, 0.0]  # absent letter


@pytest.mark.parametrize(
    ("path", "rewrite"), [("prompt", "prompt_logprob_infinity"), ("top", "top_logprob_1e400")]
)
def test_an_infinite_logprob_stops_the_run_in_one_line_and_nothing_is_stored(
    tiny_audio_lm, audio_data, tmp_path, capsys, path, rewrite
):
    cache = tmp_path / "api.sqlite"
    with OpenAIAudioServer(tiny_audio_lm, served_model=MODEL) as server:
        server.script.append(rewrite)  # the first answer is the bad one
        args = f"base_url={server.url},model={MODEL},logprobs={path},results_cache={cache}"
        line = cli_error_line(
            [
                "run", "--model", "lalm-api", "--model_args", args,
                "--tasks", "rul_muchomusic_fold0", "--metadata", json.dumps(audio_data),
                "--limit", "2", "--output_path", tmp_path / "out",
            ],  # fmt: skip
            capsys,
        )
        assert server.posts == 1  # the first request goes alone; nothing after it
    assert "'logprob' is not finite" in line and "Nothing of this reply was stored" in line
    assert _values(cache) == []
    assert not list((tmp_path / "out").rglob("results_*.json"))


@pytest.mark.parametrize(
    ("path", "stored"), [("prompt", "[Infinity, true]"), ("top", '[[" A", 1e400]]')]
)
def test_a_cache_holding_a_non_finite_score_is_asked_again_not_replayed(
    tiny_audio_lm, audio_data, tmp_path, path, stored
):
    requests = _letter_requests(audio_data, n=1)
    cache = tmp_path / "api.sqlite"
    with OpenAIAudioServer(tiny_audio_lm, served_model=MODEL) as server:
        clean = _api(server, cache, logprobs=path).loglikelihood(requests, True)
        entries, asked = len(_values(cache)), server.posts
        assert entries == asked > 0
        with sqlite3.connect(str(cache)) as db:  # an older version stored what it was sent
            db.execute("UPDATE results SET value = ?", (stored,))
        rerun = _api(server, cache, logprobs=path)
        assert rerun.loglikelihood(requests, True) == clean  # recomputed, the same numbers
        assert server.posts == 2 * asked and rerun.get_model_info()["api_cache_hits"] == 0
        assert not [v for v in _values(cache) if "Infinity" in v or "1e400" in v]
        with pytest.raises(MalformedLogprobsError, match="not finite"):  # the put site refuses
            rerun._stored.store([(["prompt", "q", " A", "digest"], [float("inf"), True])])
    assert len(_values(cache)) == entries


@pytest.mark.parametrize("window", ["1e400", "Infinity", "NaN", "-5", '"long"'])
def test_a_bridge_window_that_is_not_a_finite_number_above_zero_is_not_taken(window):
    from doubles.scripted_http import Answer, ScriptedServer

    from lm_eval_rul.models.api_http import read_declaration

    record = f'{{"max_audio_seconds": {window}, "chunked": true, "has_loglikelihood": true}}'
    body = f'{{"data": [{{"id": "{MODEL}", "lm_eval_rul_bridge": {record}}}]}}'
    with ScriptedServer(lambda request: Answer(200, body.encode())) as server:
        declared = read_declaration(server.url, MODEL)
    assert declared is not None and declared.chunked and declared.max_audio_seconds is None


def _stored(cache) -> list[str]:
    import sqlite3

    if not cache.exists():
        return []
    with sqlite3.connect(str(cache)) as db:
        return [row[0] for row in db.execute("SELECT value FROM results")]


@pytest.mark.parametrize(
    ("path", "rewrite", "why"),
    [
        ("top", "top_duplicate_token", "above 1 (listed more than once: ' A'"),
        ("prompt", "prompt_logprob_positive", "'logprob' is above 0, a probability above 1"),
    ],
)
def test_a_log_probability_above_zero_is_a_bad_reply_never_scored_or_stored(
    tiny_audio_lm, audio_data, tmp_path, capsys, path, rewrite, why
):
    """The same letter listed twice in ``top_logprobs`` (-0.1 and -0.2) once scored
    log p = +0.544; a prompt log-probability above 0 was summed as it came."""
    from doubles.openai_server import OpenAIAudioServer

    from lm_eval_rul.testing.harness import cli_error_line

    cache = tmp_path / "api.sqlite"
    with OpenAIAudioServer(tiny_audio_lm, served_model="tiny-audio") as server:
        server.script.append(rewrite)
        line = cli_error_line(
            ["run", "--model", "lalm-api", "--model_args",
             f"base_url={server.url},model=tiny-audio,logprobs={path},results_cache={cache}",
             "--tasks", "rul_muchomusic_fold0", "--metadata", json.dumps(audio_data),
             "--limit", "2", "--output_path", tmp_path / "out"],  # fmt: skip
            capsys,
        )
    assert why in line and "Nothing of this reply was stored" in line
    assert _stored(cache) == [] and not list((tmp_path / "out").rglob("results_*.json"))


def test_scoring_refuses_a_log_likelihood_above_zero_from_any_path():
    from lm_eval_rul.mcqa.scoring import perceptual_index
    from lm_eval_rul.models.api_payload import MalformedLogprobsError, top_path_scores

    with pytest.raises(ValueError, match="a probability above 1"):
        perceptual_index([0.544, -1.0, -2.0, -3.0], 0)
    assert perceptual_index([5e-7, -1.0], 0) < 0.5  # float rounding at 0 is not refused
    with pytest.raises(MalformedLogprobsError, match="add up to 1.724"):  # a stored list
        top_path_scores([(" A", -0.1), ("A", -0.2)], [" A"])
    ((score, greedy),) = top_path_scores([(" A", -0.0001), ("A", -9.0)], [" A"])
    assert score == 0.0 and greedy  # within the rounding allowed, never above 0
