"""Readers of the tagging releases' metadata, as they ship it (labels only, no audio).

* GTZAN: a split list of ``genre/genre.000NN.wav`` lines (the fault-filtered
  artist-disjoint split of Kereliuk, Sturm and Larsen 2015: 290 test clips); the label is
  the folder. :func:`read_gtzan_split`.
* MTG-Jamendo: split-0's ``autotagging_<task>-test.tsv``: tab-separated ``TRACK_ID,
  ARTIST_ID, ALBUM_ID, PATH, DURATION`` and then one tag per column (``genre---rock``),
  as many columns as the track has tags (CRLF or LF). :func:`read_mtg_tsv`.
* MagnaTagATune: ``annotations_final.csv`` (tab-separated, ``clip_id``, one 0/1 column
  per tag, ``mp3_path``) and the top-50 test list (``index<TAB>f/...mp3`` rows, as
  CMI-Bench ships it, or one path a line). :func:`read_mtt`.

Every problem is one :class:`TaggingDataError` naming the file, the row and the fix.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import UserInputError
from ..questions.reading import FileEncodingError, csv_reader, read_text
from .vocab import GTZAN_GENRES, MTG_CATEGORIES, MTT_TOP50

__all__ = [
    "Clip",
    "TaggingDataError",
    "read_gtzan_split",
    "read_mtg_tsv",
    "read_mtt",
    "vocabulary_of",
]

logger = logging.getLogger(__name__)

_GTZAN_LINE = re.compile(r"^(?P<genre>[a-z]+)/(?P=genre)\.(?P<num>\d{5})\.(?:wav|au)$")


class TaggingDataError(UserInputError, ValueError):
    """A tagging metadata file that cannot be read as its release ships it."""


@dataclass(frozen=True)
class Clip:
    """One evaluated clip.

    Attributes:
        id: Its id (GTZAN ``blues.00012``, MTG ``track_0000214``, MTT the clip path stem).
        path: Its audio path relative to the release's audio folder, as the metadata
            writes it (``blues/blues.00012.wav``, ``14/214.mp3``, ``f/...mp3``).
        tags: Its tags (the vocabulary's labels).
        duration: Its length in seconds when the metadata says it (MTG-Jamendo).
    """

    id: str
    path: str
    tags: tuple[str, ...]
    duration: float | None = None


def _lines(path: Path, what: str, fix: str) -> list[str]:
    """The file's lines, read as every data file is (:func:`~..questions.reading.read_text`:
    strict UTF-8, a byte-order mark dropped, read once per command)."""
    try:
        return read_text(path).splitlines()
    except FileNotFoundError:
        raise TaggingDataError(f"{what} {path}: no such file. {fix}") from None
    except FileEncodingError as error:
        raise TaggingDataError(f"{what} {path}: {error.problems[0]}. {fix}") from None
    except OSError as error:
        raise TaggingDataError(f"{what} {path}: cannot be read ({error}). {fix}") from None


class _Once:
    """Every tagging reader's check that a file lists each clip once: one line naming the
    file, the line and the clip on a repeat (a clip counted twice weighs twice in every
    figure, and a ranking figure sees it as two clips)."""

    def __init__(self, what: str, path: Path, unit: str = "line", thing: str = "clip") -> None:
        self.where, self.unit, self.thing = f"{what} {path}", unit, thing
        self.seen: dict[str, int] = {}

    def add(self, clip: str, number: int) -> None:
        first = self.seen.setdefault(clip, number)
        if first != number:
            raise TaggingDataError(
                f"{self.where}, {self.unit} {number}: {self.thing} {clip} is listed twice "
                f"(first on {self.unit} {first}). Remove the repeated {self.unit}."
            )


def read_gtzan_split(path: str | Path) -> list[Clip]:
    """The clips of a GTZAN split list, in file order.

    Raises:
        TaggingDataError: A line that is not ``genre/genre.000NN.wav`` of a GTZAN genre,
            a repeated clip, or no clip at all.
    """
    path = Path(path)
    fix = "Give --metadata gtzan_split_file a list of genre/genre.000NN.wav lines."
    clips: list[Clip] = []
    once = _Once("gtzan_split_file", path)
    for number, raw in enumerate(_lines(path, "gtzan_split_file", fix), start=1):
        line = raw.strip()
        if not line:
            continue
        match = _GTZAN_LINE.match(line)
        if match is None or match["genre"] not in GTZAN_GENRES:
            raise TaggingDataError(
                f"gtzan_split_file {path}, line {number}: {line!r} is not "
                f"genre/genre.000NN.wav with a GTZAN genre ({', '.join(GTZAN_GENRES)}). {fix}"
            )
        clip_id = line.rsplit("/", 1)[1].rsplit(".", 1)[0]
        once.add(clip_id, number)
        clips.append(Clip(clip_id, line, (match["genre"],), 30.0))
    if not clips:
        raise TaggingDataError(f"gtzan_split_file {path}: no clip listed. {fix}")
    return clips


def read_mtg_tsv(path: str | Path, task: str) -> list[Clip]:
    """The tracks of an MTG-Jamendo ``autotagging_<task>-test.tsv``, in file order.

    Args:
        path: The TSV.
        task: ``genre``, ``moodtheme``, ``instrument`` or ``top50tags`` (which category
            prefixes its tags may have).

    Raises:
        TaggingDataError: A wrong header, a row with too few columns, a duration that is
            not a number, a tag without an allowed ``category---`` prefix, a track without
            tags or listed twice.
    """
    path = Path(path)
    fix = (
        f"Give --metadata mtg_data_dir the folder of split-0's autotagging_{task}-test.tsv "
        "as MTG/mtg-jamendo-dataset ships it (data/splits/split-0/)."
    )
    lines = _lines(path, "MTG-Jamendo file", fix)
    header = lines[0].split("\t") if lines else []
    if [h.strip() for h in header[:5]] != ["TRACK_ID", "ARTIST_ID", "ALBUM_ID", "PATH", "DURATION"]:
        raise TaggingDataError(
            f"MTG-Jamendo file {path}, row 1: the header is {lines[0][:80] if lines else ''!r}, "
            f"not TRACK_ID, ARTIST_ID, ALBUM_ID, PATH, DURATION, TAGS. {fix}"
        )
    prefixes = tuple(f"{c}---" for c in MTG_CATEGORIES[task])
    clips: list[Clip] = []
    once = _Once("MTG-Jamendo file", path, "row", "track")
    cased: list[str] = []
    for number, raw in enumerate(lines[1:], start=2):
        if not raw.strip():
            continue
        cells = [c.strip() for c in raw.split("\t")]
        where = f"MTG-Jamendo file {path}, row {number}"
        if len(cells) < 6 or not cells[0] or not cells[3]:
            raise TaggingDataError(
                f"{where}: {len(cells)} columns; a track needs TRACK_ID, ARTIST_ID, ALBUM_ID, "
                f"PATH, DURATION and at least one tag, tab-separated. {fix}"
            )
        try:
            duration = float(cells[4])
        except ValueError:
            duration = math.nan
        if not math.isfinite(duration) or duration <= 0:
            # inf, nan or a negative length would place the middle window nowhere
            raise TaggingDataError(
                f"{where}: DURATION {cells[4]!r} is not a number of seconds above 0 "
                f"(track {cells[0]}). {fix}"
            )
        # tags are folded to lower case (the release writes them so): "genre---Rock" beside
        # "genre---rock" is one tag, as answers are read case-blind, never two of which
        # one takes every answer
        tags = tuple(dict.fromkeys(t.lower() for t in cells[5:] if t))
        if any(t != t.lower() for t in cells[5:]):
            cased.append(cells[0])
        wrong = [t for t in tags if not t.startswith(prefixes) or t in prefixes]
        if wrong or not tags:
            raise TaggingDataError(
                f"{where}: tag {wrong[0] if wrong else '(none)'!r} is not "
                f"{' or '.join(p + '<tag>' for p in prefixes)}; is this the {task} file? {fix}"
            )
        once.add(cells[0], number)
        clips.append(Clip(cells[0], cells[3], tags, duration))
    if not clips:
        raise TaggingDataError(f"MTG-Jamendo file {path}: no track listed. {fix}")
    if cased:
        logger.warning(
            "MTG-Jamendo file %s: %d track(s) write a tag with capitals (first: %s); tags are "
            "read in lower case, so tags differing only in case are one tag",
            path,
            len(cased),
            cased[0],
        )
    return clips


def _split_paths(path: Path) -> list[tuple[int, str]]:
    fix = (
        "Give --metadata mtt_split_file the top-50 test list (index<TAB>f/clip.mp3 rows, as "
        "CMI-Bench ships it, or one clip path a line)."
    )
    rows = []
    for number, raw in enumerate(_lines(path, "mtt_split_file", fix), start=1):
        line = raw.strip()
        if not line:
            continue
        cell = line.split("\t")[-1].strip()
        if not cell.lower().endswith(".mp3") or "/" not in cell:
            raise TaggingDataError(
                f"mtt_split_file {path}, line {number}: {line[:80]!r} names no clip path "
                f"(<folder>/<name>.mp3). {fix}"
            )
        rows.append((number, cell))
    if not rows:
        raise TaggingDataError(f"mtt_split_file {path}: no clip listed. {fix}")
    return rows


def read_mtt(annotations: str | Path, split_file: str | Path) -> list[Clip]:
    """The clips of MagnaTagATune's top-50 test list with their tags among the top 50.

    Args:
        annotations: ``annotations_final.csv`` (tab-separated: ``clip_id``, one 0/1 column
            per tag, ``mp3_path``).
        split_file: The test list (:func:`_split_paths`).

    Raises:
        TaggingDataError: Columns missing from the annotations, a value that is not 0/1, or
            a listed clip the annotations do not have.
    """
    annotations, split_file = Path(annotations), Path(split_file)
    fix = "Give --metadata mtt_annotations MagnaTagATune's annotations_final.csv."
    lines = _lines(annotations, "mtt_annotations", fix)
    reader = csv_reader("\n".join(lines), delimiter="\t", header=False)
    header = [h.strip().strip('"') for h in next(reader, [])]
    missing = [c for c in ("clip_id", "mp3_path", *MTT_TOP50) if c not in header]
    if missing:
        raise TaggingDataError(
            f"mtt_annotations {annotations}, row 1: no column {missing[0]!r} (tab-separated "
            f"header with clip_id, the tags and mp3_path expected). {fix}"
        )
    columns = {tag: header.index(tag) for tag in MTT_TOP50}
    path_column = header.index("mp3_path")
    by_path: dict[str, tuple[str, ...]] = {}
    for number, row in enumerate(reader, start=2):
        if not row or not any(c.strip() for c in row):
            continue
        cells = [c.strip().strip('"') for c in row]
        if len(cells) < len(header):
            raise TaggingDataError(
                f"mtt_annotations {annotations}, row {number}: {len(cells)} columns, the header "
                f"has {len(header)}. {fix}"
            )
        bad = next((t for t, i in columns.items() if cells[i] not in ("0", "1")), None)
        if bad is not None:
            raise TaggingDataError(
                f"mtt_annotations {annotations}, row {number}: tag {bad!r} is "
                f"{cells[columns[bad]]!r}, not 0 or 1. {fix}"
            )
        by_path[cells[path_column]] = tuple(t for t, i in columns.items() if cells[i] == "1")
    clips = []
    once = _Once("mtt_split_file", split_file)
    for number, clip_path in _split_paths(split_file):
        if clip_path not in by_path:
            raise TaggingDataError(
                f"mtt_split_file {split_file}, line {number}: clip {clip_path!r} is not in "
                f"mtt_annotations {annotations}. Use the test list of the same release."
            )
        stem = clip_path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        once.add(stem, number)
        clips.append(Clip(stem, clip_path, by_path[clip_path], 29.1))
    return clips


def vocabulary_of(clips: Sequence[Clip], fixed: Sequence[str] | None = None) -> tuple[str, ...]:
    """The tags of a task: ``fixed`` when the release fixes them, else every tag the clips
    carry, by decreasing count then name (MTG-Jamendo's split files define its tags)."""
    if fixed is not None:
        return tuple(fixed)
    counts: dict[str, int] = {}
    for clip in clips:
        for tag in clip.tags:
            counts[tag] = counts.get(tag, 0) + 1
    return tuple(sorted(counts, key=lambda t: (-counts[t], t)))
