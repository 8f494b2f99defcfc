"""Results kept on disk as they are computed, so an interrupted run resumes where it stopped.

One SQLite file holds many *scopes*. A scope is everything that decides a result besides
the request itself (the model and its revision, the audio condition and its settings,
the prompt version...); an entry is found only under the scope and the request parts it
was written with, so a changed setting never reads a stale entry. Entries are committed
as they are written (:meth:`ResultCache.put_many` commits a batch at once), so at most
the batch in flight is lost to an interruption. SQLite serialises writers, so several
processes (``accelerate launch``) may share a file.

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

import hashlib
import json
import sqlite3
import threading
from collections.abc import Hashable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["ResultCache", "digest"]

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
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.scope = dict(scope)
        self.scope_digest = digest(self.scope)
        self.hits = self.misses = self.writes = 0
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(self.path), timeout=60, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(_SCHEMA)
        self._db.commit()

    @staticmethod
    def key(parts: Hashable | Sequence[Any]) -> str:
        """The entry key of a request's parts (anything JSON-able, bytes by their digest)."""
        return digest(parts)

    def get(self, parts: Any) -> Any | None:
        """The stored result of ``parts``, or ``None`` when this scope has none."""
        with self._lock:
            row = self._db.execute(
                "SELECT value FROM results WHERE scope = ? AND key = ?",
                (self.scope_digest, self.key(parts)),
            ).fetchone()
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
            self._db.executemany("INSERT OR REPLACE INTO results VALUES (?, ?, ?)", rows)
            self._db.commit()
        self.writes += len(rows)

    def __len__(self) -> int:
        """Entries stored under this scope."""
        with self._lock:
            (count,) = self._db.execute(
                "SELECT COUNT(*) FROM results WHERE scope = ?", (self.scope_digest,)
            ).fetchone()
        return int(count)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> ResultCache:
        return self

    def __exit__(self, *_exc: Any) -> None:
        self.close()
