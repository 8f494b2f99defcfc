"""One HTTP policy for every request ``lalm-api`` makes: the chat completions
(:mod:`.api_client`) and the start-up read of ``GET /models`` (:mod:`.api_bridge`).

* **A total deadline.** ``timeout=`` bounds each request whole (connection, headers and
  body; aiohttp's ``total``), so a server that drips a byte every few seconds cannot hold
  a run; a timeout must be a finite number of seconds above 0 (:func:`check_timeout`:
  aiohttp reads 0 as "no timeout").
* **Credentials go to the origin of ``base_url`` only.** A redirect to another scheme,
  host or port is followed without ``Authorization``, cookies or the URL's user part
  (aiohttp's redirect rule, kept by ``tests/test_api_http.py``).
* **One key check.** The key is read from the environment variable ``api_key_env``
  names; a value holding a newline or anything else an HTTP header cannot carry is
  refused in one line, naming the variable and never the value (:func:`key_headers`).
* **Replies are UTF-8** (JSON's encoding, RFC 8259): :func:`decode_reply`; and their
  JSON holds text only: a lone surrogate escape (``"\\ud83d"``, half an emoji cut at
  ``max_tokens``) is read as U+FFFD, as a UTF-8 decoder reads a broken byte
  (:func:`json_reply`), so no later write of the answer (resume cache, samples) fails.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
import re
import ssl
from dataclasses import dataclass
from typing import Any

from ..masking import url_has_credentials
from .api_numbers import finite_number
from .args import LALMArgumentError

__all__ = [
    "DEFAULT_TIMEOUT",
    "HTTPSettings",
    "NotUTF8Error",
    "check_timeout",
    "check_api_key",
    "check_http_args",
    "key_headers",
    "decode_reply",
    "json_reply",
    "open_session",
    "get",
]

logger = logging.getLogger(__name__)

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
