"""Embeddings cached on disk by (embedding space, text), and batched encoding around them.

The cache is one SQLite file (standard library, safe to share between runs): a row per
(space key, SHA-256 of the exact text) holding the float32 vector. Rows are committed
after every batch, so an interrupted run keeps what it encoded. A rerun over the same
texts reads every vector back and never loads a model.

Default location: ``$LM_EVAL_RUL_CACHE/embeddings.sqlite`` (``LM_EVAL_RUL_CACHE``
defaults to ``$XDG_CACHE_HOME/lm_eval_rul``, i.e. ``~/.cache/lm_eval_rul``).
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from ..questions import cache_dir

__all__ = ["EmbeddingCache", "EmbeddingStats", "Embeddings", "default_cache_path", "embed_texts"]

_SQL_CHUNK = 500


def default_cache_path() -> Path:
    """``$LM_EVAL_RUL_CACHE/embeddings.sqlite`` (default ``~/.cache/lm_eval_rul/...``)."""
    return cache_dir() / "embeddings.sqlite"


def _text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class EmbeddingCache:
    """Vectors keyed by (space key, text) in a SQLite file.

    Args:
        path: The database file (created with its folder if missing).

    Example:
        >>> import tempfile, numpy as np
        >>> cache = EmbeddingCache(tempfile.mkdtemp() + "/e.sqlite")
        >>> cache.put("t5|demo", {"piano": np.ones(3, dtype=np.float32)})
        >>> cache.get("t5|demo", ["piano", "violin"])["piano"].tolist()
        [1.0, 1.0, 1.0]
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(self.path))
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS embeddings (space TEXT NOT NULL, text_sha TEXT NOT NULL,"
            " dim INTEGER NOT NULL, vector BLOB NOT NULL, PRIMARY KEY (space, text_sha))"
        )
        self._db.commit()

    def get(self, space: str, texts: Iterable[str]) -> dict[str, np.ndarray]:
        """The cached vectors of ``texts`` in ``space`` (texts not cached are absent)."""
        by_sha = {_text_key(t): t for t in texts}
        shas = list(by_sha)
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(shas), _SQL_CHUNK):
            chunk = shas[start : start + _SQL_CHUNK]
            rows = self._db.execute(
                f"SELECT text_sha, dim, vector FROM embeddings WHERE space = ? AND text_sha IN "
                f"({','.join('?' * len(chunk))})",
                [space, *chunk],
            )
            for sha, dim, blob in rows:
                vector = np.frombuffer(blob, dtype=np.float32)
                if vector.size == dim:
                    found[by_sha[sha]] = vector
        return found

    def put(self, space: str, vectors: dict[str, np.ndarray]) -> None:
        """Store ``text -> vector`` in ``space`` and commit."""
        rows = []
        for text, vector in vectors.items():
            data = np.ascontiguousarray(vector, dtype=np.float32)
            rows.append((space, _text_key(text), int(data.size), data.tobytes()))
        self._db.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?)", rows)
        self._db.commit()

    def count(self, space: str | None = None) -> int:
        """Rows stored (in ``space``, or in all spaces)."""
        if space is None:
            return self._db.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]
        query = "SELECT COUNT(*) FROM embeddings WHERE space = ?"
        return self._db.execute(query, (space,)).fetchone()[0]

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> EmbeddingCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class EmbeddingStats:
    """What one :func:`embed_texts` call did.

    Attributes:
        space: The encoder's space name (``t5``, ``clap``).
        n_texts: Texts asked for (with repeats).
        n_unique: Distinct texts.
        n_cached: Distinct texts read from the cache.
        n_encoded: Distinct texts run through the encoder.
        n_forward: Encoder forward passes (batches).
        n_truncated: Encoded texts cut at the encoder's token limit.
        seconds: Wall time, cache reads and model loading included.
    """

    space: str
    n_texts: int = 0
    n_unique: int = 0
    n_cached: int = 0
    n_encoded: int = 0
    n_forward: int = 0
    n_truncated: int = 0
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Embeddings:
    """Unit-normalised embeddings of distinct texts: ``matrix[index[text]]``.

    Texts whose vector is all zeros keep a zero row (cosine 0 with everything).
    """

    index: dict[str, int]
    matrix: np.ndarray
    stats: EmbeddingStats

    def rows(self, texts: Sequence[str]) -> np.ndarray:
        return self.matrix[[self.index[t] for t in texts]]


def embed_texts(
    texts: Iterable[str],
    encoder,
    *,
    cache: EmbeddingCache | None = None,
    batch_size: int = 64,
    progress: bool = True,
) -> Embeddings:
    """Embed ``texts`` with ``encoder``, reading and filling ``cache``.

    Distinct texts missing from the cache are sorted by length (so batches need little
    padding) and encoded ``batch_size`` at a time with a progress bar; each batch is
    written to the cache as soon as it is done.

    Args:
        texts: Texts to embed (repeats are embedded once).
        encoder: A :class:`~lm_eval_rul.diagnose.encoders.TextEncoder` (anything with
            ``space``, ``key``, ``encode_batch``, ``n_forward`` and ``n_truncated``).
        cache: Where vectors are read and stored (``None``: no cache).
        batch_size: Texts per forward pass.
        progress: Show a tqdm bar over the batches.

    Returns:
        :class:`Embeddings` of the distinct texts, unit-normalised, with
        :class:`EmbeddingStats`.
    """
    from tqdm.auto import tqdm

    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    start = time.perf_counter()
    texts = list(texts)
    unique = list(dict.fromkeys(texts))
    stats = EmbeddingStats(space=encoder.space, n_texts=len(texts), n_unique=len(unique))
    vectors = cache.get(encoder.key, unique) if cache is not None else {}
    stats.n_cached = len(vectors)
    missing = sorted((t for t in unique if t not in vectors), key=len)
    forward_before, truncated_before = encoder.n_forward, encoder.n_truncated
    batches = [missing[i : i + batch_size] for i in range(0, len(missing), batch_size)]
    bar = tqdm(
        batches,
        desc=f"encoding ({encoder.space})",
        unit="batch",
        disable=not progress or not batches,
    )
    for batch in bar:
        encoded = dict(zip(batch, encoder.encode_batch(batch), strict=True))
        vectors.update(encoded)
        if cache is not None:
            cache.put(encoder.key, encoded)
    stats.n_encoded = len(missing)
    stats.n_forward = encoder.n_forward - forward_before
    stats.n_truncated = encoder.n_truncated - truncated_before
    index = {text: row for row, text in enumerate(unique)}
    if unique:
        matrix = np.stack([vectors[t] for t in unique]).astype(np.float32)
    else:
        matrix = np.zeros((0, 0), dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True) if unique else np.ones((0, 1))
    matrix = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
    stats.seconds = time.perf_counter() - start
    return Embeddings(index=index, matrix=matrix, stats=stats)
