"""Tests stay out of the user's caches: each cache location moved into one session folder,
and any write under the user's own cache folders recorded, to fail the test that made it.

``tests/conftest.py`` calls :func:`isolate_session` from ``pytest_configure``, before any
fixture (a module-scoped fixture runs before a test's own ``monkeypatch``), and checks
:meth:`WriteGuard.take` after each test. Subprocesses inherit the moved locations; writes
of this process are seen by an audit hook (:func:`sys.addaudithook`), so another program
writing the same cache at the same time is never blamed on a test.
"""

from __future__ import annotations

import glob
import os
import shutil
import sys
from collections.abc import Iterable, Mapping, MutableMapping
from pathlib import Path
from typing import Any

__all__ = ["CACHE_VARIABLES", "WriteGuard", "user_cache_dirs", "isolate_session"]

#: Environment variables naming a cache folder something under test may write.
CACHE_VARIABLES = (
    "XDG_CACHE_HOME",  # lm_eval_rul's default cache, huggingface, torch, pip ...
    "HF_HOME",
    "HF_HUB_CACHE",
    "HF_DATASETS_CACHE",
    "TORCH_HOME",
    "MPLCONFIGDIR",  # matplotlib's font cache
    "LM_EVAL_RUL_CACHE",
)

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
#: Audit events that create or change files, and the positions of their path arguments.
_PATH_ARGS = {
    "open": (0,),
    "sqlite3.connect": (0,),
    "os.mkdir": (0,),
    "os.rename": (0, 1),
    "os.replace": (0, 1),
    "os.remove": (0,),
    "os.rmdir": (0,),
    "shutil.copyfile": (1,),
}


def user_cache_dirs(environ: Mapping[str, str] | None = None) -> list[Path]:
    """The folders the user's caches live in: each :data:`CACHE_VARIABLES` value, and the
    defaults (``~/.cache``, ``~/.config/matplotlib``) for those unset."""
    environ = os.environ if environ is None else environ
    home = Path(environ.get("HOME") or os.path.expanduser("~"))
    found = [Path(environ[name]) for name in CACHE_VARIABLES if environ.get(name)]
    found += [home / ".cache", home / ".config" / "matplotlib"]
    return sorted({Path(os.path.abspath(p)) for p in found})


def _is_write(event: str, args: tuple[Any, ...]) -> bool:
    if event != "open":
        return True
    mode, flags = (args + (None, 0))[1:3]
    if isinstance(mode, str):
        return any(c in mode for c in "wax+")
    return bool(isinstance(flags, int) and flags & _WRITE_FLAGS)


class WriteGuard:
    """Record writes of this process under ``forbidden`` folders (``allowed`` ones inside
    them excepted), as an audit hook: :meth:`install`, then :meth:`take` now and then.

    >>> guard = WriteGuard(["/home/u/.cache"])
    >>> guard.audit("open", ("/home/u/.cache/lm_eval_rul/x.sqlite", "wb", 0))
    >>> guard.audit("open", ("/home/u/.cache/huggingface/config.json", "r", 0))
    >>> guard.take()
    ['open /home/u/.cache/lm_eval_rul/x.sqlite']
    """

    def __init__(self, forbidden: Iterable[str | Path], allowed: Iterable[str | Path] = ()):
        self.forbidden = tuple(os.path.abspath(p) for p in forbidden)
        self.allowed = tuple(os.path.abspath(p) for p in allowed)
        self.active = True
        self._writes: list[str] = []

    @staticmethod
    def _under(path: str, roots: tuple[str, ...]) -> bool:
        return any(path == root or path.startswith(root + os.sep) for root in roots)

    def audit(self, event: str, args: tuple[Any, ...]) -> None:
        """The audit hook: keep ``event path`` of a write under a forbidden folder."""
        positions = _PATH_ARGS.get(event)
        if positions is None or not self.active or not _is_write(event, args):
            return
        for position in positions:
            value = args[position] if position < len(args) else None
            if not isinstance(value, str | bytes | os.PathLike):
                continue  # a file descriptor, or ":memory:"-like values of other types
            path = os.path.abspath(os.fsdecode(value))
            if self._under(path, self.forbidden) and not self._under(path, self.allowed):
                self._writes.append(f"{event} {path}")

    def install(self) -> WriteGuard:
        """Start recording (an audit hook cannot be removed: :attr:`active` stops it)."""
        sys.addaudithook(self.audit)
        return self

    def take(self) -> list[str]:
        """The writes recorded since the last call."""
        writes, self._writes = self._writes, []
        return writes


def _seed_font_cache(old_environ: Mapping[str, str], folder: Path) -> None:
    """Copy matplotlib's font list (only read) into the new folder: building it again
    takes seconds of every session."""
    home = Path(old_environ.get("HOME") or os.path.expanduser("~"))
    candidates = [
        old_environ.get("MPLCONFIGDIR"),
        os.path.join(old_environ.get("XDG_CACHE_HOME") or home / ".cache", "matplotlib"),
    ]
    for old in filter(None, candidates):
        for path in glob.glob(os.path.join(old, "fontlist-*.json")):
            shutil.copy(path, folder)


def isolate_session(root: Path, environ: MutableMapping[str, str] | None = None) -> WriteGuard:
    """Point every :data:`CACHE_VARIABLES` into ``root`` and guard the user's own folders.

    Returns:
        The installed :class:`WriteGuard` over the folders in use before the call.
    """
    environ = os.environ if environ is None else environ
    forbidden = user_cache_dirs(environ)
    old = dict(environ)
    for name in CACHE_VARIABLES:
        folder = root / name.lower()
        folder.mkdir(parents=True, exist_ok=True)
        environ[name] = str(folder)
    _seed_font_cache(old, root / "mplconfigdir")
    return WriteGuard(forbidden, allowed=[root]).install()
