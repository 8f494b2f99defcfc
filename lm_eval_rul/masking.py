"""Secrets kept out of what the commands print, log and write.

Credentials reach a run in four ways: ``model_args`` values (``api_key=``, ``token=``,
:func:`is_secret_arg`), environment variables (``OPENAI_API_KEY``, ``HF_TOKEN``),
credentials inside a URL (``http://user:KEY@host/v1``, ``http://TOKEN@host/v1``) and a
server's error body (or a model's answer: :func:`mask_reply`) that echoes the key it was sent.
:func:`mask` hides every one of them in a text;
:func:`redact_args` and :func:`mask_model_args` in ``model_args``; :func:`mask_logs`
masks every log record while a command runs, the harness's own loggers included (its
retry warnings print a server's error body whole).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

__all__ = [
    "MASK",
    "KEY_PATTERN",
    "is_secret_arg",
    "redact_args",
    "mask",
    "mask_reply",
    "mask_url",
    "url_has_credentials",
    "url_secrets",
    "mask_model_args",
    "environment_secrets",
    "mask_logs",
]

MASK = "***"
#: Key-like tokens masked in any text (OpenAI ``sk-``, Google ``AIza``, Hugging Face ``hf_``).
KEY_PATTERN = re.compile(r"\b(sk-[A-Za-z0-9_\-]{6,}|AIza[0-9A-Za-z_\-]{20,}|hf_[A-Za-z0-9]{20,})")
#: The user part of a URL's authority, whatever its shape (``scheme://TOKEN@``,
#: ``user:password@``, ``:password@``): everything from ``//`` to the authority's last ``@``
#: (a password may hold ``@`` or ``:``), never crossing ``/ ? #``, a space or a quote.
#: One slash is enough: a URL taken for a local path comes back normalised
#: (``Path("https://u:pw@h")`` is ``https:/u:pw@h``) in the messages that name it.
_URL_CREDENTIALS = re.compile(r"(\b[a-zA-Z][a-zA-Z0-9+.\-]*:/{1,2})([^/?#\s'\"<>]*)@")

#: ``model_args`` names whose values are credentials, compared whole (lower case).
_SECRET_NAMES = frozenset(
    {
        "key",
        "api_key",
        "apikey",
        "token",
        "auth_token",
        "access_token",
        "api_token",
        "hf_token",
        "bearer_token",
        "use_auth_token",
        "secret",
        "client_secret",
        "password",
        "passwd",
        "header",
        "headers",
        "authorization",
    }
)
#: Name endings that mark a credential (``openai_api_key``, ``db_password``). ``_token`` is
#: not one: ``add_bos_token``, ``think_end_token``, ``pad_token`` name tokens of the
#: vocabulary, and ``tokenizer``/``max_gen_toks`` are settings; changing them must change
#: a checkpoint's fingerprint.
_SECRET_ENDINGS = ("_key", "_secret", "_password")
#: Shortest value masked by its text (shorter ones would mask ordinary words).
_MIN_SECRET = 4
#: Shortest environment value taken for a secret (``SOME_KEY=true`` must not mask "true").
_MIN_ENV_SECRET = 8


def is_secret_arg(name: str) -> bool:
    """Whether the ``model_args`` name ``name`` holds a credential.

    Exact names (:data:`_SECRET_NAMES`: ``api_key``, ``key``, ``token``, ``auth_token``,
    ``access_token``, ``hf_token``, ``secret``, ``password``, ``header``...) and names
    ending in ``_key``, ``_secret`` or ``_password``.

    >>> [is_secret_arg(n) for n in ("api_key", "hf_token", "openai_key", "tokenizer")]
    [True, True, True, False]
    >>> is_secret_arg("add_bos_token"), is_secret_arg("think_end_token")
    (False, False)
    """
    name = name.strip().lower()
    return name in _SECRET_NAMES or name.endswith(_SECRET_ENDINGS)


def url_has_credentials(text: str) -> bool:
    """Whether ``text`` holds a URL with credentials (``http://user:KEY@host``,
    ``http://TOKEN@host``).

    >>> url_has_credentials("http://me:s3cret@h/v1"), url_has_credentials("http://TOKEN@h/v1")
    (True, True)
    >>> url_has_credentials("http://h:8000/v1"), url_has_credentials("http://h/v1?to=a@b")
    (False, False)
    """
    return bool(_URL_CREDENTIALS.search(str(text)))


def _url_secret(userinfo: str) -> str:
    """The secret of a URL's user part: the password after the first ``:``, else all of it
    (a token alone: ``http://TOKEN@host``, ``https://TOKEN:@host``)."""
    user, _, password = userinfo.partition(":")
    return password or user


def _masked_userinfo(match: re.Match[str]) -> str:
    user, _, password = match.group(2).partition(":")
    kept = f"{user}:" if password else ""  # a user name stays; a token alone is the secret
    return f"{match.group(1)}{kept}{MASK}@"


def mask_url(text: str) -> str:
    """``text`` with the credentials of every URL in it masked: a password, or a token
    given as the user part.

    >>> mask_url("base_url=http://me:s3cret@h:8000/v1")
    'base_url=http://me:***@h:8000/v1'
    >>> mask_url("http://TOKEN@h/v1, https://TOKEN:@h, https://:pw@h, http://u:p@ss@h/x")
    'http://***@h/v1, https://***@h, https://:***@h, http://u:***@h/x'
    """
    return _URL_CREDENTIALS.sub(_masked_userinfo, str(text))


def redact_args(args: str | None) -> str | None:
    """``model_args`` with the values of credentials (:func:`is_secret_arg`) masked, and
    the credentials of any URL in them.

    Everything else is kept as given, so a checkpoint's fingerprint changes with the
    tokenizer, ``add_bos_token`` or any other setting.

    >>> redact_args("base_url=http://h/v1,auth_token=abc,model=m")
    'base_url=http://h/v1,auth_token=***,model=m'
    >>> redact_args("pretrained=m,tokenizer=t,add_bos_token=True")
    'pretrained=m,tokenizer=t,add_bos_token=True'
    >>> redact_args("base_url=http://u:KEY@h/v1,model=m")
    'base_url=http://u:***@h/v1,model=m'
    """
    if not args:
        return args
    parts = []
    for part in args.split(","):
        key, sep, _ = part.partition("=")
        parts.append(f"{key}={MASK}" if sep and is_secret_arg(key) else mask_url(part))
    return ",".join(parts)


def mask_model_args(model_args: Any) -> Any:
    """``model_args`` (a ``key=value`` string or a dict) with credentials masked; a dict
    is masked in place (the harness prints and saves the object it was given) and
    returned.

    >>> mask_model_args({"pretrained": "m", "token": "hf_abc", "base_url": "http://u:K@h"})
    {'pretrained': 'm', 'token': '***', 'base_url': 'http://u:***@h'}
    """
    if isinstance(model_args, str) or model_args is None:
        return redact_args(model_args)
    if isinstance(model_args, dict):
        for name, value in list(model_args.items()):
            if is_secret_arg(str(name)) and value not in (None, "", False):
                model_args[name] = MASK
            elif isinstance(value, str):
                model_args[name] = mask_url(value)
    return model_args


def environment_secrets(environ: Mapping[str, str] | None = None) -> list[str]:
    """Values of environment variables that hold credentials (``OPENAI_API_KEY``,
    ``HF_TOKEN``, ``*_SECRET``, ``*_PASSWORD``, ``*_TOKEN``: environment variables name no
    vocabulary tokens).

    >>> environ = {"OPENAI_API_KEY": "sk-12345678", "HOME": "/root", "GH_TOKEN": "abcdefgh"}
    >>> environment_secrets({**environ, "USE_KEY": "true"})
    ['sk-12345678', 'abcdefgh']
    """
    environ = os.environ if environ is None else environ
    return [
        value
        for name, value in environ.items()
        if (is_secret_arg(name) or name.lower().endswith("_token"))
        and len(value) >= _MIN_ENV_SECRET
    ]


def url_secrets(value: Any) -> list[str]:
    """The secrets of every URL with credentials anywhere in ``value`` (a text, a JSON
    text, a list, a dict: any command-line option), so that a message quoting the URL in
    another form (a library's error text, a path normalised to ``https:/``) is masked too.

    >>> url_secrets('{"audio_dir": "https://me:pw123@h/x", "n": 3}'), url_secrets(["x", 5])
    (['pw123'], [])
    >>> url_secrets({"audio_hf_dataset": "https://TOKEN1@h/ds"})
    ['TOKEN1']
    """
    if isinstance(value, Mapping):
        return [secret for item in value.values() for secret in url_secrets(item)]
    if isinstance(value, list | tuple | set):
        return [secret for item in value for secret in url_secrets(item)]
    if not isinstance(value, str | os.PathLike):
        return []
    found = [_url_secret(m.group(2)) for m in _URL_CREDENTIALS.finditer(str(value))]
    return [secret for secret in found if len(secret) >= _MIN_SECRET]


def _secret_values(model_args: Any) -> list[str]:
    """The credential values in ``model_args`` (string or dict), URL credentials included."""
    if isinstance(model_args, str):
        pairs = [part.partition("=")[::2] for part in model_args.split(",")]
    elif isinstance(model_args, Mapping):
        pairs = [(str(k), str(v)) for k, v in model_args.items() if v is not None]
    else:
        return []
    found = [value for name, value in pairs if is_secret_arg(name)]
    found = [value for value in found if len(value) >= _MIN_SECRET]
    return found + url_secrets(model_args)


def mask(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with each of ``secrets``, key-like tokens (:data:`KEY_PATTERN`) and URL
    credentials masked.

    >>> mask("Incorrect API key provided: abcd1234", ["abcd1234"])
    'Incorrect API key provided: ***'
    >>> mask("key sk-proj-0123456789 at http://u:pw@h")
    'key *** at http://u:***@h'
    """
    for secret in sorted({s for s in secrets if s and len(s) >= _MIN_SECRET}, key=len)[::-1]:
        text = text.replace(secret, MASK)
    return mask_url(KEY_PATTERN.sub(MASK, text))


def mask_reply(value: Any, secrets: Iterable[str] = ()) -> Any:
    """A served model's parsed reply with every text in it masked (:func:`mask`): a model
    that echoes the key it was sent must not have it written into the samples, the
    results or the resume cache. Keys, numbers and the structure are kept.

    >>> mask_reply({"choices": [{"message": {"content": "my key is abcd1234"}}], "n": 1},
    ...            ["abcd1234"])
    {'choices': [{'message': {'content': 'my key is ***'}}], 'n': 1}
    """
    secrets = [s for s in secrets if s]
    if isinstance(value, str):
        return mask(value, secrets)
    if isinstance(value, Mapping):
        return {key: mask_reply(item, secrets) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [mask_reply(item, secrets) for item in value]
    return value


class _MaskingRecords:
    """A log-record factory that masks each record's message as it is made."""

    def __init__(self, previous: Any, secrets: list[str]) -> None:
        self.previous = previous
        self.secrets = secrets

    def __call__(self, *args: Any, **kwargs: Any) -> logging.LogRecord:
        record = self.previous(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a bad format string is logging's own to report
            return record
        masked = mask(message, self.secrets)
        if masked != message:
            record.msg, record.args = masked, None
        if record.exc_info and record.exc_info[1] is not None:
            text = logging.Formatter().formatException(record.exc_info)
            record.exc_info, record.exc_text = None, mask(text, self.secrets)
        return record


@contextlib.contextmanager
def mask_logs(*model_args: Any, secrets: Iterable[str] = ()) -> Iterator[list[str]]:
    """Mask every log record made while the block runs (any logger: ours, the harness's,
    its HTTP clients'): the credential values of ``model_args`` (strings or dicts), of
    the environment (:func:`environment_secrets`), ``secrets``, key-like tokens and URL
    credentials. Yields the list of secret values (callers may add to it).

    >>> import logging
    >>> with mask_logs("base_url=http://h,api_key=abcd1234"):
    ...     record = logging.getLogger("lm_eval").makeRecord(
    ...         "lm_eval", logging.WARNING, "f", 1, "refused %s", ("abcd1234",), None)
    >>> record.getMessage()
    'refused ***'
    """
    values = [*environment_secrets(), *secrets]
    for args in model_args:
        values += _secret_values(args)
    previous = logging.getLogRecordFactory()
    factory = _MaskingRecords(previous, values)
    logging.setLogRecordFactory(factory)
    try:
        yield values
    finally:
        if logging.getLogRecordFactory() is factory:
            logging.setLogRecordFactory(previous)
