"""The clip pools of the ``random`` condition and its one draw, :func:`draw_other`.

``random`` plays, instead of an item's clip, another clip of the same benchmark. Both
paths that choose it draw with :func:`draw_other` (a uniform, seeded choice among ordered
candidates minus the excluded ones):

* multiple choice (:func:`random_clip`): the candidates are the benchmark's whole clip
  pool (:func:`register_clip_pool`, sorted), the excluded ones the item's own clip and
  every clip of its track; stream ``audio-random``, seeded by (seed, item id);
* the factual tasks (:func:`lm_eval_rul.factual.items.assign_random_clips`): the
  candidates are the items sharing the fewest labels with the item, the excluded ones those
  playing the same file; stream ``factual-random``, seeded by (seed, task, item id). The
  task writes its choice into each document (``audio_random_ref``), which
  :func:`random_clip` plays as it is.

The two streams keep their names so that every draw made before the conditions became
objects is still the same (resume caches and published numbers stay valid).
"""

from __future__ import annotations

import hashlib
import json
import logging
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from ...questions import item_rng
from ..errors import AudioError, MissingAudioError

__all__ = [
    "CLIP_IDENTITY",
    "register_clip_pool",
    "pool_refs",
    "excluded_positions",
    "draw_other",
    "random_clip",
]

logger = logging.getLogger(__name__)

_POOLS: dict[str, tuple[tuple[str, str], ...]] = {}
_WARNED_POOLS: set[str] = set()
#: Prefix of the track identity of a clip whose track and caption are both unknown.
CLIP_IDENTITY = "clip:"


def register_clip_pool(clips: Iterable[tuple[str, str]]) -> str:
    """Register a benchmark's full clip list ((ref, track) pairs); returns its id.

    The ``random`` condition draws from this list, so the choice depends only on the
    seed and the item, never on ``--limit`` or the data order.
    """
    pool = tuple(sorted(set((str(r), str(t)) for r, t in clips)))
    pool_id = hashlib.sha1(json.dumps(pool).encode("utf-8")).hexdigest()[:16]
    _POOLS[pool_id] = pool
    return pool_id


def pool_refs(pool_id: str) -> list[str]:
    """The clip references of a registered pool (empty when it is not registered here)."""
    return [ref for ref, _ in _POOLS.get(pool_id, ())]


def excluded_positions(candidates: np.ndarray, excluded: Sequence[int]) -> list[int]:
    """Sorted positions in sorted ``candidates`` of the values of ``excluded`` found there."""
    found = np.searchsorted(candidates, excluded)
    return sorted(
        int(p)
        for p, x in zip(found, excluded, strict=True)
        if p < len(candidates) and candidates[p] == x
    )


def draw_other(candidates: np.ndarray, excluded: Sequence[int], rng: np.random.Generator) -> int:
    """A uniform draw from sorted ``candidates`` minus the values in ``excluded``.

    Costs O(len(excluded) log n), not O(n): the factual tasks draw for every item of
    tasks with tens of thousands.

    Args:
        candidates: Sorted distinct integers (positions in the caller's ordered list).
        excluded: Values never drawn (those absent from ``candidates`` are ignored).
        rng: The item's generator (:func:`~lm_eval_rul.questions.item_rng`).

    Raises:
        ValueError: Every candidate is excluded.
    """
    positions = excluded_positions(candidates, excluded)
    left = len(candidates) - len(positions)
    if left <= 0:
        raise ValueError("draw_other: every candidate is excluded")
    k = int(rng.integers(left))
    for p in positions:  # step over the excluded positions
        if k >= p:
            k += 1
    return int(candidates[k])


def _warn_unknown_tracks(pool_id: str, pool: Sequence[tuple[str, str]]) -> None:
    """Warn (once per pool) that some clips count as their own track."""
    unknown = sum(track.startswith(CLIP_IDENTITY) for _, track in pool)
    if not unknown or pool_id in _WARNED_POOLS:
        return
    _WARNED_POOLS.add(pool_id)
    message = (
        f"audio=random: {unknown} of {len(pool)} clips have neither a known track nor a "
        "caption, so each of their files counts as its own track and an item may hear its "
        "own track from another question's file. Pass --metadata muchomusic_csv (or data "
        "with captions) so the tracks are known."
    )
    warnings.warn(message, stacklevel=4)
    logger.warning(message)


def random_clip(doc: Mapping[str, Any], seed: int) -> str:
    """The clip reference the ``random`` condition plays for ``doc``.

    The document's own ``audio_random_ref`` when the task chose one; else another clip
    of the same benchmark, never the item's own clip nor (when any other exists) a clip
    of the item's own track, drawn with :func:`draw_other` and a seed from (seed, item
    id). Reads no audio.
    """
    if doc.get("audio_random_ref"):
        return str(doc["audio_random_ref"])
    pool_id = doc.get("audio_pool")
    if not pool_id:
        raise MissingAudioError(
            {str(doc.get("id")): []},
            total=1,
            hint="Fix: audio=random needs the benchmark's audio: pass --metadata audio_dir "
            "or audio_hf_dataset.",
        )
    pool = _POOLS.get(pool_id)
    if pool is None:
        raise AudioError(
            f"item {doc.get('id')!r}: clip pool {pool_id} is not registered in this process; "
            "load the task's documents through its task functions (attach_audio registers "
            "the pool)."
        )
    _warn_unknown_tracks(pool_id, pool)
    own_ref, own_track = doc.get("audio_ref"), doc.get("audio_track")
    own = [i for i, (ref, track) in enumerate(pool) if ref == own_ref or track == own_track]
    if len(own) == len(pool):
        raise AudioError(
            f"item {doc.get('id')!r}: audio=random needs a clip of another track, but the "
            f"benchmark has only {len(pool)} clip(s), all of this item's track"
        )
    rng = item_rng("audio-random", int(seed), str(doc.get("id")))
    return pool[draw_other(np.arange(len(pool)), own, rng)][0]
