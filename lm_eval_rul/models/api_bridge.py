"""What a ``lm-eval-rul bridge`` server declares, read once by ``lalm-api`` at start-up.

The bridge (:mod:`.bridge_server`) lists its model under ``GET /v1/models`` with a
``lm_eval_rul_bridge`` record: the audio window (``max_audio_seconds``), whether the model
hears long audio in windows (``chunked``) and whether its adapter scores letters
(``has_loglikelihood``). ``lalm-api`` takes the window as its ``max_audio_seconds`` when
the user gave none (and the factual tasks size their windows from it), refuses letter
tasks in one line when there is no ``loglikelihood``, and logs every cut the bridge
reports. Any other server (vLLM, OpenAI...) has no such record: nothing changes.
"""

from __future__ import annotations

import json
import logging
import os
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

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
    base_url: str, model: str | None = None, *, api_key_env: str = "OPENAI_API_KEY",
    timeout: float = 10.0,
) -> BridgeDeclaration | None:  # fmt: skip
    """The declaration of the bridge at ``base_url`` (of ``model``), or ``None``.

    ``None`` for any server that is not a bridge, or that does not answer ``GET /models``
    (the chat requests then report what is wrong).
    """
    request = urllib.request.Request(models_url(base_url))
    key = os.environ.get(api_key_env, "")
    if key:
        request.add_header("Authorization", f"Bearer {key}")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:  # noqa: S310
            body = json.loads(answer.read())
    except (OSError, ValueError) as error:
        logger.debug("lalm-api: no model list at %s (%s)", models_url(base_url), error)
        return None
    entries = body.get("data") if isinstance(body, Mapping) else None
    for entry in entries if isinstance(entries, list) else []:
        record = entry.get("lm_eval_rul_bridge") if isinstance(entry, Mapping) else None
        if not isinstance(record, Mapping) or (model is not None and entry.get("id") != model):
            continue
        window = record.get("max_audio_seconds")
        return BridgeDeclaration(
            name=str(entry.get("id")),
            max_audio_seconds=None if window is None else float(window),
            chunked=bool(record.get("chunked")),
            has_loglikelihood=bool(record.get("has_loglikelihood")),
        )
    return None


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
    """``send`` (:meth:`.api_client.ChatClient.send`) counting what replies report: audio cuts
    (``counts["cuts"]``) and letters whose ``is_greedy`` is unknown (``greedy_unknown``)."""

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
