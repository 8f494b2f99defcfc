"""Which benchmark's own released file a path holds, asked of every catalogue descriptor.

Each benchmark with a layout of its own declares a :class:`~lm_eval_rul.catalogue.Reader`
(``detect``, ``read``, optionally ``describe``) in its ``benchmark.py``;
:func:`released_benchmark` asks every one, so a file given to the wrong key or command is
named for what it is ("MMAR's released layout ...: give it as --metadata mmar_data_path")
without a list of benchmarks here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Release", "released_benchmark"]


@dataclass(frozen=True)
class Release:
    """A benchmark's released file: its benchmark, the key that reads it, the file in words.

    Attributes:
        folder: The benchmark's task folder (``mmar``).
        name: Its display name (``MMAR-music``).
        key: The ``--metadata`` key of its released file (its first ``data_keys`` entry).
        description: The file in words (the reader's ``describe``, else the benchmark's name).
    """

    folder: str
    name: str
    key: str | None
    description: str


def _call(target: str, path: Path) -> Any:
    from ..catalogue import load_function

    return load_function(target)(path)


def released_benchmark(path: str | os.PathLike[str]) -> Release | None:
    """The benchmark whose reader detects the file at ``path`` (None: none does)."""
    from ..catalogue import benchmarks
    from ..errors import UserInputError

    path = Path(path)
    for benchmark in benchmarks():
        for reader in benchmark.readers:
            try:
                if not _call(reader.detect, path):
                    continue
                described = _call(reader.describe, path) if reader.describe else None
            except (OSError, ValueError, UserInputError):
                continue  # not readable as this layout: another reader may know it
            key = next(iter(benchmark.data_keys.values()), None)
            return Release(
                benchmark.folder,
                benchmark.name,
                key,
                str(described or f"{benchmark.name}'s own question file"),
            )
    return None
