"""Every data key of every benchmark, checked when it is given: the question files and
folders ``--metadata`` (or ``lm_eval_rul.task_manager``) names are read now, as each
benchmark's loader will read them, not after ``simple_evaluate`` has loaded the model.

The keys come from the structure that lists each benchmark family's metadata keys
(:func:`family_metadata_keys`, which ``run`` also checks ``--metadata`` against); a key
names data when it is a path (:func:`is_data_key`). Each family's reader (:data:`_READERS`)
checks content; a family without one gets the existence check of :func:`check_exists`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..questions.metadata_naming import metadata_key

__all__ = [
    "family_metadata_keys",
    "is_data_key",
    "data_keys",
    "check_exists",
    "check_data_keys",
]

#: How a metadata key that names data ends: a folder (``_dir``) or a file.
_FOLDER_SUFFIXES = ("_dir",)
_FILE_SUFFIXES = ("data_path", "_csv", "_metadata", "_tags")


def family_metadata_keys() -> dict[str, tuple[str, ...]]:
    """Plugin task folder (``tasks/<family>``) -> the ``--metadata`` keys its tasks read."""
    from ..factual.tasks import FACTUAL_METADATA_KEYS
    from ..mcqa.mmau.tasks import MMAU_METADATA_KEYS
    from ..mcqa.tasks import METADATA_KEYS as MCQA_METADATA_KEYS

    return {
        "rul_muchomusic": MCQA_METADATA_KEYS,
        "muchomusic": MCQA_METADATA_KEYS,
        "factual": FACTUAL_METADATA_KEYS,
        "mmau": MMAU_METADATA_KEYS,
    }


def is_data_key(key: str) -> bool:
    """Whether ``key`` names a local file or folder (``audio_hf_dataset`` names a hub id).

    >>> [is_data_key(k) for k in ("rul_mmau_data_path", "fma_audio_dir", "mmau_subset")]
    [True, True, False]
    """
    return key.endswith(_FOLDER_SUFFIXES + _FILE_SUFFIXES)


def data_keys() -> dict[str, tuple[str, ...]]:
    """Benchmark family -> the metadata keys naming its data."""
    return {
        family: tuple(key for key in keys if is_data_key(key))
        for family, keys in family_metadata_keys().items()
    }


def check_exists(metadata: Mapping[str, Any], keys: tuple[str, ...]) -> None:
    """Each of ``keys`` given in ``metadata`` names an existing file (a folder for
    ``*_dir``), else :class:`FileNotFoundError` naming the key as the caller gave it."""
    for key in keys:
        value = metadata.get(key)
        if not value or not isinstance(value, str | os.PathLike):
            continue
        path = Path(os.path.expanduser(str(value)))
        folder = key.endswith(_FOLDER_SUFFIXES)
        if path.is_dir() if folder else path.is_file():
            continue
        what = "directory" if folder else "file"
        raise FileNotFoundError(
            f"{metadata_key(key)}={str(value)!r}: no such {what}. Give the path of a local "
            f"{'folder' if folder else 'copy'}, or leave {key} out."
        )


def _mcqa(metadata: dict[str, Any]) -> None:
    from ..mcqa.tasks import check_task_metadata

    check_task_metadata(metadata)


def _mmau(metadata: dict[str, Any]) -> None:
    from ..mcqa.mmau.tasks import check_mmau_data

    check_mmau_data(metadata)


#: Family -> the reader that checks its data keys' content (as its loader reads them).
_READERS: dict[str, Callable[[dict[str, Any]], None]] = {
    "rul_muchomusic": _mcqa,
    "muchomusic": _mcqa,
    "mmau": _mmau,
}


def check_data_keys(metadata: Mapping[str, Any]) -> None:
    """Every data key of every benchmark given in ``metadata``: it exists, and the family's
    reader accepts its content; the seed and parser are checked with them.

    Raises:
        FileNotFoundError, DataValidationError, TaskMetadataError: the message of the
            benchmark's own loader, naming the key.
    """
    given = dict(metadata)
    _mcqa(given)  # the seed, the parser and audio_dir are every benchmark's
    done = {_mcqa}
    for family, keys in data_keys().items():
        if not any(given.get(key) for key in keys):
            continue
        reader = _READERS.get(family)
        if reader is None:
            check_exists(given, keys)
        elif reader not in done:
            done.add(reader)
            reader(given)
