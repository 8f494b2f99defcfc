"""Where the tagging metadata comes from: ``--metadata`` paths, else public copies
downloaded once into the package's cache (``$LM_EVAL_RUL_CACHE``, :func:`cache_dir`).

* GTZAN's fault-filtered test split: ``coreyker/dnn-mgr`` (Kereliuk, Sturm and Larsen's
  own repository), ``gtzan/test_filtered.txt``;
* MTG-Jamendo split-0's test TSVs: ``MTG/mtg-jamendo-dataset``,
  ``data/splits/split-0/autotagging_<task>-test.tsv``;
* MagnaTagATune's top-50 test list as CMI-Bench ships it: ``nicolaus625/CMI-bench``,
  ``data/MTT/test.tsv`` (the annotations and the audio are never downloaded: the release
  is behind its own site's terms);
* Medley-solos-DB's ``Medley-solos-DB_metadata.csv``: its Zenodo record (3464194), the file
  mirdata's loader downloads too (the audio is never downloaded).
"""

from __future__ import annotations

import os
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..files import atomic_write
from ..questions.sources import cache_dir
from .readers import TaggingDataError

__all__ = ["PUBLIC_COPIES", "download_once", "gtzan_split_path", "mtg_tsv_path", "mtt_split_path"]

_RAW = "https://raw.githubusercontent.com"
#: Cache name -> the public copy's URL.
PUBLIC_COPIES: dict[str, str] = {
    "gtzan_test_filtered.txt": f"{_RAW}/coreyker/dnn-mgr/master/gtzan/test_filtered.txt",
    **{
        f"mtg_autotagging_{task}-test.tsv": (
            f"{_RAW}/MTG/mtg-jamendo-dataset/master/data/splits/split-0/autotagging_{task}-test.tsv"
        )
        for task in ("genre", "moodtheme", "instrument", "top50tags")
    },
    "mtt_cmi_test.tsv": f"{_RAW}/nicolaus625/CMI-bench/main/data/MTT/test.tsv",
    "Medley-solos-DB_metadata.csv": (
        "https://zenodo.org/record/3464194/files/Medley-solos-DB_metadata.csv?download=1"
    ),
}


def download_once(name: str, key: str) -> Path:
    """The cached public copy ``name`` (:data:`PUBLIC_COPIES`), downloaded when absent.

    Raises:
        TaggingDataError: Offline or the copy moved: naming the ``--metadata`` key to give.
    """
    target = cache_dir() / "tagging" / name
    if target.is_file():
        return target
    url = PUBLIC_COPIES[name]
    try:
        with urllib.request.urlopen(url, timeout=60) as response:  # noqa: S310 - fixed https URL
            data = response.read()
    except Exception as error:  # noqa: BLE001 - any network failure: one line naming the key
        reason = str(getattr(error, "reason", None) or error).splitlines()[0]
        raise TaggingDataError(
            f"cannot download {url} ({reason}); offline? Pass a local copy with --metadata "
            f"{key} (docs/tasks.md, Music tagging)."
        ) from None
    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(target, "wb") as handle:
        handle.write(data)
    return target


def _given(metadata: Mapping[str, Any], key: str) -> Path | None:
    value = metadata.get(key)
    return Path(os.path.expanduser(str(value))) if value not in (None, "") else None


def gtzan_split_path(metadata: Mapping[str, Any]) -> Path:
    """``gtzan_split_file``, else the public fault-filtered test split."""
    return _given(metadata, "gtzan_split_file") or download_once(
        "gtzan_test_filtered.txt", "gtzan_split_file"
    )


def mtg_tsv_path(metadata: Mapping[str, Any], task: str) -> Path:
    """``mtg_data_dir``'s ``autotagging_<task>-test.tsv``, else the public copy."""
    folder = _given(metadata, "mtg_data_dir")
    if folder is None:
        return download_once(f"mtg_autotagging_{task}-test.tsv", "mtg_data_dir")
    path = folder / f"autotagging_{task}-test.tsv"
    if not path.is_file():
        raise TaggingDataError(
            f"--metadata mtg_data_dir={str(folder)!r}: no autotagging_{task}-test.tsv in it. "
            "Give the folder of MTG-Jamendo's split-0 files (data/splits/split-0/)."
        )
    return path


def mtt_split_path(metadata: Mapping[str, Any]) -> Path:
    """``mtt_split_file``, else CMI-Bench's MagnaTagATune test list."""
    return _given(metadata, "mtt_split_file") or download_once("mtt_cmi_test.tsv", "mtt_split_file")
