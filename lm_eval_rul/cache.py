"""Results kept on disk as they are computed, so an interrupted run resumes where it stopped.

One SQLite file holds many *scopes*. A scope is everything that decides a result besides
the request itself (the model and its revision, the audio condition and its settings,
the prompt version...); an entry is found only under the scope and the request parts it
was written with, so a changed setting never reads a stale entry. Entries are committed
as they are written (:meth:`ResultCache.put_many` commits a batch at once), so at most
the batch in flight is lost to an interruption. SQLite serialises writers, so several
processes (``accelerate launch``, two runs on one cache) may share a file: every
connection waits for a busy file (a busy timeout, then retries with backoff for the
cases SQLite reports at once), the schema is created inside ``BEGIN IMMEDIATE`` and
every write takes the write lock before it reads, so concurrent first opens of a fresh
file neither crash nor lose rows. A file that is not a cache, a folder that cannot be
made, a read-only or full disk are :class:`CacheFileError`: one line naming the file
and the fix, and nothing half-written (a batch is one transaction).

>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "cache.sqlite")
>>> cache = ResultCache(path, scope={"model": "m", "audio": "noise", "seed": 0})
>>> cache.put(("loglikelihood", "prompt", " A"), [-1.5, True])
>>> cache.get(("loglikelihood", "prompt", " A"))
[-1.5, True]
>>> ResultCache(path, scope={"model": "m", "audio": "noise", "seed": 1}).get(
...     ("loglikelihood", "prompt", " A")) is None
True
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from .errors import UserInputError

__all__ = ["ResultCache", "CacheFileError", "digest", "opened_caches"]

#: Every :class:`ResultCache` still in use, for :func:`opened_caches`.
_OPENED: weakref.WeakSet[ResultCache] = weakref.WeakSet()


def opened_caches() -> list[ResultCache]:
    """The result caches this process has open (e.g. to say what a stopped run kept).

    Garbage is collected first: a model left in a reference cycle (an exception's
    traceback holds its frames) is not in use, and neither is its cache.
    """
    gc.collect()
    return list(_OPENED)

_T = TypeVar("_T")
#: SQLite's own wait for a lock held by another connection (its busy handler).
_BUSY_SECONDS = 30.0
#: How long the retries go on for the locks SQLite reports busy at once (a WAL switch,
#: a WAL being recovered by another opener), on top of the busy handler.
_RETRY_SECONDS = 120.0
_FIX = (
    "choose another file with model_args results_cache=PATH (or another folder with "
    "LM_EVAL_RUL_CACHE), or run without one (results_cache=none)"
)

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS results "
    "(scope TEXT, key TEXT, value TEXT, PRIMARY KEY (scope, key))"
)


def digest(value: Any) -> str:
    """A stable hex digest of a JSON-able value (dict keys sorted; tuples as lists)."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=_jsonable)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _jsonable(value: Any) -> Any:
    if isinstance(value, bytes):
        return {"sha256": hashlib.sha256(value).hexdigest()}
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, set | frozenset):
        return sorted(value, key=repr)
    raise TypeError(f"cannot key a cache entry on {type(value).__name__}: {value!r:.80}")


class CacheFileError(UserInputError, OSError):
    """The cache file cannot be opened or written: not a cache, no folder, no room."""


def _named(path: Path, error: BaseException) -> CacheFileError:
    """The one-line error of a cache file that SQLite could not use."""
    text = str(error)
    if isinstance(error, sqlite3.DatabaseError) and not isinstance(
        error, sqlite3.OperationalError
    ):  # "file is not a database", "database disk image is malformed"
        return CacheFileError(
            f"results cache {path}: not a readable SQLite cache ({text}). It holds only "
            "results that are recomputed: delete or move it away and rerun, or choose "
            "another file (model_args results_cache=PATH)."
        )
    if "full" in text:
        return CacheFileError(
            f"results cache {path}: the disk is full ({text}); the batch in flight was not "
            "stored, everything before it was. Free some space and rerun (it resumes), "
            f"or {_FIX}."
        )
    if "readonly" in text or "read-only" in text or "unable to open" in text:
        return CacheFileError(
            f"results cache {path}: cannot be written ({text}): the file or its folder is "
            f"read-only or missing: {_FIX}."
        )
    if _busy(error):
        return CacheFileError(
            f"results cache {path}: still locked by another process after "
            f"{_RETRY_SECONDS:.0f} s ({text}). Wait for the other run, or {_FIX}."
        )
    return CacheFileError(f"results cache {path}: {text}: {_FIX}.")


def _busy(error: BaseException) -> bool:
    text = str(error).lower()
    return isinstance(error, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


def _retrying(path: Path, action: Callable[[], _T]) -> _T:
    """``action()``, retried with backoff while the file is busy; SQLite's other errors
    as a :class:`CacheFileError` naming ``path``."""
    deadline = time.monotonic() + _RETRY_SECONDS
    delay = 0.02 + (os.getpid() % 10) * 0.002  # openers started together spread out
    while True:
        try:
            return action()
        except sqlite3.DatabaseError as error:
            if not _busy(error) or time.monotonic() + delay > deadline:
                raise _named(path, error) from None
        time.sleep(delay)
        delay = min(delay * 2, 1.0)


def _folder_for(path: Path) -> None:
    """Make ``path``'s folder, or say in one line why it cannot be made."""
    if path.is_dir():
        raise CacheFileError(f"results cache {path} is a folder, not a file: {_FIX}.")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        blocking = next(
            (p for p in reversed(path.parents) if p.exists() and not p.is_dir()), path.parent
        )
        raise CacheFileError(
            f"results cache {path}: its folder cannot be made, {blocking} is a file. "
            f"Move that file away, or {_FIX}."
        ) from None
    except OSError as error:
        raise CacheFileError(
            f"results cache {path}: its folder cannot be made ({error.strerror}): {_FIX}."
        ) from None


def _open(path: Path) -> sqlite3.Connection:
    """A connection to the cache at ``path``, its schema made (safe under concurrency)."""
    _folder_for(path)
    try:
        db = sqlite3.connect(
            str(path), timeout=_BUSY_SECONDS, isolation_level=None, check_same_thread=False
        )
    except sqlite3.DatabaseError as error:
        raise _named(path, error) from None

    def set_up() -> None:
        # WAL lets readers go on while one process writes; switching to it takes an
        # exclusive lock that SQLite may report busy at once, hence inside the retries
        db.execute("PRAGMA journal_mode=WAL").fetchone()
        _transaction(db, lambda: db.execute(_SCHEMA))

    try:
        _retrying(path, set_up)
    except BaseException:
        db.close()
        raise
    return db


def _transaction(db: sqlite3.Connection, action: Callable[[], Any]) -> None:
    """``action()`` in one ``BEGIN IMMEDIATE`` transaction: the write lock is taken (or
    waited for) before anything is read, so two writers never deadlock."""
    db.execute("BEGIN IMMEDIATE")
    try:
        action()
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise


def _write(db: sqlite3.Connection, rows: list[tuple[str, str, str]]) -> None:
    _transaction(
        db, lambda: db.executemany("INSERT OR REPLACE INTO results VALUES (?, ?, ?)", rows)
    )


class ResultCache:
    """A persistent map from request parts to JSON results, under one scope.

    Args:
        path: The SQLite file (created with its folder when missing).
        scope: What decides results besides the request (model, settings, versions);
            any JSON-able mapping. Two caches on one file share entries only when their
            scopes are equal.

    Attributes:
        hits, misses, writes: Counts since construction (for logs and benchmarks).
    """

    def __init__(self, path: str | Path, *, scope: Mapping[str, Any]) -> None:
        self.path = Path(path).expanduser()
        self.scope = dict(scope)
        self.scope_digest = digest(self.scope)
        self.hits = self.misses = self.writes = 0
        self._lock = threading.Lock()
        self._db = _open(self.path)
        _OPENED.add(self)

    @staticmethod
    def key(parts: Hashable | Sequence[Any]) -> str:
        """The entry key of a request's parts (anything JSON-able, bytes by their digest)."""
        return digest(parts)

    def get(self, parts: Any) -> Any | None:
        """The stored result of ``parts``, or ``None`` when this scope has none."""
        key = self.key(parts)
        with self._lock:
            row = _retrying(
                self.path,
                lambda: self._db.execute(
                    "SELECT value FROM results WHERE scope = ? AND key = ?",
                    (self.scope_digest, key),
                ).fetchone(),
            )
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        return json.loads(row[0])

    def get_many(self, parts_list: Iterable[Any]) -> list[Any | None]:
        """:meth:`get` for each of ``parts_list``, in order."""
        return [self.get(parts) for parts in parts_list]

    def put(self, parts: Any, value: Any) -> None:
        """Store (and commit) the result of ``parts``."""
        self.put_many([(parts, value)])

    def put_many(self, items: Iterable[tuple[Any, Any]]) -> None:
        """Store several results in one transaction."""
        rows = [
            (self.scope_digest, self.key(parts), json.dumps(value, ensure_ascii=False))
            for parts, value in items
        ]
        if not rows:
            return
        with self._lock:
            _retrying(self.path, lambda: _write(self._db, rows))
        self.writes += len(rows)

    def __len__(self) -> int:
        """Entries stored under this scope."""
        with self._lock:
            (count,) = _retrying(
                self.path,
                lambda: self._db.execute(
                    "SELECT COUNT(*) FROM results WHERE scope = ?", (self.scope_digest,)
                ).fetchone(),
            )
        return int(count)

    def close(self) -> None:
        _OPENED.discard(self)
        with self._lock:
            self._db.close()

    def __enter__(self) -> ResultCache:
        return self

    def __exit__(self, *_exc: Any) -> None:
        self.close()
