"""A small MMAR fixture in the released schema (JSON lines; our own items, not the
release's text): music items with 2, 4, 5 and 6 options (one with a trailing empty choice,
as the release has), a music-speech mix and a sound item; clips at the release's
``audio/{id}.wav``; and MMAR's scorer as its README and REFERENCES state it, written out
independently of the package (the tests' oracle)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

__all__ = [
    "MMAR_ITEMS",
    "mmar_rows",
    "write_mmar_jsonl",
    "write_mmar_audio",
    "mmar_official_accuracy",
]

#: (modality, question, choices, answer index, category, sub-category)
MMAR_ITEMS: tuple[tuple[str, str, tuple[str, ...], int, str, str], ...] = (
    ("music", "Is the piece in a major key?", ("Yes", "No"), 1, "Perception Layer", "Music Theory"),
    (
        "music",
        "Which instrument enters second?",
        ("Violin", "Oboe", "Harp", "Tuba"),
        2,
        "Perception Layer",
        "Music Theory",
    ),
    (
        "music",
        "Which era does the style suggest?",
        ("Baroque", "Classical", "Romantic", "Modernist", "Medieval"),
        0,
        "Cultural Layer",
        "Professional Knowledge and Reasoning",
    ),
    (
        "music",
        "How many beats are in each bar?",
        ("Two", "Three", "Four", "Five", "Six", "Seven"),
        3,
        "Signal Layer",
        "Rhythm",
    ),
    (
        "music",
        "What is the singer's vocal range?",
        ("Soprano", "Alto", "Tenor", "Bass", ""),
        1,
        "Semantic Layer",
        "Emotion",
    ),
    (
        "music",
        "Does the tempo speed up?",
        ("It speeds up", "It slows down"),
        0,
        "Signal Layer",
        "Rhythm",
    ),
    (
        "mix-music-speech",
        "What does the host announce over the music?",
        ("A song title", "The weather", "A sports score", "Traffic"),
        0,
        "Semantic Layer",
        "Content",
    ),
    ("sound", "What makes the sound?", ("A door", "A bird", "Rain"), 1, "Signal Layer", "Source"),
)


def _id(index: int) -> str:
    return f"mmarclip{index:02d}_00-00-0{index % 10}_00-00-30"


def mmar_rows() -> list[dict[str, Any]]:
    """The fixture's items as the release writes them."""
    return [
        {
            "id": _id(index),
            "audio_path": f"./audio/{_id(index)}.wav",
            "question": question,
            "choices": list(choices),
            "answer": choices[gold],
            "modality": modality,
            "category": category,
            "sub-category": sub,
            "language": "en" if "speech" in modality else None,
            "source": "youtube",
            "url": f"https://example.org/{index}",
            "timestamp": "00:00:00,00:00:30",
            "thinking": "not read",
            "cue": ["not read"],
            "rubric": [],
        }
        for index, (modality, question, choices, gold, category, sub) in enumerate(MMAR_ITEMS)
    ]


def write_mmar_jsonl(path: str | Path, rows: list[dict[str, Any]] | None = None) -> Path:
    """Write ``rows`` (default :func:`mmar_rows`) as MMAR's JSON lines."""
    path = Path(path)
    lines = (json.dumps(row, ensure_ascii=False) for row in (mmar_rows() if rows is None else rows))
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


def write_mmar_audio(directory: str | Path) -> Path:
    """One distinct synthesised clip per item at its ``audio_path`` inside ``directory``."""
    from .audio import synth_clip, write_clip

    directory = Path(directory)
    kinds = ("tone", "chord", "clicks", "sweep")
    for index, row in enumerate(mmar_rows()):
        wave = synth_clip(kinds[index % len(kinds)], seconds=1.0, seed=index)
        write_clip(directory / row["audio_path"].removeprefix("./"), wave)
    return directory


def mmar_official_accuracy(items: list[dict[str, Any]]) -> float:
    """MMAR's ``code/evaluation.py`` total accuracy as REFERENCES.md 3b states it: over the
    items with an ``answer_prediction``, MMAU's string match (every word of the answer said,
    no word of another choice that the answer lacks; an empty prediction never matches)."""

    def words(text: str) -> set[str]:
        return set(re.findall(r"\b\w+\b", text.lower()))

    scored = [i for i in items if "answer_prediction" in i]
    right = 0
    for item in scored:
        said, wanted = words(item["answer_prediction"]), words(item["answer"])
        others = set()
        for choice in item["choices"]:
            if words(choice) != wanted:
                others |= words(choice) - wanted
        right += bool(said) and wanted <= said and not said & others
    return right / len(scored)
