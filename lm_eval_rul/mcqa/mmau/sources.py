"""Where MMAU's public files live, downloaded once into the project's cache.

The authors' GitHub repository ``Sakshi113/MMAU`` (Apache-2.0) holds both splits'
question files at its root: ``mmau-test-mini.json`` (1,000 items with answers) and
``mmau-test.json`` (9,000 items without). Clips: the authors' archives, or the Hugging
Face datasets that host them (``gamma-lab-umd/MMAU-test-mini``, ``lmms-lab-audio/mmau``).
"""

from __future__ import annotations

from pathlib import Path

from ...questions import DataSourceError, cache_dir
from ...questions.sources import _download, _reason

__all__ = ["MMAU_GITHUB_RAW", "MMAU_SPLITS", "MMAU_FILES", "default_mmau_path"]

MMAU_GITHUB_RAW = "https://raw.githubusercontent.com/Sakshi113/MMAU/main"
#: ``--metadata mmau_split`` values, each with its released file.
MMAU_FILES: dict[str, str] = {"test-mini": "mmau-test-mini.json", "test": "mmau-test.json"}
MMAU_SPLITS: tuple[str, ...] = tuple(MMAU_FILES)


def default_mmau_path(split: str = "test-mini") -> Path:
    """The released question file of ``split``, downloaded once and cached.

    Raises:
        DataSourceError: offline (or moved): says how to pass a local copy.
    """
    name = MMAU_FILES[split]
    cached = cache_dir() / name
    if cached.is_file():
        return cached
    try:
        return _download(f"{MMAU_GITHUB_RAW}/{name}", cached)
    except Exception as err:  # noqa: BLE001 - any network failure is the same advice
        raise DataSourceError(
            f"cannot download MMAU's {name} from github.com/Sakshi113/MMAU ({_reason(err)}); "
            "offline or behind a firewall? Pass a local copy: --metadata "
            f"'{{\"mmau_data_path\": \"/path/to/{name}\"}}' (docs/errors.md: Offline)."
        ) from None
