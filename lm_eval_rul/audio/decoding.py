"""Decoding: any clip to mono float32 at the model's rate, trimmed, cached per process.

soundfile first, librosa (audioread/ffmpeg) for mp3/m4a that soundfile cannot read;
channels averaged to mono, resampled with librosa, trimmed to the model's limit with a
warning naming the file. Decoded clips are kept in an LRU bounded by bytes
(``LM_EVAL_RUL_AUDIO_CACHE_MB``, default 2048), shared by every question of a clip.
"""

from __future__ import annotations

import io
import logging
import os
import tempfile
import threading
import warnings
from collections import OrderedDict
from collections.abc import Hashable
from pathlib import Path

import numpy as np

from .errors import AudioDecodeError
from .sources import clip_source

__all__ = [
    "decode_audio",
    "load_clip",
    "ClipCache",
    "CLIP_CACHE",
    "clear_audio_cache",
    "decode_count",
]

logger = logging.getLogger(__name__)

#: Extensions soundfile may fail on, for which librosa's audioread/ffmpeg path is tried.
_LIBROSA_SUFFIXES: tuple[str, ...] = (".mp3", ".m4a", ".mp4", ".aac", ".wma", "")


def _mono(data: np.ndarray) -> np.ndarray:
    """(frames,) or (frames, channels) -> mono float32 (channel average)."""
    if data.ndim == 2:
        data = data.mean(axis=1)
    return np.ascontiguousarray(data, dtype=np.float32)


def _decode_soundfile(source: str | bytes) -> tuple[np.ndarray, int]:
    import soundfile as sf

    handle = io.BytesIO(source) if isinstance(source, bytes) else source
    data, rate = sf.read(handle, dtype="float32", always_2d=True)
    return _mono(data), int(rate)


def _decode_librosa(source: str | bytes, suffix: str) -> tuple[np.ndarray, int]:
    import librosa

    if isinstance(source, bytes):
        with tempfile.NamedTemporaryFile(suffix=suffix or ".audio") as tmp:
            tmp.write(source)
            tmp.flush()
            data, rate = librosa.load(tmp.name, sr=None, mono=False)
    else:
        data, rate = librosa.load(source, sr=None, mono=False)
    data = np.asarray(data, dtype=np.float32)
    if data.ndim == 2:  # librosa: (channels, frames)
        data = data.mean(axis=0)
    return np.ascontiguousarray(data, dtype=np.float32), int(rate)


def decode_audio(
    source: str | os.PathLike[str] | bytes,
    *,
    sampling_rate: int,
    max_seconds: float | None = None,
    name: str | None = None,
) -> np.ndarray:
    """Decode a file (or its bytes) to mono float32 at ``sampling_rate``, trimmed.

    Args:
        source: A path, or the encoded bytes of a file.
        sampling_rate: Target rate; resampled with librosa when the file's rate differs.
        max_seconds: Keep at most this many seconds (a warning names the file).
        name: Name of the clip in messages (default: the path).

    Raises:
        AudioDecodeError: The file is empty, corrupt, or decodes to no samples.
    """
    is_bytes = isinstance(source, bytes)
    label = name or ("<bytes>" if is_bytes else str(source))
    if not is_bytes:
        source = str(source)
        try:
            size = os.path.getsize(source)
        except OSError as exc:
            raise AudioDecodeError(f"audio file {label}: cannot be read ({exc})") from exc
    else:
        size = len(source)
    if size == 0:
        raise AudioDecodeError(f"audio file {label}: is empty (0 bytes); replace it with the clip")
    suffix = Path(name or ("" if is_bytes else source)).suffix
    try:
        data, rate = _decode_soundfile(source)
    except Exception as first:
        if suffix.lower() not in _LIBROSA_SUFFIXES:
            raise AudioDecodeError(
                f"audio file {label}: cannot be decoded ({first}). Check the file is complete "
                "and really the format its extension says, or convert it to wav."
            ) from first
        try:  # soundfile cannot read some mp3 and no m4a: librosa (audioread + ffmpeg)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                data, rate = _decode_librosa(source, suffix)
        except Exception as second:
            raise AudioDecodeError(
                f"audio file {label}: cannot be decoded (soundfile: {first}; librosa: "
                f"{type(second).__name__}: {second}). Check the file is a complete "
                f"wav/flac/mp3/ogg/m4a (m4a needs ffmpeg), or convert it to wav."
            ) from second
    if data.size == 0:
        raise AudioDecodeError(f"audio file {label}: decodes to 0 samples; replace the file")
    if not np.all(np.isfinite(data)):
        raise AudioDecodeError(f"audio file {label}: contains NaN or infinite samples")
    if rate != sampling_rate:
        import librosa

        data = librosa.resample(data, orig_sr=rate, target_sr=sampling_rate).astype(np.float32)
    if max_seconds is not None:
        limit = int(round(max_seconds * sampling_rate))
        if data.shape[0] > limit:
            warnings.warn(
                f"audio file {label}: {data.shape[0] / sampling_rate:.1f} s is longer than the "
                f"model's limit of {max_seconds:g} s; keeping the first {max_seconds:g} s",
                stacklevel=2,
            )
            logger.warning("trimmed %s to %g s", label, max_seconds)
            data = data[:limit]
    return np.ascontiguousarray(data, dtype=np.float32)


class ClipCache:
    """LRU of decoded waveforms, bounded by bytes; thread-safe."""

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self._items: OrderedDict[Hashable, np.ndarray] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.decodes = 0

    def get(self, key: Hashable) -> np.ndarray | None:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: Hashable, value: np.ndarray) -> None:
        with self._lock:
            if key in self._items:
                return
            self._items[key] = value
            self._bytes += value.nbytes
            while self._bytes > self.max_bytes and len(self._items) > 1:
                _, old = self._items.popitem(last=False)
                self._bytes -= old.nbytes

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0
            self.decodes = 0


CLIP_CACHE = ClipCache(int(float(os.environ.get("LM_EVAL_RUL_AUDIO_CACHE_MB", "2048")) * 2**20))


def clear_audio_cache() -> None:
    """Forget every decoded clip (and reset the decode counter)."""
    CLIP_CACHE.clear()


def decode_count() -> int:
    """How many clips this process has decoded (cache misses) since the last clear."""
    return CLIP_CACHE.decodes


def load_clip(ref: str, *, sampling_rate: int, max_seconds: float | None) -> np.ndarray:
    """Decoded, resampled, trimmed waveform of a clip reference, cached per process.

    The returned array is read-only (it is shared by every question using the clip).
    """
    key = ("clip", ref, int(sampling_rate), max_seconds)
    cached = CLIP_CACHE.get(key)
    if cached is not None:
        return cached
    source, name = clip_source(ref)
    wave = decode_audio(source, sampling_rate=sampling_rate, max_seconds=max_seconds, name=name)
    wave.flags.writeable = False
    CLIP_CACHE.decodes += 1
    CLIP_CACHE.put(key, wave)
    return wave
