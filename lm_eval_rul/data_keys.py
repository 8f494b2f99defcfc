"""Every data key of every benchmark, checked when it is given: the question files and
folders ``--metadata`` (or ``lm_eval_rul.task_manager``) names are read now, as each
benchmark's loader will read them, not after ``simple_evaluate`` has loaded the model.

The benchmarks and their keys come from the catalogue (:mod:`lm_eval_rul.catalogue`): a
key names data when it is a path (:func:`is_data_key`). A benchmark's own ``checks`` read
its files' content as its loader does; a benchmark that declares none gets the existence
check of :func:`check_exists` for each data key given.

It sits below ``registration`` (:func:`lm_eval_rul.task_manager` checks the keys it is
given) and ``cli`` (``run --metadata``), so neither imports the other for it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .catalogue import benchmarks, downloads, load_function
from .questions.metadata_naming import metadata_key

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
    """Plugin task folder (``tasks/<family>``) -> the ``--metadata`` keys its tasks read
    (its benchmark's catalogue entry, :attr:`lm_eval_rul.catalogue.Benchmark.metadata_keys`)."""
    return {b.folder: b.keys() for b in benchmarks()}


def is_data_key(key: str) -> bool:
    """Whether ``key`` names a local file or folder (``audio_hf_dataset`` names a hub id).

    >>> [is_data_key(k) for k in ("rul_mmau_data_path", "fma_audio_dir", "mmau_subset")]
    [True, True, False]
    """
    return key.endswith(_FOLDER_SUFFIXES + _FILE_SUFFIXES)


def data_keys() -> dict[str, tuple[str, ...]]:
    """Benchmark folder -> the metadata keys naming its data."""
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
        leave = f", or leave {key} out" if downloads(key) else ""  # only with a public copy
        raise FileNotFoundError(
            f"{metadata_key(key)}={str(value)!r}: no such {what}. Give the path of a local "
            f"{'folder' if folder else 'copy'}{leave}."
        )


def check_data_keys(metadata: Mapping[str, Any]) -> None:
    """Every benchmark's checks (its descriptor's ``checks``: the seed, the parser and the
    files its loader reads), and for a benchmark without checks, that each of its data keys
    given names an existing file or folder.

    Raises:
        FileNotFoundError, DataValidationError, TaskMetadataError: the message of the
            benchmark's own loader, naming the key.
    """
    given = dict(metadata)
    checks: dict[str, None] = {}
    for benchmark in benchmarks():
        checks.update(dict.fromkeys(benchmark.checks))
        if not benchmark.checks:
            check_exists(given, tuple(k for k in benchmark.keys() if is_data_key(k)))
    for check in checks:
        load_function(check)(given)
