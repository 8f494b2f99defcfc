"""What an audio model hears for a harness document: layouts, decoding and conditions.

Three audio layouts (DESIGN.md §2), chosen with the harness's ``--metadata`` JSON:

* ``audio_dir`` with one file per question id, ``{audio_dir}/{id}.{ext}`` (the
  RUListening release convention);
* ``audio_dir`` with one file per track, ``{audio_dir}/{track}.{ext}``, track = the
  MuChoMusic ``dataset_identifier`` stem (RUL rows need ``muchomusic_csv`` to know it);
* ``audio_hf_dataset``: a Hugging Face dataset with an audio column (a
  ``save_to_disk`` folder, parquet file(s) or a hub name; ``audio_column`` default
  ``context``, ``audio_split`` default ``test``), joined on the normalised question
  text (``audio_question_column``, default ``instruction``); rows sharing a question
  are told apart by the correct answer (among the row's ``choices``, then equal to its
  ``answer``: text, letter or index); or joined on an id column with ``audio_id_column``.

``audio_layout`` (``auto`` | ``id`` | ``track``) forces a file layout; ``auto`` tries
the id file first, then the track file. Extensions tried: :data:`AUDIO_EXTENSIONS`.

:func:`attach_audio` adds to each document the fields this module reads
(``audio_ref``, ``audio_track``, ``audio_tried``, ``audio_pool``); documents without
them (text-only runs) still work with the ``noise``, ``silence`` and ``none``
conditions. :func:`condition_audio` returns the waveform for one of
:data:`AUDIO_CONDITIONS` with its key, and :func:`condition_key` the same key without
reading any audio (to group requests by clip); decoded clips are cached per process (an
LRU bounded by ``LM_EVAL_RUL_AUDIO_CACHE_MB``, default 2048).
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import logging
import os
import re
import tempfile
import threading
import warnings
from collections import OrderedDict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .data import normalize_answer
from .errors import UserInputError
from .seeding import item_rng

__all__ = [
    "AUDIO_CONDITIONS",
    "AUDIO_EXTENSIONS",
    "AUDIO_FIELDS",
    "AudioError",
    "MissingAudioError",
    "AudioDecodeError",
    "UnknownConditionError",
    "AudioSpec",
    "condition_key",
    "condition_audio",
    "check_audio_available",
    "decode_audio",
    "load_clip",
    "noise_waveform",
    "random_clip",
    "attach_audio",
    "audio_metadata_given",
    "register_clip_pool",
    "track_identities",
    "clear_audio_cache",
    "decode_count",
    "FILE_CONDITIONS",
]

logger = logging.getLogger(__name__)

AUDIO_CONDITIONS: tuple[str, ...] = ("original", "noise", "silence", "random", "none")
#: Conditions that read the benchmark's audio files.
FILE_CONDITIONS: tuple[str, ...] = ("original", "random")
AUDIO_EXTENSIONS: tuple[str, ...] = ("wav", "flac", "mp3", "ogg", "m4a")
#: Document fields written by :func:`attach_audio`.
AUDIO_FIELDS: tuple[str, ...] = ("audio_ref", "audio_track", "audio_tried", "audio_pool")
AUDIO_METADATA_KEYS: tuple[str, ...] = ("audio_dir", "audio_hf_dataset")
#: Extensions soundfile may fail on, for which librosa's audioread/ffmpeg path is tried.
_LIBROSA_SUFFIXES: tuple[str, ...] = (".mp3", ".m4a", ".mp4", ".aac", ".wma", "")
_LISTED = 10


class AudioError(UserInputError, ValueError):
    """Base class of this module's errors."""


class MissingAudioError(AudioError):
    """Items have no audio; ``missing`` maps each item id to the paths tried."""

    def __init__(self, missing: Mapping[str, Sequence[str]], *, total: int, hint: str = ""):
        self.missing = {str(k): list(v) for k, v in missing.items()}
        ids = list(self.missing)
        more = f", ... (+{len(ids) - _LISTED} more)" if len(ids) > _LISTED else ""
        shown = ", ".join(ids[:_LISTED]) + more
        lines = [f"No audio for {len(ids)} of {total} items: ids {shown}."]
        for item in ids[:3]:
            tried = self.missing[item]
            lines.append(f"  id {item}: tried {', '.join(tried) if tried else '(nothing to try)'}")
        lines.append(
            hint
            or "Fix: put the files where the paths above point (one per question id, or one "
            "per MuChoMusic track: RUL rows need --metadata muchomusic_csv to know their "
            "track), give the right --metadata audio_dir / audio_hf_dataset, or run with "
            "audio=noise|silence|none, which need no files."
        )
        super().__init__("\n".join(lines))


class AudioDecodeError(AudioError):
    """An audio file is corrupt, empty or unreadable; the message names it."""


class UnknownConditionError(AudioError):
    """``audio=`` names no condition of :data:`AUDIO_CONDITIONS`."""

    def __init__(self, condition: object):
        self.condition = condition
        super().__init__(
            f"audio={condition!r} is not a condition; use one of {', '.join(AUDIO_CONDITIONS)} "
            "(e.g. --model_args pretrained=...,audio=noise)"
        )


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


# ----------------------------------------------------------------------------- decoding


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


class _ClipCache:
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


_CACHE = _ClipCache(int(float(os.environ.get("LM_EVAL_RUL_AUDIO_CACHE_MB", "2048")) * 2**20))


def clear_audio_cache() -> None:
    """Forget every decoded clip (and reset the decode counter)."""
    _CACHE.clear()


def decode_count() -> int:
    """How many clips this process has decoded (cache misses) since the last clear."""
    return _CACHE.decodes


# ----------------------------------------------------------------------------- clip refs
# A clip reference is a JSON string: {"kind": "file", "path": ...} or
# {"kind": "hf", "source": ..., "split": ..., "column": ..., "row": int}.


def _file_ref(path: Path) -> str:
    return json.dumps({"kind": "file", "path": str(path.resolve())}, sort_keys=True)


def _hf_ref(source: str, split: str, column: str, row: int) -> str:
    return json.dumps(
        {"kind": "hf", "source": source, "split": split, "column": column, "row": int(row)},
        sort_keys=True,
    )


def _ref_name(ref: str) -> str:
    spec = json.loads(ref)
    if spec["kind"] == "file":
        return spec["path"]
    return f"{spec['source']}[{spec['split']}] row {spec['row']} column {spec['column']!r}"


def _clip_bytes(ref: str) -> tuple[str | bytes, str]:
    """The source to decode for a reference, and its name for messages."""
    spec = json.loads(ref)
    if spec["kind"] == "file":
        return spec["path"], spec["path"]
    dataset = _hf_dataset(spec["source"], spec["split"], spec["column"])
    cell = dataset[int(spec["row"])][spec["column"]]
    name = _ref_name(ref)
    if cell is None:
        raise AudioDecodeError(f"audio {name}: the cell is empty")
    if cell.get("bytes"):
        # name ends with the original file name so the librosa fallback sees its extension
        return bytes(cell["bytes"]), f"{name}: {cell.get('path') or 'audio'}"
    if cell.get("path") and os.path.isfile(cell["path"]):
        return cell["path"], cell["path"]
    raise AudioDecodeError(f"audio {name}: the cell has neither bytes nor a readable path")


def load_clip(ref: str, *, sampling_rate: int, max_seconds: float | None) -> np.ndarray:
    """Decoded, resampled, trimmed waveform of a clip reference, cached per process.

    The returned array is read-only (it is shared by every question using the clip).
    """
    key = ("clip", ref, int(sampling_rate), max_seconds)
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    source, name = _clip_bytes(ref)
    wave = decode_audio(source, sampling_rate=sampling_rate, max_seconds=max_seconds, name=name)
    wave.flags.writeable = False
    _CACHE.decodes += 1
    _CACHE.put(key, wave)
    return wave


# ----------------------------------------------------------------------------- conditions


def noise_waveform(spec: AudioSpec, item_id: str) -> np.ndarray:
    """Gaussian noise reproducible from (``spec.seed``, ``item_id``)."""
    rng = item_rng("audio-noise", int(spec.seed), str(item_id))
    wave = rng.normal(0.0, float(spec.noise_std), size=spec.noise_samples).astype(np.float32)
    wave.flags.writeable = False
    return wave


_POOLS: dict[str, tuple[tuple[str, str], ...]] = {}
_WARNED_POOLS: set[str] = set()
#: Prefix of the track identity of a clip whose track and caption are both unknown.
_CLIP_IDENTITY = "clip:"


def register_clip_pool(clips: Iterable[tuple[str, str]]) -> str:
    """Register a benchmark's full clip list ((ref, track) pairs); returns its id.

    The ``random`` condition draws from this list, so the choice depends only on the
    seed and the item, never on ``--limit`` or the data order.
    """
    pool = tuple(sorted(set((str(r), str(t)) for r, t in clips)))
    pool_id = hashlib.sha1(json.dumps(pool).encode("utf-8")).hexdigest()[:16]
    _POOLS[pool_id] = pool
    return pool_id


def _warn_unknown_tracks(pool_id: str, pool: Sequence[tuple[str, str]]) -> None:
    """Warn (once per pool) that some clips count as their own track."""
    unknown = sum(track.startswith(_CLIP_IDENTITY) for _, track in pool)
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

    Another clip of the same benchmark, never the item's own clip nor (when any other
    exists) a clip of the item's own track; drawn with a seed from (seed, item id).
    Reads no audio.
    """
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
            "load the task's documents through lm_eval_rul.task_utils (it registers the pool)."
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
    fold using it; noise is keyed by (seed, item id, length, std, rate); silence has one
    key per length and rate; ``none`` is ``("none",)``. :func:`condition_audio` returns
    this same key with the waveform, so grouping by it never diverges from what is heard.

    Args:
        doc: A harness document (``Instance.doc``), with the fields of :func:`attach_audio`
            for ``original`` and ``random``.
        spec: What the model wants.

    Raises:
        MissingAudioError: ``original``/``random`` and the document has no clip.
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
    return ("clip", ref, sr, spec.max_seconds)


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
        cached = _CACHE.get(key)
        if cached is None:
            cached = np.zeros(spec.noise_samples, dtype=np.float32)
            cached.flags.writeable = False
            _CACHE.put(key, cached)
        return key, cached
    if kind == "noise":
        return key, noise_waveform(spec, str(doc.get("id")))
    _, ref, sr, max_seconds = key
    return key, load_clip(ref, sampling_rate=sr, max_seconds=max_seconds)


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
    if len(no_fields) == len(missing_items):
        hint = (
            f"Fix: audio={condition} needs the clips: pass --metadata "
            "'{\"audio_dir\": DIR}' (files {id}.wav|flac|mp3|ogg|m4a or {track}.ext) or "
            "'{\"audio_hf_dataset\": PATH_OR_NAME}', or use audio=noise|silence|none."
        )
    raise MissingAudioError(missing, total=len(found), hint=hint)


# ----------------------------------------------------------------------------- layouts


def audio_metadata_given(metadata: Mapping[str, Any]) -> bool:
    """Whether ``--metadata`` names an audio source."""
    return any(metadata.get(k) for k in AUDIO_METADATA_KEYS)


def _candidates(audio_dir: Path, stem: str) -> list[Path]:
    return [audio_dir / f"{stem}.{ext}" for ext in AUDIO_EXTENSIONS]


def _listing(audio_dir: str) -> frozenset[str]:
    return _listing_cached(audio_dir, os.stat(audio_dir).st_mtime_ns)


@functools.lru_cache(maxsize=16)
def _listing_cached(audio_dir: str, mtime_ns: int) -> frozenset[str]:
    return frozenset(os.listdir(audio_dir))


def _resolve_files(
    questions: Sequence[Any], audio_dir: Path, layout: str
) -> list[tuple[str | None, list[str]]]:
    if not audio_dir.is_dir():
        raise FileNotFoundError(
            f"--metadata audio_dir={str(audio_dir)!r}: no such directory. Give the folder "
            "holding one audio file per question id or per MuChoMusic track."
        )
    if layout not in ("auto", "id", "track"):
        raise AudioError(f"--metadata audio_layout={layout!r}: use auto, id or track")
    names = _listing(str(audio_dir.resolve()))
    out: list[tuple[str | None, list[str]]] = []
    for q in questions:
        stems = []
        if layout in ("auto", "id"):
            stems.append(str(q.id))
        if layout in ("auto", "track") and q.track:
            stems.append(str(q.track))
        tried: list[Path] = [p for stem in stems for p in _candidates(audio_dir, stem)]
        found = next((p for p in tried if p.name in names), None)
        if found is None and layout in ("track",) and not q.track:
            out.append((None, [f"{audio_dir}/<track>.ext (track unknown: pass muchomusic_csv)"]))
            continue
        out.append((_file_ref(found) if found else None, [] if found else [str(p) for p in tried]))
    return out


def _load_any_dataset(source: str, split: str) -> Any:
    import datasets

    path = Path(os.path.expanduser(source))
    if path.is_dir() and (
        (path / "dataset_info.json").is_file() or (path / "dataset_dict.json").is_file()
    ):
        loaded = datasets.load_from_disk(str(path))
    elif path.is_file() or (path.is_dir() and any(path.rglob("*.parquet"))):
        files = [str(path)] if path.is_file() else sorted(str(p) for p in path.rglob("*.parquet"))
        loaded = datasets.load_dataset("parquet", data_files={split: files})
    else:
        try:
            loaded = datasets.load_dataset(source)
        except Exception as error:  # offline, no such dataset, no access, ...
            raise AudioError(
                f"--metadata audio_hf_dataset={source!r}: not a save_to_disk folder, a parquet "
                f"file or folder, nor a dataset that loads from the hub ({type(error).__name__}: "
                f"{error}). Give a local path, or check the name and your network / HF_TOKEN."
            ) from error
    if isinstance(loaded, datasets.DatasetDict):
        if split not in loaded:
            raise AudioError(
                f"--metadata audio_hf_dataset={source!r} has splits {list(loaded)}, not "
                f"{split!r}; set audio_split"
            )
        loaded = loaded[split]
    return loaded


@functools.lru_cache(maxsize=4)
def _hf_dataset(source: str, split: str, column: str) -> Any:
    from datasets import Audio

    dataset = _load_any_dataset(source, split)
    if column not in dataset.column_names:
        raise AudioError(
            f"--metadata audio_hf_dataset={source!r}: no audio column {column!r} (columns: "
            f"{dataset.column_names}); set audio_column"
        )
    return dataset.cast_column(column, Audio(decode=False))


def _choices_text(value: Any) -> list[str]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return [normalize_answer(value)]
    if isinstance(value, Mapping):
        value = list(value.values())
    return [normalize_answer(str(v)) for v in (value or [])]


def _row_answer(answer: Any, choices: Any) -> str | None:
    """The normalised correct-answer text of an HF row (``answer`` = text, letter or index)."""
    texts = _choices_text(choices)
    if isinstance(answer, int) and 0 <= answer < len(texts):
        return texts[answer]
    text = str(answer).strip()
    if normalize_answer(text) in texts:
        return normalize_answer(text)
    match = re.match(r"^\(?([A-Z])\)?(?:[.):\s]|$)", text)
    if match and ord(match.group(1)) - ord("A") < len(texts):
        return texts[ord(match.group(1)) - ord("A")]
    return None


def _resolve_hf(
    questions: Sequence[Any], metadata: Mapping[str, Any]
) -> list[tuple[str | None, list[str]]]:
    source = str(metadata["audio_hf_dataset"])
    split = str(metadata.get("audio_split", "test"))
    column = str(metadata.get("audio_column", "context"))
    dataset = _hf_dataset(source, split, column)
    id_column = metadata.get("audio_id_column")
    question_column = str(metadata.get("audio_question_column", "instruction"))
    where = f"{source}[{split}]"
    index: dict[str, list[int]] = {}
    if id_column:
        for row, value in enumerate(dataset[str(id_column)]):
            index.setdefault(str(value), []).append(row)
    else:
        if question_column not in dataset.column_names:
            raise AudioError(
                f"--metadata audio_hf_dataset={source!r}: no question column "
                f"{question_column!r} to join on (columns: {dataset.column_names}); set "
                "audio_question_column, or audio_id_column to join on ids"
            )
        for row, value in enumerate(dataset[question_column]):
            index.setdefault(normalize_answer(str(value)), []).append(row)
    choices = dataset["choices"] if "choices" in dataset.column_names else None
    answers = dataset["answer"] if "answer" in dataset.column_names else None
    out: list[tuple[str | None, list[str]]] = []
    for q in questions:
        key = str(q.id) if id_column else normalize_answer(q.question)
        rows = index.get(key, [])
        if len(rows) > 1 and choices is not None:  # same question text: use the answer
            gold = normalize_answer(q.correct_answer)
            rows = [r for r in rows if gold in _choices_text(choices[r])] or rows
            if len(rows) > 1 and answers is not None:
                keyed = [r for r in rows if _row_answer(answers[r], choices[r]) == gold]
                rows = keyed or rows
        label = f"{where} {id_column or question_column}={key!r}"
        if len(rows) == 1:
            out.append((_hf_ref(source, split, column, rows[0]), []))
        elif not rows:
            out.append((None, [f"{label} (no row)"]))
        else:
            out.append((None, [f"{label} (ambiguous: rows {rows[:5]}); set audio_id_column"]))
    return out


def attach_audio(
    docs: Sequence[dict[str, Any]],
    questions: Sequence[Any],
    metadata: Mapping[str, Any],
) -> list[dict[str, Any]]:
    """Add the audio fields to each document (in place) and return the documents.

    Args:
        docs: Harness documents, one per question of ``questions`` (matched on ``id``).
        questions: The benchmark's FULL question list (the ``random`` pool is built from
            it, so ``--limit`` does not change the draw); items need ``id``, ``question``,
            ``correct_answer`` and ``track`` attributes.
        metadata: ``--metadata`` (``audio_dir``, ``audio_layout``, ``audio_hf_dataset``,
            ``audio_split``, ``audio_column``, ``audio_id_column``,
            ``audio_question_column``).

    Documents get ``audio_ref`` (a clip reference, or ``None`` when missing),
    ``audio_track`` (the track identity, see :func:`track_identities`), ``audio_tried``
    (paths tried when missing) and ``audio_pool`` (the clip list id).
    """
    if metadata.get("audio_hf_dataset"):
        resolved = _resolve_hf(questions, metadata)
    elif metadata.get("audio_dir"):
        audio_dir = Path(os.path.expanduser(str(metadata["audio_dir"])))
        resolved = _resolve_files(questions, audio_dir, str(metadata.get("audio_layout", "auto")))
    else:
        return list(docs)
    identities = track_identities(questions, [ref for ref, _ in resolved])
    by_id: dict[str, tuple[str | None, str, list[str]]] = {}
    pool: list[tuple[str, str]] = []
    for q, (ref, tried), track in zip(questions, resolved, identities, strict=True):
        by_id[str(q.id)] = (ref, track, tried)
        if ref:
            pool.append((ref, track))
    pool_id = register_clip_pool(pool)
    for doc in docs:
        ref, track, tried = by_id.get(str(doc["id"]), (None, f"id:{doc['id']}", []))
        doc["audio_ref"] = ref
        doc["audio_track"] = track
        doc["audio_tried"] = tried
        doc["audio_pool"] = pool_id
    return list(docs)


def _caption_identity(caption: str | None) -> str | None:
    text = normalize_answer(caption or "")
    if not text:
        return None
    return "caption:" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


def track_identities(questions: Sequence[Any], refs: Sequence[str | None]) -> list[str]:
    """What counts as "the same track" for the ``random`` condition, one per question.

    In order: the MuChoMusic track (``q.track``); else the track of another question with
    the same normalised caption; else the caption itself (the release's 644 captions are
    its 644 tracks, so questions on one clip share it even without ``muchomusic_csv``);
    only when neither is known, the clip reference (``clip:...``, a file per question
    then counts as its own track, which :func:`random_clip` warns about) or the id.

    Args:
        questions: Items with ``id``, ``track`` and ``caption`` attributes.
        refs: Each question's clip reference (``None`` when missing).
    """
    caption_track: dict[str, str] = {}
    for q in questions:
        caption = _caption_identity(getattr(q, "caption", None))
        if q.track and caption:
            caption_track.setdefault(caption, str(q.track))
    out = []
    for q, ref in zip(questions, refs, strict=True):
        caption = _caption_identity(getattr(q, "caption", None))
        if q.track:
            out.append(str(q.track))
        elif caption:
            out.append(caption_track.get(caption, caption))
        else:
            out.append(f"{_CLIP_IDENTITY}{ref}" if ref else f"id:{q.id}")
    return out
