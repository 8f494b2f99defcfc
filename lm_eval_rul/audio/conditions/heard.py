"""What a document is heard as: the key and the waveform, asked of the spec's condition."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np

from .spec import AudioSpec

__all__ = ["condition_key", "condition_audio"]


def condition_key(doc: Mapping[str, Any], spec: AudioSpec) -> Hashable:
    """The key of the waveform the model hears for ``doc``, without reading any audio.

    The same clip (``original``/``random``) gives the same key for every question and
    fold using it (see :mod:`.basic` for each condition's key). :func:`condition_audio`
    returns this same key with the waveform, so grouping by it never diverges from what is
    heard.

    Args:
        doc: A harness document (``Instance.doc``), with the fields of :func:`attach_audio`
            for the conditions that read a clip.
        spec: What the model wants.

    Raises:
        MissingAudioError: The condition reads a clip and the document has none.
        AudioError: The document's window is longer than ``spec.max_seconds``.
    """
    return spec.audio_condition.key(doc, spec)


def condition_audio(doc: Mapping[str, Any], spec: AudioSpec) -> tuple[Hashable, np.ndarray | None]:
    """(cache key, mono float32 waveform at ``spec.sampling_rate``) the model hears for ``doc``.

    ``(key, None)`` for condition ``none``. The key is :func:`condition_key`'s. Decoded
    clips are cached (decode + resample once per clip per process).
    """
    condition = spec.audio_condition
    key = condition.key(doc, spec)
    return key, condition.waveform(key, doc, spec)
