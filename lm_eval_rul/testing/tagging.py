"""Small tagging fixtures in the releases' own schemas, with synthesised clips.

* :func:`write_gtzan`: a split list of ``genre/genre.000NN.wav`` lines and the release's
  ``genres_original/<genre>/`` folders (one clip as ``.au``, as the original release);
* :func:`write_mtg`: split-0-shaped ``autotagging_<task>-test.tsv`` files (CRLF, one tag a
  column) and the ``NN/ID.mp3`` audio folder (one clip only as its ``.low.mp3`` copy);
* :func:`write_mtt`: ``annotations_final.csv`` (tab-separated, quoted header), a test
  list as CMI-Bench ships it and the ``f/...mp3`` audio;
* :func:`write_nsynth`: an ``nsynth-test/`` folder (``examples.json`` keyed by ``note_str``
  with the release's fields, ``audio/<note_str>.wav`` of 4 s at 16 kHz);
* :func:`write_medley`: ``Medley-solos-DB_metadata.csv`` (test, training and validation
  rows) and the flat folder of ``Medley-solos-DB_<subset>-<id>_<uuid4>.wav``, or mirdata's
  layout (``annotation/`` and ``audio/``).
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from ..tagging.vocab import (
    GTZAN_GENRES,
    MEDLEY_INSTRUMENTS,
    MTT_TOP50,
    NSYNTH_FAMILIES,
    NSYNTH_SOURCES,
)
from .audio import synth_clip, write_clip

__all__ = [
    "MTG_TRACKS",
    "MTT_CLIPS",
    "NSYNTH_NOTES",
    "MEDLEY_ROWS",
    "write_gtzan",
    "write_mtg",
    "write_mtt",
    "write_nsynth",
    "write_medley",
]

_KINDS = ("tone", "chord", "clicks", "sweep")

#: (track number, duration s, genre, mood/theme, instrument tags) of the MTG fixture.
MTG_TRACKS: tuple[tuple[int, float, tuple[str, ...], tuple[str, ...], tuple[str, ...]], ...] = (
    (214, 124.6, ("rock", "alternativerock"), ("energetic",), ("electricguitar", "drums")),
    (215, 151.4, ("rock",), ("dark",), ("electricguitar", "bass")),
    (301, 200.0, ("electronic",), ("happy", "energetic"), ("synthesizer", "drums")),
    (302, 95.0, ("electronic", "ambient"), ("relaxing",), ("synthesizer",)),
    (410, 180.2, ("hiphop",), ("dark",), ("drums", "bass")),
    (411, 60.0, ("pop",), ("happy",), ("piano", "drums")),
    (520, 240.0, ("classical",), ("relaxing", "film"), ("piano", "violin")),
    (521, 33.3, ("ambient",), ("film",), ("synthesizer", "piano")),
)
#: (clip path, its tags among the top 50) of the MagnaTagATune fixture.
MTT_CLIPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("f/bach-cantatas-01-aria-30-59.mp3", ("classical", "strings", "no vocals", "violin")),
    ("f/bach-cantatas-01-aria-146-175.mp3", ("classical", "vocal", "opera", "female")),
    ("c/techno-set-02-drop-0-29.mp3", ("techno", "electronic", "beat", "fast", "no vocals")),
    ("c/techno-set-02-drop-30-59.mp3", ("techno", "electronic", "loud")),
    ("a/rock-band-03-riff-88-117.mp3", ("rock", "guitar", "male vocal", "loud")),
    ("a/sitar-raga-04-alap-0-29.mp3", ("indian", "sitar", "slow", "no vocals")),
)


def write_gtzan(root: str | Path, per_genre: int = 2, seconds: float = 1.5) -> dict[str, Path]:
    """``{"split": test list, "audio": genres_original folder}`` (``per_genre`` clips each)."""
    root = Path(root)
    lines, index = [], 0
    for genre in GTZAN_GENRES:
        for n in range(per_genre):
            name = f"{genre}.{n + 12:05d}"
            lines.append(f"{genre}/{name}.wav")
            ext = "au" if index == 3 else "wav"  # the original release's .au files
            wave = synth_clip(_KINDS[index % 4], seconds=seconds, seed=index)
            write_clip(root / "genres_original" / genre / f"{name}.{ext}", wave)
            index += 1
    split = root / "test_filtered.txt"
    split.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {"split": split, "audio": root / "genres_original"}


def write_mtg(root: str | Path, seconds: float = 1.5) -> dict[str, Path]:
    """``{"data": folder of the four TSVs, "audio": NN/ID.mp3 folder}``."""
    root = Path(root)
    data = root / "splits"
    data.mkdir(parents=True, exist_ok=True)
    columns = {"genre": 2, "moodtheme": 3, "instrument": 4}
    prefixes = {"genre": "genre", "moodtheme": "mood/theme", "instrument": "instrument"}
    header = "TRACK_ID\tARTIST_ID\tALBUM_ID\tPATH\tDURATION\tTAGS"
    rows: dict[str, list[str]] = {task: [header] for task in (*columns, "top50tags")}
    for index, track in enumerate(MTG_TRACKS):
        number, duration = track[0], track[1]
        path = f"{number % 100:02d}/{number}.mp3"
        start = f"track_{number:07d}\tartist_{index:06d}\talbum_{index:06d}\t{path}\t{duration}"
        every = []
        for task, column in columns.items():
            tags = [f"{prefixes[task]}---{t}" for t in track[column]]
            every += tags
            rows[task].append("\t".join([start, *tags]))
        rows["top50tags"].append("\t".join([start, *every]))
        name = path.replace(".mp3", ".low.mp3") if index == 2 else path
        write_clip(
            root / "audio" / name, synth_clip(_KINDS[index % 4], seconds=seconds, seed=index)
        )
    for task, lines in rows.items():
        (data / f"autotagging_{task}-test.tsv").write_bytes(("\r\n".join(lines) + "\r\n").encode())
    return {"data": data, "audio": root / "audio"}


def write_mtt(root: str | Path, seconds: float = 1.5) -> dict[str, Path]:
    """``{"annotations", "split", "audio"}`` of the MagnaTagATune fixture (one clip more in the
    annotations than in the test list)."""
    root = Path(root)
    header = "\t".join(f'"{c}"' for c in ("clip_id", *MTT_TOP50, "mp3_path"))
    lines = [header]
    extra = (("d/other-07-x-0-29.mp3", ("piano",)),)
    for index, (path, tags) in enumerate((*MTT_CLIPS, *extra)):
        flags = ["1" if t in tags else "0" for t in MTT_TOP50]
        lines.append("\t".join(f'"{c}"' for c in (str(index + 2), *flags, path)))
        wave = synth_clip(_KINDS[index % 4], seconds=seconds, seed=index)
        write_clip(root / "mp3" / path, wave)
    annotations = root / "annotations_final.csv"
    annotations.write_text("\n".join(lines) + "\n", encoding="utf-8")
    split = root / "test.tsv"
    split.write_text("".join(f"{i}\t{p}\n" for i, (p, _) in enumerate(MTT_CLIPS)), encoding="utf-8")
    return {"annotations": annotations, "split": split, "audio": root / "mp3"}


#: (family, source, instrument number, pitch, velocity) of the NSynth fixture's notes.
NSYNTH_NOTES: tuple[tuple[str, str, int, int, int], ...] = (
    ("keyboard", "acoustic", 4, 60, 25),
    ("guitar", "electronic", 2, 64, 100),
    ("string", "acoustic", 1, 57, 75),
    ("synth_lead", "synthetic", 0, 72, 127),
    ("bass", "synthetic", 9, 36, 50),
    ("vocal", "acoustic", 3, 67, 100),
    ("organ", "electronic", 1, 60, 127),
    ("brass", "acoustic", 5, 62, 75),
)


def write_nsynth(root: str | Path, seconds: float = 4.0) -> Path:
    """The fixture's ``nsynth-test/`` folder (returned), in the release's layout."""
    folder = Path(root) / "nsynth-test"
    examples = {}
    for index, (family, source, number, pitch, velocity) in enumerate(NSYNTH_NOTES):
        instrument = f"{family}_{source}_{number:03d}"
        note = f"{instrument}-{pitch:03d}-{velocity:03d}"
        examples[note] = {
            "note": 200000 + index,
            "note_str": note,
            "instrument": 100 + index,
            "instrument_str": instrument,
            "pitch": pitch,
            "velocity": velocity,
            "sample_rate": 16000,
            "qualities": [0] * 10,
            "qualities_str": [],
            "instrument_family": NSYNTH_FAMILIES.index(family),
            "instrument_family_str": family,
            "instrument_source": NSYNTH_SOURCES.index(source),
            "instrument_source_str": source,
        }
        wave = synth_clip(_KINDS[index % 4], seconds=seconds, sr=16000, seed=index)
        write_clip(folder / "audio" / f"{note}.wav", wave, sr=16000)
    (folder / "examples.json").write_text(json.dumps(examples, indent=4), encoding="utf-8")
    return folder


#: (subset, instrument) of the Medley-solos-DB fixture's rows, in file order.
MEDLEY_ROWS: tuple[tuple[str, str], ...] = (
    *(("test", i) for i in MEDLEY_INSTRUMENTS),
    ("test", "piano"),
    ("test", "violin"),
    ("training", "clarinet"),
    ("training", "trumpet"),
    ("training", "flute"),
    ("validation", "piano"),
    ("validation", "female singer"),
)


def write_medley(root: str | Path, *, mirdata: bool = False, seconds: float = 2.97) -> dict:
    """``{"metadata": the CSV, "audio": the clips' folder, "test": test uuids}``; with
    ``mirdata``, the CSV is ``annotation/Medley-solos-DB_metadata.csv`` and the clips are in
    ``audio/`` of the folder returned as ``"home"``. Every row's clip is written (the
    training and validation ones too: only the test subset may be asked)."""
    root = Path(root)
    audio = root / "audio" if mirdata else root / "Medley-solos-DB"
    metadata = (
        root / "annotation" / "Medley-solos-DB_metadata.csv"
        if mirdata
        else root / "Medley-solos-DB_metadata.csv"
    )
    lines, test = ["subset,instrument,instrument_id,song_id,uuid4"], []
    for index, (subset, instrument) in enumerate(MEDLEY_ROWS):
        number = MEDLEY_INSTRUMENTS.index(instrument)
        clip = str(uuid.uuid5(uuid.NAMESPACE_URL, f"medley-fixture-{index}"))
        lines.append(f"{subset},{instrument},{number},{index // 2:03d},{clip}")
        if subset == "test":
            test.append(clip)
        wave = synth_clip(_KINDS[index % 4], seconds=seconds, sr=22050, seed=index)
        write_clip(audio / f"Medley-solos-DB_{subset}-{number}_{clip}.wav", wave, sr=22050)
    metadata.parent.mkdir(parents=True, exist_ok=True)
    metadata.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {"metadata": metadata, "audio": audio, "home": root, "test": test}
