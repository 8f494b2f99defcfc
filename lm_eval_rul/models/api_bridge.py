"""What a ``lm-eval-rul bridge`` server declares, read once by ``lalm-api`` at start-up.

The bridge (:mod:`lm_eval_rul.bridge.server`) lists its model under ``GET /v1/models`` with a
``lm_eval_rul_bridge`` record: the audio window (``max_audio_seconds``), whether the model
hears long audio in windows (``chunked``) and whether its adapter scores letters
(``has_loglikelihood``). ``lalm-api`` takes the window as its ``max_audio_seconds`` when
the user gave none (and the factual tasks size their windows from it), refuses letter
tasks in one line when there is no ``loglikelihood``, and logs every cut the bridge
reports. Any other server (vLLM, OpenAI...) has no such record: nothing changes.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..masking import mask_url
from .api_http import (
    HTTPSettings,
    NotUTF8Error,
    check_api_key,
    check_timeout,
    finite_number,
    get,
    json_reply,
)

__all__ = [
    "BridgeDeclaration",
    "models_url",
    "read_declaration",
    "window_seconds",
    "watch_cuts",
    "NO_LOGLIKELIHOOD",
]

logger = logging.getLogger(__name__)

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

    One ``GET /models`` under the requests' own policy (:mod:`lm_eval_rul.models.api_http`: the key,
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
    """``send`` (:meth:`.api_http.ChatClient.send`) counting what replies
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
