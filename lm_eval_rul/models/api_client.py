"""Sending ``lalm-api``'s requests: concurrency, retries on 429/5xx only, one clear error.

lm-eval's ``TemplateAPI`` senders are not used: they retry every failure (a wrong key
or an unknown model is sent ``max_retries`` times), and with ``num_concurrent > 1``
they log aiohttp's exception ``repr``, which holds the request headers and so the API
key. This sender never logs a header, redacts the key from every message it builds,
and classifies each answer:

* 2xx with a chat completion: the JSON body goes to the caller's callback (which may
  raise to stop the run);
* 429 (except an exhausted quota), 408, 5xx, a dropped connection, a timeout, an
  unreadable body or a 2xx body that is not a chat completion (a gateway's error sent
  as a 200; :func:`~.api_replies.is_chat_completion`): retried up to ``max_retries``
  times with exponential backoff and jitter (``Retry-After`` is honoured), then
  :class:`APIUnavailableError` (at once if the server never answered and refuses the
  connection: start it, or fix base_url);
* 401/403, or a body naming an invalid key (Gemini answers 400): :class:`APIAuthError`;
* 404: :class:`APIModelNotFoundError`; any other 4xx: :class:`APIRequestError`.

The first request is sent alone; only when it succeeds do the others go out,
``num_concurrent`` at a time. After a fatal answer, or a first Ctrl-C, no new request
starts; those in flight finish and reach the callback (so the resume cache keeps them),
then the error (or ``KeyboardInterrupt``) is raised once.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from tqdm import tqdm

from ..masking import mask, mask_url
from ..retries import retry_after_seconds
from .api_http import (
    HTTPSettings,
    NotUTF8Error,
    check_timeout,
    decode_reply,
    json_reply,
    key_headers,
    open_session,
)
from .api_replies import (
    APIAuthError,
    APIError,
    APIModelNotFoundError,
    APIRequestError,
    APIUnavailableError,
    chat_url,
    is_chat_completion,
    server_message,
)

__all__ = [
    "APIError",
    "APIAuthError",
    "APIModelNotFoundError",
    "APIRequestError",
    "APIUnavailableError",
    "Job",
    "ChatClient",
    "chat_url",
    "is_chat_completion",
    "server_message",
]

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
    """Posts JSON bodies to one chat-completions endpoint (see the module doc).

    Args:
        url: The chat-completions URL (:func:`chat_url`).
        model: The endpoint's model name (for messages only).
        api_key_env: Environment variable holding the key, read at each request and
            sent as ``Authorization: Bearer``; unset or empty sends no header.
        num_concurrent: Requests in flight at once.
        max_retries: Retries of a request after a retriable failure (0: none).
        timeout: Seconds for one request, answer included (a total deadline, above 0;
            :mod:`.api_http`).
        retry_backoff: First backoff in seconds (doubling, plus up to as much jitter).
        max_backoff: Longest wait between two attempts (``Retry-After`` included).
        verify_certificate: Check the server's TLS certificate.
        ca_cert_path: A CA bundle to check it with.

    Attributes:
        posts: HTTP requests made (retries included).
        retries: Of which retries.
    """

    def __init__(
        self,
        url: str,
        *,
        model: str,
        api_key_env: str = "OPENAI_API_KEY",
        num_concurrent: int = 1,
        max_retries: int = 3,
        timeout: float = 300,
        retry_backoff: float = 1.0,
        max_backoff: float = 60.0,
        verify_certificate: bool = True,
        ca_cert_path: str | None = None,
    ) -> None:
        self.url = url
        self.shown_url = mask_url(url)  # a password in the URL is never printed
        self.model = model
        self.host = (urlsplit(url).netloc or url).rpartition("@")[2]
        self.api_key_env = api_key_env
        self.num_concurrent = max(1, int(num_concurrent))
        self.max_retries = max(0, int(max_retries))
        self.timeout = check_timeout(timeout)
        self.retry_backoff = float(retry_backoff)
        self.max_backoff = float(max_backoff)
        self.http = HTTPSettings(self.timeout, api_key_env, verify_certificate, ca_cert_path)
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
            return body
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
