"""Tiny datasets in the public layouts of MusicNet, FMA and OverClocked ReMix.

Each builder writes real folder structures and table schemas with synthesised audio
(:func:`lm_eval_rul.testing.audio.synth_clip`), real label vocabularies (MIDI
programs, FMA genre rows, OCReMix tags), and the awkward cases the readers must handle:
recordings without metadata, FMA's known empty clip and a track without genres, a
URL-encoded OCReMix file name, and long recordings (several windows of a tiny model).
"""

from __future__ import annotations

import csv
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .audio import synth_clip, write_clip

__all__ = [
    "FIXTURE_SR",
    "LONG_SECONDS",
    "MUSICNET_FIXTURE",
    "FMA_GENRE_ROWS",
    "FMA_FIXTURE_TRACKS",
    "OCREMIX_FIXTURE",
    "MusicNetFixture",
    "FmaFixture",
    "OcremixFixture",
    "write_musicnet",
    "write_fma",
    "write_ocremix",
    "write_factual_datasets",
]

#: Sampling rate of the fixture audio (low, to keep files small).
FIXTURE_SR = 8_000
#: Length of the fixtures' long recordings: several 2 s windows of the tiny models.
LONG_SECONDS = 9.0
_SHORT_SECONDS = 1.0
_KINDS = ("tone", "chord", "clicks", "sweep")

#: (id, split, programs or None for no label file, metadata composer or None, seconds).
MUSICNET_FIXTURE: tuple[tuple[str, str, tuple[int, ...] | None, str | None, float], ...] = (
    ("1727", "train", (1, 41, 42, 43, 44), "Schubert", _SHORT_SECONDS),  # Piano Quintet
    ("1752", "train", (41, 42, 43), "Mozart", _SHORT_SECONDS),  # String Quartet
    ("2186", "train", (43,), "Bach", LONG_SECONDS),  # Solo Cello, long
    ("2302", "train", (1,), "Beethoven", _SHORT_SECONDS),  # Solo Piano
    ("2313", "train", (61, 69, 71, 72, 74), "Cambini", _SHORT_SECONDS),  # Wind Quintet
    ("2104", "train", (7, 41), "Bach", _SHORT_SECONDS),  # Violin and Harpsichord
    ("2106", "test", (1,), "Beethoven", LONG_SECONDS),  # test split, long
    ("2628", "test", (1, 41), None, _SHORT_SECONDS),  # not in the metadata copy
    ("2382", "test", None, "Beethoven", _SHORT_SECONDS),  # wav without a label file
    ("1759", "train", (), "Brahms", _SHORT_SECONDS),  # empty label file
)
#: Metadata rows without a recording in the fixture archive.
_MUSICNET_METADATA_ONLY = (("2659", "Dvorak", 300),)
_MUSICNET_META_COLUMNS = (
    "id",
    "composer",
    "composition",
    "movement",
    "ensemble",
    "source",
    "transcriber",
    "catalog_name",
    "seconds",
)

#: Rows of FMA's genres.csv (genre_id, #tracks, parent, title, top_level).
FMA_GENRE_ROWS: tuple[tuple[int, int, int, str, int], ...] = (
    (2, 5271, 0, "International", 2),
    (4, 4126, 0, "Jazz", 4),
    (10, 13845, 0, "Pop", 10),
    (12, 32923, 0, "Rock", 12),
    (15, 34413, 0, "Electronic", 15),
    (21, 8389, 0, "Hip-Hop", 21),
    (25, 9261, 12, "Punk", 12),
    (32, 7268, 38, "Noise", 38),
    (38, 38154, 0, "Experimental", 38),
    (46, 573, 2, "Latin America", 2),
    (74, 1531, 4, "Free-Jazz", 4),
    (89, 1858, 25, "Post-Punk", 12),
    (181, 2140, 15, "Techno", 15),
    (179, 104, 4, "Big Band/Swing", 4),
    (1060, 30, 46, "Tango", 2),
)

#: (track id, subset, genre ids, genre_top); 99134 is one of FMA's empty clips.
FMA_FIXTURE_TRACKS: tuple[tuple[int, str, tuple[int, ...], str], ...] = (
    (2, "small", (21,), "Hip-Hop"),
    (5, "small", (21,), "Hip-Hop"),
    (10, "small", (10,), "Pop"),
    (140, "small", (12, 25), "Rock"),
    (141, "small", (89,), "Rock"),
    (1482, "small", (181, 15), "Electronic"),
    (2012, "small", (74,), "Jazz"),
    (3557, "small", (1060,), "International"),
    (99134, "small", (32,), "Experimental"),
    (5000, "medium", (179,), "Jazz"),
    (6000, "large", (12,), "Rock"),
    (7000, "small", (), ""),
)

#: (ocr_id, download_url file name, mood, regional, timesig, seconds).
OCREMIX_FIXTURE: tuple[tuple[str, str, str, str, str, float], ...] = (
    (
        "OCR00001",
        "Shinobi_Shin_Shuriken_Jam_OC_ReMix.mp3",
        "funky|happy",
        "japanese",
        "timesig-4-4",
        _SHORT_SECONDS,
    ),
    (
        "OCR00002",
        "Bonk's_Adventure_Prehistoric_Xmas_OC_ReMix.mp3",
        "happy",
        "",
        "timesig-4-4",
        _SHORT_SECONDS,
    ),
    (
        "OCR00003",
        "Ecco_the_Dolphin_Dorsal_Dub_OC_ReMix.mp3",
        "jazzy",
        "",
        "timesig-4-4",
        LONG_SECONDS,
    ),
    (
        "OCR00004",
        "Ghosts'n_Goblins_Trance_Version_OC_ReMix.mp3",
        "dark|spooky",
        "",
        "timesig-4-4",
        _SHORT_SECONDS,
    ),
    (
        "OCR00010",
        "Dark_Souls_3_Journey's%20End_OC_ReMix.mp3",
        "epic|solemn",
        "celtic",
        "timesig-3-4",
        _SHORT_SECONDS,
    ),
    (
        "OCR00020",
        "Mega_Man_2_Egypt_OC_ReMix.mp3",
        "mystical",
        "middle-eastern|world",
        "timesig-variable",
        _SHORT_SECONDS,
    ),
    (
        "OCR00030",
        "Chrono_Trigger_Tango_OC_ReMix.mp3",
        "sad",
        "latin-american",
        "timesig-6-8",
        _SHORT_SECONDS,
    ),
    ("OCR00040", "Zelda_No_Tags_OC_ReMix.mp3", "", "", "", _SHORT_SECONDS),
)
_OCREMIX_COLUMNS = (
    "remix_id",
    "ocr_id",
    "title",
    "primary_game",
    "download_url",
    "mood_tags",
    "regional_tags",
    "timesig_tags",
    "genre_tags",
)
_OCREMIX_URL = "https://ocrmirror.org/files/music/remixes/"


def _clip(path: Path, index: int, seconds: float) -> Path:
    wave = synth_clip(_KINDS[index % len(_KINDS)], seconds=seconds, sr=FIXTURE_SR, seed=index)
    return write_clip(path, wave, FIXTURE_SR)


@dataclass(frozen=True)
class MusicNetFixture:
    """Paths of a fixture MusicNet: ``root`` (the archive) and ``metadata``."""

    root: Path
    metadata: Path


def write_musicnet(directory: str | Path) -> MusicNetFixture:
    """A MusicNet archive of :data:`MUSICNET_FIXTURE` plus ``musicnet_metadata.csv`` beside it.

    Label files have MusicNet's columns, with notes at 44.1 kHz sample positions.
    """
    directory = Path(directory)
    root = directory / "musicnet"
    rng = np.random.default_rng(0)
    for index, (key, split, programs, _, seconds) in enumerate(MUSICNET_FIXTURE):
        _clip(root / f"{split}_data" / f"{key}.wav", index, seconds)
        if programs is None:
            continue
        path = root / f"{split}_labels" / f"{key}.csv"
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(
                [
                    "start_time",
                    "end_time",
                    "instrument",
                    "note",
                    "start_beat",
                    "end_beat",
                    "note_value",
                ]
            )
            for n, program in enumerate(programs * 3):
                start = int(n * 44_100 * 0.1)
                writer.writerow(
                    [
                        start,
                        start + 4410,
                        program,
                        int(rng.integers(40, 80)),
                        n * 0.5,
                        0.5,
                        "Quarter",
                    ]
                )
    metadata = directory / "musicnet_metadata.csv"
    with metadata.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(_MUSICNET_META_COLUMNS)
        rows = [(k, c, s) for k, _, _, c, s in MUSICNET_FIXTURE if c] + [
            (k, c, s) for k, c, s in _MUSICNET_METADATA_ONLY
        ]
        for key, composer, seconds in rows:
            writer.writerow(
                [
                    key,
                    composer,
                    "Piece, Op. 1",
                    "1. Allegro",
                    "Ensemble",
                    "Archive",
                    "x",
                    "OP1",
                    int(round(seconds)),
                ]
            )
    return MusicNetFixture(root, metadata)


@dataclass(frozen=True)
class FmaFixture:
    """Paths of a fixture FMA: ``metadata_dir`` (``fma_metadata``) and ``audio_dir``."""

    metadata_dir: Path
    audio_dir: Path


_FMA_HEADER = (
    ("album", "id"),
    ("album", "title"),
    ("artist", "id"),
    ("artist", "name"),
    ("set", "split"),
    ("set", "subset"),
    ("track", "duration"),
    ("track", "genre_top"),
    ("track", "genres"),
    ("track", "genres_all"),
    ("track", "title"),
)


def _genres_all(ids: tuple[int, ...]) -> list[int]:
    parents = {row[0]: row[2] for row in FMA_GENRE_ROWS}
    out: list[int] = []
    for genre in ids:
        while genre and genre not in out:
            out.append(genre)
            genre = parents[genre]
    return sorted(out)


def write_fma(
    directory: str | Path, *, subset: str = "small", checksums: bool = True
) -> FmaFixture:
    """``fma_metadata/`` (tracks.csv with its two header rows, genres.csv) and ``fma_<subset>/``.

    Audio is written for every track of ``subset`` in FMA's ``000/000002.mp3`` layout;
    the known empty clip is written as an empty file, as FMA ships it. With
    ``checksums``, a ``checksums`` file (sha1, ``sha1sum`` format) lists every mp3.
    """
    directory = Path(directory)
    meta = directory / "fma_metadata"
    meta.mkdir(parents=True, exist_ok=True)
    with (meta / "genres.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["genre_id", "#tracks", "parent", "title", "top_level"])
        writer.writerows(FMA_GENRE_ROWS)
    with (meta / "tracks.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["", *(g for g, _ in _FMA_HEADER)])
        writer.writerow(["", *(n for _, n in _FMA_HEADER)])
        writer.writerow(["track_id", *([""] * len(_FMA_HEADER))])
        for tid, track_subset, genres, top in FMA_FIXTURE_TRACKS:
            writer.writerow(
                [
                    tid,
                    1,
                    "An album",
                    7,
                    "An artist",
                    "training",
                    track_subset,
                    180,
                    top,
                    json.dumps(list(genres)),
                    json.dumps(_genres_all(genres)),
                    f"Track {tid}",
                ]
            )
    audio = directory / f"fma_{subset}"
    order = ("small", "medium", "large")
    lines = []
    for index, (tid, track_subset, _, _) in enumerate(FMA_FIXTURE_TRACKS):
        if subset in order and order.index(track_subset) > order.index(subset):
            continue
        name = f"{tid:06d}"
        path = audio / name[:3] / f"{name}.mp3"
        if tid == 99134:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(b"")
        else:
            _clip(path, index, _SHORT_SECONDS)
        lines.append(f"{hashlib.sha1(path.read_bytes()).hexdigest()}  {name[:3]}/{name}.mp3")
    if checksums:
        (audio / "checksums").write_text("\n".join(lines) + "\n")
    return FmaFixture(meta, audio)


@dataclass(frozen=True)
class OcremixFixture:
    """Paths of a fixture OverClocked ReMix: the ``tags`` table and the ``audio_dir``."""

    tags: Path
    audio_dir: Path


def write_ocremix(directory: str | Path) -> OcremixFixture:
    """A tag table of :data:`OCREMIX_FIXTURE` and its mp3s (URL-decoded file names on disk)."""
    from urllib.parse import unquote

    directory = Path(directory)
    audio = directory / "ocremix"
    tags = directory / "ocremix_remix_mood_regional_timesig_genre.csv"
    with tags.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(_OCREMIX_COLUMNS)
        for index, (ocr_id, name, mood, regional, timesig, seconds) in enumerate(OCREMIX_FIXTURE):
            writer.writerow(
                [
                    int(ocr_id[3:]),
                    ocr_id,
                    f"Remix {index}",
                    "A game",
                    _OCREMIX_URL + name,
                    mood,
                    regional,
                    timesig,
                    "rock",
                ]
            )
            _clip(audio / unquote(name), index, seconds)
    return OcremixFixture(tags, audio)


def write_factual_datasets(directory: str | Path) -> dict[str, str]:
    """All three fixture datasets under ``directory``; returns the ``--metadata`` locating them."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    musicnet, fma = write_musicnet(directory), write_fma(directory)
    ocremix = write_ocremix(directory)
    return {
        "musicnet_dir": str(musicnet.root),
        "musicnet_metadata": str(musicnet.metadata),
        "fma_metadata_dir": str(fma.metadata_dir),
        "fma_audio_dir": str(fma.audio_dir),
        "ocremix_tags": str(ocremix.tags),
        "ocremix_audio_dir": str(ocremix.audio_dir),
    }
