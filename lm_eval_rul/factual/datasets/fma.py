"""FMA in its public layout: the genre task.

``fma_metadata/`` holds ``tracks.csv`` (two header rows: column group and column
name, then FMA's ``track_id,,,...`` index row; list columns such as
``(track, genres)`` written as ``[21, 811]``) and ``genres.csv``. The audio folder of
``fma_small``/``fma_medium``/``fma_large``/``fma_full`` keeps track 2 in
``000/000002.mp3`` and may carry FMA's ``checksums`` file (``sha1sum`` output:
``<digest>  000/000002.mp3``).

Gold = the titles of ``(track, genres)``, the genres the artist tagged (ours: not
``genres_all``, which adds every ancestor and would reward naming only the root).
Items = the subset's tracks with at least one genre; FMA's known empty clips
(:data:`FMA_KNOWN_EMPTY`) are skipped and counted.

Counts (``TaskItems.counts``): ``tracks_in_metadata``, ``tracks_in_subset``,
``skipped_no_genre``, ``skipped_known_empty``, ``checksums_listed``, ``items``.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path

from ..errors import FactualInputError
from ..items import Item, TaskItems
from ..reading.genres import GenreTree, read_genre_tree

__all__ = [
    "FMA_SUBSETS",
    "FMA_KNOWN_EMPTY",
    "FmaTrack",
    "fma_audio_path",
    "infer_fma_subset",
    "read_fma_tracks",
    "read_checksums",
    "read_fma",
]

#: Audio subsets, smallest first; a track of ``small`` is in every larger one.
FMA_SUBSETS: tuple[str, ...] = ("small", "medium", "large", "full")
#: Clips of fma_small (hence of every subset) that FMA distributes empty.
FMA_KNOWN_EMPTY: frozenset[str] = frozenset({"099134", "108925", "133297"})
_COLUMNS = {"genres": ("track", "genres"), "subset": ("set", "subset")}
_DURATION = ("track", "duration")


@dataclass(frozen=True)
class FmaTrack:
    """The fields of one ``tracks.csv`` row the genre task reads."""

    id: str
    genres: tuple[int, ...]
    subset: str
    duration: float | None


def fma_audio_path(audio_dir: str | Path, track_id: str | int) -> Path:
    """FMA's layout: track 2 is ``{audio_dir}/000/000002.mp3``."""
    name = f"{int(track_id):06d}"
    return Path(audio_dir) / name[:3] / f"{name}.mp3"


def infer_fma_subset(audio_dir: str | Path) -> str | None:
    """``small`` for a folder named ``fma_small`` (and so on), else None."""
    name = Path(audio_dir).name.lower()
    for subset in FMA_SUBSETS:
        if name == f"fma_{subset}":
            return subset
    return None


def read_fma_tracks(path: str | Path) -> list[FmaTrack]:
    """Read the genre task's fields from FMA's ``tracks.csv`` (two header rows).

    Raises:
        FactualInputError: Missing file or column, or a malformed genre list.
    """
    path = Path(path)
    if not path.is_file():
        raise FactualInputError(
            f"FMA tracks.csv not found at {path}; it is in fma_metadata.zip "
            "(https://os.unil.cloud.switch.ch/fma/fma_metadata.zip)"
        )
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        try:
            groups, names = next(reader), next(reader)
        except StopIteration:
            raise FactualInputError(f"{path}: fewer than two header rows") from None
        header = list(zip(_fill(groups), names, strict=False))
        index = {col: i for i, col in enumerate(header)}
        missing = [f"{g}.{n}" for g, n in _COLUMNS.values() if (g, n) not in index]
        if missing:
            raise FactualInputError(
                f"{path}: missing column(s) {', '.join(missing)} (is this FMA's tracks.csv, "
                "with its two header rows?)"
            )
        g_col, s_col = index[_COLUMNS["genres"]], index[_COLUMNS["subset"]]
        d_col = index.get(_DURATION)
        tracks = []
        for line, row in enumerate(reader, start=3):
            if not row or (row[0] == "track_id" and not any(row[1:])):
                continue  # pandas' index-name row
            try:
                genres = tuple(int(g) for g in json.loads(row[g_col] or "[]"))
            except (ValueError, TypeError, IndexError):
                raise FactualInputError(
                    f"{path} line {line}: track.genres is not a list of genre ids"
                ) from None
            duration = float(row[d_col]) if d_col is not None and row[d_col] else None
            tracks.append(FmaTrack(f"{int(row[0]):06d}", genres, row[s_col].strip(), duration))
    return tracks


def _fill(groups: list[str]) -> list[str]:
    """First header row with blanks filled from the left (as spreadsheets write groups)."""
    out, last = [], ""
    for group in groups:
        last = group or last
        out.append(last)
    return out


def read_checksums(path: str | Path) -> dict[str, str]:
    """FMA's ``checksums`` (``<hex digest>  <relative path>`` per line) as ``{path: digest}``."""
    out: dict[str, str] = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip():
            digest, _, name = line.strip().partition(" ")
            out[name.strip().lstrip("*").removeprefix("./")] = digest.lower()
    return out


def _in_subset(track_subset: str, subset: str) -> bool:
    if subset in ("large", "full"):
        return True
    rank = {s: i for i, s in enumerate(FMA_SUBSETS)}
    return track_subset in rank and rank[track_subset] <= rank[subset]


def read_fma(
    metadata_dir: str | Path,
    audio_dir: str | Path,
    *,
    subset: str | None = None,
    tree: GenreTree | None = None,
) -> TaskItems:
    """The ``genre`` items of FMA.

    Args:
        metadata_dir: ``fma_metadata/`` (``tracks.csv``, ``genres.csv``).
        audio_dir: The ``fma_<subset>/`` folder of mp3s.
        subset: ``small``, ``medium``, ``large`` or ``full``; default: from the folder name.
        tree: The genre tree (default: read from ``metadata_dir/genres.csv``).

    Raises:
        FactualInputError: Unknown subset, missing tables, a genre id not in genres.csv.
    """
    metadata_dir, audio_dir = Path(metadata_dir), Path(audio_dir)
    subset = subset or infer_fma_subset(audio_dir)
    if subset not in FMA_SUBSETS:
        raise FactualInputError(
            f"FMA subset {subset!r} is not one of {', '.join(FMA_SUBSETS)}: name the audio "
            f"folder fma_<subset> or pass --metadata fma_subset=small|medium|large|full "
            f"(audio folder: {audio_dir})"
        )
    tree = tree or read_genre_tree(metadata_dir / "genres.csv")
    tracks = read_fma_tracks(metadata_dir / "tracks.csv")
    checksum_file = audio_dir / "checksums"
    checksums = read_checksums(checksum_file) if checksum_file.is_file() else {}
    items, in_subset, no_genre, empty = [], 0, 0, 0
    for track in tracks:
        if not _in_subset(track.subset, subset):
            continue
        in_subset += 1
        if not track.genres:
            no_genre += 1
            continue
        if track.id in FMA_KNOWN_EMPTY:
            empty += 1
            continue
        unknown = [g for g in track.genres if g not in tree.titles]
        if unknown:
            raise FactualInputError(f"FMA track {track.id}: genre ids {unknown} not in genres.csv")
        path = fma_audio_path(audio_dir, track.id)
        relative = path.relative_to(audio_dir).as_posix()
        duration = track.duration if subset == "full" else None
        gold = tree.titles_of(track.genres)
        items.append(Item(track.id, "genre", "fma", path, gold, duration, checksums.get(relative)))
    counts = {
        "tracks_in_metadata": len(tracks),
        "tracks_in_subset": in_subset,
        "skipped_no_genre": no_genre,
        "skipped_known_empty": empty,
        "checksums_listed": len(checksums),
        "items": len(items),
    }
    return TaskItems("genre", tuple(sorted(items, key=lambda it: it.id)), counts)
