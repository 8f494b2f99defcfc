"""``lalm-api`` never takes a bad reply for an answer (issue 23, defects 2-4).

* A 200 whose body is not a chat completion (a gateway's ``{"error": ...}``) is a failed
  request: retried, then the run stops in one line with the server's own message,
  nothing stored, nothing scored.
* ``logprobs=auto`` stores the letter path only after a request on it succeeded, and
  says where the path came from on every run.
* Malformed log-probabilities end in the one-line error, not ``KeyError``/``TypeError``.

All against the loopback server running the tiny audio LM (:mod:`lm_eval_rul.testing`).
"""

from __future__ import annotations

import json
import logging
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


def _rows(path) -> int:
    if not path.exists():
        return 0
    with sqlite3.connect(str(path)) as db:
        return db.execute("SELECT COUNT(*) FROM results").fetchone()[0]


def test_a_200_that_is_not_a_completion_fails_the_run_in_one_line_and_stores_nothing(
    tiny_audio_lm, audio_data, tmp_path, capsys
):
    cache, out = tmp_path / "api.sqlite", tmp_path / "out"
    with OpenAIAudioServer(tiny_audio_lm, served_model=MODEL) as server:
        server.script.extend(["not_completion"] * 3)  # the first request and its 2 retries
        args = (
            f"base_url={server.url},model={MODEL},max_retries=2,retry_backoff=0,"
            f"results_cache={cache}"
        )
        line = cli_error_line(
            [
                "run", "--model", "lalm-api", "--model_args", args,
                "--tasks", "rul_muchomusic_gen_fold0", "--metadata", json.dumps(audio_data),
                "--gen_kwargs", "max_gen_toks=4", "--output_path", out, "--log_samples",
            ],  # fmt: skip
            capsys,
        )
        assert server.posts == 3 and server.statuses == [200, 200, 200]
    assert "upstream request timed out" in line and "not a chat completion" in line
    assert _rows(cache) == 0  # nothing stored ...
    assert not list(out.rglob("results_*.json"))  # ... nothing scored


def _letter_requests(metadata: dict[str, str], n: int = 3) -> list:
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
    "first_replies",
    [
        ["not_completion"] * 2,  # the probe's replies (1 retry) are a gateway's error
        ["no_prompt_logprobs", 500, 500],  # the probe says "top", then the top request fails
    ],
)
def test_a_bad_first_reply_does_not_pin_the_approximate_path(
    tiny_audio_lm, audio_data, tmp_path, caplog, monkeypatch, first_replies
):
    from lm_eval_rul.models.api_http import APIError

    monkeypatch.setattr(logging.getLogger("lm_eval_rul"), "propagate", True)
    caplog.set_level(logging.INFO, logger="lm_eval_rul")
    requests = _letter_requests(audio_data, n=2)
    with OpenAIAudioServer(tiny_audio_lm, served_model=MODEL) as server:
        clean = _api(server, tmp_path / "clean.sqlite").loglikelihood(requests, True)
        cache = tmp_path / "api.sqlite"
        server.script.extend(first_replies)
        with pytest.raises(APIError):
            _api(server, cache, max_retries=1).loglikelihood(requests, True)
        caplog.clear()
        healthy = _api(server, cache)
        again = healthy.loglikelihood(requests, True)
        assert "letters are scored on the prompt path (exact): probed" in caplog.text
        caplog.clear()
        third = _api(server, cache)
        assert third.loglikelihood(requests, True) == again
        assert f"prompt path (exact): from the resume cache {cache}" in caplog.text
    assert healthy.get_model_info()["api_logprob_path"] == "prompt"
    assert again == clean  # the exact path's numbers, hence the same PI as a clean run


def test_the_top_path_is_stored_once_a_top_answer_arrived(tiny_audio_lm, audio_data, tmp_path):
    requests = _letter_requests(audio_data, n=1)
    cache = tmp_path / "api.sqlite"
    with OpenAIAudioServer(tiny_audio_lm, served_model=MODEL, logprobs="top") as server:
        first = _api(server, cache).loglikelihood(requests, True)
        posts = server.posts  # the refused probe, then the question on the top path
        assert _api(server, cache).loglikelihood(requests, True) == first
        assert server.posts == posts == 2  # the second run probes nothing and asks nothing


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ({"token": " A"}, "no 'logprob'"),
        ({"token": " A", "logprob": None}, "'logprob' is not a number"),
        ({"logprob": -0.5}, "no 'token' text"),
        ({"token": " A", "logprob": "-0.5"}, "'logprob' is not a number"),
    ],
)
def test_malformed_top_logprobs_are_one_line_errors(body, why):
    reply = {"choices": [{"logprobs": {"content": [{"token": " A", "top_logprobs": [body]}]}}]}
    with pytest.raises(MalformedLogprobsError, match=why) as error:
        top_logprobs_of(reply)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize(
    "entry",
    [
        {"7": {"decoded_token": " A", "rank": 1}},
        {"7": {"decoded_token": " A", "logprob": None}},
        {"7": " A"},
        {"7": {"decoded_token": " A", "logprob": -1.0, "rank": 1}, "8": {"rank": 1}},
    ],
)
def test_malformed_prompt_logprobs_are_one_line_errors(entry):
    with pytest.raises(MalformedLogprobsError) as error:
        prompt_path_score({"prompt_logprobs": [None, entry]}, " A")
    assert "\n" not in str(error.value) and "malformed" in str(error.value)


@pytest.mark.parametrize(
    "rewrite", ["top_without_logprob", "top_logprob_null", "top_without_token"]
)
def test_a_server_with_malformed_logprobs_stops_the_run_in_one_line(
    tiny_audio_lm, audio_data, tmp_path, capsys, rewrite
):
    cache = tmp_path / "api.sqlite"
    with OpenAIAudioServer(tiny_audio_lm, served_model=MODEL) as server:
        server.script.append(rewrite)
        args = f"base_url={server.url},model={MODEL},logprobs=top,results_cache={cache}"
        line = cli_error_line(
            [
                "run", "--model", "lalm-api", "--model_args", args,
                "--tasks", "rul_muchomusic_fold0", "--metadata", json.dumps(audio_data),
                "--limit", "2", "--output_path", tmp_path / "out",
            ],  # fmt: skip
            capsys,
        )
        assert server.posts == 1  # the first request goes alone; nothing after it
    assert "top_logprobs entry is malformed" in line
    assert _rows(cache) == 0


def _stored(cache) -> list[str]:
    import sqlite3

    if not cache.exists():
        return []
    with sqlite3.connect(str(cache)) as db:
        return [row[0] for row in db.execute("SELECT value FROM results")]


def test_a_chat_reply_with_a_lone_surrogate_is_stored_safely_and_scored(
    tiny_audio_lm, audio_data, tmp_path
):
    """``"\\ud83d"`` (half an emoji) in a reply's content: ``UnicodeEncodeError`` from the
    resume-cache write. Read as U+FFFD, the answer is parsed, stored and written."""
    from doubles.openai_server import OpenAIAudioServer

    from lm_eval_rul.cli import main

    cache = tmp_path / "api.sqlite"
    with OpenAIAudioServer(tiny_audio_lm, served_model="tiny-audio") as server:
        server.script.extend(["content_lone_surrogate"] * 8)
        main(["run", "--model", "lalm-api", "--model_args",
              f"base_url={server.url},model=tiny-audio,results_cache={cache}",
              "--tasks", "rul_muchomusic_gen_fold0", "--metadata", json.dumps(audio_data),
              "--limit", "2", "--output_path", str(tmp_path / "out"), "--log_samples"])  # fmt: skip
    (results,) = (tmp_path / "out").rglob("results_*.json")
    assert json.loads(results.read_text())["results"]["rul_muchomusic_gen_fold0"]
    stored = [json.loads(v)["content"] for v in _stored(cache)]
    assert stored == ["The answer is [[A]] \ufffd"] * 2
    (samples,) = (tmp_path / "out").rglob("samples_*.jsonl")
    rows = [json.loads(line) for line in samples.read_text().splitlines()]
    assert [row["resps"][0][0] for row in rows] == ["The answer is [[A]] \ufffd"] * 2
