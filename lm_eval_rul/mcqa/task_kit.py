"""The task-building kit every multiple-choice benchmark's loaders use (public).

A benchmark's ``custom_dataset`` function (MuChoMusic, RUL-MuChoMusic, MMAU, a new one)
builds its documents from these pieces:

* :func:`existing_file` / :func:`file_stamp`: a ``--metadata`` path checked (one line
  naming the key) and the stamp its cached reading is keyed on (a file rewritten in place
  is read again);
* :func:`shuffle_seed`: the ``shuffle_seed`` key, a whole number; every option order is
  seeded by it and the item id (:func:`make_docs`, :mod:`.folds`: documents, their seeded
  option order and the leave-one-out folds);
* :func:`attach_audio` (:mod:`lm_eval_rul.audio`): each document's clip fields;
* :func:`as_dataset`: the documents as the harness's ``{"test": Dataset}``, each with the
  ``parser`` its generation task reads answers with;
* :class:`TaskMetadataError`: a ``--metadata`` value the tasks cannot use.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from ..audio import attach_audio
from ..errors import UserInputError
from ..questions import DEFAULT_SEED
from ..questions.metadata_naming import metadata_example, metadata_key
from .folds import make_docs

__all__ = [
    "TaskMetadataError",
    "file_stamp",
    "existing_file",
    "shuffle_seed",
    "as_dataset",
    "make_docs",
    "attach_audio",
]


class TaskMetadataError(UserInputError, ValueError):
    """A ``--metadata`` value the multiple-choice tasks cannot use."""


def file_stamp(path: Path) -> tuple[str, float, int]:
    """(resolved path, mtime, size): the key a cached reading of ``path`` is stored under."""
    stat = path.stat()
    return str(path.resolve()), stat.st_mtime, stat.st_size


def existing_file(path: str | os.PathLike[str], key: str, *, public: bool | None = None) -> Path:
    """``path`` (from ``--metadata key``) as an existing file, or one line naming the key.

    The advice to leave the key out (and download the public dataset) is given only for
    a key whose benchmark has a public copy (``public``; None: the benchmark descriptors'
    :attr:`~lm_eval_rul.catalogue.Benchmark.downloads` say).

    Raises:
        FileNotFoundError: No such file.
    """
    from ..catalogue import downloads

    resolved = Path(os.path.expanduser(str(path)))
    if not resolved.is_file():
        if downloads(key) if public is None else public:
            fix = (f"Give the path of a local copy, or leave {key} out to download the public "
                   "dataset.")
        else:
            fix = "Give the path of your file (it has no public copy)."
        raise FileNotFoundError(f"{metadata_key(key)}={str(path)!r}: no such file. {fix}")
    return resolved


def shuffle_seed(metadata: dict[str, Any]) -> int:
    """``shuffle_seed``: a whole number (an int, an integral float, or its digits as text).

    ``true`` is refused rather than read as 1, and ``1.5`` rather than cut to 1.

    Raises:
        TaskMetadataError: Naming the value and an example.
    """
    value = metadata.get("shuffle_seed", DEFAULT_SEED)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d+\s*", value):
        return int(value)
    raise TaskMetadataError(
        f"{metadata_key('shuffle_seed')} must be an integer, got {value!r}: give a whole number "
        f"(e.g. {metadata_example('shuffle_seed', DEFAULT_SEED)}, the default) or leave it out"
    )


def as_dataset(docs: list[dict[str, Any]], parser: str) -> dict[str, Any]:
    """``docs`` as the harness's ``custom_dataset`` value, each carrying ``parser``."""
    import datasets

    for doc in docs:
        doc["parser"] = parser  # read by process_results_gen and the report
    return {"test": datasets.Dataset.from_list(docs)}
