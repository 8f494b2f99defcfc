"""Waveforms handed over by the harness (``doc_to_audio``), as clip references.

A task written the harness's way gives each request its audio as arrays with their
sampling rates. :func:`register_array` keeps one such array in this process and returns
a clip reference for it (``{"kind": "array", "sha1": ..., ...}``: the content's hash, so
the same samples are one clip whatever document carries them). From there the audio
conditions treat it as any other clip (:mod:`.conditions`): :func:`array_clip` plays it
resampled to the model's rate and trimmed to its limit, cached like a decoded file.
"""

from __future__ import annotations

import hashlib
import json
import logging
import warnings
from typing import Any

import numpy as np

from .decoding import CLIP_CACHE
from .errors import AudioError

__all__ = ["register_array", "is_array_ref", "array_clip", "array_ref_name"]

logger = logging.getLogger(__name__)

_ARRAYS: dict[str, tuple[np.ndarray, int]] = {}


def register_array(wave: np.ndarray, sampling_rate: int) -> str:
    """Keep ``wave`` (mono float32 at ``sampling_rate``) here; return its clip reference."""
    data = np.ascontiguousarray(wave, dtype=np.float32)
    digest = hashlib.sha1(data.tobytes() + str(int(sampling_rate)).encode()).hexdigest()
    if digest not in _ARRAYS:
        data.flags.writeable = False
        _ARRAYS[digest] = (data, int(sampling_rate))
    spec = {
        "kind": "array",
        "sha1": digest,
        "sampling_rate": int(sampling_rate),
        "frames": int(data.shape[0]),
    }
    return json.dumps(spec, sort_keys=True)


def is_array_ref(ref: Any) -> bool:
    """Whether ``ref`` is a reference made by :func:`register_array`."""
    return isinstance(ref, str) and '"kind": "array"' in ref


def array_ref_name(ref: str) -> str:
    """A short name of an array clip for logs and samples."""
    from .sources import ref_name

    return ref_name(ref)


def array_clip(ref: str, *, sampling_rate: int, max_seconds: float | None) -> np.ndarray:
    """The registered array of ``ref`` at ``sampling_rate``, trimmed to ``max_seconds``."""
    key = ("clip", ref, int(sampling_rate), max_seconds)
    cached = CLIP_CACHE.get(key)
    if cached is not None:
        return cached
    spec = json.loads(ref)
    if spec["sha1"] not in _ARRAYS:
        raise AudioError(
            f"{array_ref_name(ref)} is not registered in this process; the harness's audio "
            "argument must reach the model with its request."
        )
    data, rate = _ARRAYS[spec["sha1"]]
    if rate != sampling_rate:
        import librosa

        data = librosa.resample(data, orig_sr=rate, target_sr=sampling_rate).astype(np.float32)
    if max_seconds is not None:
        limit = int(round(max_seconds * sampling_rate))
        if data.shape[0] > limit:
            message = (
                f"{array_ref_name(ref)} is longer than the model's limit of {max_seconds:g} s; "
                f"keeping the first {max_seconds:g} s"
            )
            warnings.warn(message, stacklevel=2)
            logger.warning(message)
            data = data[:limit]
    wave = np.ascontiguousarray(data, dtype=np.float32)
    wave.flags.writeable = False
    CLIP_CACHE.put(key, wave)
    return wave
