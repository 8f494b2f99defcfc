"""A tagging task's clips, vocabulary, audio files and windows, from ``--metadata``.

:func:`task_clips` reads (once per process and options) what a task evaluates:

==================  ======================================  ==========================
task                labels                                  audio (``--metadata``)
==================  ======================================  ==========================
``gtzan``           ``gtzan_split_file`` (default: public)  ``gtzan_audio_dir``
``mtg_<task>``      ``mtg_data_dir`` (default: public)      ``mtg_audio_dir``
``magnatagatune``   ``mtt_annotations`` + ``mtt_split_file`` ``mtt_audio_dir``
``nsynth_*``        ``nsynth_dir``'s ``examples.json``      ``nsynth_dir``
``medley_solos``    ``medley_metadata`` (default: public)   ``medley_audio_dir``
==================  ======================================  ==========================

The single-label releases (NSynth, Medley-solos-DB) are entries of
:data:`~.releases.RELEASES`, which this module asks for their readers and keys.

Each clip's file is ``<audio dir>/<path as the metadata writes it>``; GTZAN's ``.au``
copies and MTG-Jamendo's ``.low.mp3`` copies are accepted beside the listed name. GTZAN
as users hold it is read too, each clip matched to the split by its file name
(``blues.00012``): a folder holding the files anywhere below it (Kaggle's ``Data`` or
``Data/genres_original``), or the hub's dataset (``marsyas/gtzan``: ``file``, ``audio``,
``genre``) as a ``save_to_disk`` folder, parquet files or its cached name. The
model hears ``tagging_seconds`` (default 30) from ``tagging_offset`` (``start``, as
CMI-Bench, or ``middle``), written into each document as ``audio_window`` (logged).
"""

from __future__ import annotations

import functools
import json
import logging
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..audio.sources import file_ref, hf_ref
from ..paths import contained_path
from .readers import Clip, TaggingDataError, read_gtzan_split, read_mtg_tsv, read_mtt, vocabulary_of
from .releases import RELEASES, release_keys
from .sources import gtzan_split_path, mtg_tsv_path, mtt_split_path
from .vocab import GTZAN_GENRES, MTT_TOP50

logger = logging.getLogger(__name__)

__all__ = [
    "TAGGING_METADATA_KEYS",
    "TASK_SOURCES",
    "AUDIO_FIX",
    "OFFSETS",
    "TaskData",
    "Window",
    "task_clips",
    "window_of",
    "heard_windows",
    "audio_file",
    "check_tagging_data",
]

#: Task -> (its dataset family, the ``--metadata`` key of its audio folder).
TASK_SOURCES: dict[str, tuple[str, str]] = {
    "gtzan": ("gtzan", "gtzan_audio_dir"),
    "mtg_genre": ("genre", "mtg_audio_dir"),
    "mtg_moodtheme": ("moodtheme", "mtg_audio_dir"),
    "mtg_instrument": ("instrument", "mtg_audio_dir"),
    "mtg_top50": ("top50tags", "mtg_audio_dir"),
    "magnatagatune": ("mtt", "mtt_audio_dir"),
    **{task: (task, release.audio_key) for task, release in RELEASES.items()},
}
#: The advice for clips without audio, by audio key (the tagging tasks' own keys; the
#: question files' ``audio_dir`` is not one of them).
AUDIO_FIX: dict[str, str] = {
    "gtzan_audio_dir": "Fix: give --metadata gtzan_audio_dir: the release's genres_original "
    "folder, a folder holding its files anywhere below it (Kaggle's Data), or the hub's "
    "marsyas/gtzan dataset (a save_to_disk folder or its cached name); or use "
    "audio=noise|silence|none.",
    "mtg_audio_dir": "Fix: give --metadata mtg_audio_dir: the folder of MTG-Jamendo's "
    "NN/ID.mp3 files; or use audio=noise|silence|none.",
    "mtt_audio_dir": "Fix: give --metadata mtt_audio_dir: the folder of MagnaTagATune's "
    "mp3 files as annotations_final.csv names them; or use audio=noise|silence|none.",
    **{
        release.audio_key: f"Fix: give --metadata {release.audio_key}: the folder of "
        f"{release.task}'s audio files as the release lays them out; or use "
        "audio=noise|silence|none."
        for release in RELEASES.values()
    },
}
OFFSETS: tuple[str, ...] = ("start", "middle")
#: Every ``--metadata`` key the tagging tasks read.
TAGGING_METADATA_KEYS: tuple[str, ...] = (
    "gtzan_audio_dir",
    "gtzan_split_file",
    "mtg_data_dir",
    "mtg_audio_dir",
    "mtt_annotations",
    "mtt_split_file",
    "mtt_audio_dir",
    "tagging_seconds",
    "tagging_offset",
    "tagging_protocol",
    *release_keys(),
)
_LABEL_KEYS = ("gtzan_split_file", "mtg_data_dir", "mtt_annotations", "mtt_split_file")


@dataclass(frozen=True)
class TaskData:
    """What one task evaluates: its clips (file order), vocabulary, and each clip's file
    (``None`` when no audio folder was given or the file is missing) and the paths tried;
    ``rows``: each clip's reference in a dataset, for GTZAN given as the hub's dataset."""

    task: str
    clips: tuple[Clip, ...]
    tags: tuple[str, ...]
    files: tuple[Path | None, ...]
    tried: tuple[tuple[str, ...], ...]
    rows: tuple[str | None, ...] | None = None


@dataclass(frozen=True)
class Window:
    """The stretch of every clip the model hears."""

    seconds: float
    offset: str


def window_of(metadata: Mapping[str, Any]) -> Window:
    """``tagging_seconds`` and ``tagging_offset``, checked.

    Raises:
        TaggingDataError: Not a positive number of seconds, or not ``start``/``middle``.
    """
    raw = metadata.get("tagging_seconds", 30)
    try:
        seconds = float(30 if raw in (None, "") else raw)
    except (TypeError, ValueError):
        seconds = math.nan
    if not math.isfinite(seconds) or seconds <= 0:
        raise TaggingDataError(
            f"--metadata tagging_seconds={raw!r}: give a positive number of seconds (default 30)."
        )
    offset = str(metadata.get("tagging_offset") or "start")
    if offset not in OFFSETS:
        raise TaggingDataError(
            f"--metadata tagging_offset={offset!r}: use start (CMI-Bench's choice) or middle."
        )
    return Window(seconds, offset)


def clip_window(clip: Clip, window: Window, length: float | None = None) -> list[float]:
    """``[start_s, end_s]`` of ``clip`` the model hears (the clip's end when shorter);
    ``length``: the file's own length, when it is known to be shorter than the metadata's."""
    duration = clip.duration if length is None else min(length, clip.duration or length)
    start = 0.0
    if window.offset == "middle" and duration is not None and duration > window.seconds:
        start = round((duration - window.seconds) / 2, 3)
    end = start + window.seconds
    if duration is not None and duration > start:
        end = min(end, duration)
    return [start, round(end, 3)]


#: Seconds a file may fall short of its metadata's length before it is counted (GTZAN's
#: "30 s" clips run 29.98 s to 30.01 s).
_SHORT_SLACK = 0.5
_WARNED: set[tuple[TaskData, Window]] = set()  # warned once per task, files and window


@functools.lru_cache(maxsize=8192)
def _file_seconds(path: Path) -> float | None:
    """The file's own length from its header (None when it cannot be read: the audio
    check names such a file)."""
    try:
        import soundfile

        return float(soundfile.info(str(path)).duration)
    except Exception:  # noqa: BLE001 - an mp3 or m4a soundfile cannot read: librosa's path
        try:
            import librosa

            return float(librosa.get_duration(path=str(path)))
        except Exception:  # noqa: BLE001 - unreadable: the audio check reports it
            return None


def heard_windows(data: TaskData, window: Window) -> list[list[float]]:
    """Each clip's ``[start_s, end_s]`` as the model hears it.

    With ``tagging_offset=middle`` the window's place depends on the clip's length, so the
    file's own length is read from its header: a file shorter than its metadata says
    (an MTG-Jamendo ``DURATION`` above the file's) is windowed by the file's length, so
    ``audio_window`` logs the stretch heard, and one warning per task counts them.
    """
    windows, short = [], []
    for clip, path in zip(data.clips, data.files, strict=True):
        length = None
        if window.offset == "middle" and path is not None and clip.duration is not None:
            seconds = _file_seconds(path)
            if seconds is not None and seconds < clip.duration - _SHORT_SLACK:
                length = seconds
                short.append((clip, seconds))
        windows.append(clip_window(clip, window, length))
    if short and (data, window) not in _WARNED:
        _WARNED.add((data, window))
        clip, seconds = short[0]
        logger.warning(
            "%s: %d of %d clips are shorter than the length their metadata gives (first: "
            "%s, %.1f s of %.1f s); each is windowed by its file's own length (logged as "
            "audio_window)",
            data.task,
            len(short),
            len(data.clips),
            clip.id,
            seconds,
            clip.duration,
        )
    return windows


def _alternates(relative: str, family: str) -> list[str]:
    if family in RELEASES:
        return RELEASES[family].alternates(relative)
    if family == "gtzan":
        stem = relative.rsplit(".", 1)[0]
        return [relative, *(f"{stem}.{ext}" for ext in ("wav", "au") if not relative.endswith(ext))]
    if family != "mtt" and relative.endswith(".mp3") and not relative.endswith(".low.mp3"):
        return [relative, relative[: -len(".mp3")] + ".low.mp3"]
    return [relative]


_AUDIO_SUFFIXES = (".wav", ".au", ".mp3", ".flac", ".ogg")


def _clip_name(path: str) -> str:
    """``blues.00012`` of ``genres_original/blues/blues.00012.wav`` (GTZAN's names are unique)."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    stem, dot, suffix = name.rpartition(".")
    return stem if dot and f".{suffix.lower()}" in _AUDIO_SUFFIXES else name


@functools.lru_cache(maxsize=4)
def _files_by_name(folder: Path) -> dict[str, Path]:
    """Every audio file below ``folder`` by its name without suffix (the first in sorted
    order, ``.wav`` before ``.au``)."""
    found: dict[str, Path] = {}
    for path in sorted(folder.rglob("*")):
        if path.suffix.lower() in _AUDIO_SUFFIXES and path.is_file():
            found.setdefault(_clip_name(path.name), path)
    return found


def audio_file(folder: Path, clip: Clip, family: str) -> tuple[Path | None, tuple[str, ...]]:
    """The clip's file in ``folder`` (or None) and the paths tried; a GTZAN clip is also
    found by its file name anywhere below ``folder`` (Kaggle's ``Data`` folder)."""
    tried = []
    for relative in _alternates(clip.path, family):
        # the project's one containment rule (lexical): links the user placed inside the
        # folder (genre folders linked from elsewhere) are followed, as for music_mc
        path = contained_path(
            folder,
            relative,
            item=f"clip {clip.id}",
            option="the audio folder",
            fix="correct the metadata file.",
        )
        if path.is_file():
            return path, tuple(tried)
        tried.append(str(path))
    if family == "gtzan":
        found = _files_by_name(folder.resolve()).get(_clip_name(clip.path))
        if found is not None:
            return found, tuple(tried)
        tried.append(f"{_clip_name(clip.path)}.* anywhere below {folder}")
    return None, tuple(tried)


def _named_rows(dataset: Any, audio: str) -> list[str]:
    """Each row's clip name: from the hub's ``file`` column, else its audio cell's path
    (read from the Arrow table, without decoding any audio)."""
    if "file" in dataset.column_names:
        return [_clip_name(str(v)) for v in dataset["file"]]
    cells = dataset.data.column(audio).combine_chunks().field("path").to_pylist()
    return [_clip_name(str(v or "")) for v in cells]


def _dataset_rows(task: str, clips: list[Clip], source: str, audio_key: str) -> TaskData:
    """GTZAN as the hub's dataset: each clip's row in any of its splits (the hub has one,
    ``train``), matched by file name, its ``genre`` label checked against the split file's."""
    from datasets import Audio, ClassLabel

    from ..questions.datasets_io import load_dataset_splits, open_dataset
    from ..questions.schema import DataSourceError

    found: dict[str, tuple[str, str, int, str | None]] = {}  # name -> split, column, row, genre
    try:
        splits = load_dataset_splits(source, key=audio_key) or ("train",)
        for split in splits:
            dataset = open_dataset(source, split, key=audio_key, split_key=audio_key)
            audio = next((c for c, f in dataset.features.items() if isinstance(f, Audio)), None)
            if audio is None:
                raise TaggingDataError(
                    f"--metadata {audio_key}={source!r}: its split {split!r} has no Audio column "
                    f"(columns: {', '.join(dataset.column_names)}); give the hub's marsyas/gtzan "
                    "or the release's genres_original folder."
                )
            label = dataset.features.get("genre")
            genres = (
                [label.int2str(int(v)) for v in dataset["genre"]]
                if isinstance(label, ClassLabel)
                else None
            )
            for row, name in enumerate(_named_rows(dataset, audio)):
                found.setdefault(name, (split, audio, row, genres[row] if genres else None))
    except DataSourceError as error:
        raise TaggingDataError(str(error)) from error
    refs: list[str | None] = []
    tried: list[tuple[str, ...]] = []
    for clip in clips:
        name = _clip_name(clip.path)
        if name not in found:
            refs.append(None)
            tried.append((f"{source} row named {name} (splits {', '.join(splits)})",))
            continue
        split, audio, row, genre = found[name]
        if genre is not None and genre != clip.tags[0]:
            raise TaggingDataError(
                f"--metadata {audio_key}={source!r}: {split} row {row} ({name}) is labelled "
                f"{genre!r}, the split file says {clip.tags[0]!r}; give the dataset and split "
                "file of one GTZAN release."
            )
        refs.append(hf_ref(source, split, audio, row))
        tried.append(())
    return TaskData(
        task, tuple(clips), GTZAN_GENRES, tuple(None for _ in clips), tuple(tried), tuple(refs)
    )


def _labels(task: str, metadata: Mapping[str, Any]) -> tuple[list[Clip], tuple[str, ...]]:
    family = TASK_SOURCES[task][0]
    if family in RELEASES:
        return RELEASES[family].read(metadata), RELEASES[family].vocabulary
    if family == "gtzan":
        clips = read_gtzan_split(gtzan_split_path(metadata))
        return clips, GTZAN_GENRES
    if family == "mtt":
        annotations = metadata.get("mtt_annotations")
        if not annotations:
            raise TaggingDataError(
                "magnatagatune needs --metadata mtt_annotations: MagnaTagATune's "
                "annotations_final.csv (from its release; it is not downloaded for you)."
            )
        clips = read_mtt(Path(os.path.expanduser(str(annotations))), mtt_split_path(metadata))
        return clips, MTT_TOP50
    clips = read_mtg_tsv(mtg_tsv_path(metadata, family), family)
    return clips, vocabulary_of(clips)


@functools.lru_cache(maxsize=16)
def _cached(task: str, relevant: str) -> TaskData:
    metadata = json.loads(relevant)
    clips, tags = _labels(task, metadata)
    family, audio_key = TASK_SOURCES[task]
    files: list[Path | None] = []
    tried: list[tuple[str, ...]] = []
    folder_value = metadata.get(audio_key)
    folder = Path(os.path.expanduser(str(folder_value))) if folder_value else None
    if folder_value and family == "gtzan" and _is_dataset(str(folder_value)):
        return _dataset_rows(task, clips, str(folder_value), audio_key)
    if folder is not None and not folder.is_dir():
        raise TaggingDataError(
            f"--metadata {audio_key}={str(folder_value)!r}: no such directory. Give the folder "
            "holding the release's audio as its metadata names the files."
        )
    for clip in clips:
        found, paths = audio_file(folder, clip, family) if folder else (None, ())
        files.append(found)
        tried.append(paths)
    return TaskData(task, tuple(clips), tuple(tags), tuple(files), tuple(tried))


def task_clips(task: str, metadata: Mapping[str, Any]) -> TaskData:
    """The clips, vocabulary and audio files of ``task`` (read once per process and keys).

    Raises:
        TaggingDataError: A metadata file that cannot be read, or an audio folder that is
            not one.
    """
    own = RELEASES[task].label_keys if task in RELEASES else ()
    keys = (*_LABEL_KEYS, *own, TASK_SOURCES[task][1])
    relevant = {k: str(metadata[k]) for k in keys if metadata.get(k) not in (None, "")}
    return _cached(task, json.dumps(relevant, sort_keys=True))


def _is_dataset(source: str) -> bool:
    from ..questions.published import is_dataset_source

    return is_dataset_source(source)


def audio_refs(data: TaskData) -> list[str | None]:
    """Each clip's reference (:func:`~lm_eval_rul.audio.sources.file_ref`, or a dataset
    row's), None when missing."""
    if data.rows is not None:
        return list(data.rows)
    return [file_ref(p) if p is not None else None for p in data.files]


def check_tagging_data(metadata: dict[str, Any]) -> None:
    """The tagging tasks' descriptor check: every metadata file given is read now, and
    every audio folder given holds every clip, before any model loads.

    Raises:
        TaggingDataError: The first problem, naming the file, the row and the fix; for
            missing audio, the first missing clip and how many are missing.
    """
    window_of(metadata)
    from .prompts import protocol_of

    protocol_of(metadata)
    wanted = []
    if metadata.get("gtzan_split_file") or metadata.get("gtzan_audio_dir"):
        wanted.append("gtzan")
    if metadata.get("mtg_data_dir"):
        wanted += ["mtg_genre", "mtg_moodtheme", "mtg_instrument", "mtg_top50"]
    if metadata.get("mtt_annotations"):
        wanted.append("magnatagatune")
    wanted += [t for t, r in RELEASES.items() if any(metadata.get(k) for k in r.label_keys)]
    for task in wanted:
        family = TASK_SOURCES[task][0]
        if family not in ("gtzan", "mtt", *RELEASES) and not _has_tsv(metadata, family):
            continue  # a folder with only some of the four files: the others are not run
        data = task_clips(task, metadata)
        audio_key = TASK_SOURCES[task][1]
        if not metadata.get(audio_key):
            continue
        missing = [i for i, ref in enumerate(audio_refs(data)) if ref is None]
        if missing:
            first = missing[0]
            raise TaggingDataError(
                f"{task}: {len(missing)} of {len(data.clips)} clips have no audio file in "
                f"--metadata {audio_key}; first: clip {data.clips[first].id}, tried "
                f"{', '.join(data.tried[first])}. Point {audio_key} at the folder holding the "
                "release's files as its metadata names them"
                + (" (or the hub's marsyas/gtzan dataset)." if task == "gtzan" else ".")
            )


def _has_tsv(metadata: Mapping[str, Any], family: str) -> bool:
    folder = Path(os.path.expanduser(str(metadata["mtg_data_dir"])))
    return (folder / f"autotagging_{family}-test.tsv").is_file()
