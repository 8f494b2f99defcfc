"""MusicNet in its public layout: the instrument and composer tasks.

The extracted ``musicnet.tar.gz`` holds ``train_data/`` and ``test_data/`` (one
``{id}.wav`` per recording) and ``train_labels/`` / ``test_labels/`` (one ``{id}.csv``
of notes: ``start_time,end_time,instrument,note,start_beat,end_beat,note_value``, the
``instrument`` column a 1-based General MIDI program); ``musicnet_metadata.csv``
(``id,composer,composition,movement,ensemble,source,transcriber,catalog_name,seconds``)
is a separate download, looked for in the archive folder and beside it.

* instrument gold = the programs present in a recording's label file, through
  :data:`~lm_eval_rul.factual.reading.labels.MUSICNET_PROGRAMS`;
* composer gold = the metadata's ``composer``, in canonical form.

Counts (``TaskItems.counts``): ``recordings_found`` (ids with a wav or a label file),
``with_audio``, ``with_labels``, ``metadata_rows``, ``in_metadata`` (found and in the
metadata), ``metadata_without_recording``, ``recordings_without_metadata``,
``study_recordings`` (330, the figure the study gives) and ``items``, and the recordings
that are no item of the task: instrument ``skipped_no_notes`` (an empty label file) and
``skipped_no_labels`` (no label file); composer ``skipped_no_composer`` (no composer in the
metadata).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from ..errors import FactualInputError
from ..items import Item, TaskItems, id_order
from ..reading.labels import MUSICNET_PROGRAMS
from ..reading.lexicon import lexicon_for

__all__ = [
    "MUSICNET_SPLITS",
    "MUSICNET_STUDY_RECORDINGS",
    "MusicNetRecording",
    "read_musicnet_metadata",
    "read_label_programs",
    "read_musicnet",
    "find_musicnet_metadata",
]

MUSICNET_SPLITS: tuple[str, ...] = ("train", "test")
#: Recordings the factual-comprehension study reports for MusicNet.
MUSICNET_STUDY_RECORDINGS = 330
_METADATA_NAME = "musicnet_metadata.csv"
_METADATA_COLUMNS = ("id", "composer")


@dataclass(frozen=True)
class MusicNetRecording:
    """One recording found in the archive.

    Attributes:
        id: MusicNet id (``"1727"``).
        split: ``train`` or ``test``.
        audio: Path of the wav (it may not exist: the label file alone names the id).
        labels: Path of the note-label csv, None when absent.
    """

    id: str
    split: str
    audio: Path
    labels: Path | None


def find_musicnet_metadata(root: str | Path) -> Path | None:
    """``musicnet_metadata.csv`` in ``root`` or its parent, else None."""
    root = Path(root)
    for candidate in (root / _METADATA_NAME, root.parent / _METADATA_NAME):
        if candidate.is_file():
            return candidate
    return None


def read_musicnet_metadata(path: str | Path) -> dict[str, dict[str, str]]:
    """``musicnet_metadata.csv`` as ``{id: row}``.

    Raises:
        FactualInputError: The file is missing, lacks ``id``/``composer`` or repeats an id.
    """
    path = Path(path)
    if not path.is_file():
        raise FactualInputError(f"MusicNet metadata not found at {path}")
    rows: dict[str, dict[str, str]] = {}
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in _METADATA_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise FactualInputError(f"{path}: missing column(s) {', '.join(missing)}")
        for row in reader:
            key = row["id"].strip()
            if key in rows:
                raise FactualInputError(f"{path}: id {key} appears twice")
            rows[key] = row
    return rows


def read_label_programs(path: str | Path) -> tuple[int, ...]:
    """The distinct ``instrument`` programs of one note-label csv, in first-note order.

    Raises:
        FactualInputError: No ``instrument`` column, or a value that is not an integer.
    """
    path = Path(path)
    seen: dict[int, None] = {}
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        if "instrument" not in (reader.fieldnames or []):
            raise FactualInputError(f"{path}: no 'instrument' column (a MusicNet label file?)")
        for line, row in enumerate(reader, start=2):
            try:
                seen.setdefault(int(row["instrument"]), None)
            except (TypeError, ValueError):
                raise FactualInputError(
                    f"{path} line {line}: instrument {row['instrument']!r} is not a MIDI program"
                ) from None
    return tuple(seen)


def _recordings(root: Path) -> list[MusicNetRecording]:
    found: dict[str, MusicNetRecording] = {}
    for split in MUSICNET_SPLITS:
        data, labels = root / f"{split}_data", root / f"{split}_labels"
        ids = {p.stem for p in data.glob("*.wav")} | {p.stem for p in labels.glob("*.csv")}
        for key in ids:
            if key in found:
                raise FactualInputError(
                    f"MusicNet id {key} is in both {found[key].split} and {split} folders of {root}"
                )
            label_path = labels / f"{key}.csv"
            found[key] = MusicNetRecording(
                key, split, data / f"{key}.wav", label_path if label_path.is_file() else None
            )
    return sorted(found.values(), key=lambda r: id_order(r.id))


def read_musicnet(
    root: str | Path, *, metadata_csv: str | Path | None = None
) -> dict[str, TaskItems]:
    """The ``instrument`` and ``composer`` items of an extracted MusicNet archive.

    Args:
        root: The folder holding ``train_data/``, ``train_labels/``, ``test_data/``,
            ``test_labels/``.
        metadata_csv: ``musicnet_metadata.csv`` (default: in ``root`` or its parent).

    Returns:
        ``{"instrument": TaskItems, "composer": TaskItems}``; both carry the same counts
        of what was found, and each its own ``items`` and ``skipped_*`` (module docstring).

    Raises:
        FactualInputError: No MusicNet folder in ``root``, no metadata, or a label file
            with a program outside MusicNet's eleven.
    """
    root = Path(root)
    recordings = _recordings(root)
    if not recordings:
        raise FactualInputError(
            f"no MusicNet recordings under {root}: expected train_data/ and test_data/ "
            "(*.wav) and train_labels/ and test_labels/ (*.csv) from musicnet.tar.gz"
        )
    meta_path = Path(metadata_csv) if metadata_csv else find_musicnet_metadata(root)
    if meta_path is None:
        raise FactualInputError(
            f"{_METADATA_NAME} not found in {root} or {root.parent}; give its path "
            "(--metadata musicnet_metadata=...)"
        )
    metadata = read_musicnet_metadata(meta_path)
    composers = lexicon_for("composer")
    instruments, composer_items, empty = [], [], 0
    for rec in recordings:
        row = metadata.get(rec.id)
        seconds = float(row["seconds"]) if row and row.get("seconds") else None
        if rec.labels is not None:
            gold = _instrument_gold(rec.labels)
            if gold:
                instruments.append(Item(rec.id, "instrument", "musicnet", rec.audio, gold, seconds))
            else:
                empty += 1
        if row is not None and row["composer"].strip():
            name = row["composer"].strip()
            gold = (composers.canonical(name) or name,)
            composer_items.append(Item(rec.id, "composer", "musicnet", rec.audio, gold, seconds))
    found = {rec.id for rec in recordings}
    counts = {
        "recordings_found": len(recordings),
        "with_audio": sum(rec.audio.is_file() for rec in recordings),
        "with_labels": sum(rec.labels is not None for rec in recordings),
        "metadata_rows": len(metadata),
        "in_metadata": len(found & set(metadata)),
        "metadata_without_recording": len(set(metadata) - found),
        "recordings_without_metadata": len(found - set(metadata)),
        "study_recordings": MUSICNET_STUDY_RECORDINGS,
    }
    instrument_counts = {
        **counts,
        "skipped_no_notes": empty,
        "skipped_no_labels": sum(rec.labels is None for rec in recordings),
        "items": len(instruments),
    }
    composer_counts = {
        **counts,
        "skipped_no_composer": len(recordings) - len(composer_items),
        "items": len(composer_items),
    }
    return {
        "instrument": TaskItems("instrument", tuple(instruments), instrument_counts),
        "composer": TaskItems("composer", tuple(composer_items), composer_counts),
    }


def _instrument_gold(path: Path) -> tuple[str, ...]:
    programs = read_label_programs(path)
    unknown = [p for p in programs if p not in MUSICNET_PROGRAMS]
    if unknown:
        raise FactualInputError(
            f"{path}: instrument program(s) {unknown} are not among MusicNet's "
            f"{sorted(MUSICNET_PROGRAMS)}"
        )
    present = set(programs)
    return tuple(label for program, label in MUSICNET_PROGRAMS.items() if program in present)
