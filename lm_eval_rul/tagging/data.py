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
copies and MTG-Jamendo's ``.low.mp3`` copies are accepted beside the listed name. The
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

from ..audio.sources import file_ref
from ..paths import contained_path
from .readers import Clip, TaggingDataError, read_gtzan_split, read_mtg_tsv, read_mtt, vocabulary_of
from .releases import RELEASES, release_keys
from .sources import gtzan_split_path, mtg_tsv_path, mtt_split_path
from .vocab import GTZAN_GENRES, MTT_TOP50

logger = logging.getLogger(__name__)

__all__ = [
    "TAGGING_METADATA_KEYS",
    "TASK_SOURCES",
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
    (``None`` when no audio folder was given or the file is missing) and the paths tried."""

    task: str
    clips: tuple[Clip, ...]
    tags: tuple[str, ...]
    files: tuple[Path | None, ...]
    tried: tuple[tuple[str, ...], ...]


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
            "audio_window)", data.task, len(short), len(data.clips), clip.id, seconds,
            clip.duration,
        )  # fmt: skip
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


def audio_file(folder: Path, clip: Clip, family: str) -> tuple[Path | None, tuple[str, ...]]:
    """The clip's file in ``folder`` (or None) and the paths tried."""
    tried = []
    for relative in _alternates(clip.path, family):
        # the project's one containment rule (lexical): links the user placed inside the
        # folder (genre folders linked from elsewhere) are followed, as for music_mc
        path = contained_path(
            folder, relative, item=f"clip {clip.id}", option="the audio folder",
            fix="correct the metadata file.",
        )  # fmt: skip
        if path.is_file():
            return path, tuple(tried)
        tried.append(str(path))
    return None, tuple(tried)


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


def audio_refs(data: TaskData) -> list[str | None]:
    """Each clip's reference (:func:`~lm_eval_rul.audio.sources.file_ref`), None when missing."""
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
        missing = [i for i, f in enumerate(data.files) if f is None]
        if missing:
            first = missing[0]
            raise TaggingDataError(
                f"{task}: {len(missing)} of {len(data.clips)} clips have no audio file in "
                f"--metadata {audio_key}; first: clip {data.clips[first].id}, tried "
                f"{', '.join(data.tried[first])}. Point {audio_key} at the folder holding the "
                "release's files as its metadata names them."
            )


def _has_tsv(metadata: Mapping[str, Any], family: str) -> bool:
    folder = Path(os.path.expanduser(str(metadata["mtg_data_dir"])))
    return (folder / f"autotagging_{family}-test.tsv").is_file()
