"""``lalm-api``'s one HTTP policy (:mod:`lm_eval_rul.models.api_http`), for the chat requests
and the start-up ``GET /models`` alike (issue 29, points 5, 7, 8 and the key of 11):

* no key on a redirect to another origin;
* ``timeout=`` is a total deadline: a server dripping bytes cannot hold a run; ``timeout=0``
  or a negative one is refused in one line before any request;
* a 200 whose body is not UTF-8 is a bad reply: retried, then one line;
* a key holding a newline is refused in one line, before any request, never printed.

Against :class:`~doubles.scripted_http.ScriptedServer` (loopback, no model).
"""

from __future__ import annotations

import json
import time

import pytest
from doubles.scripted_http import COMPLETION, Answer, ScriptedServer, redirect

from lm_eval_rul.testing.harness import cli_error_line

MODEL = "tiny-audio"
KEY = "sk-test-REDIRECT-0123456789abcdef"


def _requests(metadata: dict[str, str], n: int = 1) -> list:
    from lm_eval.api.instance import Instance

    from lm_eval_rul.mcqa.tasks import doc_to_text_gen, load_rul_muchomusic

    docs = list(load_rul_muchomusic(0, **metadata)["test"])[:n]
    gen_kwargs = {"until": [], "max_gen_toks": 4}
    return [Instance("generate_until", d, (doc_to_text_gen(d), gen_kwargs), 0) for d in docs]


def _api(url: str, **kwargs):
    from lm_eval_rul.models.api import LALMAPI

    settings = {"results_cache": "none", "retry_backoff": 0, **kwargs}
    return LALMAPI(base_url=url, model=MODEL, **settings)


def _run_args(url: str, audio_data: dict[str, str], tmp_path, extra: str = "") -> list:
    return [
        "run", "--model", "lalm-api", "--model_args",
        f"base_url={url},model={MODEL},results_cache=none,retry_backoff=0{extra}",
        "--tasks", "rul_muchomusic_gen_fold0", "--metadata", json.dumps(audio_data),
        "--limit", "1", "--gen_kwargs", "max_gen_toks=2", "--output_path", tmp_path / "out",
    ]  # fmt: skip


@pytest.mark.parametrize("where", ["environment", "url"])
def test_a_redirect_to_another_origin_gets_no_key(audio_data, monkeypatch, where):
    monkeypatch.setenv("LALM_REDIRECT_KEY", KEY)
    with ScriptedServer() as other, ScriptedServer(
        lambda request: redirect(other.origin + request.path)
    ) as first:
        if where == "environment":  # Authorization: Bearer KEY
            model = _api(first.url, api_key_env="LALM_REDIRECT_KEY")
        else:  # the key as the URL's user part: Authorization: Basic ...
            model = _api(first.url.replace("://", f"://{KEY}@"), api_key_env="LALM_UNSET_KEY")
        assert model.generate_until(_requests(audio_data), disable_tqdm=True) == ["A"]
    # the start-up model list and the chat request went to base_url's origin with the
    # key, were redirected, and reached the other origin without it
    sent = [(r.method, r.path) for r in first.requests]
    assert sent == [("GET", "/v1/models"), ("POST", "/v1/chat/completions")]
    assert all("Authorization" in r.headers for r in first.requests)
    assert [(r.method, r.path) for r in other.requests] == sent
    assert not [r for r in other.requests if "Authorization" in r.headers or KEY in str(r.headers)]


def test_a_dripping_server_cannot_hold_a_run_past_its_timeout(audio_data):
    from lm_eval_rul.models.api_http import APIUnavailableError

    # a whole body, one byte every 0.2 s: ~10 s per request under a per-read timeout
    def dripping(request) -> Answer:
        return Answer(200, COMPLETION, drip=10 / len(COMPLETION))

    with ScriptedServer(dripping) as server:
        started = time.monotonic()
        with pytest.raises(APIUnavailableError, match="TimeoutError"):
            _api(server.url, timeout=1, max_retries=0).generate_until(
                _requests(audio_data), disable_tqdm=True
            )
        elapsed = time.monotonic() - started
        methods = [r.method for r in server.requests]
    assert methods == ["GET", "POST"]  # the start-up model list, then the one attempt
    assert elapsed < 5, f"{elapsed:.1f} s: the deadline of 1 s per request did not hold"


@pytest.mark.parametrize("timeout", ["0", "-5", "nan"])
def test_a_timeout_not_above_zero_is_one_line_before_any_request(
    audio_data, tmp_path, capsys, timeout
):
    with ScriptedServer() as server:
        line = cli_error_line(
            _run_args(server.url, audio_data, tmp_path, f",timeout={timeout}"), capsys
        )
        assert server.requests == []
    assert f"timeout={float(timeout)!r} must be a number of seconds above 0" in line


@pytest.mark.parametrize("backoff", ["nan", "inf", "-1"])
def test_a_retry_backoff_that_is_not_a_finite_number_of_seconds_is_refused(backoff):
    from lm_eval_rul.models.api import check_model_args
    from lm_eval_rul.models.args import LALMArgumentError

    args = {"base_url": "http://127.0.0.1:9/v1", "model": MODEL, "retry_backoff": backoff}
    with pytest.raises(LALMArgumentError, match="retry_backoff=.* must be a number of seconds"):
        check_model_args(args)
    assert check_model_args({**args, "retry_backoff": "0"})["retry_backoff"] == 0


def test_a_200_that_is_not_utf8_is_retried_then_one_line(audio_data, tmp_path, capsys):
    latin1 = Answer(200, COMPLETION.replace(b'"A"', b'"\xe9"'))  # "é" in Latin-1
    script = [latin1, Answer(200, COMPLETION)]  # the first run: a bad reply, then a good one

    def answer(request) -> Answer:
        if request.method == "GET":
            return Answer(200, b'{"data": []}')
        return script.pop(0) if script else latin1

    with ScriptedServer(answer) as server:
        model = _api(server.url, max_retries=1)
        assert model.generate_until(_requests(audio_data), disable_tqdm=True) == ["A"]
        assert model.get_model_info()["api_retries"] == 1  # the bad reply was retried
        line = cli_error_line(_run_args(server.url, audio_data, tmp_path, ",max_retries=2"), capsys)
        posts = [r for r in server.requests if r.method == "POST"]
    assert len(posts) == 2 + 3  # the first run's two, then one attempt and two retries
    assert "HTTP 200 with a body that is not UTF-8 (byte 0xe9 at offset" in line
    assert "after 2 retries" in line


@pytest.mark.parametrize("key", [f"{KEY}\n", f"{KEY[:12]}\r\n{KEY[12:]}", f"{KEY} "])
def test_a_key_no_header_can_carry_is_one_line_and_never_shown(
    audio_data, tmp_path, capsys, monkeypatch, key
):
    monkeypatch.setenv("LALM_NEWLINE_KEY", key)
    with ScriptedServer() as server:
        line = cli_error_line(
            _run_args(server.url, audio_data, tmp_path, ",api_key_env=LALM_NEWLINE_KEY"), capsys
        )
        assert server.requests == []  # nothing sent, not even the model list
    assert "the API key in $LALM_NEWLINE_KEY holds a" in line and "nothing was sent" in line
    assert KEY[:12] not in line and KEY[12:] not in line


def test_credentials_in_both_base_url_and_the_key_variable_are_one_line(monkeypatch):
    from lm_eval_rul.models.api import check_model_args
    from lm_eval_rul.models.args import LALMArgumentError

    monkeypatch.setenv("LALM_BOTH_KEY", KEY)
    url = f"http://{KEY[:10]}@127.0.0.1:9/v1"
    args = {"base_url": url, "model": MODEL, "api_key_env": "LALM_BOTH_KEY"}
    with pytest.raises(LALMArgumentError, match="carries one Authorization only") as caught:
        check_model_args(args)  # aiohttp would raise a ValueError at the first request
    assert KEY[:10] not in str(caught.value)
    monkeypatch.delenv("LALM_BOTH_KEY")
    assert check_model_args(args)["base_url"] == url
