"""The conditions ``original``, ``noise``, ``silence``, ``random`` and ``none``.

Their keys are those of every release before the conditions became objects, element for
element (``tests/test_conditions.py`` pins them): they key the resume caches of ``lalm``
and ``lalm-api``, so a changed key would silently recompute a user's finished work.

* a clip (``original``, ``random``): ``("clip", ref, rate, max_seconds[, start, end])``,
  the same for every question and fold using it, the window's bounds when the document has
  an ``audio_window`` (:mod:`~lm_eval_rul.audio.windows`);
* ``noise``: ``("noise", seed, item id, samples, std, rate)``;
* ``silence``: ``("silence", samples, rate)``;
* ``none``: ``("none",)``.
"""

from __future__ import annotations

import logging
from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np

from ...questions import item_rng
from ..arrays import array_clip, is_array_ref
from ..decoding import CLIP_CACHE, count_trim, load_clip, load_window
from ..sources import ref_name
from ..windows import doc_window, fit_window
from .availability import check_audio_available
from .pools import random_clip
from .registry import CLIP_POOL, NOTHING, OWN_CLIP, Condition, Parameter, register_condition
from .spec import AudioSpec

logger = logging.getLogger(__name__)

#: Longest ``noise`` / ``silence`` waveform: an hour (a longer one only fills memory).
MAX_NOISE_SECONDS = 3600.0
#: ``noise`` and ``random`` draw from (seed, item id).
SEED = Parameter(
    "seed", int, 0, doc="seed of ``noise`` and ``random`` (with the item id)", recorded=True
)
#: The ``noise`` / ``silence`` waveform's length.
NOISE_SECONDS = Parameter(
    "noise_seconds",
    float,
    10.0,
    low=0,
    above=True,
    high=MAX_NOISE_SECONDS,
    unit="seconds",
    doc="length of the ``noise`` / ``silence`` waveform (at most the model's limit)",
    recorded=True,
)
#: The ``noise`` waveform's standard deviation.
NOISE_STD = Parameter(
    "noise_std", float, 1.0, low=0, doc="standard deviation of ``noise``", recorded=True
)

__all__ = [
    "SEED",
    "NOISE_SECONDS",
    "NOISE_STD",
    "MAX_NOISE_SECONDS",
    "noise_samples",
    "clip_key",
    "clip_waveform",
    "describe_clip",
    "noise_waveform",
    "Original",
    "Noise",
    "Silence",
    "RandomClip",
    "NoAudio",
]


def clip_key(doc: Mapping[str, Any], ref: str | None, spec: AudioSpec) -> tuple[Any, ...]:
    """``("clip", ref, rate, max_seconds[, start, end])``: the key of ``ref`` heard for ``doc``.

    Raises:
        MissingAudioError: ``ref`` is empty (the document has no clip).
        AudioError: The document's window is longer than ``spec.max_seconds``.
    """
    if not ref:
        check_audio_available([doc], spec.condition)
    sr = int(spec.sampling_rate)
    window = doc_window(doc)
    if window is None:
        return ("clip", ref, sr, spec.max_seconds)
    fitted = fit_window(doc, window, spec.max_seconds)
    if fitted != window:  # counted with the clips trimmed to the limit, once per window
        label = f"{ref_name(ref)} [{window[0]:g}-{window[1]:g} s]"
        count_trim(label, window[1] - window[0], float(spec.max_seconds))  # type: ignore[arg-type]
    return ("clip", ref, sr, spec.max_seconds, *fitted)


def clip_waveform(key: tuple[Any, ...]) -> np.ndarray:
    """The waveform of a :func:`clip_key`: decoded, resampled, trimmed to ``max_seconds``
    (or cut to the window), cached per clip and window."""
    _, ref, sr, max_seconds, *window = key
    if is_array_ref(ref):  # the harness's own audio argument (doc_to_audio)
        return array_clip(ref, sampling_rate=sr, max_seconds=max_seconds)
    if not window:
        return load_clip(ref, sampling_rate=sr, max_seconds=max_seconds)
    # only the window's frames are decoded (cached per window)
    return load_window(ref, sampling_rate=sr, window=(window[0], window[1]))


def describe_clip(key: tuple[Any, ...]) -> str:
    """A :func:`clip_key` in words: the file's name, and the window when there is one."""
    _, ref, _, _, *window = key
    name = ref_name(ref)
    return f"{name} [{window[0]:g}-{window[1]:g} s]" if window else name


def noise_samples(spec: AudioSpec) -> int:
    """Number of samples of the ``noise`` / ``silence`` waveforms: ``noise_seconds`` at
    most the model's limit, at least one."""
    n = int(round(spec.noise_seconds * spec.sampling_rate))
    if spec.max_seconds is not None:
        n = min(n, int(round(spec.max_seconds * spec.sampling_rate)))
    return max(n, 1)


def noise_waveform(spec: AudioSpec, item_id: str) -> np.ndarray:
    """Gaussian noise reproducible from (``spec.seed``, ``item_id``)."""
    rng = item_rng("audio-noise", int(spec.seed), str(item_id))
    wave = rng.normal(0.0, float(spec.noise_std), size=noise_samples(spec)).astype(np.float32)
    wave.flags.writeable = False
    return wave


class _Synthetic(Condition):
    """A waveform ``noise_seconds`` long, made rather than read (``noise``, ``silence``)."""

    reads = NOTHING
    synthetic_length = True

    def check_spec(self, spec: AudioSpec) -> None:
        """Say once that a chosen length is cut to the model's limit (not for the default)."""
        limit = spec.max_seconds
        if "noise_seconds" in spec.given and limit is not None and spec.noise_seconds > limit:
            logger.warning(
                "noise_seconds=%g is longer than the model's limit of %g s; the %s is %g s long",
                spec.noise_seconds,
                limit,
                self.name,
                limit,
            )


class _PlaysClip(Condition):
    """A clip heard as it is (``original``, ``random``)."""

    key_kind = "clip"

    def waveform(self, key: tuple[Any, ...], doc: Mapping[str, Any], spec: AudioSpec) -> np.ndarray:
        return clip_waveform(key)

    def describe(self, key: tuple[Any, ...]) -> str:
        return describe_clip(key)


@register_condition
class Original(_PlaysClip):
    name = "original"
    description = "the item's own clip (the reference every other condition is compared with)"
    reads = OWN_CLIP
    alters_clip = False
    report_order = 10
    colour = "#55A868"

    def key(self, doc: Mapping[str, Any], spec: AudioSpec) -> Hashable:
        return clip_key(doc, doc.get("audio_ref"), spec)


@register_condition
class Noise(_Synthetic):
    name = "noise"
    description = "Gaussian noise (noise_seconds long, std noise_std), seeded by (seed, item id)"
    parameters = (SEED, NOISE_SECONDS, NOISE_STD)
    report_order = 20
    colour = "#C44E52"

    def key(self, doc: Mapping[str, Any], spec: AudioSpec) -> Hashable:
        item_id = str(doc.get("id"))
        return (
            "noise",
            int(spec.seed),
            item_id,
            noise_samples(spec),
            float(spec.noise_std),
            int(spec.sampling_rate),
        )

    def waveform(self, key: tuple[Any, ...], doc: Mapping[str, Any], spec: AudioSpec) -> np.ndarray:
        return noise_waveform(spec, str(doc.get("id")))

    def describe(self, key: tuple[Any, ...]) -> str:
        _, seed, item, samples, std, rate = key
        return f"noise (seed {seed}, item {item}, {samples / rate:g} s, std {std:g})"


@register_condition
class Silence(_Synthetic):
    name = "silence"
    description = "digital silence, noise_seconds long"
    parameters = (NOISE_SECONDS,)
    report_order = 30
    colour = "#8172B2"

    def key(self, doc: Mapping[str, Any], spec: AudioSpec) -> Hashable:
        return ("silence", noise_samples(spec), int(spec.sampling_rate))

    def waveform(self, key: tuple[Any, ...], doc: Mapping[str, Any], spec: AudioSpec) -> np.ndarray:
        cached = CLIP_CACHE.get(key)
        if cached is None:
            cached = np.zeros(noise_samples(spec), dtype=np.float32)
            cached.flags.writeable = False
            CLIP_CACHE.put(key, cached)
        return cached

    def describe(self, key: tuple[Any, ...]) -> str:
        return f"silence ({key[1] / key[2]:g} s)"


@register_condition
class RandomClip(_PlaysClip):
    name = "random"
    description = (
        "another clip of the same benchmark, never one of the item's own track, drawn "
        "from (seed, item id)"
    )
    reads = CLIP_POOL
    parameters = (SEED,)
    report_order = 50
    colour = "#CCB974"

    def key(self, doc: Mapping[str, Any], spec: AudioSpec) -> Hashable:
        return clip_key(doc, random_clip(doc, spec.seed), spec)


@register_condition
class NoAudio(Condition):
    name = "none"
    description = "no audio at all: the prompt has no audio slot (the text-leakage control)"
    reads = NOTHING
    audio_slot = False
    report_order = 60
    colour = "#64B5CD"

    def key(self, doc: Mapping[str, Any], spec: AudioSpec) -> Hashable:
        return ("none",)

    def waveform(self, key: tuple[Any, ...], doc: Mapping[str, Any], spec: AudioSpec) -> None:
        return None

    def describe(self, key: tuple[Any, ...]) -> str:
        return "none"
