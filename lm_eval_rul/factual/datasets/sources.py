"""From ``--metadata`` to checked items: the one call the harness tasks make.

:func:`prepare_task` reads the task's dataset from the paths in the harness's
``--metadata`` JSON, draws the seeded sample, chooses every item's ``random`` clip
over the whole task, and checks the audio files the run will read (the sample's under a
condition that reads a clip, and under ``random``, which reads the clip pool, their
partners') before any model loads.

Metadata keys (all paths may use ``~``):

* MusicNet: ``musicnet_dir`` (the extracted archive), ``musicnet_metadata`` (default:
  ``musicnet_metadata.csv`` in or beside it);
* FMA: ``fma_metadata_dir`` (``tracks.csv``, ``genres.csv``), ``fma_audio_dir``
  (``fma_small/``...), ``fma_subset`` (default: from the audio folder's name);
* OverClocked ReMix: ``ocremix_tags`` (the tag table), ``ocremix_audio_dir``;
* ``sample_size`` (default: every item), ``sample_seed`` (default
  :data:`~lm_eval_rul.questions.DEFAULT_SEED`), ``verify_checksums`` (default true),
  ``on_audio_problem`` (``raise``, the default, or ``skip``).

``sample_seed`` alone decides *which items* a run evaluates and what each is asked
against: the sample, every item's ``random`` clip and the binary pairs. It is not the
model's ``seed``: the harness merges ``--model_args`` into ``--metadata``, and the model's
``seed`` (of the ``noise`` condition) must not change the items, or two noise seeds, or
``original`` and ``noise``, would be compared on different items. ``seed`` is never read
here (ours).
"""

from __future__ import annotations

import functools
import os
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...audio import condition_named
from ...audio.conditions import CLIP_POOL, NOTHING
from ...questions import DEFAULT_SEED
from ..errors import PROBLEM_KINDS, FactualInputError
from ..items import Item, RandomClips, TaskItems, assign_random_clips, sample_items
from ..reading.genres import GenreTree, read_genre_tree
from ..reading.labels import task_info
from .audio_files import check_audio_files
from .fma import read_fma
from .musicnet import read_musicnet
from .ocremix import read_ocremix

__all__ = [
    "METADATA_KEYS",
    "SAMPLE_SEED_KEY",
    "DROP_REASONS",
    "describe_dropped",
    "PreparedTask",
    "read_task_items",
    "prepare_task",
]

#: Dataset -> the ``--metadata`` keys that locate it (required first).
METADATA_KEYS: dict[str, tuple[str, ...]] = {
    "musicnet": ("musicnet_dir", "musicnet_metadata"),
    "fma": ("fma_metadata_dir", "fma_audio_dir", "fma_subset"),
    "ocremix": ("ocremix_tags", "ocremix_audio_dir"),
}
_REQUIRED = {"musicnet": 1, "fma": 2, "ocremix": 2}
#: The ``--metadata`` key of the seed of the sample, the random clips and the binary pairs.
SAMPLE_SEED_KEY = "sample_seed"


def _slug(kind: str) -> str:
    return kind.replace(" ", "_")


#: Why items are left out of a task, by the keys of :attr:`PreparedTask.dropped`: the
#: readers' ``skipped_*`` counts (rows of the dataset that are no item of the task), and
#: the audio check's (``on_audio_problem=skip``: the item's own file, or under ``random``
#: the file of the clip that plays instead).
DROP_REASONS: dict[str, str] = {
    "skipped_no_notes": "empty note-label file",
    "skipped_no_labels": "no note-label file",
    "skipped_no_composer": "no composer in the metadata",
    "skipped_no_genre": "no genre in tracks.csv",
    "skipped_known_empty": "one of FMA's known empty clips",
    **{f"audio_{_slug(kind)}": f"audio {kind}" for kind in PROBLEM_KINDS},
    **{f"random_clip_{_slug(kind)}": f"random clip {kind}" for kind in PROBLEM_KINDS},
}


def describe_dropped(dropped: Mapping[str, int]) -> str:
    """``dropped`` in words, for the logs and the report ("" when nothing was dropped).

    Examples
    --------
    >>> text = describe_dropped({"audio_missing": 2, "skipped_no_notes": 1})
    >>> print(text.replace("; ", "\\n"))
    2 items dropped by the audio check (on_audio_problem=skip): 2 audio missing
    1 item left out when reading the dataset: 1 empty note-label file
    """
    groups: dict[str, dict[str, int]] = {"audio": {}, "reader": {}}
    for key, count in dropped.items():
        if count:
            groups["reader" if key.startswith("skipped_") else "audio"][key] = int(count)
    parts = []
    for group, what in (
        ("audio", "dropped by the audio check (on_audio_problem=skip)"),
        ("reader", "left out when reading the dataset"),
    ):
        found = groups[group]
        if found:
            reasons = ", ".join(
                f"{count} {DROP_REASONS.get(key, key.replace('_', ' '))}"
                for key, count in found.items()
            )
            total = sum(found.values())
            parts.append(f"{total} item{'' if total == 1 else 's'} {what}: {reasons}")
    return "; ".join(parts)


@dataclass(frozen=True)
class PreparedTask:
    """What a factual task needs to build its documents.

    Attributes:
        task: Task key.
        items: The checked sample, in id order (``duration`` from the file headers).
        counts: The reader's counts plus ``sampled``, ``audio_problems`` (files) and
            ``random_no_disjoint`` (items without a clip free of their gold labels).
        random: The ``random`` clip of every item of the task.
        partners: ``{item id: the Item whose clip plays}`` for the sample, checked too
            when the condition is ``random``.
        genre_tree: FMA's genre tree (genre only).
        sample_seed: The seed of the sample, the random clips (and the binary pairs).
        dropped: Items left out, by reason (:data:`DROP_REASONS`; non-zero counts only):
            the reader's ``skipped_*`` and the sample's items dropped by the audio check.
    """

    task: str
    items: tuple[Item, ...]
    counts: dict[str, int]
    random: RandomClips
    partners: dict[str, Item]
    genre_tree: GenreTree | None = None
    sample_seed: int = DEFAULT_SEED
    dropped: dict[str, int] = field(default_factory=dict)


def _path(metadata: Mapping[str, Any], key: str) -> Path | None:
    value = metadata.get(key)
    return Path(os.path.expanduser(str(value))) if value else None


def _stamp(path: Path | None) -> tuple[str, float] | None:
    return (
        None
        if path is None
        else (str(path.resolve()), path.stat().st_mtime if path.exists() else 0.0)
    )


# Readers are cached per (path, modification time): the open and list variants of a task,
# and the two MusicNet tasks, read their tables once per process.
@functools.lru_cache(maxsize=4)
def _musicnet(root: tuple[str, float], meta: tuple[str, float] | None) -> dict[str, TaskItems]:
    return read_musicnet(root[0], metadata_csv=meta[0] if meta else None)


@functools.lru_cache(maxsize=4)
def _ocremix(tags: tuple[str, float], audio: tuple[str, float]) -> dict[str, TaskItems]:
    return read_ocremix(tags[0], audio[0])


def read_task_items(task: str, metadata: Mapping[str, Any]) -> tuple[TaskItems, GenreTree | None]:
    """Every item of ``task`` from the dataset ``metadata`` locates (and FMA's tree).

    Raises:
        FactualInputError: A required key is missing (the message lists the keys).
    """
    dataset = task_info(task).dataset
    keys = METADATA_KEYS[dataset]
    missing = [k for k in keys[: _REQUIRED[dataset]] if not metadata.get(k)]
    if missing:
        raise FactualInputError(
            f"the {task} task reads {dataset}; give --metadata "
            + ", ".join(f'"{k}": PATH' for k in missing)
            + f" (optional: {', '.join(keys[_REQUIRED[dataset] :]) or 'none'})"
        )
    paths = {k: _path(metadata, k) for k in keys if k != "fma_subset"}
    if dataset == "musicnet":
        found = _musicnet(_stamp(paths["musicnet_dir"]), _stamp(paths["musicnet_metadata"]))
        return found[task], None
    if dataset == "ocremix":
        found = _ocremix(_stamp(paths["ocremix_tags"]), _stamp(paths["ocremix_audio_dir"]))
        return found[task], None
    meta = paths["fma_metadata_dir"]
    return _fma(
        _stamp(meta / "tracks.csv"),
        _stamp(meta / "genres.csv"),
        _stamp(paths["fma_audio_dir"]),
        metadata.get("fma_subset"),
    )


@functools.lru_cache(maxsize=4)
def _fma(
    tracks: tuple[str, float],
    genres: tuple[str, float],
    audio: tuple[str, float],
    subset: str | None,
) -> tuple[TaskItems, GenreTree]:
    tree = read_genre_tree(genres[0])
    return read_fma(Path(tracks[0]).parent, audio[0], subset=subset, tree=tree), tree


def _flag(metadata: Mapping[str, Any], key: str, default: bool) -> bool:
    value = metadata.get(key, default)
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text not in ("true", "false", "1", "0", "yes", "no"):
        raise FactualInputError(f"--metadata {key} must be true or false, got {value!r}")
    return text in ("true", "1", "yes")


def _int(metadata: Mapping[str, Any], key: str, default: int | None) -> int | None:
    value = metadata.get(key, default)
    if value is None:
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        raise FactualInputError(f"--metadata {key} must be an integer, got {value!r}") from None


def prepare_task(
    task: str, metadata: Mapping[str, Any], *, condition: str = "original"
) -> PreparedTask:
    """Items, sample, random clips and checked audio of ``task`` (module docstring).

    Args:
        task: Task key.
        metadata: The harness's ``--metadata`` (extra keys are ignored).
        condition: The ``lalm`` audio condition; ``random`` also checks the partners'
            files, ``none``/``noise``/``silence`` check none.

    Raises:
        FactualInputError: Missing keys or tables; ``AudioFilesError`` (a subclass)
            naming every missing, unreadable or mismatching file of the run.
    """
    on_problem = str(metadata.get("on_audio_problem", "raise"))
    if on_problem not in ("raise", "skip"):
        raise FactualInputError(
            f"--metadata on_audio_problem must be raise or skip, got {on_problem!r}"
        )
    task_items, tree = read_task_items(task, metadata)
    seed = _int(metadata, SAMPLE_SEED_KEY, DEFAULT_SEED)  # never the model's ``seed``
    if not task_items.items:
        raise FactualInputError(f"the {task} task found no items ({task_items.counts})")
    overlap = (lambda item: tree.to_roots(item.gold)) if tree is not None else None
    random = assign_random_clips(task_items.items, seed=seed, overlap_labels=overlap)
    sample = sample_items(task_items.items, _int(metadata, "sample_size", None), seed=seed)
    by_id = {item.id: item for item in task_items.items}
    reads = condition_named(condition).reads
    to_check = [] if reads == NOTHING else list(sample)
    if reads == CLIP_POOL:  # the partner plays instead: its file is checked too
        to_check += [by_id[random.partner[it.id]] for it in sample]
    checked = check_audio_files(
        list({it.id: it for it in to_check}.values()),
        dataset=f"{task_info(task).dataset} ({task})",
        verify_checksums=_flag(metadata, "verify_checksums", True),
        on_problem=on_problem,
    )
    ok = {it.id: it for it in checked.items}
    problem = {i: kind for kind, rows in checked.problems.items() for i, _, _ in rows}
    dropped: Counter[str] = Counter(
        {k: v for k, v in task_items.counts.items() if k.startswith("skipped_") and v}
    )
    if to_check:
        kept = []
        for it in sample:
            partner = random.partner[it.id] if reads == CLIP_POOL else None
            if it.id in problem:
                dropped[f"audio_{_slug(problem[it.id])}"] += 1
            elif partner in problem:
                dropped[f"random_clip_{_slug(problem[partner])}"] += 1
            else:
                kept.append(ok[it.id])
        sample = kept
    partners = {it.id: ok.get(random.partner[it.id], by_id[random.partner[it.id]]) for it in sample}
    counts = {
        **task_items.counts,
        "sampled": len(sample),
        "audio_problems": checked.n_problems,
        "random_no_disjoint": len(random.no_disjoint),
    }
    return PreparedTask(task, tuple(sample), counts, random, partners, tree, seed, dict(dropped))
