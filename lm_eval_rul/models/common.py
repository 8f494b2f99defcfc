"""What the audio models share: the chat message layout and the audio settings they report.

``lalm`` renders these messages with the checkpoint's processor; ``lalm-api`` sends them
to a chat endpoint, whose server renders them with the same chat template. One layout
for both (the audio first in the user turn, then the question) is what makes their
scores comparable.
"""

from __future__ import annotations

from typing import Any

from ..audio import AudioSpec

__all__ = ["chat_messages", "audio_settings"]


def chat_messages(
    text: str,
    *,
    audio_part: dict[str, Any] | None = None,
    system_prompt: str | None = None,
    audio_parts: list[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """The chat of one question: an optional system turn, then the user turn.

    Args:
        text: The question (the harness's context).
        audio_part: The audio content part (``{"type": "audio", ...}`` for a processor,
            ``{"type": "input_audio", ...}`` for an OpenAI-compatible endpoint), placed
            before the text; ``None`` for a prompt without audio.
        system_prompt: A system message; ``None`` keeps the chat template's own.
        audio_parts: Several audio parts, in order, before the text (instead of
            ``audio_part``; empty: no audio).
    """
    messages: list[dict[str, Any]] = []
    if system_prompt:
        messages.append({"role": "system", "content": system_prompt})
    content = list(audio_parts or ([audio_part] if audio_part is not None else []))
    content.append({"type": "text", "text": text})
    messages.append({"role": "user", "content": content})
    return messages


def audio_settings(spec: AudioSpec) -> dict[str, Any]:
    """The audio condition and its settings as written to the results' ``config``."""
    return {
        "audio_condition": spec.condition,
        "audio_seed": spec.seed,
        "audio_noise_seconds": spec.noise_seconds,
        "audio_noise_std": spec.noise_std,
        "audio_sampling_rate": spec.sampling_rate,
        "audio_max_seconds": spec.max_seconds,
    }
