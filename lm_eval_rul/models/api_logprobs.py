"""Reading letter log-probabilities from chat-completion answers (pure functions).

Two paths (``docs/method.md``, "Letter scoring over an API"):

* **prompt** (exact; vLLM): the letter is sent as a prefilled assistant turn and the
  server returns the log-probability of every prompt token (``prompt_logprobs``).
  :func:`prompt_path_score` sums the letter's tokens: the same number ``lalm`` computes.
* **top** (approximate; any server with ``logprobs``): the ``k`` most likely first
  answer tokens. :func:`top_path_scores` gives each letter the log of the summed
  probability of the tokens that spell it (``"A"``, ``" A"``...); a letter absent from
  the top ``k`` gets no probability (``-inf``) and is counted, never estimated.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from .api_client import APIError
from .api_numbers import finite_number, log_probability

__all__ = [
    "NoLogprobsError",
    "MalformedLogprobsError",
    "ContinuationMismatchError",
    "prompt_path_score",
    "has_prompt_logprobs",
    "top_logprobs_of",
    "top_path_scores",
    "rejects_prompt_logprobs",
    "no_logprobs_message",
]

#: Phrases of a 4xx that refuses the prompt path's fields (OpenAI, Gemini, early vLLM V1).
_PROMPT_PATH_REFUSALS = (
    "prompt_logprobs",
    "continue_final_message",
    "add_generation_prompt",
    "unrecognized request argument",
    "unknown name",
    "extra inputs are not permitted",
    "prompt logprobs",  # vLLM: "Prefix caching with prompt logprobs not yet supported"
)


class NoLogprobsError(APIError):
    """The endpoint returns no log-probabilities, so letters cannot be scored."""


class MalformedLogprobsError(APIError):
    """An answer's log-probabilities are not in the OpenAI / vLLM layout."""

    def __init__(self, where: str, entry: Any, why: str) -> None:
        shown = repr(entry)
        shown = shown if len(shown) <= 120 else shown[:120] + "..."
        super().__init__(
            f"lalm-api: a reply's {where} is malformed ({why}: {shown}); the server does not "
            "answer log-probabilities in the OpenAI/vLLM layout. Nothing of this reply was "
            "stored or scored. Check the server (or a proxy in front of it), or use "
            "logprobs=prompt|top to pick the other path."
        )


def _logprob(record: Any, where: str) -> float:
    """The log-probability ``record["logprob"]`` (finite, at most 0), or
    :class:`MalformedLogprobsError` (``Infinity``, ``NaN``, out-of-range literals such as
    ``1e400`` and numbers above 0 included)."""
    if not isinstance(record, Mapping) or "logprob" not in record:
        raise MalformedLogprobsError(where, record, "no 'logprob'")
    value = record["logprob"]
    number = log_probability(value)
    if number is None:
        is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
        why = "'logprob' is not a number"
        if is_number and finite_number(value) is None:
            why = "'logprob' is not finite"
        elif is_number:
            why = "'logprob' is above 0, a probability above 1"
        raise MalformedLogprobsError(where, record, why)
    return number


class ContinuationMismatchError(APIError):
    """The prompt's last tokens do not spell the continuation (server template differs)."""


def no_logprobs_message(host: str, model: str, why: str) -> str:
    """The one message of :class:`NoLogprobsError`: what failed and the two ways out."""
    return (
        f"lalm-api: {host} (model {model!r}) returns no log-probabilities ({why}); letter "
        "scoring (the multiple-choice tasks rul_muchomusic, muchomusic) needs them. Run the "
        "generation tasks instead (rul_muchomusic_gen, muchomusic_gen), or serve an open "
        "model with vLLM, whose prompt log-probabilities give exact letter scores."
    )


def rejects_prompt_logprobs(status: int, message: str) -> bool:
    """Whether a 4xx answer means "this server has no prompt-log-probability path"."""
    text = message.lower()
    return 400 <= status < 500 and any(phrase in text for phrase in _PROMPT_PATH_REFUSALS)


def has_prompt_logprobs(body: Mapping[str, Any]) -> bool:
    """Whether an answer carries vLLM's top-level ``prompt_logprobs`` list."""
    entries = body.get("prompt_logprobs")
    return isinstance(entries, list) and any(isinstance(e, Mapping) for e in entries)


def _ranked_first(record: Mapping[str, Any]) -> bool:
    return finite_number(record.get("rank")) == 1


def _actual_token(entry: Mapping[str, Any]) -> Mapping[str, Any]:
    """The prompt token's own record in one ``prompt_logprobs`` entry (``prompt_logprobs=1``).

    The entry holds the prompt token, plus the top-1 token when that is another one.
    vLLM versions order them differently (the prompt token first with its true rank, or
    last with rank k+1), so the rule is: the only record, else the one not ranked 1.
    """
    records = list(entry.values())
    if not all(isinstance(r, Mapping) for r in records):
        raise MalformedLogprobsError("prompt_logprobs entry", dict(entry), "not token records")
    if len(records) == 1:
        return records[0]
    others = [r for r in records if not _ranked_first(r)]
    if len(others) != 1:
        raise MalformedLogprobsError(
            "prompt_logprobs entry", dict(entry), "cannot tell the prompt token (ranks)"
        )
    return others[0]


def prompt_path_score(body: Mapping[str, Any], continuation: str) -> tuple[float, bool]:
    """``(log p(continuation | audio, prompt), greedy)`` from a prompt-path answer.

    Walks ``prompt_logprobs`` back from the end until the decoded tokens spell
    ``continuation`` exactly; their log-probabilities are summed, and the continuation
    is greedy when each of its tokens ranked first.

    Raises:
        ContinuationMismatchError: The last tokens do not spell ``continuation``.
        MalformedLogprobsError: An entry lacks its ``logprob`` number, or a number (or
            their sum) is not finite.
    """
    entries = body.get("prompt_logprobs") or []
    text, total, greedy = "", 0.0, True
    for entry in reversed(entries):
        if not isinstance(entry, Mapping) or len(text) >= len(continuation):
            break
        record = _actual_token(entry)
        text = str(record.get("decoded_token", "")) + text
        total += _logprob(record, "prompt_logprobs entry")
        # the argmax: the only record, ranked first (a bridge sends no rank when unknown)
        greedy = greedy and len(entry) == 1 and record.get("rank", 1) == 1
    if text != continuation:
        raise ContinuationMismatchError(
            f"lalm-api: the prompt's last tokens spell {text!r}, not the continuation "
            f"{continuation!r}: the server's chat template does not end the prompt with the "
            "prefilled answer. Use logprobs=top, or serve the model with its own template."
        )
    if not math.isfinite(total):  # finite terms can still sum past the float range
        raise MalformedLogprobsError("prompt_logprobs sum", total, "not finite")
    return total, greedy


def top_logprobs_of(body: Mapping[str, Any]) -> list[tuple[str, float]] | None:
    """``[(token, logprob), ...]`` of the first answer token, or ``None`` when absent.

    Raises:
        MalformedLogprobsError: An entry lacks its ``token`` text or its finite
            ``logprob`` number.
    """
    try:
        first = body["choices"][0]["logprobs"]["content"][0]
    except (KeyError, IndexError, TypeError):
        return None
    candidates = first.get("top_logprobs") if isinstance(first, Mapping) else None
    if not candidates:
        return None
    if not isinstance(candidates, list):
        raise MalformedLogprobsError("top_logprobs", candidates, "not a list")
    out = []
    for entry in candidates:
        value = _logprob(entry, "top_logprobs entry")
        if not isinstance(entry.get("token"), str):
            raise MalformedLogprobsError("top_logprobs entry", entry, "no 'token' text")
        out.append((entry["token"], value))
    _check_mass(out)
    return out


def _check_mass(top: Sequence[tuple[str, float]]) -> None:
    """Distinct tokens' probabilities add up to 1 at most: a list whose sum is above
    (the same token listed twice with two values, by a proxy or a buggy server) would
    score a letter above probability 1, so the reply is malformed, not summed."""
    mass = sum(math.exp(logprob) for _token, logprob in top)
    if mass > 1.0 + _MASS_SLACK:
        tokens = [token for token, _logprob in top]
        twice = sorted({token for token in tokens if tokens.count(token) > 1})
        why = f"the tokens' probabilities add up to {mass:.3f}, above 1"
        if twice:
            why += f" (listed more than once: {', '.join(map(repr, twice))})"
        raise MalformedLogprobsError("top_logprobs", [list(pair) for pair in top], why)


#: Rounding allowed in the sum of the top tokens' probabilities (servers round each
#: log-probability; twenty float32 values stay far below this).
_MASS_SLACK = 1e-3


def top_path_scores(
    top: Sequence[tuple[str, float]], continuations: Sequence[str]
) -> list[tuple[float, bool] | None]:
    """``(log p, greedy)`` of each continuation from the top tokens; ``None`` when absent.

    A continuation (``" A"``) is matched by every top token spelling it once stripped
    (``"A"``, ``" A"``); their probabilities add up. It is greedy when the most likely
    token spells it. ``None`` means "not among the top tokens": the caller counts it.
    """
    _check_mass(top)  # a stored list of an older version is read here too
    best = max(top, key=lambda pair: pair[1])[0].strip() if top else None
    out: list[tuple[float, bool] | None] = []
    for continuation in continuations:
        wanted = continuation.strip()
        matches = [logprob for token, logprob in top if token.strip() == wanted]
        if not matches:
            out.append(None)
            continue
        peak = max(matches)
        total = peak + math.log(sum(math.exp(lp - peak) for lp in matches))
        out.append((min(total, 0.0), best == wanted))  # within _MASS_SLACK of 0: rounding
    return out
