"""``audio=reversed``: the item's own clip played backwards.

Same spectrum and loudness, no temporal order: the control that asks whether a model uses
rhythm and melody at all. The clip is decoded, resampled and trimmed (to ``max_seconds``,
or cut to the document's ``audio_window``) exactly as under ``original``, and *then*
reversed, so the model hears the window ``original`` would play, backwards, sample for
sample (``reversed[i] == original[-1 - i]``).

Its key wraps the ``original`` key, ``("reversed", ("clip", ref, rate, max_seconds[, start,
end]))``: never equal to an ``original`` key, so the two never share a cache entry.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np

from ..decoding import CLIP_CACHE
from .basic import clip_key, clip_waveform, describe_clip
from .registry import OWN_CLIP, Condition, register_condition
from .spec import AudioSpec

__all__ = ["Reversed"]


@register_condition
class Reversed(Condition):
    name = "reversed"
    description = "the item's own clip (the window original plays) played backwards"
    reads = OWN_CLIP
    report_order = 15
    colour = "#DD8452"

    def key(self, doc: Mapping[str, Any], spec: AudioSpec) -> Hashable:
        return ("reversed", clip_key(doc, doc.get("audio_ref"), spec))

    def waveform(self, key: tuple[Any, ...], doc: Mapping[str, Any], spec: AudioSpec) -> np.ndarray:
        wave = CLIP_CACHE.get(key)
        if wave is None:  # reversed once per clip and window, like a decode
            wave = np.ascontiguousarray(clip_waveform(key[1])[::-1])
            wave.flags.writeable = False
            CLIP_CACHE.put(key, wave)
        return wave

    def describe(self, key: tuple[Any, ...]) -> str:
        return f"{describe_clip(key[1])}, reversed"
