"""Is the model there? Asked once, before anything loads, without the hub's retries.

``transformers`` asks the Hugging Face hub for every file and retries a failing request
five times with back-off (about 23 s per file), so a run without network used to end a
minute later in a 20-frame traceback. :func:`check_model_available` answers first, in
one request or none:

* a local folder (``pretrained=/path``): it must exist and hold ``config.json``;
* a hub id with ``HF_HUB_OFFLINE=1``: it must be in the local Hugging Face cache;
* a hub id otherwise: ONE metadata request for its ``config.json`` with no retry. Gated,
  missing or private models, and an unreachable hub, are one message each. When the hub
  cannot be reached but the model is in the cache, the run goes on offline (with a
  warning) instead of paying the retries on every file.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .adapters import hub_model_names
from .errors import UserInputError

__all__ = [
    "HUB_MODELS",
    "RUN_DATA_HINT",
    "ModelUnavailableError",
    "check_model_available",
    "check_checkpoint_available",
    "checkpoint_config",
    "hub_offline",
]

logger = logging.getLogger(__name__)

#: Harness models that read ``pretrained`` (and ``tokenizer``) from the hub or a folder:
#: the harness's own, then the plugin's adapters that read a checkpoint.
HUB_MODELS: tuple[str, ...] = hub_model_names()

#: The ``--metadata`` half of the offline advice, for ``run`` (the tasks' question files).
RUN_DATA_HINT = """ and --metadata '{"data_path": "/path/to/RUL-MuchoMusic.json"}'"""


def _offline_how(flag: str, data_hint: str) -> str:
    """How to run without network, naming the subcommand's own model flag."""
    return (
        f"To run without network, give local folders: {flag} pretrained=/path/to/model "
        "(saved with save_pretrained, or fetched elsewhere with `hf download NAME --local-dir "
        f"DIR`){data_hint} (docs/errors.md: Offline)."
    )


class ModelUnavailableError(UserInputError, OSError):
    """The model cannot be found locally nor fetched from the hub; says why and what to do."""


def hub_offline() -> bool:
    """Whether the Hugging Face hub client is in offline mode (``HF_HUB_OFFLINE``)."""
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE)


def _go_offline() -> None:
    """Switch this process (and its children) to offline mode: the model is cached."""
    from huggingface_hub import constants

    constants.HF_HUB_OFFLINE = True
    os.environ["HF_HUB_OFFLINE"] = "1"


def _looks_local(name: str) -> bool:
    return (
        name.startswith(("/", "./", "../", "~", "\\"))
        or name.count("/") > 1
        or (os.sep != "/" and os.sep in name)
    )


def _check_folder(path: Path, what: str) -> None:
    if not path.exists():
        raise ModelUnavailableError(
            f"{what}={str(path)!r}: no such folder. Give the folder of a saved model "
            "(with config.json), or a Hugging Face hub id such as Qwen/Qwen2.5-0.5B-Instruct."
        )
    if path.is_dir() and not (path / "config.json").is_file():
        raise ModelUnavailableError(
            f"{what}={str(path)!r} holds no config.json, so it is not a saved transformers "
            "model; give the folder that save_pretrained wrote (or `hf download` fetched)."
        )


def _cached(repo_id: str, revision: str) -> bool:
    from huggingface_hub import try_to_load_from_cache

    found = try_to_load_from_cache(repo_id, "config.json", revision=revision)
    return isinstance(found, str)


def _ask_hub(repo_id: str, revision: str, what: str, how: str) -> None:
    """One metadata request for ``config.json``, no retries; raise what it says."""
    from huggingface_hub import constants as hub
    from huggingface_hub import get_hf_file_metadata, hf_hub_url
    from huggingface_hub.errors import (
        EntryNotFoundError,
        GatedRepoError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    url = hf_hub_url(repo_id, "config.json", revision=revision)
    page = f"{hub.ENDPOINT}/{repo_id}"
    try:
        get_hf_file_metadata(url, timeout=10, retry_on_errors=False)
    except GatedRepoError:
        raise ModelUnavailableError(
            f"{what}={repo_id!r} is gated: accept its terms on {page} and log in "
            "(`hf auth login`, or set HF_TOKEN), or give a local folder. " + how
        ) from None
    except RevisionNotFoundError:
        raise ModelUnavailableError(
            f"{what}={repo_id!r} has no revision {revision!r} on the hub; check revision=."
        ) from None
    except RepositoryNotFoundError:
        raise ModelUnavailableError(
            f"{what}={repo_id!r}: no such model on the hub (or it is private: log in with "
            "`hf auth login` / HF_TOKEN). Check the name, or give a local folder."
        ) from None
    except EntryNotFoundError:
        raise ModelUnavailableError(
            f"{what}={repo_id!r} has no config.json on the hub, so transformers cannot load "
            "it; give a transformers checkpoint."
        ) from None
    except Exception as error:  # noqa: BLE001 - no network, proxy, firewall, HTTP 5xx...
        if _cached(repo_id, revision):
            logger.warning(
                "cannot reach %s (%s); %s is in the local cache, so this run goes on "
                "offline (set HF_HUB_OFFLINE=1 to skip this check)",
                hub.ENDPOINT,
                _reason(error),
                repo_id,
            )
            _go_offline()
            return
        raise ModelUnavailableError(
            f"{what}={repo_id!r} cannot be downloaded: {hub.ENDPOINT} is not reachable "
            f"({_reason(error)}; offline, or behind a firewall or proxy?). " + how
        ) from None


def _reason(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0]}" if text else type(error).__name__


def _check_one(name: str, revision: str, what: str, how: str) -> None:
    path = Path(name).expanduser()
    if path.exists() or _looks_local(name):
        _check_folder(path, what)
        return
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    try:
        validate_repo_id(name)
    except HFValidationError:
        raise ModelUnavailableError(
            f"{what}={name!r} is neither a local folder nor a hub id (like "
            "Qwen/Qwen2.5-0.5B-Instruct)."
        ) from None
    if hub_offline():
        if not _cached(name, revision):
            raise ModelUnavailableError(
                f"{what}={name!r} is not in the local Hugging Face cache and the hub is off "
                "(HF_HUB_OFFLINE=1). " + how
            )
        return
    _ask_hub(name, revision, what, how)


def check_model_available(
    model: str | None,
    model_args: Mapping[str, Any] | None,
    *,
    flag: str = "--model_args",
    data_hint: str = RUN_DATA_HINT,
) -> None:
    """Raise :class:`ModelUnavailableError` unless the model can be loaded; never retries.

    Only models of :func:`~lm_eval_rul.adapters.hub_model_names` are checked (an API model
    has nothing to download).

    Args:
        model: The harness model name (``--model``).
        model_args: The parsed ``--model_args``.
        flag: The command-line flag that gave ``model_args`` (``--model_args`` for
            ``run`` and ``pi``, ``--generator_args`` / ``--judge_args`` elsewhere), named
            in the message.
        data_hint: The rest of the offline advice (default: ``run``'s ``--metadata``
            data files; ``""`` for commands that read local files anyway).
    """
    if model not in hub_model_names() or not model_args:
        return
    revision = str(model_args.get("revision") or "main")
    for key in ("pretrained", "tokenizer"):
        value = model_args.get(key)
        if isinstance(value, str) and value:
            _check_one(value, revision, f"{flag} {key}", _offline_how(flag, data_hint))


def check_checkpoint_available(name: str, flag: str, *, revision: str = "main") -> None:
    """:func:`check_model_available` for a checkpoint given on its own flag
    (``diagnose --t5 NAME``): a local folder, the cache, or one hub request, never retried.

    Raises:
        ModelUnavailableError: Why it cannot be loaded, naming ``flag``.
    """
    how = (
        f"To run without network, give a local folder: {flag} /path/to/model (saved with "
        "save_pretrained, or fetched elsewhere with `hf download NAME --local-dir DIR`) "
        "(docs/errors.md: Offline)."
    )
    _check_one(name, revision, flag, how)


def checkpoint_config(name: str, revision: str = "main") -> dict[str, Any] | None:
    """The ``config.json`` of a checkpoint, read without loading it or asking the hub.

    Args:
        name: A local folder, or a hub id (read from the local Hugging Face cache).
        revision: The hub revision.

    Returns:
        The parsed JSON; None when it is not on this machine or not readable.
    """
    import json

    path = Path(name).expanduser()
    if path.is_dir():
        found: Any = path / "config.json"
    else:
        try:
            from huggingface_hub import try_to_load_from_cache

            found = try_to_load_from_cache(name, "config.json", revision=revision)
        except Exception:  # noqa: BLE001 - not a hub id: nothing cached to read
            return None
    if not isinstance(found, str | Path) or not Path(found).is_file():
        return None
    try:
        config = json.loads(Path(found).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return config if isinstance(config, dict) else None
