"""A small MMAU fixture in the released schema (our own items, not the release's text).

Twelve music items across sub-categories and difficulties, with the right answer at
varying positions (one item repeats its answer, as one released music item does), and
two sound items; clips at the release's ``test-mini-audios/{id}.wav`` inside a folder.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

__all__ = [
    "MMAU_MUSIC_ITEMS",
    "mmau_rows",
    "write_mmau_json",
    "write_mmau_audio",
    "official_rule",
]

#: (question, choices, answer index, sub-category, difficulty)
MMAU_MUSIC_ITEMS: tuple[tuple[str, tuple[str, ...], int, str, str], ...] = (
    (
        "Which instrument carries the main line?",
        ("Flute", "Trumpet", "Cello", "Organ"),
        0,
        "Instrumentation",
        "easy",
    ),
    (
        "How would you describe the tempo?",
        ("Very slow", "Moderate", "Fast", "Rubato"),
        1,
        "Rhythm and Tempo Understanding",
        "medium",
    ),
    (
        "What is the meter of the piece?",
        ("3/4", "4/4", "6/8", "5/4"),
        1,
        "Rhythm and Tempo Understanding",
        "hard",
    ),
    (
        "Which genre fits the recording best?",
        ("Reggae", "Bluegrass", "Techno", "Fado"),
        2,
        "Musical Genre Reasoning",
        "easy",
    ),
    (
        "What mood does the melody convey?",
        ("Joyful", "Melancholic", "Angry", "Tense"),
        1,
        "Emotional Tone Interpretation",
        "medium",
    ),
    (
        "Which chord quality dominates?",
        ("Major", "Minor", "Diminished", "Augmented"),
        3,
        "Harmony and Chord Progressions",
        "hard",
    ),
    (
        "When does the drum fill occur?",
        ("At the start", "In the middle", "At the end", "Never"),
        2,
        "Temporal Reasoning",
        "medium",
    ),
    (
        "How dense is the texture?",
        ("Sparse solo", "Thin duet", "Dense ensemble", "Silence"),
        2,
        "Musical Texture Interpretation",
        "easy",
    ),
    (
        "What contour does the melody follow?",
        ("Rising", "Falling", "Flat", "Arch"),
        0,
        "Melodic Structure Interpretation",
        "medium",
    ),
    (
        "Which tradition does the style come from?",
        ("Andalusian", "Balinese", "Celtic", "Mongolian"),
        1,
        "Socio-cultural Interpretation",
        "hard",
    ),
    (
        "What is the song's lyrical theme?",
        ("Travel", "Heartbreak", "Harvest", "War"),
        1,
        "Lyrical Reasoning",
        "medium",
    ),
    (
        "How long is the first note?",
        ("1.5 seconds", "2.5 seconds", "0.5 seconds", "1.5 seconds"),
        0,
        "Temporal Reasoning",
        "easy",
    ),
)
_SOUND_ITEMS = (
    ("What makes the sound?", ("A dog", "A car", "Rain", "A bell"), 3),
    ("Where was it recorded?", ("Indoors", "Outdoors"), 1),
)


def _id(task: str, index: int) -> str:
    return f"{task}-{index:04d}-0000-4000-8000-000000000000"


def mmau_rows(*, answers: bool = True) -> list[dict[str, Any]]:
    """The fixture's items as the release writes them (``answers=False``: the test split)."""
    rows = []
    for index, (question, choices, gold, sub, difficulty) in enumerate(MMAU_MUSIC_ITEMS):
        rows.append(
            {
                "id": _id("music", index),
                "audio_id": f"./test-mini-audios/{_id('music', index)}.wav",
                "question": question,
                "choices": list(choices),
                "answer": choices[gold],
                "dataset": "musiccaps" if index % 2 else "sdd",
                "task": "music",
                "split": "test-mini",
                "category": "Reasoning" if index % 3 else "Information Extraction",
                "sub-category": sub,
                "difficulty": difficulty,
            }
        )
    for index, (question, choices, gold) in enumerate(_SOUND_ITEMS):
        rows.append(
            {
                "id": _id("sound", index),
                "audio_id": f"./test-mini-audios/{_id('sound', index)}.wav",
                "question": question,
                "choices": list(choices),
                "answer": choices[gold],
                "dataset": "AudioSet",
                "task": "sound",
                "split": "test-mini",
                "category": "Reasoning",
                "sub-category": "Acoustic Source Inference",
                "difficulty": "easy",
            }
        )
    if not answers:
        for row in rows:
            del row["answer"]
            row["split"] = "test"
    return rows


def write_mmau_json(path: str | Path, rows: list[dict[str, Any]] | None = None) -> Path:
    """Write ``rows`` (default :func:`mmau_rows`) as MMAU's JSON list."""
    path = Path(path)
    path.write_text(json.dumps(mmau_rows() if rows is None else rows, indent=1), "utf-8")
    return path


def write_mmau_audio(directory: str | Path, rows: list[dict[str, Any]] | None = None) -> Path:
    """One distinct synthesised clip per item at its ``audio_id`` inside ``directory``."""
    from .audio import synth_clip, write_clip

    directory = Path(directory)
    kinds = ("tone", "chord", "clicks", "sweep")
    for index, row in enumerate(mmau_rows() if rows is None else rows):
        wave = synth_clip(kinds[index % len(kinds)], seconds=1.0, seed=index)
        write_clip(directory / row["audio_id"].removeprefix("./"), wave)
    return directory


def official_rule(answer: str, prediction: str, choices: list[str]) -> bool:
    """MMAU's scoring rule as tasks/mmau/README.md states it, written out independently of
    :mod:`lm_eval_rul.mcqa.mmau_parsing`, as the tests' oracle."""

    def words(text: str) -> frozenset[str]:
        return frozenset(m.group(0) for m in re.finditer(r"\b\w+\b", text.lower()))

    said, wanted = words(prediction), words(answer)
    forbidden = frozenset().union(*(words(c) - wanted for c in choices if words(c) != wanted))
    return len(said) > 0 and wanted <= said and not (said & forbidden)
