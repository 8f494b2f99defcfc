"""One retry policy for every remote call an LLM behind a harness model answers.

The build's distractor generator, the ``diagnose`` judge and the factual LLM parser call
a harness model (``local-chat-completions``, ``hf``, ``vllm``...) item after item. They
share this policy, so a wrong key or URL fails the same way everywhere:

* a transient failure (timeout, refused connection, HTTP 408/429/5xx) is retried with
  exponential backoff (:func:`with_retries`);
* a server's ``Retry-After`` is honoured in both of its forms (RFC 9110: seconds, or an
  HTTP date), capped at :data:`MAX_RETRY_AFTER` (:func:`retry_after_seconds`);
* an error no retry can fix (HTTP 400/401/403/404/405/422, an invalid URL, a programming
  error such as ``TypeError``) is raised at once, with what to check
  (:func:`permanent_error`);
* when the first :data:`FAIL_FAST_ITEMS` items of a run all fail with the same error (a
  wrong URL or model name that answers like a flaky service), the run stops rather than
  sleeping through every item (:class:`SameErrorFromStart`).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from email.utils import parsedate_to_datetime
from typing import Any

__all__ = [
    "FAIL_FAST_ITEMS",
    "http_status",
    "permanent_error",
    "error_text",
    "with_retries",
    "MAX_RETRY_AFTER",
    "retry_after_seconds",
    "retry_after_of",
    "SameErrorFromStart",
]

logger = logging.getLogger(__name__)

#: A run stops when its first this-many items all fail with the same error.
FAIL_FAST_ITEMS = 3

#: Longest wait a ``Retry-After`` may ask for (an hour's date would stall a run silently).
MAX_RETRY_AFTER = 60.0

#: Exceptions that are bugs or a wrong model class, never a flaky service.
_PROGRAMMING_ERRORS: tuple[type[BaseException], ...] = (
    TypeError,
    AttributeError,
    NameError,
    ImportError,
    NotImplementedError,
    AssertionError,
    LookupError,
)
#: HTTP statuses no retry can fix, and what to check (``{args}``: the option holding the
#: model's arguments, e.g. ``--generator_args``).
_PERMANENT_STATUS: dict[int, str] = {
    400: "the request was refused as malformed: check {args} (model name, parameters the "
    "server does not take)",
    401: "authentication failed: check the API key (the model's api key argument or "
    "environment variable, e.g. OPENAI_API_KEY) and base_url in {args}",
    403: "access was denied: check the API key's permissions and base_url in {args}",
    404: "not found: check base_url in {args} (the full endpoint, e.g. "
    "http://HOST/v1/chat/completions) and the model name",
    405: "method not allowed: base_url in {args} is not a completions endpoint",
    422: "the request was refused: check the model name and {args}",
}
_INVALID_URL = {"InvalidURL", "MissingSchema", "InvalidSchema", "URLRequired"}


def http_status(error: BaseException) -> int | None:
    """The HTTP status of an error from ``requests``, ``httpx``/``openai`` or ``aiohttp``.

    >>> class Refused(Exception):
    ...     status = 503
    >>> http_status(Refused()), http_status(TimeoutError())
    (503, None)
    """
    for source in (error, getattr(error, "response", None)):
        for attr in ("status_code", "status"):
            value = getattr(source, attr, None)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
    return None


def permanent_error(
    error: BaseException, *, args_option: str = "the model arguments"
) -> str | None:
    """Why no retry can fix ``error`` (authentication, not found, a bug), or None.

    Transient failures (timeouts, refused connections, HTTP 408/429/5xx) return None and
    are retried.

    Args:
        error: The exception a call raised.
        args_option: Where the user gives the model's arguments, named in the advice
            (``--generator_args``, ``--judge_args``, ``--parser_args``).

    >>> permanent_error(TypeError("unexpected keyword"), args_option="--judge_args")
    'a programming error (TypeError), not a flaky service: fix the call or the model (--judge_args)'
    >>> permanent_error(ConnectionError("refused")) is None
    True
    """
    status = http_status(error)
    if status in _PERMANENT_STATUS:
        return f"HTTP {status}, {_PERMANENT_STATUS[status].format(args=args_option)}"
    if any(kind.__name__ in _INVALID_URL for kind in type(error).__mro__):
        return f"the URL is invalid: check base_url in {args_option}"
    if isinstance(error, _PROGRAMMING_ERRORS):
        name = type(error).__name__
        return (
            f"a programming error ({name}), not a flaky service: fix the call or the model "
            f"({args_option})"
        )
    return None


def error_text(error: BaseException) -> str:
    """``"Type: message"``, cut to 500 characters (what records and messages show).

    >>> error_text(ConnectionError("refused"))
    'ConnectionError: refused'
    """
    return f"{type(error).__name__}: {error}"[:500]


def retry_after_seconds(
    value: str | None, *, now: float | None = None, cap: float = MAX_RETRY_AFTER
) -> float | None:
    """The wait a ``Retry-After`` header asks for, in seconds from ``now`` (default: the
    clock), between 0 and ``cap``; ``None`` when absent or neither form (seconds, or an
    HTTP date, RFC 9110 section 10.2.3), or not finite.

    >>> retry_after_seconds("2"), retry_after_seconds("-3"), retry_after_seconds("1e400")
    (2.0, 0.0, None)
    >>> sent = "Wed, 21 Oct 2015 07:28:00 GMT"
    >>> retry_after_seconds(sent, now=1445412475.0), retry_after_seconds(sent, now=1445412000.0)
    (5.0, 60.0)
    >>> retry_after_seconds("soon"), retry_after_seconds(None)
    (None, None)
    """
    if value is None:
        return None
    text = str(value).strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            moment = parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        if moment.tzinfo is None:  # an HTTP date is always GMT
            return None
        seconds = moment.timestamp() - (time.time() if now is None else now)
    if not math.isfinite(seconds):
        return None
    return min(max(0.0, seconds), cap)


def retry_after_of(error: BaseException) -> float | None:
    """The ``Retry-After`` of the HTTP answer behind ``error`` (``requests``, ``httpx`` /
    ``openai``, ``aiohttp``), read by :func:`retry_after_seconds`; None without one."""
    for source in (error, getattr(error, "response", None)):
        headers = getattr(source, "headers", None)
        if headers is not None and hasattr(headers, "get"):
            return retry_after_seconds(headers.get("Retry-After"))
    return None


def with_retries(
    fn: Callable[[], Any],
    *,
    retries: int,
    backoff: float,
    what: str,
    sleep: Callable[[float], None] = time.sleep,
) -> Any:
    """Call ``fn``; on an exception wait ``backoff * 2**k`` seconds (or what the server's
    ``Retry-After`` asks, :func:`retry_after_of`) and retry, ``retries`` times.

    An error no retry can fix (:func:`permanent_error`) is raised at once.

    Args:
        fn: The call, without arguments.
        retries: Retries after the first attempt.
        backoff: First wait in seconds (doubling).
        what: Names the call in the warnings.
        sleep: Called with each wait (tests pass a recorder).

    Raises:
        The last exception, when every attempt failed or the error is permanent.
    """
    for attempt in range(retries + 1):
        try:
            return fn()
        except Exception as err:  # noqa: BLE001 - any failure of a remote call may be transient
            if attempt == retries or permanent_error(err) is not None:
                raise
            after = retry_after_of(err)
            delay = backoff * 2**attempt if after is None else after
            logger.warning(
                "%s failed (%r); retry %d/%d in %.1fs", what, err, attempt + 1, retries, delay
            )
            sleep(delay)
    raise AssertionError("unreachable")


class SameErrorFromStart:
    """Tells when the first ``n`` items of a run all failed with the same error.

    Call :meth:`failed` after an item's call failed for good (its retries spent) and
    :meth:`succeeded` after one worked; once an item has worked, nothing more is tracked.

    Args:
        n: Items that must fail alike before the run stops.

    >>> start = SameErrorFromStart(2)
    >>> start.failed(ConnectionError("refused")), start.failed(ConnectionError("refused"))
    (False, True)
    """

    def __init__(self, n: int = FAIL_FAST_ITEMS) -> None:
        self.n = n
        self.errors: list[str] | None = []

    def failed(self, error: BaseException) -> bool:
        """Record a failed item; True when the run's first ``n`` items failed alike."""
        if self.errors is None:
            return False
        self.errors.append(error_text(error))
        return len(self.errors) >= self.n and len(set(self.errors)) == 1

    def succeeded(self) -> None:
        """An item worked: the service is reachable, later failures are the items' own."""
        self.errors = None
