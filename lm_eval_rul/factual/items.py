"""Items of the factual tasks, the seeded sample, and the seeded ``random`` clip.

An :class:`Item` is one recording asked about in one task: its id, audio file, gold
labels and duration. Every random choice depends only on (seed, task, item id), so a
run that reads the files in another order, or a sample of them, makes the same choice:

* :func:`sample_items` keeps the ``sample_size`` items of smallest hash of
  (seed, task, id), so a smaller sample is always contained in a larger one;
* :func:`assign_random_clips` gives each item the clip of another item of the same
  task whose gold labels share none of its own (ours), drawn uniformly with a seed from
  (seed, task, id) over the *whole* task, never the item itself or a file it shares;
  when every other clip overlaps, the least-overlapping ones are drawn from, and the
  item is counted in :attr:`RandomClips.no_disjoint`.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from ..audio.conditions import draw_other, excluded_positions
from ..questions import DEFAULT_SEED, derive_seed, item_rng
from .errors import FactualInputError

__all__ = [
    "Item",
    "TaskItems",
    "RandomClips",
    "sample_items",
    "sample_key",
    "assign_random_clips",
    "id_order",
]


@dataclass(frozen=True)
class Item:
    """One recording in one factual task.

    Attributes:
        id: Dataset id (MusicNet ``"1727"``, FMA ``"000002"``, OCReMix ``"OCR00001"``).
        task: Task key (:data:`~lm_eval_rul.factual.reading.labels.TASKS`).
        dataset: ``musicnet``, ``fma`` or ``ocremix``.
        audio: Path of the recording.
        gold: Canonical gold labels (never empty), in a fixed order.
        duration: Seconds, when known (metadata or the file header).
        checksum: Expected hex digest of the file (FMA's ``checksums``), if any.
    """

    id: str
    task: str
    dataset: str
    audio: Path
    gold: tuple[str, ...]
    duration: float | None = None
    checksum: str | None = None

    def to_doc(self) -> dict[str, object]:
        """Plain JSON-able fields (``audio`` as a string) for a harness document."""
        doc = asdict(self)
        doc["audio"] = str(self.audio)
        doc["gold"] = list(self.gold)
        return doc


@dataclass(frozen=True)
class TaskItems:
    """Every item a reader found for one task, with the counts behind them.

    Attributes:
        task: Task key.
        items: The items, in id order.
        counts: What was found and what was skipped, by name (e.g. ``metadata_rows``,
            ``skipped_known_empty``); every reader documents its names.
    """

    task: str
    items: tuple[Item, ...]
    counts: dict[str, int]


def id_order(item_id: str) -> tuple:
    """Sort key that orders ids naturally (``"9"`` before ``"10"``)."""
    return tuple(
        (0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.findall(r"\d+|\D+", item_id)
    )


def sample_key(item: Item, seed: int = DEFAULT_SEED) -> tuple[int, str]:
    """The item's place in the seeded sample order: samples are prefixes of this order."""
    return derive_seed("factual-sample", seed, item.task, item.id), item.id


def sample_items(
    items: Sequence[Item], sample_size: int | None, *, seed: int = DEFAULT_SEED
) -> list[Item]:
    """The seeded sample of ``sample_size`` items (all of them for None), in id order.

    The sample depends on (seed, task, id) only: not on the order of ``items``, and a
    smaller sample is a subset of a larger one.

    Raises:
        FactualInputError: ``sample_size`` is not a positive integer.

    Examples
    --------
    >>> items = [Item(str(i), "mood", "ocremix", Path(f"{i}.mp3"), ("sad",)) for i in range(9)]
    >>> [it.id for it in sample_items(items, 3, seed=1)] == [
    ...     it.id for it in sample_items(items[::-1], 3, seed=1)]
    True
    """
    if sample_size is None:
        return sorted(items, key=lambda it: id_order(it.id))
    if isinstance(sample_size, bool) or not isinstance(sample_size, int) or sample_size < 1:
        raise FactualInputError(
            f"sample_size must be a positive integer (or left out for every item), "
            f"got {sample_size!r}"
        )
    ranked = sorted(items, key=lambda it: sample_key(it, seed))
    return sorted(ranked[:sample_size], key=lambda it: id_order(it.id))


@dataclass(frozen=True)
class RandomClips:
    """Which item's clip the ``random`` condition plays for each item.

    Attributes:
        partner: ``{item id: id of the item whose audio is played}``.
        no_disjoint: Items for which every other clip shares a gold label.
    """

    partner: dict[str, str]
    no_disjoint: frozenset[str]

    @property
    def no_disjoint_share(self) -> float:
        """Share of items for which no clip without a shared gold label exists."""
        return len(self.no_disjoint) / len(self.partner) if self.partner else 0.0


def assign_random_clips(
    items: Sequence[Item],
    *,
    seed: int = DEFAULT_SEED,
    overlap_labels: Callable[[Item], Iterable[str]] | None = None,
) -> RandomClips:
    """Choose the unrelated clip of every item (see the module docstring).

    Args:
        items: Every item of one task (not a sample: the choice must not depend on it).
        seed: Base seed.
        overlap_labels: The labels two items must not share (default: ``item.gold``);
            for genre, pass the same-tree roots so that the random clip is from another
            part of the FMA tree.

    Raises:
        FactualInputError: Fewer than two distinct audio files.
    """
    ordered = sorted(items, key=lambda it: id_order(it.id))
    if len({it.id for it in ordered}) != len(ordered):
        raise ValueError("assign_random_clips: item ids must be unique within a task")
    audio = [str(it.audio) for it in ordered]
    if len(set(audio)) < 2:
        raise FactualInputError(
            f"the random condition needs at least two different clips; the task has "
            f"{len(set(audio))}"
        )
    keys = [frozenset(overlap_labels(it) if overlap_labels else it.gold) for it in ordered]
    masks: dict[str, np.ndarray] = defaultdict(lambda: np.zeros(len(ordered), dtype=np.int32))
    for index, key in enumerate(keys):
        for label in key:
            masks[label][index] = 1
    groups: dict[frozenset[str], list[int]] = defaultdict(list)
    for index, key in enumerate(keys):
        groups[key].append(index)
    same_file: dict[str, list[int]] = defaultdict(list)
    for index, path in enumerate(audio):
        same_file[path].append(index)
    partner: dict[str, str] = {}
    no_disjoint: set[str] = set()
    for key, members in groups.items():
        overlap = np.zeros(len(ordered), dtype=np.int32)
        for label in key:
            overlap += masks[label]
        levels: dict[int, np.ndarray] = {}  # overlap value -> items, filled lazily
        for index in members:
            item, excluded = ordered[index], same_file[audio[index]]
            for value in range(int(overlap.max()) + 1):
                if value not in levels:
                    levels[value] = np.flatnonzero(overlap == value)
                if len(levels[value]) > len(excluded_positions(levels[value], excluded)):
                    break
            if value > 0:
                no_disjoint.add(item.id)
            # the one draw of the random condition (audio.conditions.pools), on this
            # task's stream, so the partners are those of every earlier release
            rng = item_rng("factual-random", seed, item.task, item.id)
            partner[item.id] = ordered[draw_other(levels[value], excluded, rng)].id
    return RandomClips(partner, frozenset(no_disjoint))


