"""``lalm-api``'s sender: retries on 429/5xx only, one clear error otherwise, the key never shown.

Everything is counted by the loopback server (:mod:`doubles.openai_server`),
never by the client's own bookkeeping.
"""

from __future__ import annotations

import logging
import os
import socket

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

MODEL = "tiny-audio"
SECRET = "sk-test-SECRET-4f9d0c7e1a2b3c4d"


def _requests(metadata: dict[str, str], n: int = 3) -> list:
    from lm_eval.api.instance import Instance

    from lm_eval_rul.mcqa.tasks import doc_to_text_gen, load_rul_muchomusic

    docs = list(load_rul_muchomusic(0, **metadata)["test"])[:n]
    gen_kwargs = {"until": [], "max_gen_toks": 4}
    return [Instance("generate_until", d, (doc_to_text_gen(d), gen_kwargs), 0) for d in docs]


def _api(url: str, **kwargs):
    from lm_eval_rul.models.api import LALMAPI

    kwargs = {"results_cache": "none", "retry_backoff": 0, **kwargs}
    return LALMAPI(base_url=url, model=kwargs.pop("model", MODEL), **kwargs)


@pytest.fixture
def server(tiny_audio_lm):
    from doubles.openai_server import OpenAIAudioServer

    with OpenAIAudioServer(tiny_audio_lm, served_model=MODEL, api_key=SECRET) as running:
        yield running


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv("LALM_TEST_KEY", SECRET)
    return "LALM_TEST_KEY"


def test_429_then_200_is_retried_and_the_run_completes(server, audio_data, key):
    server.script.extend([429, 503])
    model = _api(server.url, api_key_env=key, max_retries=2)
    answers = model.generate_until(_requests(audio_data), disable_tqdm=True)
    assert server.statuses == [429, 503, 200, 200, 200]
    assert len(server.answered) == len(answers) == 3
    assert model.get_model_info()["api_retries"] == 2


@pytest.mark.parametrize("num_concurrent", [1, 4])
def test_401_stops_at_once_with_one_message(server, audio_data, monkeypatch, num_concurrent):
    from lm_eval_rul.models.api_http import APIAuthError

    monkeypatch.setenv("WRONG_KEY", "sk-wrong-key-0000000000")
    model = _api(server.url, api_key_env="WRONG_KEY", num_concurrent=num_concurrent)
    with pytest.raises(APIAuthError) as caught:
        model.generate_until(_requests(audio_data), disable_tqdm=True)
    assert server.posts == 1  # never retried, nothing else sent
    message = str(caught.value)
    assert "authentication failed" in message and "WRONG_KEY" in message
    assert "sk-wrong-key-0000000000" not in message  # the server echoed it; we redact


def test_gemini_bad_key_400_is_an_auth_error(server, audio_data, key):
    from lm_eval_rul.models.api_http import APIAuthError

    server.script.append("gemini_bad_key")
    with pytest.raises(APIAuthError, match="API key not valid"):
        _api(server.url, api_key_env=key).generate_until(_requests(audio_data), True)
    assert server.posts == 1


def test_unknown_model_is_404_at_once(server, audio_data, key):
    from lm_eval_rul.models.api_http import APIModelNotFoundError

    with pytest.raises(APIModelNotFoundError, match="model 'no-such-model'.*/v1/models"):
        _api(server.url, api_key_env=key, model="no-such-model").generate_until(
            _requests(audio_data), True
        )
    assert server.posts == 1


def test_5xx_for_ever_gives_up_after_the_retries(server, audio_data, key):
    from lm_eval_rul.models.api_http import APIUnavailableError

    server.fail_after = 0
    with pytest.raises(APIUnavailableError, match=r"HTTP 503.*after 2 retries"):
        _api(server.url, api_key_env=key, max_retries=2).generate_until(
            _requests(audio_data), True
        )
    assert server.posts == 3  # the first request alone: 1 + 2 retries


def test_unreachable_server_names_the_host(audio_data):
    from lm_eval_rul.models.api_http import APIUnavailableError

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    model = _api(f"http://127.0.0.1:{port}/v1", max_retries=3, retry_backoff=30)
    with pytest.raises(APIUnavailableError) as caught:
        model.generate_until(_requests(audio_data), True)
    message = str(caught.value)
    assert f"the server at http://127.0.0.1:{port}/v1/chat/completions is not reachable" in message
    assert "Start it" in message and "base_url=" in message
    # refused before any answer: no retry (a 30 s backoff would show), one attempt only
    assert model._client.retries == 0 and model._client.posts == 1


def test_concurrent_answers_come_back_in_request_order(tiny_audio_lm, audio_data, key):
    from doubles.openai_server import OpenAIAudioServer
    from lm_eval.api.instance import Instance

    gen = _requests(audio_data, n=8)
    letters = [Instance("loglikelihood", r.doc, (r.args[0], f" {x}"), 0) for r in gen for x in "AB"]
    with OpenAIAudioServer(tiny_audio_lm, served_model=MODEL, latency=0.02) as server:
        one = _api(server.url).loglikelihood(letters, disable_tqdm=True)
        four = _api(server.url, num_concurrent=4).loglikelihood(letters, disable_tqdm=True)
    assert one == four and len(set(one)) == len(letters)  # every letter its own number


def test_the_key_never_reaches_a_log_or_an_error(server, audio_data, key, caplog, capfd):
    """401 (the server echoes the key), 500s and successes, four requests in flight."""
    from lm_eval_rul.models.api_http import APIAuthError, APIUnavailableError

    caplog.set_level(logging.DEBUG)
    requests = _requests(audio_data, n=6)
    seen = []
    server.script.extend([500, 200, 500, 500, 200, 500])
    model = _api(server.url, api_key_env=key, num_concurrent=4, max_retries=3)
    model.generate_until(requests, disable_tqdm=False)
    assert 500 in server.statuses
    server.fail_after = 0
    with pytest.raises(APIUnavailableError) as unavailable:
        _api(server.url, api_key_env=key, max_retries=1).generate_until(requests, True)
    seen.append(str(unavailable.value))
    server.api_key = "sk-another-key-9999999999"  # now the client's key is the wrong one
    with pytest.raises(APIAuthError) as auth:
        _api(server.url, api_key_env=key, num_concurrent=4).generate_until(requests, True)
    seen.append(str(auth.value))
    assert "Incorrect API key provided: ***" in seen[-1]
    captured = capfd.readouterr()
    text = "\n".join([caplog.text, captured.out, captured.err, *seen, repr(model._client)])
    assert SECRET not in text and SECRET[:12] not in text
    info = repr(model.get_model_info())
    assert SECRET not in info and "LALM_TEST_KEY" not in info


def test_startup_log_names_the_results_cache_or_off(tmp_path, caplog):
    from lm_eval_rul.models.api import LALMAPI

    caplog.set_level(logging.INFO, logger="lm_eval_rul.models.api")
    base = {"base_url": "http://127.0.0.1:9/v1", "model": "m"}
    LALMAPI(**base, results_cache="none")
    LALMAPI(**base, results_cache=str(tmp_path / "answers.sqlite"))
    lines = [r.getMessage() for r in caplog.records if "lalm-api: model" in r.getMessage()]
    assert len(lines) == 2
    settings = [line.split("; generation:")[0] for line in lines]  # then its settings
    assert settings[0].endswith("results_cache=off") and "None" not in lines[0]
    assert settings[1].endswith(f"results_cache={tmp_path / 'answers.sqlite'}")
