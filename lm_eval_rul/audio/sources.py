"""Clip references and Hugging Face audio datasets.

A clip reference is a JSON string: ``{"kind": "file", "path": ...}`` or
``{"kind": "hf", "source": ..., "split": ..., "column": ..., "row": int}``. Documents
carry references, never waveforms; :func:`clip_source` turns one into what to decode.
Hugging Face datasets are read with ``Audio(decode=False)`` (the bytes are decoded with
soundfile/librosa, so no torchcodec is needed).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from ..paths import PathEscapeError, contained_path
from .errors import AudioDecodeError, AudioError

__all__ = [
    "file_ref",
    "LINK_LOOP",
    "hf_ref",
    "ref_name",
    "clip_source",
    "clip_identity",
    "file_content_digest",
    "load_any_dataset",
    "hf_audio_dataset",
]


#: Why a clip that is a symbolic link loop cannot be played (the preflight names it).
LINK_LOOP = (
    "a symbolic link that leads back to itself; replace it with the audio file, or with a "
    "link to one"
)


def file_ref(path: Path) -> str:
    """The reference of an audio file, by its absolute path with links resolved (a link
    that leads back to itself keeps its own path: the audio preflight names it with every
    other unreadable clip, :data:`LINK_LOOP`)."""
    try:
        resolved = path.resolve()
    except (RuntimeError, OSError):  # 3.11/3.12: RuntimeError("Symlink loop ...")
        resolved = Path(os.path.abspath(path))
    return json.dumps({"kind": "file", "path": str(resolved)}, sort_keys=True)


def hf_ref(source: str, split: str, column: str, row: int) -> str:
    return json.dumps(
        {"kind": "hf", "source": source, "split": split, "column": column, "row": int(row)},
        sort_keys=True,
    )


def ref_name(ref: str) -> str:
    spec = json.loads(ref)
    if spec["kind"] == "array":
        seconds, rate = spec["frames"] / spec["sampling_rate"], spec["sampling_rate"]
        return f"harness audio sha1:{spec['sha1'][:12]} ({seconds:.2f} s at {rate} Hz)"
    if spec["kind"] == "file":
        return spec["path"]
    return f"{spec['source']}[{spec['split']}] row {spec['row']} column {spec['column']!r}"


def clip_source(ref: str) -> tuple[str | bytes, str]:
    """The source to decode for a reference, and its name for messages."""
    spec = json.loads(ref)
    if spec["kind"] == "file":
        return spec["path"], spec["path"]
    dataset = hf_audio_dataset(spec["source"], spec["split"], spec["column"])
    cell = dataset[int(spec["row"])][spec["column"]]
    name = ref_name(ref)
    if cell is None:
        raise AudioDecodeError(f"audio {name}: the cell is empty")
    if cell.get("bytes"):
        # name ends with the original file name so the librosa fallback sees its extension
        return bytes(cell["bytes"]), f"{name}: {cell.get('path') or 'audio'}"
    if cell.get("path"):
        path = _cell_path(spec["source"], str(cell["path"]), name)
        if path.is_file():
            return str(path), str(path)
    raise AudioDecodeError(f"audio {name}: the cell has neither bytes nor a readable path")


def _dataset_root(source: str) -> Path:
    """The folder a dataset's file paths must stay in: the local dataset's folder (a
    parquet file's own folder), or the ``datasets`` cache for a hub dataset."""
    path = Path(os.path.expanduser(source))
    if path.exists():
        return path if path.is_dir() else path.parent
    import datasets

    return Path(datasets.config.HF_DATASETS_CACHE)


def _cell_path(source: str, path: str, name: str) -> Path:
    """A cell's file (relative paths are read from the dataset's folder), kept inside it."""
    root = _dataset_root(source)
    try:
        return contained_path(
            root,
            path,
            item=f"audio {name}",
            option="the folder of --metadata audio_hf_dataset",
            fix="store the audio bytes in the dataset, or put its files inside the "
            "dataset's folder.",
        )
    except PathEscapeError as error:
        raise AudioDecodeError(str(error)) from None


def clip_identity(ref: str) -> dict[str, Any]:
    """What identifies the *content* of a clip.

    A file: the SHA-256 of its bytes (:func:`file_content_digest`, read once per file and
    state), so an edited file is a new clip and two files exchanged by name (``mv``,
    ``cp -p`` and ``tar`` keep sizes and modification times) are each still themselves.
    A row of a Hugging Face dataset: the SHA-256 of its cell's bytes (or of the file its
    path names), whatever the dataset's shape (a parquet file, a ``save_to_disk`` folder)
    or the row's place in it. Used to key stored results (:mod:`lm_eval_rul.cache`), so a changed
    clip never reads a stale entry.
    """
    spec = json.loads(ref)
    if spec["kind"] == "array":  # the harness's audio argument: its content hash says it all
        return spec
    if spec["kind"] == "file":
        try:
            return {"sha256": file_content_digest(spec["path"])}
        except OSError:
            return {"path": spec["path"], "missing": True}
    dataset = hf_audio_dataset(spec["source"], spec["split"], spec["column"])
    return _cell_identity(ref, getattr(dataset, "_fingerprint", None))


@functools.lru_cache(maxsize=65536)
def _cell_identity(ref: str, fingerprint: str | None) -> dict[str, Any]:
    """A dataset cell's content: the SHA-256 of its bytes, or of the file its path names
    (the same clip as a file, a parquet cell or a ``save_to_disk`` cell is one clip)."""
    try:
        source, name = clip_source(ref)
    except AudioDecodeError:
        return {**json.loads(ref), "missing": True}
    if isinstance(source, bytes):
        return {"sha256": hashlib.sha256(source).hexdigest()}
    try:
        return {"sha256": file_content_digest(source)}
    except OSError:
        return {"path": name, "missing": True}


#: Content digests by file state: (path, device, inode, size, mtime, ctime) in ns.
_DIGESTS: dict[tuple[str, int, int, int, int, int], str] = {}
_BLOCK = 1 << 20


def file_content_digest(path: str | os.PathLike[str]) -> str:
    """The SHA-256 of a file's bytes, computed once per state of the file in a process.

    The state includes the inode and the change time (``ctime``), which no rename, copy
    or ``touch``/``tar`` restoring a modification time keeps: a file put in another's
    place is read again, an untouched one is not (``benchmarks/bench_clip_identity.py``
    measures the cost against decoding).

    Raises:
        OSError: the file cannot be read.
    """
    name = os.fspath(path)
    state = os.stat(name)
    key = (
        name,
        state.st_dev,
        state.st_ino,
        state.st_size,
        state.st_mtime_ns,
        state.st_ctime_ns,
    )
    known = _DIGESTS.get(key)
    if known is None:
        digest = hashlib.sha256()
        with open(name, "rb") as handle:
            while block := handle.read(_BLOCK):
                digest.update(block)
        known = _DIGESTS[key] = digest.hexdigest()
    return known


def load_any_dataset(source: str, split: str) -> Any:
    """The ``split`` of the dataset ``audio_hf_dataset`` names (the question readers' one
    opener, :func:`lm_eval_rul.questions.datasets_io.open_dataset`)."""
    from ..questions.datasets_io import open_dataset
    from ..questions.schema import DataSourceError

    try:
        return open_dataset(source, split, key="audio_hf_dataset", split_key="audio_split")
    except DataSourceError as error:
        raise AudioError(str(error)) from error.__cause__


@functools.lru_cache(maxsize=4)
def hf_audio_dataset(source: str, split: str, column: str) -> Any:
    from datasets import Audio

    dataset = load_any_dataset(source, split)
    if column not in dataset.column_names:
        raise AudioError(
            f"--metadata audio_hf_dataset={source!r}: no audio column {column!r} (columns: "
            f"{dataset.column_names}); set audio_column"
        )
    return dataset.cast_column(column, Audio(decode=False))

