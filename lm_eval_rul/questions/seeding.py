"""Seeds derived from (seed, item id, ...) so every random choice is reproducible.

A run that sees the items in another order, or only some of them (``--limit``), makes
exactly the same choice for each item, because the seed depends on the item and
never on a shared random stream.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

import numpy as np

__all__ = ["DEFAULT_SEED", "derive_seed", "item_rng", "limited_sample", "sample_order"]

T = TypeVar("T")

#: The base seed of every seeded choice when the user gives none (option orders, PI
#: prompts, distractor filtering): one value, so a task, ``pi`` and ``build`` agree.
DEFAULT_SEED = 1234


def derive_seed(*parts: object) -> int:
    """Return a 63-bit integer seed that depends only on ``parts``.

    Examples
    --------
    >>> derive_seed("options", 1234, "448", 0) == derive_seed("options", 1234, "448", 0)
    True
    >>> derive_seed("a", 1) != derive_seed("a", 2)
    True
    """
    key = "\x1f".join(p if isinstance(p, str) else f"{type(p).__name__}:{p!r}" for p in parts)
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def item_rng(*parts: object) -> np.random.Generator:
    """A numpy ``Generator`` seeded with :func:`derive_seed` of ``parts``."""
    return np.random.default_rng(derive_seed(*parts))


def sample_order(items: Iterable[T], *, seed: int, item_id: Callable[[T], str]) -> list[T]:
    """``items`` sorted by a hash of (``seed``, item id), ties by id: the order in which a
    benchmark's documents are listed.

    The harness's ``--limit N`` takes the first N documents, so this makes it a seeded
    sample spread over the whole benchmark: the same N items in every run with the same
    seed, whatever the order of the file (the released RUL-MuChoMusic file is sorted by
    PI), and a smaller sample inside a larger one. The key holds neither the benchmark
    nor the fold, so every fold of a question, and a benchmark sharing its ids
    (MuChoMusic and RUL-MuChoMusic), sample the same questions.

    >>> ids = [str(i) for i in range(10)]
    >>> sample_order(ids, seed=1, item_id=str) == sample_order(ids[::-1], seed=1, item_id=str)
    True
    """
    return sorted(items, key=lambda item: _sample_key(seed, item_id(item)))


def _sample_key(seed: int, identifier: str) -> tuple[int, str]:
    return derive_seed("sample-order", seed, identifier), identifier


def limited_sample(
    items: Sequence[T], *, limit: int | None, seed: int, item_id: Callable[[T], str]
) -> list[T]:
    """The first ``limit`` items of :func:`sample_order`, kept in the order of ``items``
    (``limit`` None: all of them).

    ``pi --limit N`` and ``build --limit N`` read their questions through this, so they
    take the very questions a task's ``--limit N`` runs with the same seed, while their
    output files keep the input file's order. A smaller sample is inside a larger one, so
    a build rerun with a larger ``--limit`` (or none) resumes every question already done.

    >>> ids = ["9", "1", "5", "3", "7"]
    >>> picked = limited_sample(ids, limit=2, seed=1, item_id=str)
    >>> sorted(picked) == sorted(sample_order(ids, seed=1, item_id=str)[:2])
    True
    >>> picked == [i for i in ids if i in picked]  # the file's order
    True
    """
    if limit is None:
        return list(items)
    ranked = sorted(range(len(items)), key=lambda i: _sample_key(seed, item_id(items[i])))
    return [items[i] for i in sorted(ranked[:limit])]
