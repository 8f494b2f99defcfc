"""What ``lalm-api`` sends and how it reads the letters' log-probabilities back.

The waveform ``lalm`` hears goes as a base64 WAV ``input_audio`` part before the question;
the digest of the exact WAV bytes keys the resume cache. Letter scoring over an API:
``docs/method.md``.
"""

from __future__ import annotations

import base64
import hashlib
import io
import logging
import math
import struct
from collections import OrderedDict
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from ..audio import AudioSpec
from ..audio.requests import RequestAudio
from .api_http import APIError, finite_number, log_probability
from .core import audio_words, chat_messages

logger = logging.getLogger(__name__)

#: WAV sample formats ``wav_subtype=`` accepts (soundfile names). ``FLOAT`` carries the
#: float32 waveform exactly (values beyond +-1 too); the PCM subtypes clip to +-1 and
#: quantise (``PCM_16``: half the size, a step of 3e-5).
WAV_SUBTYPES: tuple[str, ...] = ("PCM_16", "PCM_24", "PCM_32", "FLOAT")
#: What ``lalm-api`` sends unless ``wav_subtype=`` says otherwise: the exact samples.
DEFAULT_WAV_SUBTYPE = "FLOAT"
#: Quantisation step of each subtype, i.e. the precision the server decodes (0: exact).
WAV_PRECISION: dict[str, float] = {
    "PCM_16": 2.0**-15,
    "PCM_24": 2.0**-23,
    "PCM_32": 2.0**-31,
    "FLOAT": 0.0,
}


def wav_bytes(wave: np.ndarray, sampling_rate: int, subtype: str = DEFAULT_WAV_SUBTYPE) -> bytes:
    """The bytes of a mono WAV file holding ``wave``.

    Args:
        wave: Mono float waveform (PCM subtypes clip it to [-1, 1]).
        sampling_rate: Its rate in Hz.
        subtype: One of :data:`WAV_SUBTYPES`.
    """
    import soundfile as sf

    buffer = io.BytesIO()
    samples = np.asarray(wave, dtype=np.float32)
    sf.write(buffer, samples, int(sampling_rate), subtype=subtype, format="WAV")
    return _without_chunk(buffer.getvalue(), b"PEAK")


def _without_chunk(wav: bytes, chunk_id: bytes) -> bytes:
    """``wav`` without its ``chunk_id`` chunks.

    libsndfile adds a ``PEAK`` chunk, holding the time of writing, to float WAV files;
    without it the same samples always give the same bytes (and cache digest).
    """
    chunks, position = [], 12  # after "RIFF", the size and "WAVE"
    while position + 8 <= len(wav):
        size = struct.unpack("<I", wav[position + 4 : position + 8])[0]
        end = position + 8 + size + (size & 1)
        if wav[position : position + 4] != chunk_id:
            chunks.append(wav[position:end])
        position = end
    body = b"WAVE" + b"".join(chunks)
    return b"RIFF" + struct.pack("<I", len(body)) + body


def input_audio_part(wav: bytes) -> dict[str, Any]:
    """The OpenAI chat content part of a WAV file (vLLM, OpenAI and Gemini read it)."""
    data = base64.b64encode(wav).decode("ascii")
    return {"type": "input_audio", "input_audio": {"data": data, "format": "wav"}}


class EncodedAudio:
    """One waveform as sent: its WAV digest, and its content part (``None``: no audio)."""

    def __init__(self, wavs: list[bytes] | None) -> None:
        digests = [hashlib.sha256(wav).hexdigest() for wav in wavs or []]
        if len(digests) > 1:  # several clips: one digest of the ordered digests
            digests = [hashlib.sha256(" ".join(digests).encode()).hexdigest()]
        self.digest = digests[0] if digests else None
        self.parts = [input_audio_part(wav) for wav in wavs or []]


class AudioEncoder:
    """The encoded audio of each condition key, kept for the few clips in use.

    Requests are grouped by :func:`~lm_eval_rul.audio.condition_key`, so the letters,
    folds and questions of a clip share one encoding; digests are remembered for the
    whole run (cache keys), content parts only in a small LRU (their base64 is large).

    Args:
        spec: What the model hears (condition, rate, seed, noise settings).
        subtype: WAV sample format (:data:`WAV_SUBTYPES`).
        max_parts: Content parts kept in memory.
    """

    def __init__(self, spec: AudioSpec, subtype: str, *, max_parts: int = 16) -> None:
        self.spec = spec
        self.subtype = subtype
        self.max_parts = max_parts
        self._digests: dict[Hashable, str | None] = {}
        self._clipped: dict[Hashable, tuple[int, int]] = {}  # key -> (clipped, samples)
        self._parts: OrderedDict[Hashable, EncodedAudio] = OrderedDict()

    def get(self, key: Hashable, source: RequestAudio) -> EncodedAudio:
        """The encoded audio of a request's ``source`` (``key`` is its key)."""
        if key in self._parts:
            self._parts.move_to_end(key)
            return self._parts[key]
        _, waves = source.waves(self.spec, key)
        rate = self.spec.sampling_rate
        if waves is not None and self.subtype != "FLOAT" and key not in self._clipped:
            self._count_clipped(key, waves)
        encoded = EncodedAudio(
            None if waves is None else [wav_bytes(w, rate, self.subtype) for w in waves]
        )
        self._digests[key] = encoded.digest
        self._parts[key] = encoded
        while len(self._parts) > self.max_parts:
            self._parts.popitem(last=False)
        return encoded

    def _count_clipped(self, key: Hashable, waves: list[np.ndarray]) -> None:
        clipped = sum(int(np.count_nonzero(np.abs(w) > 1.0)) for w in waves)
        total = sum(int(np.size(w)) for w in waves)
        if clipped and not any(n for n, _ in self._clipped.values()):
            logger.warning(
                "lalm-api: wav_subtype=%s clips the waveform to +-1 (%d of %d samples of the "
                "first clipped one; this run: %s), so the server hears "
                "other audio than lalm feeds its processor; counted in audio_sent_clipped_samples. "
                "Send wav_subtype=FLOAT (the default) if the endpoint takes float WAV.",
                self.subtype,
                clipped,
                total,
                audio_words(self.spec),
            )
        self._clipped[key] = (clipped, total)

    def sent(self) -> dict[str, Any]:
        """What the server was sent, for the results' config: encoding, precision, clipping."""
        clipped = [n for n, _ in self._clipped.values()]
        return {
            "audio_sent_encoding": f"wav/{self.subtype}",
            "audio_sent_lossless": self.subtype == "FLOAT",
            "audio_sent_precision": WAV_PRECISION[self.subtype],
            "audio_sent_clipped_waveforms": sum(1 for n in clipped if n),
            "audio_sent_clipped_samples": sum(clipped),
        }

    def digest(self, key: Hashable, source: RequestAudio) -> str | None:
        """The sha256 of the WAV bytes heard (``None`` without audio)."""
        if key not in self._digests:
            self.get(key, source)
        return self._digests[key]

    def messages(
        self, key: Hashable, source: RequestAudio, text: str, system_prompt: str | None
    ) -> list[dict[str, Any]]:
        """The chat of one request: its audio parts first, then ``text``."""
        parts = self.get(key, source).parts
        return chat_messages(text, audio_parts=parts, system_prompt=system_prompt)


def prompt_logprobs_body(
    model: str, messages: list[dict[str, Any]], continuation: str
) -> dict[str, Any]:
    """The exact letter-scoring request (vLLM): the letter as a prefilled assistant turn.

    The server renders the chat with the assistant message continued (no end-of-turn),
    i.e. the generation prompt followed by ``continuation``, and returns the
    log-probability of every prompt token (``prompt_logprobs``), the letter's included.
    """
    return {
        "model": model,
        "messages": [*messages, {"role": "assistant", "content": continuation}],
        "add_generation_prompt": False,
        "continue_final_message": True,
        "prompt_logprobs": 1,
        "max_tokens": 1,
        "temperature": 0,
    }


def top_logprobs_body(model: str, messages: list[dict[str, Any]], k: int) -> dict[str, Any]:
    """The approximate letter-scoring request (any OpenAI-compatible server).

    One request per question: the ``k`` most likely first answer tokens with their
    log-probabilities (standard ``logprobs`` / ``top_logprobs`` fields only).
    """
    return {
        "model": model,
        "messages": messages,
        "max_tokens": 1,
        "temperature": 0,
        "logprobs": True,
        "top_logprobs": int(k),
    }


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
    (``"A"``, ``" A"``); a word (``" yes"``) by its case variants too (``"Yes"``,
    ``" YES"``), a single letter keeping its case (``"a"`` is a word, not option A); their
    probabilities add up. It is greedy when the most likely token spells it. ``None`` means
    "not among the top tokens": the caller counts it.
    """
    _check_mass(top)  # a stored list of an older version is read here too
    best = max(top, key=lambda pair: pair[1])[0] if top else None
    out: list[tuple[float, bool] | None] = []
    for continuation in continuations:
        matches = [logprob for token, logprob in top if _spells(token, continuation)]
        if not matches:
            out.append(None)
            continue
        peak = max(matches)
        total = peak + math.log(sum(math.exp(lp - peak) for lp in matches))
        greedy = best is not None and _spells(best, continuation)
        out.append((min(total, 0.0), greedy))  # within _MASS_SLACK of 0: rounding
    return out


def _spells(token: str, continuation: str) -> bool:
    """Whether a top token spells the continuation (:func:`top_path_scores`' rule)."""
    token, wanted = token.strip(), continuation.strip()
    return token == wanted or (len(wanted) > 1 and token.casefold() == wanted.casefold())
