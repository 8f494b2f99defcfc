"""Opening a Hugging Face dataset from what a user names: a ``save_to_disk`` folder, a
parquet file or folder of parquet files, or a hub name already in the ``datasets`` cache.

One opener for the question readers (``--metadata mc_data_path``) and the audio layer
(``audio_hf_dataset``), so both read the same rows in the same order: a clip reference's
``row`` is the row the question was read from. ``datasets`` is imported only here, when a
dataset is opened.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .schema import DataSourceError

__all__ = ["is_local_dataset", "open_dataset", "dataset_splits", "load_dataset_splits",
           "choose_split"]

_SAVED = ("dataset_info.json", "dataset_dict.json", "state.json")


def is_local_dataset(path: Path) -> bool:
    """Whether ``path`` is a ``save_to_disk`` folder, a parquet file or a folder of them."""
    if path.is_file():
        return path.suffix.lower() == ".parquet"
    if not path.is_dir():
        return False
    return any((path / name).is_file() for name in _SAVED) or any(path.rglob("*.parquet"))


def _load(source: str, split: str, key: str) -> Any:
    import datasets

    path = Path(os.path.expanduser(source))
    if path.is_dir() and any((path / name).is_file() for name in _SAVED):
        try:
            return datasets.load_from_disk(str(path))
        except FileNotFoundError:
            raise  # a missing shard: the harness-wide one line naming the file
        except (OSError, ValueError) as error:
            # a truncated arrow shard (pyarrow's OSError), a state.json or
            # dataset_info.json that is not JSON (a ValueError): the folder, not a bug
            raise DataSourceError(
                f"--metadata {key}={source!r}: the save_to_disk folder {path} cannot be read "
                f"({type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
                "); a shard or its JSON is damaged (a copy cut short?). Save the dataset "
                "again (Dataset.save_to_disk), or copy the folder again."
            ) from None
    if path.is_file() or (path.is_dir() and any(path.rglob("*.parquet"))):
        files = [str(path)] if path.is_file() else sorted(str(p) for p in path.rglob("*.parquet"))
        return datasets.load_dataset("parquet", data_files={split: files})
    try:
        return datasets.load_dataset(source)
    except Exception as error:  # offline, no such dataset, no access, ...
        raise DataSourceError(
            f"--metadata {key}={source!r}: not a save_to_disk folder, a parquet "
            f"file or folder, nor a dataset that loads from the hub ({type(error).__name__}: "
            f"{error}). Give a local path, or check the name and your network / HF_TOKEN."
        ) from error


def dataset_splits(loaded: Any) -> tuple[str, ...]:
    """The split names of a loaded dataset (``()`` for a single split saved on its own)."""
    import datasets

    return tuple(loaded) if isinstance(loaded, datasets.DatasetDict) else ()


def choose_split(splits: tuple[str, ...], split: str | None, source: str, key: str) -> str:
    """The split to read: the one asked for, else the only one, else ``test``.

    Raises:
        DataSourceError: the split asked for is not there, or several and no ``test``.
    """
    if split:
        if splits and split not in splits:
            raise DataSourceError(
                f"--metadata {key}={source!r} has splits {list(splits)}, not {split!r}; "
                "give one of them"
            )
        return split
    if len(splits) <= 1:
        return splits[0] if splits else "test"
    if "test" in splits:
        return "test"
    raise DataSourceError(
        f"--metadata {key}={source!r} has splits {list(splits)}: say which to read "
        "(--metadata mc_split)"
    )


def load_dataset_splits(source: str, *, key: str) -> tuple[str, ...]:
    """The split names of the dataset ``source`` names (``()``: one split on its own, or
    parquet files, read as any split)."""
    path = Path(os.path.expanduser(source))
    if path.is_file() or (
        path.is_dir()
        and not any((path / n).is_file() for n in _SAVED)
        and any(path.rglob("*.parquet"))
    ):
        return ()
    return dataset_splits(_load(source, "test", key))


def open_dataset(source: str, split: str, *, key: str, split_key: str) -> Any:
    """The ``split`` of the dataset ``source`` names (see the module docstring).

    Raises:
        DataSourceError: naming ``key`` (``--metadata audio_hf_dataset``...) and, for a
            missing split, ``split_key``.
    """
    import datasets

    loaded = _load(source, split, key)
    if isinstance(loaded, datasets.DatasetDict):
        if split not in loaded:
            raise DataSourceError(
                f"--metadata {key}={source!r} has splits {list(loaded)}, not "
                f"{split!r}; set {split_key}"
            )
        loaded = loaded[split]
    return loaded
