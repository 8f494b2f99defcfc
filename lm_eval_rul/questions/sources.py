"""Where the public copies of the benchmarks live, and their download cache.

RUL-MuChoMusic comes from the GitHub release (``RUL-MuchoMusic.json``), falling back to
the Hugging Face dataset ``yongyizang/RUListening``; MuChoMusic's CSV from the Hugging Face
dataset ``mulab-mir/muchomusic``. Downloads are cached in ``$LM_EVAL_RUL_CACHE`` (default
``~/.cache/lm_eval_rul``); the MuChoMusic CSV lives in the Hugging Face cache.
"""

from __future__ import annotations

import os
import urllib.request
from pathlib import Path

from ..files import atomic_write
from .schema import DataSourceError

__all__ = [
    "RUL_GITHUB_URL",
    "RUL_HF_REPO",
    "MUCHOMUSIC_HF_REPO",
    "MUCHOMUSIC_CSV_NAME",
    "cache_dir",
    "default_rul_path",
    "default_muchomusic_csv",
]

RUL_GITHUB_URL = (
    "https://raw.githubusercontent.com/yongyizang/AreYouReallyListening/main/RUL-MuchoMusic.json"
)
RUL_HF_REPO = "yongyizang/RUListening"
MUCHOMUSIC_HF_REPO = "mulab-mir/muchomusic"
MUCHOMUSIC_CSV_NAME = "muchomusic.csv"


def cache_dir() -> Path:
    """The package's cache folder: ``$LM_EVAL_RUL_CACHE``, else ``$XDG_CACHE_HOME/lm_eval_rul``,
    else ``~/.cache/lm_eval_rul``. A variable set but empty counts as unset, and so does a
    relative ``XDG_CACHE_HOME`` (the XDG rule): neither may put a cache in the working folder.
    """
    xdg = os.environ.get("XDG_CACHE_HOME") or ""
    base = xdg if os.path.isabs(xdg) else os.path.expanduser("~/.cache")
    root = os.environ.get("LM_EVAL_RUL_CACHE") or os.path.join(base, "lm_eval_rul")
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path


def _download(url: str, target: Path) -> Path:
    with urllib.request.urlopen(url, timeout=60) as response:  # noqa: S310 - fixed https URL
        data = response.read()
    with atomic_write(target, "wb") as handle:  # unique temporary name, then a rename
        handle.write(data)
    return target


def _probe_hub(repo: str) -> None:
    """One metadata request to the hub, never retried: an unreachable hub fails at once
    (listing a repository's files would retry five times, about 23 s)."""
    from huggingface_hub import get_hf_file_metadata, hf_hub_url
    from huggingface_hub.errors import EntryNotFoundError

    try:
        url = hf_hub_url(repo, ".gitattributes", repo_type="dataset")
        get_hf_file_metadata(url, timeout=10, retry_on_errors=False)
    except EntryNotFoundError:
        pass  # the hub answered


def _hf_rul_file() -> Path:
    from huggingface_hub import hf_hub_download, list_repo_files

    _probe_hub(RUL_HF_REPO)
    files = list_repo_files(RUL_HF_REPO, repo_type="dataset")
    preferred = sorted(
        (f for f in files if f.lower().endswith((".json", ".jsonl", ".csv", ".parquet"))),
        key=lambda f: ("rul" not in f.lower(), f.count("/"), f),
    )
    if not preferred:
        raise DataSourceError(f"no question file in {RUL_HF_REPO}: {files}")
    return Path(hf_hub_download(RUL_HF_REPO, preferred[0], repo_type="dataset"))


def default_rul_path() -> Path:
    """The public RUL-MuChoMusic file, downloaded once and cached.

    Tries ``RUL-MuchoMusic.json`` in the GitHub release, then the Hugging Face dataset
    ``yongyizang/RUListening``. The cache lives in ``$LM_EVAL_RUL_CACHE`` (default
    ``~/.cache/lm_eval_rul``).
    """
    cached = cache_dir() / "RUL-MuchoMusic.json"
    if cached.is_file():
        return cached
    errors = []
    try:
        return _download(RUL_GITHUB_URL, cached)
    except Exception as err:  # noqa: BLE001 - any network failure falls through to the mirror
        errors.append(f"github.com: {_reason(err)}")
    try:
        return _hf_rul_file()
    except Exception as err:  # noqa: BLE001
        errors.append(f"huggingface.co/datasets/{RUL_HF_REPO}: {_reason(err)}")
    raise DataSourceError(
        f"cannot download RUL-MuChoMusic ({'; '.join(errors)}); offline or behind a "
        "firewall? Pass a local copy: --metadata "
        '\'{"data_path": "/path/to/RUL-MuchoMusic.json"}\' (docs/errors.md: Offline).'
    )


def _reason(error: BaseException) -> str:
    """The first line of an error, with the reason of a wrapped network error."""
    reason = getattr(error, "reason", None) or error
    lines = str(reason).strip().splitlines()
    return lines[0] if lines else type(error).__name__


def default_muchomusic_csv() -> Path:
    """MuChoMusic's ``muchomusic.csv`` from the Hugging Face hub (cached by the hub client)."""
    try:
        from huggingface_hub import hf_hub_download

        return Path(hf_hub_download(MUCHOMUSIC_HF_REPO, MUCHOMUSIC_CSV_NAME, repo_type="dataset"))
    except Exception as err:  # noqa: BLE001
        raise DataSourceError(
            f"cannot download {MUCHOMUSIC_CSV_NAME} from huggingface.co/datasets/"
            f"{MUCHOMUSIC_HF_REPO} ({_reason(err)}); pass a local copy: --metadata "
            '\'{"data_path": "/path/to/muchomusic.csv"}\' (or "muchomusic_csv" for RUL tasks; '
            "docs/errors.md: Offline)."
        ) from err
