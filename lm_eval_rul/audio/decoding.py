"""Decoding: any clip to mono float32 at the model's rate, trimmed, cached per process.

soundfile first, librosa (audioread/ffmpeg) for mp3/m4a that soundfile cannot read;
channels averaged to mono, resampled with librosa. Only what the model hears is decoded:
with a limit of 30 s, the first 30 s of a 20-minute file (soundfile reads a frame range;
the fallback decodes with ``librosa.load(duration=...)``), and for a window only its
frames (:func:`load_window`); the range is widened by a quarter second (aligned to the
resampler's period) so that the resampled samples equal those of a whole decode. A trim
is reported once per run: one warning with the count of trimmed clips and the first of
them (:func:`report_trims`, called when the process exits). Decoded clips are kept in an
LRU bounded by bytes (``LM_EVAL_RUL_AUDIO_CACHE_MB``, default 2048), shared by every
question of a clip.
"""

from __future__ import annotations

import atexit
import io
import logging
import math
import os
import tempfile
import threading
import warnings
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .errors import AudioDecodeError
from .not_audio import text_instead_of_audio
from .sources import clip_source

__all__ = [
    "add_run_report",
    "decode_audio",
    "load_clip",
    "load_window",
    "report_trims",
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


#: Extra source seconds read on each side of a range, so resampling sees its context.
_PAD_SECONDS = 0.25


@dataclass
class _Range:
    """Frames ``[first, last)`` of the source at ``rate`` (``last=None``: to the end)."""

    first: int = 0
    last: int | None = None


def _aligned_range(
    rate: int, sampling_rate: int, first: int, last: int | None, total: int | None
) -> _Range:
    """The source frames to decode for target samples ``[first, last)``: padded, and
    starting on a multiple of the resampling period so the samples line up exactly."""
    if rate == sampling_rate:
        return _Range(first, last)
    step = rate // math.gcd(rate, sampling_rate)
    pad = int(_PAD_SECONDS * rate)
    start = max(0, (first * rate // sampling_rate - pad) // step * step)
    end = None if last is None else -(-last * rate // sampling_rate) + pad
    if end is not None and total is not None:
        end = min(end, total)
    return _Range(start, end)


def _open_soundfile(source: str | bytes) -> Any:
    import soundfile as sf

    return sf.SoundFile(io.BytesIO(source) if isinstance(source, bytes) else source)


def _read_soundfile(handle: Any, frames: _Range) -> np.ndarray:
    count = -1 if frames.last is None else max(0, frames.last - frames.first)
    if frames.first:
        handle.seek(frames.first)
    return _mono(handle.read(count, dtype="float32", always_2d=True))


def _decode_librosa(
    source: str | bytes, suffix: str, offset: float = 0.0, duration: float | None = None
) -> tuple[np.ndarray, int, float]:  # librosa.load(offset=, duration=) reads only that much
    """(mono samples, rate, total seconds of the file) through librosa's fallback path."""
    import librosa

    def load(path: str) -> tuple[np.ndarray, int, float]:
        data, rate = librosa.load(path, sr=None, mono=False, offset=offset, duration=duration)
        total = librosa.get_duration(path=path) if duration is not None else None
        data = np.asarray(data, dtype=np.float32)
        if data.ndim == 2:  # librosa: (channels, frames)
            data = data.mean(axis=0)
        seconds = total if total is not None else offset + data.shape[-1] / rate
        return np.ascontiguousarray(data, dtype=np.float32), int(rate), float(seconds)

    if isinstance(source, bytes):
        with tempfile.NamedTemporaryFile(suffix=suffix or ".audio") as tmp:
            tmp.write(source)
            tmp.flush()
            return load(tmp.name)
    return load(source)


def _check_size(source: str | bytes, label: str) -> None:
    if isinstance(source, bytes):
        size = len(source)
    else:
        try:
            size = os.path.getsize(source)
        except OSError as exc:
            raise AudioDecodeError(f"audio file {label}: cannot be read ({exc})") from exc
    if size == 0:
        raise AudioDecodeError(f"audio file {label}: is empty (0 bytes); replace it with the clip")


def _decode_range(
    source: str | bytes, label: str, suffix: str, sampling_rate: int, first: int, last: int | None
) -> tuple[np.ndarray, int, int]:
    """Target samples ``[first, last)`` (clipped to the clip) and the clip's total length
    in target samples, decoding only the source frames they need.

    Returns:
        (samples at ``sampling_rate``, index of the first returned sample, total samples).
    """
    _check_size(source, label)
    text = text_instead_of_audio(source)
    if text:
        raise AudioDecodeError(f"audio file {label}: {text}; replace it with the clip")
    try:
        with _open_soundfile(source) as handle:
            rate, total = int(handle.samplerate), int(handle.frames)
            frames = _aligned_range(rate, sampling_rate, first, last, total)
            data = _read_soundfile(handle, frames)
    except Exception as first_error:
        if suffix.lower() not in _LIBROSA_SUFFIXES:
            raise AudioDecodeError(
                f"audio file {label}: cannot be decoded ({first_error}). Check the file is "
                "complete and really the format its extension says, or convert it to wav."
            ) from first_error
        try:  # soundfile cannot read some mp3 and no m4a: librosa (audioread + ffmpeg)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                # from the start (load_window decodes such files whole): the rate is
                # unknown before decoding, so no aligned offset can be chosen
                duration = None if last is None else last / sampling_rate + _PAD_SECONDS
                data, rate, seconds = _decode_librosa(source, suffix, 0.0, duration)
            total = int(round(seconds * rate))
            frames = _Range(0, None)
        except Exception as second:
            raise AudioDecodeError(
                f"audio file {label}: cannot be decoded (soundfile: {first_error}; librosa: "
                f"{type(second).__name__}: {second}). Check the file is a complete "
                f"wav/flac/mp3/ogg/m4a (m4a needs ffmpeg), or convert it to wav."
            ) from second
    if total == 0 or (data.size == 0 and frames.first == 0):
        raise AudioDecodeError(f"audio file {label}: decodes to 0 samples; replace the file")
    if not np.all(np.isfinite(data)):
        raise AudioDecodeError(f"audio file {label}: contains NaN or infinite samples")
    start = frames.first * sampling_rate // rate
    if rate != sampling_rate:
        import librosa

        data = librosa.resample(data, orig_sr=rate, target_sr=sampling_rate).astype(np.float32)
        start = int(round(frames.first * sampling_rate / rate))
    total_out = total if rate == sampling_rate else -(-total * sampling_rate // rate)
    return data, start, total_out


class _Trims:
    """Clips trimmed to the model's limit in this process, reported once."""

    def __init__(self) -> None:
        self.count = 0
        self.first: tuple[str, float, float] | None = None
        self.seen: set[str] = set()  # windows are asked for once per request: count each once
        self._lock = threading.Lock()
        self._registered = False

    def add(self, label: str, seconds: float, limit: float) -> None:
        with self._lock:
            self.count += 1
            if self.first is None:
                self.first = (label, seconds, limit)
                logger.info(
                    "trimming %s (%.1f s) to the model's limit of %g s", label, seconds, limit
                )
            if not self._registered:
                atexit.register(_report_at_exit)
                self._registered = True


_TRIMS = _Trims()


def count_trim(label: str, seconds: float, limit: float) -> None:
    """Count one clip (or window) ``label`` cut to the model's limit, once per label until
    the next :func:`report_trims`."""
    with _TRIMS._lock:
        if label in _TRIMS.seen:
            return
        _TRIMS.seen.add(label)
    _TRIMS.add(label, seconds, limit)


def _report_at_exit() -> None:
    raising, logging.raiseExceptions = logging.raiseExceptions, False  # streams may be closed
    try:
        report_trims()
    finally:
        logging.raiseExceptions = raising


#: Other once-per-run reports said with the trims (:func:`add_run_report`).
_RUN_REPORTS: list[Any] = []


def add_run_report(report: Any) -> None:
    """Have :func:`report_trims` also call ``report()`` (a condition's own once-per-run
    warning with a count, e.g. ``excerpt``'s clips shorter than the excerpt)."""
    if report not in _RUN_REPORTS:
        _RUN_REPORTS.append(report)


def report_trims() -> int:
    """Log the one warning about the clips trimmed so far (if any), and start counting
    again; returns how many there were. Runs by itself when the process exits (with the
    reports added by :func:`add_run_report`)."""
    for report in _RUN_REPORTS:
        report()
    with _TRIMS._lock:
        count, first = _TRIMS.count, _TRIMS.first
        _TRIMS.count, _TRIMS.first = 0, None
        _TRIMS.seen.clear()
    if count and first is not None:
        label, seconds, limit = first
        others = f" and {count - 1} other clip(s)" if count > 1 else ""
        logger.warning(
            "%d clip(s) longer than the model's limit of %g s were trimmed to their first %g s: "
            "%s (%.1f s)%s",
            count,
            limit,
            limit,
            label,
            seconds,
            others,
        )
    return count


def decode_audio(
    source: str | os.PathLike[str] | bytes,
    *,
    sampling_rate: int,
    max_seconds: float | None = None,
    name: str | None = None,
) -> np.ndarray:
    """Decode a file (or its bytes) to mono float32 at ``sampling_rate``, trimmed.

    With ``max_seconds`` only the frames of the first ``max_seconds`` are decoded and
    resampled (the result equals the start of a whole decode); a trim is counted for the
    run's one warning (:func:`report_trims`).

    Args:
        source: A path, or the encoded bytes of a file.
        sampling_rate: Target rate; resampled with librosa when the file's rate differs.
        max_seconds: Keep at most this many seconds.
        name: Name of the clip in messages (default: the path).

    Raises:
        AudioDecodeError: The file is empty, corrupt, or decodes to no samples.
    """
    is_bytes = isinstance(source, bytes)
    label = name or ("<bytes>" if is_bytes else str(source))
    source = source if isinstance(source, bytes) else str(source)
    suffix = Path(name or ("" if is_bytes else source)).suffix
    limit = None if max_seconds is None else int(round(max_seconds * sampling_rate))
    data, start, total = _decode_range(source, label, suffix, sampling_rate, 0, limit)
    data = data[: total - start]
    if limit is not None and total > limit:
        _TRIMS.add(label, total / sampling_rate, float(max_seconds or 0))
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


def load_window(ref: str, *, sampling_rate: int, window: tuple[float, float]) -> np.ndarray:
    """The samples of ``window`` (seconds) of a clip, decoding only the frames it needs
    (:func:`~lm_eval_rul.audio.windows.cut_window`'s rules: clipped to the clip's length;
    a window starting after the clip's end plays the clip's last stretch of that length).

    Formats soundfile cannot seek (the librosa fallback) are decoded whole once and cached.
    """
    from .windows import cut_window

    first = int(round(window[0] * sampling_rate))
    last = max(first + 1, int(round(window[1] * sampling_rate)))
    key = ("window", ref, int(sampling_rate), first, last)
    cached = CLIP_CACHE.get(key)
    if cached is not None:
        return cached
    source, name = clip_source(ref)
    label = name or ref
    try:
        with _open_soundfile(source) as handle:
            rate, frames = int(handle.samplerate), int(handle.frames)
    except Exception:  # noqa: BLE001 - not seekable by soundfile: whole decode, cached
        whole = load_clip(ref, sampling_rate=sampling_rate, max_seconds=None)
        return cut_window(whole, sampling_rate, window)
    total = frames if rate == sampling_rate else -(-frames * sampling_rate // rate)
    if first >= total:  # after the clip's end: its last stretch of the window's length
        first, last = max(0, total - (last - first)), total
    last = min(last, total)
    suffix = Path(name or "").suffix
    data, start, _ = _decode_range(source, label, suffix, sampling_rate, first, last)
    wave = np.ascontiguousarray(data[first - start : last - start], dtype=np.float32)
    wave.flags.writeable = False
    CLIP_CACHE.decodes += 1
    CLIP_CACHE.put(key, wave)
    return wave
