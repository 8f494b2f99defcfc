"""What ``lalm-api`` sends: the audio as a WAV content part, and the three request bodies.

The waveform comes from :func:`lm_eval_rul.audio.condition_audio` (the same samples
``lalm`` feeds its processor), is written as a WAV file at the rate the user chose, and
travels base64-encoded in an OpenAI ``input_audio`` part, before the question text
(:func:`~lm_eval_rul.models.common.chat_messages`). The digest of the exact WAV bytes
keys the resume cache, so any change in what the server hears is a new entry.

By default the WAV holds 32-bit floats (``FLOAT``): the server decodes exactly the
samples ``lalm`` hears, values beyond +-1 included (``audio=noise`` has sigma 1, so about a
third of its samples lie beyond +-1). A PCM subtype, for an endpoint that refuses float
WAV, clips every sample to +-1 and quantises the rest: :class:`AudioEncoder` counts the
clipped samples, and the run warns once and records them (:meth:`AudioEncoder.sent`).
"""

from __future__ import annotations

import base64
import hashlib
import io
import logging
import struct
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any

import numpy as np

from ..audio import AudioSpec
from ..audio.requests import RequestAudio
from .common import chat_messages

logger = logging.getLogger(__name__)

__all__ = [
    "WAV_SUBTYPES",
    "DEFAULT_WAV_SUBTYPE",
    "wav_bytes",
    "input_audio_part",
    "EncodedAudio",
    "AudioEncoder",
    "prompt_logprobs_body",
    "top_logprobs_body",
]

#: WAV sample formats ``wav_subtype=`` accepts (soundfile names). ``FLOAT`` carries the
#: float32 waveform exactly (values beyond +-1 too); the PCM subtypes clip to +-1 and
#: quantise (``PCM_16``: half the size, a step of 3e-5).
WAV_SUBTYPES: tuple[str, ...] = ("PCM_16", "PCM_24", "PCM_32", "FLOAT")
#: What ``lalm-api`` sends unless ``wav_subtype=`` says otherwise: the exact samples.
DEFAULT_WAV_SUBTYPE = "FLOAT"
#: Quantisation step of each subtype, i.e. the precision the server decodes (0: exact).
WAV_PRECISION: dict[str, float] = {
    "PCM_16": 2.0**-15, "PCM_24": 2.0**-23, "PCM_32": 2.0**-31, "FLOAT": 0.0
}  # fmt: skip


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
        self.encodes = 0
        self._digests: dict[Hashable, str | None] = {}
        self._clipped: dict[Hashable, tuple[int, int]] = {}  # key -> (clipped, samples)
        self._parts: OrderedDict[Hashable, EncodedAudio] = OrderedDict()

    def get(self, key: Hashable, source: RequestAudio) -> EncodedAudio:
        """The encoded audio of a request's ``source`` (``key`` is its key)."""
        if key in self._parts:
            self._parts.move_to_end(key)
            return self._parts[key]
        _, waves = source.waves(self.spec)
        self.encodes += 1
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
                "first clipped one, e.g. audio=noise with noise_std=%g), so the server hears "
                "other audio than lalm feeds its processor; counted in audio_sent_clipped_samples. "
                "Send wav_subtype=FLOAT (the default) if the endpoint takes float WAV.",
                self.subtype,
                clipped,
                total,
                self.spec.noise_std,
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
