"""A Hugging Face audio dataset joined by question text when questions collide.

In the released RUL-MuChoMusic, four (question, correct answer) pairs occur for two clips
each, e.g. "In what language are the lyrics sung?" / "foreign language" (ids 1243, 1301).
Joined on the question and the correct answer alone, all eight are ambiguous; every other
field both sides share (the option texts, MuChoMusic's own options of a RUL row) tells
them apart, and what stays ambiguous is named, or left out when the user asks for it."""

from __future__ import annotations

import csv
import io
import json
import logging
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from lm_eval_rul.audio import MissingAudioError, check_audio_available
from lm_eval_rul.mcqa.tasks import load_muchomusic, load_rul_muchomusic
from lm_eval_rul.questions import MUCHOMUSIC_COLUMNS
from lm_eval_rul.testing.harness import run_cli

LANGUAGE, GENDER = "In what language are the lyrics sung?", "What is the gender of the vocalist?"
#: id -> (question, correct answer, RUL distractors, MuChoMusic distractors): the real
#: pattern (two clips per question and answer), options of the same style
ITEMS = {
    "1243": (LANGUAGE, "foreign language",
             ["The lyrics are sung in English", "The lyrics are sung in Mandarin",
              "The lyrics are sung in Chinese", "The lyrics are sung in French"],
             ["English", "There are no lyrics", "Instrumental only"]),
    "1301": (LANGUAGE, "foreign language",
             ["The lyrics are sung in Arabic", "The lyrics are sung in Hebrew",
              "The lyrics are sung in Mandarin", "The lyrics are sung in French"],
             ["Spanish", "The song has no vocals", "Whistling"]),
    "429": (GENDER, "Male", ["Female", "Countertenor", "Soprano", "Lead"],
            ["Female", "Child", "No vocals"]),
    "390": (GENDER, "Male", ["Soprano", "Male soprano", "Countertenor", "Unspecified"],
            ["Female", "Male soprano", "Robot voice"]),
    "7": ("Which instrument plays the melody?", "Flute", ["Oboe", "Violin", "Harp", "Tuba"],
          ["Trumpet", "Drums", "Bass"]),
}  # fmt: skip
SR = 16_000


def _clip(index: int) -> bytes:
    t = np.arange(int(0.2 * SR)) / SR
    buffer = io.BytesIO()
    sf.write(buffer, 0.3 * np.sin(2 * np.pi * (220 + 60 * index) * t), SR, format="WAV")
    return buffer.getvalue()


@pytest.fixture(scope="module")
def collision(tmp_path_factory) -> dict[str, Path]:
    import datasets

    root = tmp_path_factory.mktemp("hf_collision")
    rul = {qid: {"question": q, "caption": f"clip of item {qid}", "correct_answer": a,
                 "distractors": d, "PI": 0.8} for qid, (q, a, d, _) in ITEMS.items()}  # fmt: skip
    (root / "rul.json").write_text(json.dumps(rul))
    with (root / "muchomusic.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", *MUCHOMUSIC_COLUMNS])
        for qid, (question, answer, _, original) in ITEMS.items():
            writer.writerow([qid, question, "sdd", f"{qid}.json", answer, *original])
    # instruction, choices (MuChoMusic's options, shuffled), answer, the audio; in another
    # order than the questions. Two layouts: "hf" holds bare option texts and a letter;
    # "hf_lmms" is lmms-lab/muchomusic as lmms-eval reads it: choices one string of
    # "(A) x" lines, answer the lettered option "(C) x" (lmms-eval takes answer[1])
    paths = {"rul": root / "rul.json", "csv": root / "muchomusic.csv"}
    for layout in ("hf", "hf_lmms"):
        table: dict[str, list] = {"instruction": [], "choices": [], "answer": [], "context": []}
        for qid, (question, answer, _, original) in reversed(ITEMS.items()):
            choices = [*original[1:], answer, original[0]]
            letter = "ABCD"[choices.index(answer)]
            table["instruction"].append(question)
            if layout == "hf":
                table["choices"].append(choices)
                table["answer"].append(letter)
            else:
                table["choices"].append(
                    "\n".join(f"({'ABCD'[i]}) {c}" for i, c in enumerate(choices))
                )
                table["answer"].append(f"({letter}) {answer}")
            table["context"].append({"bytes": _clip(int(qid)), "path": f"{qid}.wav"})
        choices_type = datasets.Value("string")
        features = datasets.Features(
            {
                "instruction": datasets.Value("string"),
                "choices": datasets.Sequence(choices_type) if layout == "hf" else choices_type,
                "answer": datasets.Value("string"),
                "context": {"bytes": datasets.Value("binary"), "path": datasets.Value("string")},
            }
        )
        dataset = datasets.Dataset.from_dict(table, features=features)
        dataset = dataset.cast_column("context", datasets.Audio(decode=False))
        datasets.DatasetDict({"test": dataset}).save_to_disk(str(root / layout))
        paths[layout] = root / layout
    return paths


def _joined_files(docs, hf_path: Path) -> dict[str, str | None]:
    import datasets

    table = datasets.load_from_disk(str(hf_path))["test"]
    table = table.cast_column("context", datasets.Audio(decode=False))
    names = [cell["path"] for cell in table["context"]]
    out = {}
    for doc in docs:
        ref = json.loads(doc["audio_ref"]) if doc["audio_ref"] else None
        out[doc["id"]] = None if ref is None else names[ref["row"]]
    return out


@pytest.mark.parametrize("layout", ["hf", "hf_lmms"])
def test_rul_rows_are_told_apart_by_muchomusics_options(collision, layout):
    meta = {"rul_data_path": str(collision["rul"]), "audio_hf_dataset": str(collision[layout]),
            "muchomusic_csv": str(collision["csv"])}  # fmt: skip
    docs = list(load_rul_muchomusic(0, **meta)["test"])
    check_audio_available(docs)
    assert _joined_files(docs, collision[layout]) == {qid: f"{qid}.wav" for qid in ITEMS}


@pytest.mark.parametrize("layout", ["hf", "hf_lmms"])
def test_muchomusic_rows_match_all_their_options(collision, layout):
    meta = {"muchomusic_data_path": str(collision["csv"]),
            "audio_hf_dataset": str(collision[layout])}  # fmt: skip
    docs = list(load_muchomusic(**meta)["test"])
    assert _joined_files(docs, collision[layout]) == {qid: f"{qid}.wav" for qid in ITEMS}


@pytest.mark.parametrize(
    "choices, answer, expected",
    [
        ("(A) Four on the floor\n(B) Scat singing", "(B) Scat singing", "scat singing"),
        ("(A) Four on the floor (B) Scat singing", "B", "scat singing"),  # one line
        (["(A) Four on the floor", "(B) Scat singing"], "(A)", "four on the floor"),
        (["A. Four on the floor", "B. Scat singing"], "Scat singing", "scat singing"),
        (["Four on the floor", "Scat singing"], 1, "scat singing"),
        ('["Four on the floor", "Scat singing"]', "A.", "four on the floor"),  # JSON text
        (None, "(B) Scat singing", "scat singing"),  # no choices column: the answer's text
        (["Four on the floor", "Scat singing"], "(C) Drums", None),  # neither letter nor text
    ],
)  # fmt: skip
def test_hf_choices_and_answers_in_every_layout(choices, answer, expected):
    from lm_eval_rul.audio.hf_rows import _row_answer

    assert _row_answer(answer, choices) == expected


@pytest.mark.parametrize("layout", ["hf", "hf_lmms"])
def test_what_stays_ambiguous_is_named_or_left_out_on_request(collision, caplog, layout):
    meta = {"rul_data_path": str(collision["rul"]), "audio_hf_dataset": str(collision[layout])}
    docs = list(load_rul_muchomusic(1, **meta)["test"])
    joined = _joined_files(docs, collision[layout])
    # without MuChoMusic's options, RUL's own: 390 shares "Male soprano" with its row
    assert joined == {"1243": None, "1301": None, "429": None, "390": "390.wav", "7": "7.wav"}
    with pytest.raises(MissingAudioError) as error:
        check_audio_available(docs)
    message = str(error.value)
    assert "No audio for 3 of 5 items: ids 429, 1243, 1301." in message
    assert "ambiguous: rows" in message and "audio_skip_ambiguous" in message
    assert "audio_id_column" in message and "muchomusic_csv" in message
    with caplog.at_level(logging.WARNING):
        kept = list(load_rul_muchomusic(1, **meta, audio_skip_ambiguous=True)["test"])
    assert sorted(d["id"] for d in kept) == ["390", "7"]
    check_audio_available(kept)
    assert "leaving out 3 question(s)" in caplog.text and "ids 429, 1243, 1301" in caplog.text


def test_cli_names_the_ambiguous_questions_before_loading_a_model(collision, tmp_path):
    meta = {"rul_data_path": str(collision["rul"]), "audio_hf_dataset": str(collision["hf"])}
    never_loaded = tmp_path / "none"  # a folder with a config.json, no weights
    never_loaded.mkdir()
    (never_loaded / "config.json").write_text("{}")
    args = ["run", "--model", "lalm", "--model_args", f"pretrained={never_loaded}",
            "--tasks", "rul_muchomusic", "--metadata", json.dumps(meta), "--device", "cpu"]
    done = run_cli(args, check=False, timeout=300)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "MissingAudioError: No audio for 3 of 5 items: ids 429, 1243, 1301." in done.stderr
    assert "audio_skip_ambiguous" in done.stderr
