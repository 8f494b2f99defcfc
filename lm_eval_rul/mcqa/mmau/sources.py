"""Where an MMAU-layout benchmark's public question files live, downloaded once into the
project's cache.

Each :class:`~lm_eval_rul.questions.layout.Layout` names its authors' GitHub repository
and the files at its root: ``Sakshi113/MMAU`` (Apache-2.0) holds ``mmau-test-mini.json``
(1,000 items with answers) and ``mmau-test.json`` (9,000 without); ``ddlBoJack/MMAR``
holds ``MMAR-meta.jsonl`` (1,000 items). Clips: the authors' archives or dataset pages.
"""

from __future__ import annotations

from pathlib import Path

from ...questions import DataSourceError, cache_dir
from ...questions.layout import Layout
from ...questions.sources import _download, _reason

__all__ = ["GITHUB_RAW", "default_layout_path"]

GITHUB_RAW = "https://raw.githubusercontent.com/{repository}/main/{name}"


def default_layout_path(layout: Layout, split: str | None = None) -> Path:
    """The released question file of ``split`` (default: the layout's first), downloaded
    once and cached.

    Raises:
        DataSourceError: offline (or moved): says how to pass a local copy.
    """
    files = dict(layout.files)
    name = files[split] if split else layout.files[0][1]
    cached = cache_dir() / name
    if cached.is_file():
        return cached
    try:
        return _download(GITHUB_RAW.format(repository=layout.repository, name=name), cached)
    except Exception as err:  # noqa: BLE001 - any network failure is the same advice
        raise DataSourceError(
            f"cannot download {layout.display}'s {name} from github.com/{layout.repository} "
            f"({_reason(err)}); offline or behind a firewall? Pass a local copy: --metadata "
            f"'{{\"{layout.name}_data_path\": \"/path/to/{name}\"}}' (docs/errors.md: Offline)."
        ) from None
