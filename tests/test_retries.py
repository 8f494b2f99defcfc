"""The shared retry policy of remote LLM calls (build generator, diagnose judge, LLM parser)."""

from __future__ import annotations

import os

import pytest

from lm_eval_rul.retries import (
    SameErrorFromStart,
    http_status,
    permanent_error,
    with_retries,
)

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _http_error(status: int):
    import requests

    response = requests.Response()
    response.status_code = status
    return requests.HTTPError(f"{status} Client Error", response=response)


class _AiohttpLike(Exception):
    def __init__(self, status: int):
        super().__init__("response error")
        self.status = status


def test_http_status_reads_every_client_library_shape():
    assert http_status(_http_error(404)) == 404  # requests: error.response.status_code
    assert http_status(_AiohttpLike(429)) == 429  # aiohttp: error.status
    assert http_status(ConnectionError("refused")) is None


@pytest.mark.parametrize("status", [400, 401, 403, 404, 405, 422])
def test_statuses_no_retry_can_fix_name_the_option_to_check(status):
    reason = permanent_error(_http_error(status), args_option="--parser_args")
    assert reason.startswith(f"HTTP {status}, ") and "--parser_args" in reason


@pytest.mark.parametrize("status", [408, 429, 500, 502, 503])
def test_transient_statuses_are_retried(status):
    waits: list[float] = []
    calls = []

    def call():
        calls.append(1)
        raise _http_error(status)

    with pytest.raises(Exception, match=str(status)):
        with_retries(call, retries=2, backoff=0.5, what="x", sleep=waits.append)
    assert len(calls) == 3 and waits == [0.5, 1.0]


def test_a_permanent_error_is_raised_without_retrying():
    waits: list[float] = []
    calls = []

    def call():
        calls.append(1)
        raise _AiohttpLike(401)

    with pytest.raises(_AiohttpLike):
        with_retries(call, retries=5, backoff=1.0, what="x", sleep=waits.append)
    assert len(calls) == 1 and waits == []


def test_same_error_from_start_stops_only_before_any_success():
    start = SameErrorFromStart(3)
    assert [start.failed(ConnectionError("down")) for _ in range(3)] == [False, False, True]
    mixed = SameErrorFromStart(3)
    assert not any(mixed.failed(ConnectionError(str(i))) for i in range(3))  # differ
    later = SameErrorFromStart(2)
    later.succeeded()  # the service worked once: later failures are the items' own
    assert not any(later.failed(ConnectionError("down")) for _ in range(5))


def test_a_retry_after_http_date_is_honoured_with_a_cap(audio_data):
    """RFC 9110 allows ``Retry-After: <HTTP date>``: it was ignored, every retry spent
    within half a second, then "kept failing"."""
    import time
    from email.utils import formatdate

    from doubles.scripted_http import COMPLETION, Answer, ScriptedServer
    from lm_eval.api.instance import Instance

    from lm_eval_rul.mcqa.tasks import doc_to_text_gen, load_rul_muchomusic
    from lm_eval_rul.models.api import LALMAPI

    posted: list[float] = []
    limited = b'{"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}}'

    def answer(request) -> Answer:
        if request.method == "GET":
            return Answer(200, b'{"data": []}')
        posted.append(time.monotonic())
        if len(posted) > 1:
            return Answer(200, COMPLETION)
        return Answer(429, limited, {"Retry-After": formatdate(time.time() + 3, usegmt=True)})

    doc = next(iter(load_rul_muchomusic(0, **audio_data)["test"]))
    request = Instance("generate_until", doc, (doc_to_text_gen(doc), {"until": []}), 0)
    with ScriptedServer(answer) as server:
        model = LALMAPI(base_url=server.url, model="tiny-audio", results_cache="none",
                        retry_backoff=0, max_retries=1)  # fmt: skip
        assert model.generate_until([request], disable_tqdm=True) == ["A"]
    assert len(posted) == 2 and 1.5 < posted[1] - posted[0] < 10


def test_retry_after_reads_seconds_and_dates_capped_in_every_retry_policy():
    from email.utils import formatdate

    from lm_eval_rul.retries import MAX_RETRY_AFTER, retry_after_seconds, with_retries

    assert retry_after_seconds(formatdate(1000.0 + 7, usegmt=True), now=1000.0) == 7.0
    assert retry_after_seconds(formatdate(1000.0 + 86400, usegmt=True), now=1000.0) == 60.0
    assert retry_after_seconds(formatdate(1000.0 - 30, usegmt=True), now=1000.0) == 0.0
    assert retry_after_seconds("Someday, 99 Foo 2015") is None

    class RateLimited(Exception):  # as requests / httpx raise it: the answer attached
        class response:  # noqa: N801
            status_code = 429
            headers = {"Retry-After": formatdate(__import__("time").time() + 3600, usegmt=True)}

    waits: list[float] = []
    calls = iter([RateLimited(), "ok"])

    def call():
        outcome = next(calls)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    assert with_retries(call, retries=1, backoff=0.01, what="judge", sleep=waits.append) == "ok"
    assert waits == [MAX_RETRY_AFTER]  # the hour asked for, capped
