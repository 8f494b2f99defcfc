"""``lalm-api``'s transport: one HTTP policy, the sender with its retries, what a reply is.

Credentials go to the origin of ``base_url`` only and are never echoed or logged; every
number read from a reply goes through :func:`finite_number` (``json`` reads ``NaN`` and
``1e400``), so nothing :func:`non_finite_in` flags reaches the resume cache. Which answers are
retried and which stop at once: ``docs/guarantees.md`` ("Retries").
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import math
import os
import re
import signal
import ssl
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from tqdm import tqdm

from ..errors import UserInputError
from ..masking import mask, mask_reply, mask_url, url_has_credentials, url_secrets
from ..retries import retry_after_seconds
from .args import LALMArgumentError

logger = logging.getLogger(__name__)


#: How far above 0 a log-probability may come from rounding (a server's float32 softmax)
#: before it is a probability above 1; the bridge (``lm_eval_rul/bridge/server.py``) allows
#: the same.
LOGPROB_SLACK = 1e-6


def finite_number(value: Any) -> float | None:
    """``value`` as a float when it is a finite number, else ``None``.

    Booleans are not numbers here (``True`` would read as 1), nor are strings (a JSON
    number is never quoted); an integer too large for a float is not finite.

    >>> finite_number(-0.25), finite_number(3)
    (-0.25, 3.0)
    >>> [finite_number(v) for v in (float("inf"), float("nan"), 10**400, True, "-1.0", None)]
    [None, None, None, None, None, None]
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:  # an int beyond the float range
        return None
    return number if math.isfinite(number) else None


def log_probability(value: Any) -> float | None:
    """``value`` as a log-probability: a finite number at most 0 (rounding up to
    :data:`LOGPROB_SLACK` above 0 reads as 0), else ``None`` (a probability above 1 is no
    probability).

    >>> log_probability(-0.5), log_probability(5e-7), log_probability(0.544), log_probability("-1")
    (-0.5, 0.0, None, None)
    """
    number = finite_number(value)
    if number is None or number > LOGPROB_SLACK:
        return None
    return min(number, 0.0)


def non_finite_in(value: Any) -> bool:
    """Whether ``value`` (a JSON-like tree of lists, dicts, numbers, strings) holds a
    number that is not finite.

    >>> non_finite_in([float("inf"), True]), non_finite_in({"a": [[" A", -0.5]]})
    (True, False)
    """
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, Mapping):
        return any(non_finite_in(item) for item in value.values())
    if isinstance(value, (list, tuple)):
        return any(non_finite_in(item) for item in value)
    return False


class APIError(UserInputError):
    """A request of ``lalm-api`` failed for good (the message says why and what to do)."""


class APIAuthError(APIError):
    """The endpoint refused the credentials (HTTP 401/403, or an invalid-key body)."""


class APIModelNotFoundError(APIError):
    """The endpoint does not serve the model (HTTP 404)."""


class APIRequestError(APIError):
    """The endpoint rejected a request (a 4xx other than 401/403/404, or no quota left).

    Attributes:
        status: The HTTP status.
        server_message: The server's error message (the key redacted).
    """

    def __init__(self, message: str, *, status: int, server_message: str) -> None:
        super().__init__(message)
        self.status = status
        self.server_message = server_message


class APIUnavailableError(APIError):
    """The endpoint kept failing (429/5xx, connection errors) after every retry."""


def chat_url(base_url: str) -> str:
    """The chat-completions URL of ``base_url`` (``.../v1`` or the full endpoint URL)."""
    url = base_url.rstrip("/")
    return url if url.endswith("/chat/completions") else f"{url}/chat/completions"


def is_chat_completion(body: Any) -> bool:
    """Whether a 2xx body is a chat completion: ``choices[0].message`` is an object.

    A gateway may answer 200 with its own error (``{"error": {"message": "upstream
    request timed out", "code": 504}}``); such a body is a failed request, never an answer.

    >>> is_chat_completion({"choices": [{"message": {"content": "A"}}]})
    True
    >>> is_chat_completion({"error": {"message": "upstream request timed out", "code": 504}})
    False
    """
    choices = body.get("choices") if isinstance(body, dict) else None
    return (
        isinstance(choices, list)
        and bool(choices)
        and isinstance(choices[0], dict)
        and isinstance(choices[0].get("message"), dict)
    )


def server_message(text: str) -> str:
    """The error message of an error body (OpenAI, vLLM, Gemini list bodies, plain text)."""
    try:
        body: Any = json.loads(text)
    except ValueError:
        return " ".join(text.split())
    if isinstance(body, list) and body:
        body = body[0]
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            return str(error.get("message") or error.get("status") or error)
        return str(body.get("message") or error)
    return str(body)


#: A UTF-16 surrogate on its own (``json`` pairs the halves of a character it can pair).
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")

#: Seconds a request may take, answer included, when ``timeout=`` is not given.
DEFAULT_TIMEOUT = 300.0


class NotUTF8Error(ValueError):
    """A reply body that is not UTF-8 (the message names the byte and its offset)."""


@dataclass(frozen=True)
class HTTPSettings:
    """What every request of one ``lalm-api`` model shares (from its ``--model_args``)."""

    timeout: float = DEFAULT_TIMEOUT
    api_key_env: str = "OPENAI_API_KEY"
    verify_certificate: bool = True
    ca_cert_path: str | None = None

    @classmethod
    def of(cls, model_args: dict[str, Any]) -> HTTPSettings:
        """The settings of checked ``model_args`` (defaults for those not given)."""
        names = ("timeout", "api_key_env", "verify_certificate", "ca_cert_path")
        given = {name: model_args[name] for name in names if model_args.get(name) is not None}
        return cls(**given)


def check_timeout(value: Any) -> float:
    """``timeout=`` in seconds: a finite number above 0, else a one-line error.

    >>> check_timeout(5)
    5.0
    >>> for bad in (0, -5, float("inf"), "soon"):
    ...     try:
    ...         check_timeout(bad)
    ...     except LALMArgumentError as error:
    ...         print(str(error)[:44])
    lalm-api: timeout=0 must be a number of seco
    lalm-api: timeout=-5 must be a number of sec
    lalm-api: timeout=inf must be a number of se
    lalm-api: timeout='soon' must be a number of
    """
    seconds = finite_number(value)
    if seconds is None or seconds <= 0:
        raise LALMArgumentError(
            f"lalm-api: timeout={value!r} must be a number of seconds above 0 (each "
            "request's whole deadline, answer included), e.g. timeout=300."
        )
    return seconds


def check_api_key(api_key_env: str) -> str:
    """The key in ``$api_key_env`` (``""`` when unset), refused in one line when it holds
    a character an HTTP header cannot carry (a newline, a space, a control or non-ASCII
    character). The message names the variable and the position, never the value."""
    key = os.environ.get(api_key_env, "")
    bad = next((i for i, char in enumerate(key) if not "!" <= char <= "~"), None)
    if bad is not None:
        raise LALMArgumentError(
            f"lalm-api: the API key in ${api_key_env} holds {_named(key[bad])} at character "
            f"{bad + 1} of {len(key)}; a key is one line of visible characters. Export it "
            f"again without it (e.g. export {api_key_env}=\"$(tr -d '\\r\\n' < KEYFILE)\"); "
            "nothing was sent."
        )
    return key


def check_http_args(args: dict[str, Any]) -> None:
    """The HTTP settings of ``lalm-api``'s converted ``--model_args``, checked before any
    request (``args`` is updated in place with the converted values).

    Raises:
        LALMArgumentError: ``timeout`` not above 0 (:func:`check_timeout`), a
            ``retry_backoff`` negative or not finite (a NaN wait never ends), a key no
            header can carry (:func:`check_api_key`), or credentials both in ``base_url``
            and in ``$api_key_env`` (one request cannot carry both).
    """
    if "timeout" in args:
        args["timeout"] = check_timeout(args["timeout"])
    backoff = finite_number(args.get("retry_backoff", 1.0))
    if backoff is None or backoff < 0:
        raise LALMArgumentError(
            f"lalm-api: retry_backoff={args['retry_backoff']!r} must be a number of seconds, "
            "0 or more (the first wait between retries), e.g. retry_backoff=1."
        )
    if args.get("api_key_env") is not None:
        args["api_key_env"] = str(args["api_key_env"])
    variable = args.get("api_key_env") or "OPENAI_API_KEY"
    if check_api_key(variable) and url_has_credentials(str(args.get("base_url", ""))):
        raise LALMArgumentError(
            f"lalm-api: base_url holds credentials (user part) and ${variable} holds a key; "
            "a request carries one Authorization only. Keep the key in the variable and drop "
            "it from base_url (safer), or name an unset variable: api_key_env=NONE_SET."
        )


def _named(char: str) -> str:
    """What a character no header can carry is, without showing the key around it."""
    if char in "\r\n":
        return "a newline"
    return "a space" if char == " " else f"a character no HTTP header carries (U+{ord(char):04X})"


def key_headers(api_key_env: str) -> dict[str, str]:
    """``Authorization: Bearer KEY`` for the key in ``$api_key_env`` (:func:`check_api_key`);
    no header when the variable is unset or empty."""
    key = check_api_key(api_key_env)
    return {"Authorization": f"Bearer {key}"} if key else {}


def decode_reply(data: bytes) -> str:
    """A reply body as text: UTF-8, else :class:`NotUTF8Error` naming the byte.

    >>> decode_reply('{"a": "é"}'.encode())
    '{"a": "é"}'
    >>> decode_reply(b'{"a": "\\xe9"}')
    Traceback (most recent call last):
    ...
    lm_eval_rul.models.api_http.NotUTF8Error: a body that is not UTF-8 (byte 0xe9 at offset 7 of 10)
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        byte = data[error.start]
        raise NotUTF8Error(
            f"a body that is not UTF-8 (byte 0x{byte:02x} at offset {error.start} of {len(data)})"
        ) from None


def json_reply(text: str) -> Any:
    r"""A reply's JSON, every lone surrogate in its strings read as U+FFFD.

    >>> json_reply('{"pair": "\\ud83d\\ude00", "n": 1}')  # a whole character stays
    {'pair': '😀', 'n': 1}
    >>> json_reply('["ok \\ud83d"]') == ["ok \N{REPLACEMENT CHARACTER}"]
    True

    Raises:
        ValueError: not JSON.
    """
    return _text_only(json.loads(text))


def _text_only(value: Any) -> Any:
    if isinstance(value, str):
        if not _LONE_SURROGATE.search(value):
            return value
        _warn_surrogates()
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_text_only(k): _text_only(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_text_only(item) for item in value]
    return value


@functools.lru_cache(maxsize=1)
def _warn_surrogates() -> None:
    logger.warning(
        "lalm-api: a reply held a lone surrogate escape (half of a character, e.g. an emoji "
        "cut by max_tokens); it is read as U+FFFD (the replacement character)"
    )


def _ssl(settings: HTTPSettings) -> Any:
    if not settings.verify_certificate:
        return False
    if settings.ca_cert_path:
        return ssl.create_default_context(cafile=settings.ca_cert_path)
    return True


def open_session(settings: HTTPSettings, *, connections: int = 1) -> Any:
    """The ``aiohttp.ClientSession`` every request of a model goes through (the module
    doc's policy: ``total`` deadline, TLS settings, aiohttp's cross-origin redirect rule).

    Call inside a running event loop; use as ``async with``.
    """
    import aiohttp

    connector = aiohttp.TCPConnector(limit=connections, ssl=_ssl(settings))
    timeout = aiohttp.ClientTimeout(total=check_timeout(settings.timeout))
    return aiohttp.ClientSession(connector=connector, timeout=timeout)


def get(url: str, settings: HTTPSettings) -> tuple[int, str]:
    """``GET url`` with the key, under the policy: ``(status, body text)``.

    Raises:
        TimeoutError: No whole answer within ``settings.timeout`` seconds.
        aiohttp.ClientError: The connection failed.
        NotUTF8Error: The body is not UTF-8.
        LALMArgumentError: The key cannot be sent (:func:`check_api_key`).
    """
    headers = key_headers(settings.api_key_env)

    async def fetch() -> tuple[int, bytes]:
        async with open_session(settings) as session:
            async with session.get(url, headers=headers) as response:
                return response.status, await response.read()

    status, data = asyncio.run(fetch())
    return status, decode_reply(data)


_COLUMNS = ("questions", "harness requests", "HTTP requests", "cached", "to send")


@dataclass
class TaskCount:
    """The counts of one task (see the module doc)."""

    questions: set = field(default_factory=set)
    requests: int = 0
    http: int = 0
    cached: int = 0

    def row(self) -> tuple[int, int, int, int, int]:
        return (len(self.questions), self.requests, self.http, self.cached, self.http - self.cached)


class RequestCounts:
    """Counts of one request type, by task.

    Args:
        kind: ``loglikelihood`` or ``generate_until``.
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.tasks: dict[str, TaskCount] = {}

    def _task(self, task: str | None) -> TaskCount:
        return self.tasks.setdefault(task or "(no task)", TaskCount())

    def request(self, task: str | None, question: object) -> None:
        """Count one harness request of ``question`` (any hashable identity)."""
        count = self._task(task)
        count.requests += 1
        count.questions.add(question)

    def http(self, task: str | None, *, cached: bool) -> None:
        """Count one HTTP request the requests take (``cached``: the cache answers it)."""
        count = self._task(task)
        count.http += 1
        count.cached += int(cached)

    @property
    def to_send(self) -> int:
        return sum(c.http - c.cached for c in self.tasks.values())

    def table(self, header: str) -> str:
        """``header`` then one aligned row per task and a total row."""
        rows = [(name, *count.row()) for name, count in sorted(self.tasks.items())]
        totals = tuple(sum(row[i] for row in rows) for i in range(1, 6))
        rows.append(("total", *totals))
        width = max(len("task"), *(len(row[0]) for row in rows))
        lines = [header, "  " + "task".ljust(width) + "".join(f"{c:>18}" for c in _COLUMNS)]
        for name, *numbers in rows:
            lines.append("  " + name.ljust(width) + "".join(f"{n:>18}" for n in numbers))
        return "\n".join(lines)


#: Statuses worth retrying besides 5xx.
_RETRY_STATUSES = (408, 429)
#: Body markers of a bad key (Gemini's OpenAI layer answers 400, not 401).
_AUTH_MARKERS = ("API_KEY_INVALID", "API key not valid", "invalid_api_key")
_MAX_MESSAGE = 300


class _Transient(Exception):
    """A failure worth retrying; ``retry_after`` is the server's ``Retry-After`` (seconds)."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


@dataclass
class Job:
    """One request: ``tag`` identifies it to the caller; ``build`` makes its JSON body.

    Bodies are built only when the request is about to go, so the base64 audio of
    thousands of requests is never held at once.
    """

    tag: Any
    build: Callable[[], dict[str, Any]]


class ChatClient:
    """Posts JSON bodies to one chat-completions endpoint (retries: the module doc).

    Args:
        url: The chat-completions URL (:func:`chat_url`).
        model: The endpoint's model name (for messages only).
        settings: Deadline, key variable (read at each request, sent as ``Authorization:
            Bearer``; unset or empty: no header) and TLS (:class:`HTTPSettings`).
        num_concurrent: Requests in flight at once.
        max_retries: Retries of a request after a retriable failure (0: none).
        retry_backoff: First backoff in seconds (doubling, plus up to as much jitter).
        max_backoff: Longest wait between two attempts (``Retry-After`` included).

    Attributes:
        posts: HTTP requests made (retries included).
        retries: Of which retries.
    """

    def __init__(
        self,
        url: str,
        *,
        model: str,
        settings: HTTPSettings | None = None,
        num_concurrent: int = 1,
        max_retries: int = 3,
        retry_backoff: float = 1.0,
        max_backoff: float = 60.0,
    ) -> None:
        self.url = url
        self.shown_url = mask_url(url)  # a password in the URL is never printed
        self.model = model
        self.host = (urlsplit(url).netloc or url).rpartition("@")[2]
        self.http = settings or HTTPSettings()
        self.api_key_env = self.http.api_key_env
        self.timeout = check_timeout(self.http.timeout)
        self.num_concurrent = max(1, int(num_concurrent))
        self.max_retries = max(0, int(max_retries))
        self.retry_backoff = float(retry_backoff)
        self.max_backoff = float(max_backoff)
        self.posts = self.retries = self.answers = 0  # answers: HTTP replies of any status

    def __repr__(self) -> str:
        where = f"url={self.shown_url!r}, model={self.model!r}"
        return f"ChatClient({where}, key from ${self.api_key_env})"

    # ------------------------------------------------------------------ secrecy
    def _key(self) -> str:
        """The raw key, for redaction only (requests send :func:`.api_http.key_headers`)."""
        return os.environ.get(self.api_key_env, "")

    def redact(self, text: str) -> str:
        """``text`` without the key (nor anything key-like), shortened for a message."""
        text = mask(text, [self._key(), self.url])
        return text if len(text) <= _MAX_MESSAGE else text[:_MAX_MESSAGE] + "..."

    # ------------------------------------------------------------------ sending
    def send(
        self,
        jobs: Sequence[Job],
        on_reply: Callable[[Job, dict[str, Any]], None],
        *,
        desc: str = "lalm-api",
        disable_tqdm: bool = False,
    ) -> None:
        """Send every job; call ``on_reply(job, body)`` for each answer, as it arrives.

        Raises:
            APIError: The first fatal failure (the others are not reported separately),
                or whatever ``on_reply`` raised.
        """
        if not jobs:
            return
        bar = tqdm(total=len(jobs), desc=desc, disable=disable_tqdm)
        try:
            asyncio.run(self._send_all(list(jobs), on_reply, bar))
        finally:
            bar.close()

    async def _send_all(self, jobs: list[Job], on_reply: Callable, bar: tqdm) -> None:
        errors: list[BaseException] = []
        semaphore = asyncio.Semaphore(self.num_concurrent)
        async with open_session(self.http, connections=self.num_concurrent) as session:

            async def run(job: Job) -> None:
                async with semaphore:
                    if errors:
                        return
                    try:
                        body = await self._post_with_retries(session, job.build(), errors)
                        on_reply(job, body)
                    except Exception as error:  # noqa: BLE001 - reported once, below
                        errors.append(error)
                        return
                    bar.update(1)

            with _graceful_interrupt(errors, asyncio.current_task()):
                await run(jobs[0])
                if not errors and len(jobs) > 1:
                    await asyncio.gather(*(run(job) for job in jobs[1:]))
        if errors:
            raise errors[0]

    async def _post_with_retries(
        self, session: Any, payload: dict[str, Any], errors: list[BaseException]
    ) -> dict[str, Any]:
        from tenacity import (
            AsyncRetrying,
            retry_if_exception,
            stop_after_attempt,
            wait_exponential_jitter,
        )

        backoff = wait_exponential_jitter(
            initial=self.retry_backoff, max=self.max_backoff, jitter=self.retry_backoff
        )

        def wait(state: Any) -> float:
            after = getattr(state.outcome.exception(), "retry_after", None)
            return min(after, self.max_backoff) if after is not None else backoff(state)

        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.max_retries + 1),
            wait=wait,
            # once another request failed for good, in-flight ones stop retrying
            retry=retry_if_exception(lambda e: isinstance(e, _Transient) and not errors),
            reraise=True,
        )
        try:
            async for attempt in retrying:
                with attempt:
                    if attempt.retry_state.attempt_number > 1:
                        self.retries += 1
                    return await self._post(session, payload)
        except _Transient as last:
            raise APIUnavailableError(
                f"lalm-api: {self.host} kept failing ({last}) after {self.max_retries} "
                "retries. Answers received so far are in the resume cache: rerun the same "
                "command later, or raise max_retries / retry_backoff, or lower num_concurrent."
            ) from None
        raise AssertionError("unreachable: tenacity either returns or raises")

    async def _post(self, session: Any, payload: dict[str, Any]) -> dict[str, Any]:
        import aiohttp

        headers = {"Content-Type": "application/json", **key_headers(self.api_key_env)}
        self.posts += 1
        try:
            async with session.post(self.url, json=payload, headers=headers) as response:
                status = response.status
                data = await response.read()
                retry_after = response.headers.get("Retry-After")
        except (aiohttp.ClientError, asyncio.TimeoutError) as error:
            # never repr() an aiohttp error: its request_info holds the headers
            said = self.redact(str(error)) or f"no whole answer within timeout={self.timeout:g} s"
            reason = f"{type(error).__name__}: {said}"
            if isinstance(error, aiohttp.ClientConnectorError) and not self.answers:
                raise APIUnavailableError(  # retrying a server that is not there cannot help
                    f"lalm-api: the server at {self.shown_url} is not reachable ({reason}). "
                    "Start it (e.g. `vllm serve MODEL`) or check base_url= in --model_args. "
                    "Nothing was answered, so nothing was retried."
                ) from None
            raise _Transient(reason) from None
        self.answers += 1
        return self._classify(status, data, retry_after)

    def _classify(self, status: int, data: bytes, retry_after: str | None) -> dict[str, Any]:
        """The JSON body of a success, or the error this answer calls for."""
        if 200 <= status < 300:
            try:  # a body that is not UTF-8 is a bad reply like any other: retried
                text = decode_reply(data)
            except NotUTF8Error as error:
                raise _Transient(f"HTTP {status} with {error}") from None
            try:
                body = json_reply(text)
            except ValueError:
                raise _Transient(f"HTTP {status} with a body that is not JSON") from None
            if not is_chat_completion(body):  # a gateway's error, sent as a success
                raise _Transient(
                    f"HTTP {status} with a body that is not a chat completion: "
                    f"{self.redact(server_message(text))}"
                )
            # an answer echoing the key is masked once, here, before anything stores it
            return mask_reply(body, [self._key(), *url_secrets(self.url)])
        text = data.decode("utf-8", errors="replace")  # an error's text: its message only
        message = self.redact(server_message(text))
        if status in (401, 403) or any(marker in text for marker in _AUTH_MARKERS):
            state = "set" if self._key() else "not set or empty"
            raise APIAuthError(
                f"lalm-api: authentication failed at {self.host} (HTTP {status}: {message}). "
                f"The key is read from the environment variable {self.api_key_env} (now "
                f"{state}); export a valid key there, or name another variable with "
                "api_key_env=NAME."
            )
        if status == 404:
            raise APIModelNotFoundError(
                f"lalm-api: {self.host} answered HTTP 404 for model {self.model!r} at "
                f"{self.shown_url} ({message}). Check model= (the name the server serves; GET "
                f"{self.shown_url.rsplit('/chat/completions', 1)[0]}/models lists them) and "
                "base_url="
            )
        if status in _RETRY_STATUSES or status >= 500:
            if "insufficient_quota" in text:
                raise APIRequestError(
                    f"lalm-api: {self.host} has no quota left for this key (HTTP {status}: "
                    f"{message}); retrying cannot help.",
                    status=status,
                    server_message=message,
                )
            wait = retry_after_seconds(retry_after, cap=self.max_backoff)  # seconds or a date
            raise _Transient(f"HTTP {status}: {message}", wait)
        raise APIRequestError(
            f"lalm-api: {self.host} rejected a request (HTTP {status}: {message}).",
            status=status,
            server_message=message,
        )


@contextlib.contextmanager
def _graceful_interrupt(errors: list[BaseException], task: asyncio.Task | None) -> Iterator[None]:
    """A first Ctrl-C stops new requests and waits for those in flight; a second aborts.

    The answers in flight reach the callback (and so the resume cache) before the
    :class:`KeyboardInterrupt` is raised, so a rerun asks none of them again. Where
    signal handlers cannot be installed (not the main thread, Windows) Ctrl-C aborts
    at once, as usual.
    """
    loop = asyncio.get_running_loop()

    def on_sigint() -> None:
        if any(isinstance(e, KeyboardInterrupt) for e in errors) and task is not None:
            task.cancel()  # second Ctrl-C
            return
        errors.insert(0, KeyboardInterrupt())
        print(
            "\nlalm-api: interrupted; waiting for the requests in flight to be answered and "
            "saved (Ctrl-C again to abort at once)",
            file=sys.stderr,
            flush=True,
        )

    try:
        loop.add_signal_handler(signal.SIGINT, on_sigint)
    except (NotImplementedError, RuntimeError, ValueError):
        yield
        return
    try:
        yield
    except asyncio.CancelledError:
        raise KeyboardInterrupt from None
    finally:
        loop.remove_signal_handler(signal.SIGINT)


#: Why letter tasks stop when the bridge's adapter has no ``loglikelihood``.
NO_LOGLIKELIHOOD = (
    "the bridge's adapter defines no loglikelihood(audio, sampling_rate, context, "
    "continuation); add one to the adapter"
)


@dataclass(frozen=True)
class BridgeDeclaration:
    """The ``lm_eval_rul_bridge`` record of a bridge's ``GET /v1/models``."""

    name: str
    max_audio_seconds: float | None
    chunked: bool
    has_loglikelihood: bool


def models_url(base_url: str) -> str:
    """``GET /models`` of an endpoint given as ``.../v1`` or ``.../v1/chat/completions``."""
    url = base_url.rstrip("/")
    if url.endswith("/chat/completions"):
        url = url[: -len("/chat/completions")]
    return f"{url}/models"


def read_declaration(
    base_url: str, model: str | None = None, settings: HTTPSettings | None = None
) -> BridgeDeclaration | None:
    """The declaration of the bridge at ``base_url`` (of ``model``), or ``None``.

    One ``GET /models`` under the requests' own policy (this module's: the key,
    ``timeout=`` as a total deadline, TLS settings, no key on a redirect to another
    origin). ``None`` for any server that is not a bridge, or that does not answer
    (the chat requests then report what is wrong).

    Raises:
        LALMArgumentError: ``timeout`` or the key cannot be used (nothing is sent).
    """
    import aiohttp

    settings = settings or HTTPSettings()
    check_timeout(settings.timeout)
    check_api_key(settings.api_key_env)  # refused here, never swallowed below
    url = models_url(base_url)
    try:
        status, text = get(url, settings)
        body = json_reply(text) if status == 200 else None
    except (asyncio.TimeoutError, NotUTF8Error) as error:
        logger.warning(
            "lalm-api: GET %s: %s; going on without a bridge's declaration (window, "
            "chunking); the chat requests will tell whether the server answers.",
            mask_url(url),
            str(error) or f"no whole answer within timeout={settings.timeout:g} s",
        )
        return None
    except (OSError, aiohttp.ClientError, ValueError) as error:
        logger.debug("lalm-api: no model list at %s (%s)", mask_url(url), mask_url(str(error)))
        return None
    entries = body.get("data") if isinstance(body, Mapping) else None
    for entry in entries if isinstance(entries, list) else []:
        record = entry.get("lm_eval_rul_bridge") if isinstance(entry, Mapping) else None
        if not isinstance(record, Mapping) or (model is not None and entry.get("id") != model):
            continue
        return BridgeDeclaration(
            name=str(entry.get("id")),
            max_audio_seconds=_window(record.get("max_audio_seconds"), url),
            chunked=bool(record.get("chunked")),
            has_loglikelihood=bool(record.get("has_loglikelihood")),
        )
    return None


def _window(value: Any, url: str) -> float | None:
    """A declared window: a finite number of seconds above 0, else none (with a warning)."""
    if value is None:
        return None
    seconds = finite_number(value)
    if seconds is None or seconds <= 0:
        logger.warning(
            "lalm-api: the bridge at %s declares max_audio_seconds=%r, not a number of "
            "seconds above 0; ignored (give max_audio_seconds= in --model_args).",
            mask_url(url),
            value,
        )
        return None
    return seconds


def window_seconds(given: float | None, declared: BridgeDeclaration | None) -> float | None:
    """The ``max_audio_seconds`` to use: the user's, else the bridge's window.

    A user value longer than the bridge's window is kept (the bridge cuts to its window and
    says so in each reply) with a warning.
    """
    if declared is None or declared.max_audio_seconds is None:
        return given
    if given is None:
        logger.info(
            "lalm-api: the bridge serving %r hears at most %g s of audio (chunked: %s); "
            "max_audio_seconds=%g",
            declared.name,
            declared.max_audio_seconds,
            declared.chunked,
            declared.max_audio_seconds,
        )
        return declared.max_audio_seconds
    if given > declared.max_audio_seconds:
        logger.warning(
            "lalm-api: max_audio_seconds=%g is longer than the bridge's window of %g s; the "
            "bridge cuts longer audio to its window (each cut is counted in api_bridge_cuts)",
            given,
            declared.max_audio_seconds,
        )
    return given


def watch_cuts(send: Callable[..., Any], counts: dict[str, int]) -> Callable[..., Any]:
    """``send`` (:meth:`ChatClient.send`) counting what replies
    report: audio cuts (``counts["cuts"]``) and letters whose ``is_greedy`` is unknown
    (``greedy_unknown``)."""

    def watched(jobs: Any, on_reply: Callable[[Any, dict[str, Any]], None], **kwargs: Any):
        def reply(job: Any, body: dict[str, Any]) -> None:
            record = body.get("bridge") if isinstance(body, Mapping) else None
            cut = record.get("audio_cut") if isinstance(record, Mapping) else None
            if isinstance(cut, Mapping):
                counts["cuts"] = counts.get("cuts", 0) + 1
                if counts["cuts"] == 1:
                    logger.warning(
                        "lalm-api: the bridge cut %s s of audio to its window of %s s; "
                        "the count is api_bridge_cuts in the results",
                        cut.get("audio_seconds"),
                        cut.get("cut_to_seconds"),
                    )
            if isinstance(record, Mapping) and record.get("is_greedy", False) is None:
                counts["greedy_unknown"] = counts.get("greedy_unknown", 0) + 1
                if counts["greedy_unknown"] == 1:
                    logger.warning(
                        "lalm-api: the bridge's loglikelihood returns a bare number, so whether "
                        "a letter is the model's argmax is unknown: is_greedy is reported "
                        "false (count: api_bridge_greedy_unknown); return (logprob, is_greedy) "
                        "from the adapter to compute it"
                    )
            on_reply(job, body)

        return send(jobs, reply, **kwargs)

    return watched
