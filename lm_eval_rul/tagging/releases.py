"""Single-label classification releases read as tagging tasks: NSynth and Medley-solos-DB.

Each is one :class:`LabelRelease` in :data:`RELEASES` (the registration point: a new
single-label release is its reader, one entry here, its task folder and its descriptor;
:mod:`.data`, :mod:`.prompts` and :mod:`.documents` ask this table, never a task name).

* NSynth (Engel et al. 2017; CC BY 4.0): ``--metadata nsynth_dir`` = the release's
  ``nsynth-test/`` folder: ``examples.json`` (an object keyed by ``note_str``, each value
  with ``note_str``, ``instrument_family_str``, ``instrument_source_str``, ``pitch``,
  ``velocity``, ...) and ``audio/<note_str>.wav`` (4 s at 16 kHz); 4,096 test notes.
  :func:`read_nsynth`.
* Medley-solos-DB (Lostanlen and Cella 2016; CC BY 4.0): ``--metadata medley_metadata`` =
  ``Medley-solos-DB_metadata.csv`` (``subset, instrument, instrument_id, song_id, uuid4``;
  default: the public copy on Zenodo, downloaded once), ``medley_audio_dir`` = the folder of
  ``Medley-solos-DB_<subset>-<instrument_id>_<uuid4>.wav``. The ``test`` subset only (12,236
  clips); the rows of the other subsets are counted and logged, not asked. A folder laid out
  as mirdata downloads it (``annotation/Medley-solos-DB_metadata.csv`` and ``audio/``) is
  accepted as ``medley_audio_dir`` alone. :func:`read_medley`.

Every problem is one :class:`~.readers.TaggingDataError` naming the file, the row and the fix.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .readers import Clip, TaggingDataError
from .vocab import MEDLEY_INSTRUMENTS, NSYNTH_FAMILIES, NSYNTH_SOURCES

__all__ = [
    "LabelRelease",
    "RELEASES",
    "MEDLEY_SUBSET",
    "MEDLEY_COLUMNS",
    "read_nsynth",
    "read_medley",
    "medley_metadata_path",
    "release_keys",
]

logger = logging.getLogger(__name__)

#: The subset of Medley-solos-DB that is asked (the others are counted, not asked).
MEDLEY_SUBSET = "test"
#: Medley-solos-DB's metadata columns, as the release (and mirdata's loader) read them.
MEDLEY_COLUMNS: tuple[str, ...] = ("subset", "instrument", "instrument_id", "song_id", "uuid4")
_MEDLEY_SUBSETS = ("training", "validation", "test")
_MEDLEY_CSV = "Medley-solos-DB_metadata.csv"
#: The length of every NSynth note (the release's own: 64,000 samples at 16 kHz).
NSYNTH_SECONDS = 4.0


def _path(metadata: Mapping[str, Any], key: str) -> Path | None:
    value = metadata.get(key)
    return Path(os.path.expanduser(str(value))) if value not in (None, "") else None


def _nsynth_examples(folder: Path) -> Path:
    """``examples.json`` of the ``nsynth-test/`` folder (or of its parent's ``nsynth-test/``)."""
    for candidate in (folder / "examples.json", folder / "nsynth-test" / "examples.json"):
        if candidate.is_file():
            return candidate
    raise TaggingDataError(
        f"--metadata nsynth_dir={str(folder)!r}: no examples.json in it. Give the release's "
        "nsynth-test/ folder (examples.json and audio/, from nsynth-test.jsonwav.tar.gz)."
    )


@dataclass(frozen=True)
class _Note:
    id: str
    family: str
    source: str


def _nsynth_notes(path: Path) -> list[_Note]:
    fix = "Give nsynth_dir the nsynth-test/ folder as the release ships it."
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise TaggingDataError(f"NSynth file {path}: cannot be read ({error}). {fix}") from None
    except json.JSONDecodeError as error:
        raise TaggingDataError(
            f"NSynth file {path}, line {error.lineno}: not JSON ({error.msg}). {fix}"
        ) from None
    if not isinstance(data, dict) or not data:
        raise TaggingDataError(
            f"NSynth file {path}: not an object of notes keyed by note_str "
            f"({type(data).__name__}{', empty' if not data else ''}). {fix}"
        )
    notes = []
    for key, value in data.items():
        where = f"NSynth file {path}, note {key!r}"
        if not isinstance(value, dict):
            raise TaggingDataError(f"{where}: not an object of fields. {fix}")
        family, source = value.get("instrument_family_str"), value.get("instrument_source_str")
        if family not in NSYNTH_FAMILIES:
            raise TaggingDataError(
                f"{where}: instrument_family_str {family!r} is none of NSynth's families "
                f"({', '.join(NSYNTH_FAMILIES)}). {fix}"
            )
        if source not in NSYNTH_SOURCES:
            raise TaggingDataError(
                f"{where}: instrument_source_str {source!r} is none of "
                f"{', '.join(NSYNTH_SOURCES)}. {fix}"
            )
        if value.get("note_str", key) != key or "/" in key or "\\" in key or key in (".", ".."):
            raise TaggingDataError(
                f"{where}: its note_str is {value.get('note_str')!r}; the key must be the "
                f"note's note_str, a file name. {fix}"
            )
        notes.append(_Note(str(key), str(family), str(source)))
    return notes


def read_nsynth(metadata: Mapping[str, Any], field: str) -> list[Clip]:
    """The notes of ``nsynth_dir``'s ``examples.json`` in file order, labelled by ``field``
    (``family`` or ``source``); each note's audio is ``audio/<note_str>.wav``.

    Raises:
        TaggingDataError: No ``nsynth_dir``, no ``examples.json``, a file that is not JSON,
            a note without a family or source of the release's vocabulary.
    """
    folder = _path(metadata, "nsynth_dir")
    if folder is None:
        raise TaggingDataError(
            "the NSynth tasks need --metadata nsynth_dir: the release's nsynth-test/ folder "
            "(examples.json and audio/; it is not downloaded for you)."
        )
    examples = _nsynth_examples(folder)
    relative = "" if examples.parent == folder else f"{examples.parent.name}/"
    return [
        Clip(n.id, f"{relative}audio/{n.id}.wav", (getattr(n, field),), NSYNTH_SECONDS)
        for n in _nsynth_notes(examples)
    ]


def medley_metadata_path(metadata: Mapping[str, Any]) -> Path:
    """``medley_metadata``; else mirdata's ``annotation/`` copy in ``medley_audio_dir``;
    else the public copy on Zenodo (downloaded once)."""
    given = _path(metadata, "medley_metadata")
    if given is not None:
        return given
    audio = _path(metadata, "medley_audio_dir")
    if audio is not None and (audio / "annotation" / _MEDLEY_CSV).is_file():
        return audio / "annotation" / _MEDLEY_CSV
    from .sources import download_once

    return download_once(_MEDLEY_CSV, "medley_metadata")


def read_medley(path: str | Path) -> tuple[list[Clip], dict[str, int]]:
    """The ``test`` clips of a Medley-solos-DB metadata CSV, in file order, and the count of
    rows of each other subset (not asked).

    Raises:
        TaggingDataError: A missing column, an unknown subset or instrument, an
            ``instrument_id`` that is not the instrument's, an empty ``uuid4``, a clip listed
            twice, or no test clip.
    """
    path = Path(path)
    fix = f"Give --metadata medley_metadata the release's {_MEDLEY_CSV} (Zenodo record 3464194)."
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise TaggingDataError(f"medley_metadata {path}: no such file. {fix}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise TaggingDataError(f"medley_metadata {path}: cannot be read ({error}). {fix}") from None
    reader = csv.DictReader(io.StringIO(text))
    header = [h.strip() for h in reader.fieldnames or []]
    missing = [c for c in MEDLEY_COLUMNS if c not in header]
    if missing:
        raise TaggingDataError(
            f"medley_metadata {path}, row 1: no column {missing[0]!r} (a comma-separated "
            f"header {', '.join(MEDLEY_COLUMNS)} expected). {fix}"
        )
    clips: list[Clip] = []
    others: dict[str, int] = {}
    seen: set[str] = set()
    for number, raw in enumerate(reader, start=2):
        row = {str(k).strip(): str(v or "").strip() for k, v in raw.items() if k is not None}
        if not any(row.values()):
            continue
        where = f"medley_metadata {path}, row {number}"
        subset, instrument, uuid = row["subset"], row["instrument"], row["uuid4"]
        if subset not in _MEDLEY_SUBSETS:
            raise TaggingDataError(
                f"{where}: subset {subset!r} is none of {', '.join(_MEDLEY_SUBSETS)}. {fix}"
            )
        if instrument not in MEDLEY_INSTRUMENTS:
            raise TaggingDataError(
                f"{where}: instrument {instrument!r} is none of Medley-solos-DB's "
                f"({', '.join(MEDLEY_INSTRUMENTS)}). {fix}"
            )
        expected = str(MEDLEY_INSTRUMENTS.index(instrument))
        if row["instrument_id"].lstrip("0") != expected.lstrip("0"):
            raise TaggingDataError(
                f"{where}: instrument_id {row['instrument_id']!r} is not {instrument}'s "
                f"({expected}). {fix}"
            )
        if not uuid or any(c in uuid for c in "/\\") or uuid in (".", ".."):
            raise TaggingDataError(f"{where}: uuid4 {uuid!r} names no clip. {fix}")
        if subset != MEDLEY_SUBSET:
            others[subset] = others.get(subset, 0) + 1
            continue
        if uuid in seen:
            raise TaggingDataError(f"{where}: clip {uuid} is listed twice. {fix}")
        seen.add(uuid)
        name = f"Medley-solos-DB_{subset}-{expected}_{uuid}.wav"
        clips.append(Clip(uuid, name, (instrument,), None))
    if not clips:
        raise TaggingDataError(f"medley_metadata {path}: no row of the test subset. {fix}")
    return clips, others


def _medley(metadata: Mapping[str, Any]) -> list[Clip]:
    path = medley_metadata_path(metadata)
    clips, others = read_medley(path)
    if others:
        logger.info(
            "Medley-solos-DB %s: %d test clips asked; not asked: %s",
            path,
            len(clips),
            ", ".join(f"{n} {subset} rows" for subset, n in sorted(others.items())),
        )
    return clips


def _in_audio_folder(relative: str) -> list[str]:
    """The release's flat folder, or mirdata's layout (the clips under ``audio/``)."""
    return [relative, f"audio/{relative}"]


@dataclass(frozen=True)
class LabelRelease:
    """One single-label release asked as a tagging task (letters or free text).

    Attributes:
        task: The ``tagging_task`` its YAMLs name.
        vocabulary: Its labels, in the options' order.
        kind: What a label is called in the prompts (``instrument family``).
        question: The letter task's question.
        read: ``metadata -> clips`` (each with one label of ``vocabulary``).
        label_keys: The ``--metadata`` keys its labels are read from (their presence
            makes the pre-model check read them).
        audio_key: The ``--metadata`` key of the folder its clip paths are relative to.
        alternates: ``clip path -> the relative paths tried``, in order.
    """

    task: str
    vocabulary: tuple[str, ...]
    kind: str
    question: str
    read: Callable[[Mapping[str, Any]], list[Clip]]
    label_keys: tuple[str, ...]
    audio_key: str
    alternates: Callable[[str], list[str]] = lambda relative: [relative]


#: ``tagging_task`` -> its release (the registration point of single-label releases).
RELEASES: dict[str, LabelRelease] = {
    "nsynth_instrument": LabelRelease(
        task="nsynth_instrument",
        vocabulary=NSYNTH_FAMILIES,
        kind="instrument family",
        question="Which instrument family plays this note?",
        read=lambda metadata: read_nsynth(metadata, "family"),
        label_keys=("nsynth_dir",),
        audio_key="nsynth_dir",
    ),
    "nsynth_source": LabelRelease(
        task="nsynth_source",
        vocabulary=NSYNTH_SOURCES,
        kind="instrument source",
        question="How was the instrument playing this note made: acoustic, electronic or "
        "synthetic?",
        read=lambda metadata: read_nsynth(metadata, "source"),
        label_keys=("nsynth_dir",),
        audio_key="nsynth_dir",
    ),
    "medley_solos": LabelRelease(
        task="medley_solos",
        vocabulary=MEDLEY_INSTRUMENTS,
        kind="instrument",
        question="Which instrument plays solo in this recording?",
        read=_medley,
        label_keys=("medley_metadata", "medley_audio_dir"),
        audio_key="medley_audio_dir",
        alternates=_in_audio_folder,
    ),
}


def release_keys() -> tuple[str, ...]:
    """Every ``--metadata`` key of :data:`RELEASES`, in order."""
    return tuple(dict.fromkeys(k for r in RELEASES.values() for k in (*r.label_keys, r.audio_key)))
