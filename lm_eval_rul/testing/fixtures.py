"""Small data files in the released schemas (RUL JSON, pools, MuChoMusic CSV)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from ..questions import MUCHOMUSIC_COLUMNS

__all__ = ["fixture_rows", "write_rul_json", "write_pools_json", "write_muchomusic_csv"]

_INSTRUMENTS = [
    "piano",
    "violin",
    "electric guitar",
    "flute",
    "drums",
    "cello",
    "synthesizer",
    "trumpet",
    "harp",
    "saxophone",
    "organ",
    "banjo",
]
_GENRES = ["Rock", "Jazz", "Folk, World, & Country"]
_KNOWLEDGE = [["Melody", "Instrumentation"], ["Instrumentation"], [], ["Genre and Style"]]
_REASONING = [[], ["Temporal relations between elements"], [], ["Mood and expression"]]
_MOODS = ["melancholic", "joyful", "tense", "calm", "playful", "dark", "uplifting", "dreamy"]


def fixture_rows(n: int = 8) -> dict[str, dict]:
    """``n`` questions in the released RUL-MuChoMusic layout, ids ``"2"``, ``"5"``, ..."""
    rows = {}
    for i in range(n):
        pool = _INSTRUMENTS if i % 2 == 0 else _MOODS
        correct = pool[i % len(pool)]
        distractors = [pool[(i + k) % len(pool)] for k in range(1, 5)]
        qid = str(2 + 3 * i)
        rows[qid] = {
            "question": (
                "Which instrument carries the melody?" if i % 2 == 0 else "What is the mood?"
            ),
            "caption": f"A short piece where the {correct} stands out; track {i}.",
            "correct_answer": correct,
            "distractors": distractors,
            "PI": round(0.9 - 0.05 * i, 4),
        }
    return rows


def write_rul_json(path: str | Path, n: int = 8, rows: dict | None = None) -> Path:
    """Write :func:`fixture_rows` (or ``rows``) as the released JSON."""
    path = Path(path)
    path.write_text(json.dumps(rows if rows is not None else fixture_rows(n), indent=1))
    return path


def write_pools_json(path: str | Path, n: int = 8, pool_size: int = 9) -> Path:
    """Distractor pools in the released ``distractors.json`` layout.

    The first pool also lists its correct answer (as 10 released pools do), in another
    letter case, and one duplicate, so cleaning has something to count.
    """
    rows = fixture_rows(n)
    for index, row in enumerate(rows.values()):
        pool = _INSTRUMENTS + _MOODS
        candidates = [c for c in pool if c != row["correct_answer"]][index : index + pool_size]
        if len(candidates) < pool_size:
            candidates += [c for c in pool if c != row["correct_answer"]][
                : pool_size - len(candidates)
            ]
        if index == 0:
            candidates = [*candidates, row["correct_answer"].upper(), candidates[0]]
        row["distractors"] = candidates
        row.pop("PI")
    path = Path(path)
    path.write_text(json.dumps(rows, indent=1))
    return path


def write_muchomusic_csv(path: str | Path, n: int = 8) -> Path:
    """A MuChoMusic-schema CSV with the same ids as :func:`fixture_rows`.

    Even rows come from the Song Describer Dataset (``<track>.json``), odd rows from
    MusicCaps (``<ytid>_<start>.json``); tracks are shared by pairs of questions. The
    category columns look like the real ones: ``genre`` a plain name, ``music_knowledge``
    and ``music_reasoning`` stringified lists (several, one or no category).
    """
    rows = fixture_rows(n)
    path = Path(path)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", *MUCHOMUSIC_COLUMNS, "genre", "music_knowledge", "music_reasoning"])
        for index, (qid, row) in enumerate(rows.items()):
            track = index // 2
            source = "sdd" if track % 2 == 0 else "musiccaps"
            identifier = f"{1000 + track}.json" if source == "sdd" else f"yt{track:08d}_30.json"
            writer.writerow(
                [
                    qid,
                    row["question"],
                    source,
                    identifier,
                    row["correct_answer"],
                    *row["distractors"][:3],
                    _GENRES[track % len(_GENRES)],
                    str(_KNOWLEDGE[index % len(_KNOWLEDGE)]),
                    str(_REASONING[index % len(_REASONING)]),
                ]
            )
    return path
