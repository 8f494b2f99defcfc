"""What the model hears for a document: the audio conditions, reproducibly.

:func:`condition_audio` returns the waveform for one of :data:`AUDIO_CONDITIONS` with
its key, and :func:`condition_key` the same key without reading any audio (to group
requests by clip). ``noise`` is reproducible from (seed, item id); ``random`` draws
another clip of the same benchmark from its full clip list (registered by
:func:`~lm_eval_rul.audio.layouts.attach_audio`), never the item's own track, unless
the document names its random clip itself (``audio_random_ref``, chosen by the task).
A document with an ``audio_window`` hears only that stretch of the clip
(:mod:`.windows`). Documents without audio fields (text-only runs) still work with
``noise``, ``silence`` and ``none``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import warnings
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..questions import item_rng
from .arrays import array_clip, is_array_ref
from .decoding import CLIP_CACHE, load_clip, load_window
from .errors import (
    AMBIGUOUS,
    AMBIGUOUS_HINT,
    AUDIO_CONDITIONS,
    AudioError,
    MissingAudioError,
    UnknownConditionError,
)
from .windows import check_window_fits, doc_window

__all__ = [
    "AUDIO_CONDITIONS",
    "FILE_CONDITIONS",
    "AudioSpec",
    "noise_waveform",
    "register_clip_pool",
    "random_clip",
    "condition_key",
    "condition_audio",
    "check_audio_available",
    "pool_refs",
    "CLIP_IDENTITY",
]

logger = logging.getLogger(__name__)

#: Conditions that read the benchmark's audio files.
FILE_CONDITIONS: tuple[str, ...] = ("original", "random")


@dataclass(frozen=True)
class AudioSpec:
    """What the model wants to hear.

    Attributes:
        sampling_rate: The processor's rate (``feature_extractor.sampling_rate``).
        max_seconds: The family's longest input; longer audio is trimmed with a warning.
        condition: One of :data:`AUDIO_CONDITIONS`.
        seed: Seed of the ``noise`` and ``random`` conditions.
        noise_seconds: Length of the ``noise`` and ``silence`` waveforms.
        noise_std: Standard deviation of the Gaussian noise.
    """

    sampling_rate: int
    max_seconds: float | None
    condition: str = "original"
    seed: int = 0
    noise_seconds: float = 10.0
    noise_std: float = 1.0

    def __post_init__(self) -> None:
        if self.condition not in AUDIO_CONDITIONS:
            raise UnknownConditionError(self.condition)
        if int(self.sampling_rate) <= 0:
            raise AudioError(f"sampling_rate must be positive, got {self.sampling_rate!r}")
        if self.max_seconds is not None and self.max_seconds <= 0:
            raise AudioError(f"max_audio_seconds must be positive, got {self.max_seconds!r}")
        if self.noise_seconds <= 0:
            raise AudioError(f"noise_seconds must be positive, got {self.noise_seconds!r}")
        if self.noise_std < 0:
            raise AudioError(f"noise_std must be >= 0, got {self.noise_std!r}")
        if (
            self.condition in ("noise", "silence")
            and self.max_seconds is not None
            and self.noise_seconds > self.max_seconds
        ):
            logger.warning(
                "noise_seconds=%g is longer than the model's limit of %g s; the %s is %g s long",
                self.noise_seconds,
                self.max_seconds,
                self.condition,
                self.max_seconds,
            )

    @property
    def noise_samples(self) -> int:
        """Number of samples of the ``noise`` / ``silence`` waveforms."""
        n = int(round(self.noise_seconds * self.sampling_rate))
        if self.max_seconds is not None:
            n = min(n, int(round(self.max_seconds * self.sampling_rate)))
        return max(n, 1)



def noise_waveform(spec: AudioSpec, item_id: str) -> np.ndarray:
    """Gaussian noise reproducible from (``spec.seed``, ``item_id``)."""
    rng = item_rng("audio-noise", int(spec.seed), str(item_id))
    wave = rng.normal(0.0, float(spec.noise_std), size=spec.noise_samples).astype(np.float32)
    wave.flags.writeable = False
    return wave


_POOLS: dict[str, tuple[tuple[str, str], ...]] = {}
_WARNED_POOLS: set[str] = set()
#: Prefix of the track identity of a clip whose track and caption are both unknown.
CLIP_IDENTITY = "clip:"


def register_clip_pool(clips: Iterable[tuple[str, str]]) -> str:
    """Register a benchmark's full clip list ((ref, track) pairs); returns its id.

    The ``random`` condition draws from this list, so the choice depends only on the
    seed and the item, never on ``--limit`` or the data order.
    """
    pool = tuple(sorted(set((str(r), str(t)) for r, t in clips)))
    pool_id = hashlib.sha1(json.dumps(pool).encode("utf-8")).hexdigest()[:16]
    _POOLS[pool_id] = pool
    return pool_id


def pool_refs(pool_id: str) -> list[str]:
    """The clip references of a registered pool (empty when it is not registered here)."""
    return [ref for ref, _ in _POOLS.get(pool_id, ())]


def _warn_unknown_tracks(pool_id: str, pool: Sequence[tuple[str, str]]) -> None:
    """Warn (once per pool) that some clips count as their own track."""
    unknown = sum(track.startswith(CLIP_IDENTITY) for _, track in pool)
    if not unknown or pool_id in _WARNED_POOLS:
        return
    _WARNED_POOLS.add(pool_id)
    message = (
        f"audio=random: {unknown} of {len(pool)} clips have neither a known track nor a "
        "caption, so each of their files counts as its own track and an item may hear its "
        "own track from another question's file. Pass --metadata muchomusic_csv (or data "
        "with captions) so the tracks are known."
    )
    warnings.warn(message, stacklevel=3)
    logger.warning(message)


def random_clip(doc: Mapping[str, Any], seed: int) -> str:
    """The clip reference the ``random`` condition plays for ``doc``.

    The document's own ``audio_random_ref`` when the task chose one; else another clip
    of the same benchmark, never the item's own clip nor (when any other exists) a clip
    of the item's own track, drawn with a seed from (seed, item id). Reads no audio.
    """
    if doc.get("audio_random_ref"):
        return str(doc["audio_random_ref"])
    pool_id = doc.get("audio_pool")
    if not pool_id:
        raise MissingAudioError(
            {str(doc.get("id")): []},
            total=1,
            hint="Fix: audio=random needs the benchmark's audio: pass --metadata audio_dir "
            "or audio_hf_dataset.",
        )
    pool = _POOLS.get(pool_id)
    if pool is None:
        raise AudioError(
            f"item {doc.get('id')!r}: clip pool {pool_id} is not registered in this process; "
            "load the task's documents through its task functions (attach_audio registers "
            "the pool)."
        )
    _warn_unknown_tracks(pool_id, pool)
    own_ref, own_track = doc.get("audio_ref"), doc.get("audio_track")
    others = [ref for ref, track in pool if ref != own_ref and track != own_track]
    if not others:
        raise AudioError(
            f"item {doc.get('id')!r}: audio=random needs a clip of another track, but the "
            f"benchmark has only {len(pool)} clip(s), all of this item's track"
        )
    rng = item_rng("audio-random", int(seed), str(doc.get("id")))
    return others[int(rng.integers(len(others)))]


def condition_key(doc: Mapping[str, Any], spec: AudioSpec) -> Hashable:
    """The key of the waveform the model hears for ``doc``, without reading any audio.

    The same clip (``original``/``random``) gives the same key for every question and
    fold using it, followed by the window's start and end when the document has an
    ``audio_window``; noise is keyed by (seed, item id, length, std, rate); silence has one
    key per length and rate; ``none`` is ``("none",)``. :func:`condition_audio` returns
    this same key with the waveform, so grouping by it never diverges from what is heard.

    Args:
        doc: A harness document (``Instance.doc``), with the fields of :func:`attach_audio`
            for ``original`` and ``random``.
        spec: What the model wants.

    Raises:
        MissingAudioError: ``original``/``random`` and the document has no clip.
        AudioError: The document's window is longer than ``spec.max_seconds``.
    """
    sr, cond = int(spec.sampling_rate), spec.condition
    if cond == "none":
        return ("none",)
    if cond == "silence":
        return ("silence", spec.noise_samples, sr)
    if cond == "noise":
        item_id = str(doc.get("id"))
        return ("noise", int(spec.seed), item_id, spec.noise_samples, float(spec.noise_std), sr)
    if cond == "original":
        ref = doc.get("audio_ref")
        if not ref:
            check_audio_available([doc], "original")
    else:  # random
        ref = random_clip(doc, spec.seed)
    window = doc_window(doc)
    if window is None:
        return ("clip", ref, sr, spec.max_seconds)
    check_window_fits(doc, window, spec.max_seconds)
    return ("clip", ref, sr, spec.max_seconds, *window)


def condition_audio(doc: Mapping[str, Any], spec: AudioSpec) -> tuple[Hashable, np.ndarray | None]:
    """(cache key, mono float32 waveform at ``spec.sampling_rate``) the model hears for ``doc``.

    ``(key, None)`` for condition ``none``. The key is :func:`condition_key`'s. Decoded
    clips are cached (decode + resample once per clip per process).

    Args:
        doc: A harness document (``Instance.doc``), with the fields of :func:`attach_audio`
            for ``original`` and ``random``.
        spec: What the model wants.
    """
    key = condition_key(doc, spec)
    kind = key[0]
    if kind == "none":
        return key, None
    if kind == "silence":
        cached = CLIP_CACHE.get(key)
        if cached is None:
            cached = np.zeros(spec.noise_samples, dtype=np.float32)
            cached.flags.writeable = False
            CLIP_CACHE.put(key, cached)
        return key, cached
    if kind == "noise":
        return key, noise_waveform(spec, str(doc.get("id")))
    _, ref, sr, max_seconds, *window = key
    if is_array_ref(ref):  # the harness's own audio argument (doc_to_audio)
        return key, array_clip(ref, sampling_rate=sr, max_seconds=max_seconds)
    if not window:
        return key, load_clip(ref, sampling_rate=sr, max_seconds=max_seconds)
    # only the window's frames are decoded (cached per window)
    return key, load_window(ref, sampling_rate=sr, window=(window[0], window[1]))


def check_audio_available(docs: Iterable[Mapping[str, Any]], condition: str = "original") -> None:
    """Raise one :class:`MissingAudioError` naming every item without audio.

    Call it before the model is loaded. Conditions that need no files (``noise``,
    ``silence``, ``none``) always pass. Items are counted once per (benchmark, id): the
    folds of one benchmark repeat an id, while two benchmarks (RUL and MuChoMusic share
    ids) each count theirs; with several benchmarks the ids are named ``benchmark:id``.

    Raises:
        UnknownConditionError: ``condition`` is not one of :data:`AUDIO_CONDITIONS`.
        MissingAudioError: Some items have no clip.
    """
    if condition not in AUDIO_CONDITIONS:
        raise UnknownConditionError(condition)
    if condition not in FILE_CONDITIONS:
        return
    found: dict[tuple[str, str], list[str] | None] = {}  # None = has audio
    no_fields: set[tuple[str, str]] = set()
    for doc in docs:
        item = (str(doc.get("benchmark", "")), str(doc.get("id")))
        if item in found:  # the same question in several folds
            continue
        if "audio_ref" not in doc:
            no_fields.add(item)
            found[item] = []
        elif not doc.get("audio_ref"):
            found[item] = list(doc.get("audio_tried") or [])
        else:
            found[item] = None
    missing_items = {item: tried for item, tried in found.items() if tried is not None}
    if not missing_items:
        return
    several = len({benchmark for benchmark, _ in found}) > 1
    missing = {
        (f"{benchmark}:{item_id}" if several else item_id): tried
        for (benchmark, item_id), tried in missing_items.items()
    }
    hint = ""
    if any(AMBIGUOUS in t for tried in missing_items.values() for t in tried):
        hint = AMBIGUOUS_HINT
    elif len(no_fields) == len(missing_items):
        hint = (
            f"Fix: audio={condition} needs the clips: pass --metadata "
            "'{\"audio_dir\": DIR}' (files {id}.wav|flac|mp3|ogg|m4a or {track}.ext) or "
            "'{\"audio_hf_dataset\": PATH_OR_NAME}', or use audio=noise|silence|none."
        )
    raise MissingAudioError(missing, total=len(found), hint=hint)
