"""Ctrl-C during ``run``: one line saying what was kept, instead of a traceback.

``lalm`` and ``lalm-api`` write each result to their results cache as soon as it is computed
(:mod:`lm_eval_rul.models.core`), so a rerun of the same command computes only
the rest; the line counts what those caches hold for the run's settings.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from ..cache import opened_caches

__all__ = ["RunInterrupted", "said_on_interrupt", "kept_line"]


class RunInterrupted(Exception):
    """``run`` was stopped by Ctrl-C; the message says what was kept (exit status 130)."""


def kept_line() -> str:
    """What a stopped run kept, and how to go on, in one line."""
    caches = opened_caches()
    if not caches:
        return (
            "interrupted; no results cache was open (lalm and lalm-api keep their results as "
            "they go, the harness's --use_cache other models'): a rerun starts over"
        )
    kept = sum(len(cache) for cache in caches)
    where = ", ".join(sorted({str(cache.path) for cache in caches}))
    return (
        f"interrupted; {kept:,} results kept in {where}: rerun the same command to resume "
        "(only the rest is computed)"
    )


@contextlib.contextmanager
def said_on_interrupt() -> Iterator[None]:
    """Turn Ctrl-C (``KeyboardInterrupt``) inside the block into :class:`RunInterrupted`."""
    try:
        yield
    except KeyboardInterrupt:
        raise RunInterrupted(kept_line()) from None
