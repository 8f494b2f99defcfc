"""``audio=excerpt``: only ``excerpt_seconds`` of the item's own clip.

How much of a clip does a question need? ``excerpt`` plays a stretch of the clip exactly
as ``original`` plays it (decoded, resampled, trimmed to ``max_seconds`` or cut to the
document's ``audio_window``), cut to ``excerpt_seconds`` at ``excerpt_at``:

* ``start``: its first seconds; ``middle``: centred; ``end``: its last seconds;
* ``random``: a start drawn uniformly from (``seed``, item id), so each question of a clip
  hears its own stretch and a rerun hears the same one.

A clip no longer than ``excerpt_seconds`` is heard whole; such clips are counted and said
once per run (one warning with the count and the first of them). The stretch heard is
logged per sample as ``audio_window: [start_s, end_s]`` (seconds of the item's file), and
named in ``audio_heard``. Every engine hears the same samples: the waveform is made here,
once, for ``lalm``, ``lalm-vllm``, ``lalm-api`` and the bridge alike.

Key: ``("excerpt", <original's clip key>, seconds, at[, seed, item id])`` (the seed and
the item only for ``random``): never an ``original`` key, and one key per clip for the
fixed positions, so the questions of a clip share the cut.
"""

from __future__ import annotations

import atexit
import logging
import threading
from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np

from ...questions import item_rng
from ..decoding import CLIP_CACHE, add_run_report
from .basic import SEED, clip_key, clip_waveform, describe_clip
from .registry import OWN_CLIP, Condition, Parameter, register_condition
from .spec import AudioSpec

logger = logging.getLogger(__name__)

__all__ = [
    "EXCERPT_SECONDS",
    "EXCERPT_AT",
    "EXCERPT_POSITIONS",
    "Excerpt",
    "excerpt_bounds",
    "report_short_clips",
]

#: Where the excerpt is cut from.
EXCERPT_POSITIONS: tuple[str, ...] = ("start", "middle", "end", "random")
EXCERPT_SECONDS = Parameter(
    "excerpt_seconds",
    float,
    10.0,
    low=0,
    above=True,
    unit="seconds",
    doc="length of the ``excerpt`` heard (a shorter clip is heard whole, and counted)",
)
EXCERPT_AT = Parameter(
    "excerpt_at",
    str,
    "start",
    choices=EXCERPT_POSITIONS,
    doc="where the ``excerpt`` is cut: start, middle, end, or random (seed and item id)",
)


def excerpt_bounds(
    length: int, sampling_rate: int, seconds: float, at: str, seed: int, item_id: str
) -> tuple[int, int]:
    """``(first, last)`` samples of the excerpt of a clip of ``length`` samples.

    >>> excerpt_bounds(100, 10, 3.0, "start", 0, "a"), excerpt_bounds(100, 10, 3.0, "end", 0, "a")
    ((0, 30), (70, 100))
    >>> excerpt_bounds(100, 10, 3.0, "middle", 0, "a"), excerpt_bounds(20, 10, 3.0, "end", 0, "a")
    ((35, 65), (0, 20))
    """
    wanted = max(1, int(round(seconds * sampling_rate)))
    if length <= wanted:
        return 0, length
    room = length - wanted
    if at == "start":
        first = 0
    elif at == "middle":
        first = room // 2
    elif at == "end":
        first = room
    elif at == "random":
        first = int(item_rng("audio-excerpt", int(seed), str(item_id)).integers(0, room + 1))
    else:
        raise ValueError(f"excerpt_at={at!r} is not one of {', '.join(EXCERPT_POSITIONS)}")
    return first, first + wanted


class _Short:
    """Clips no longer than the excerpt in this process, said once per run."""

    def __init__(self) -> None:
        self.keys: dict[Hashable, tuple[str, float, float]] = {}
        self.lock = threading.Lock()
        self.registered = False

    def add(self, key: Hashable, name: str, seconds: float, wanted: float) -> None:
        with self.lock:
            self.keys.setdefault(key, (name, seconds, wanted))
            if not self.registered:
                atexit.register(report_short_clips)
                self.registered = True


_SHORT = _Short()


def report_short_clips() -> int:
    """Log the one warning about the clips heard whole (no longer than ``excerpt_seconds``)
    since the last call; returns their count."""
    with _SHORT.lock:
        found = list(_SHORT.keys.values())
        _SHORT.keys.clear()
    if found:
        name, seconds, wanted = found[0]
        others = f" and {len(found) - 1} other clip(s)" if len(found) > 1 else ""
        raising, logging.raiseExceptions = logging.raiseExceptions, False  # at exit
        try:
            logger.warning(
                "audio=excerpt: %d clip(s) are no longer than excerpt_seconds=%g and were heard "
                "whole: %s (%.2f s)%s",
                len(found),
                wanted,
                name,
                seconds,
                others,
            )
        finally:
            logging.raiseExceptions = raising
    return len(found)


add_run_report(report_short_clips)


@register_condition
class Excerpt(Condition):
    name = "excerpt"
    description = (
        "excerpt_seconds of the item's own clip (the window original plays), cut at "
        "excerpt_at: start, middle, end or random (seed, item id)"
    )
    reads = OWN_CLIP
    parameters = (EXCERPT_SECONDS, EXCERPT_AT, SEED)
    report_order = 70
    colour = "#4C9F9F"

    def key(self, doc: Mapping[str, Any], spec: AudioSpec) -> Hashable:
        clip = clip_key(doc, doc.get("audio_ref"), spec)
        at = str(spec.excerpt_at)
        tail = (int(spec.seed), str(doc.get("id"))) if at == "random" else ()
        return ("excerpt", clip, float(spec.excerpt_seconds), at, *tail)

    def _cut(self, key: tuple[Any, ...]) -> tuple[np.ndarray, int, int]:
        """(the clip as original plays it, first sample, last sample) of ``key``."""
        _, clip, seconds, at, *tail = key
        seed, item = tail if tail else (0, "")
        wave = clip_waveform(clip)
        rate = int(clip[2])
        first, last = excerpt_bounds(wave.shape[0], rate, seconds, at, seed, item)
        if last - first < int(round(seconds * rate)):
            _SHORT.add(clip, describe_clip(clip), wave.shape[0] / rate, seconds)
        return wave, first, last

    def waveform(self, key: tuple[Any, ...], doc: Mapping[str, Any], spec: AudioSpec) -> np.ndarray:
        cached = CLIP_CACHE.get(key)
        if cached is None:
            wave, first, last = self._cut(key)
            cached = np.ascontiguousarray(wave[first:last])
            cached.flags.writeable = False
            CLIP_CACHE.put(key, cached)
        return cached

    def window(self, key: tuple[Any, ...]) -> tuple[float, float]:
        clip = key[1]
        _, first, last = self._cut(key)
        rate = int(clip[2])
        offset = float(clip[4]) if len(clip) > 4 else 0.0  # the document's own window
        return offset + first / rate, offset + last / rate

    def describe(self, key: tuple[Any, ...]) -> str:
        start, end = self.window(key)
        return f"{describe_clip(key[1])}, excerpt {start:.2f}-{end:.2f} s ({key[3]})"

    def check_spec(self, spec: AudioSpec) -> None:
        limit = spec.max_seconds
        if "excerpt_seconds" in spec.given and limit is not None and spec.excerpt_seconds > limit:
            logger.warning(
                "excerpt_seconds=%g is longer than the model's limit of %g s: a clip that long "
                "is heard as original plays it",
                spec.excerpt_seconds,
                limit,
            )
