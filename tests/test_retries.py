"""The shared retry policy of remote LLM calls (build generator, diagnose judge, LLM parser)."""

from __future__ import annotations

import pytest

from lm_eval_rul.retries import (
    SameErrorFromStart,
    http_status,
    permanent_error,
    with_retries,
)


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
