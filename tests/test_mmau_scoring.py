"""MMAU's official string-match rule and lmms-eval's letter reading, replayed on free text;
the MMAU reader's refusals of bad input, one line naming the item."""

from __future__ import annotations

import json
import math
import random
import re

import numpy as np
import pytest

from lm_eval_rul.mcqa.mmau.tasks import load_mmau, process_results, process_results_gen
from lm_eval_rul.mcqa.mmau_parsing import (
    mmau_lmms_answer,
    mmau_official_answer,
    mmau_string_match,
)
from lm_eval_rul.questions import DataValidationError, load_questions
from lm_eval_rul.questions.mmau import read_mmau_json
from lm_eval_rul.testing.mmau import mmau_rows, official_rule, write_mmau_json

TEMPO = ["Very slow", "Moderate", "Fast", "Rubato"]
METER = ["3/4", "4/4", "6/8", "5/4"]


@pytest.mark.parametrize(
    ("answer", "prediction", "choices", "expected"),
    [
        ("Moderate", "(B) Moderate", TEMPO, True),  # the letter is a word no choice has
        ("Moderate", "B", TEMPO, False),  # a bare letter gives no choice's words
        ("Moderate", "Not fast: moderate.", TEMPO, False),  # no negation: 'fast' is there
        ("Very slow", "VERY SLOW", TEMPO, True),  # case
        ("Very slow", "slow", TEMPO, False),  # every word of the answer is needed
        ("4/4", "4/4", METER, True),  # '4' is shared, so only '3', '6', '8', '5' forbid
        ("4/4", "3/4 time", METER, False),
        ("4/4", "four four", METER, False),
        ("Moderate", "", TEMPO, False),  # an empty prediction never matches
        ("Moderate", " ... !", TEMPO, False),  # nor one without a word
        ("guitar and piano", "piano and guitar", ["guitar and piano", "piano and guitar",
                                                 "drums"], True),  # same word set: no bar
        ("Café", "un café", ["Café", "Thé"], True),  # Unicode words
    ],
)  # fmt: skip
def test_official_rule_on_known_cases(answer, prediction, choices, expected):
    assert mmau_string_match(answer, prediction, choices) is expected
    assert official_rule(answer, prediction, choices) is expected


def test_official_rule_matches_the_statement_on_random_free_text():
    rng = random.Random(7)
    vocabulary = [w for c in TEMPO + METER for w in re.findall(r"\w+", c)] + ["the", "is", "b"]
    for _ in range(3000):
        choices = rng.choice([TEMPO, METER, ["Male speech", "Female speech", "Male singing"]])
        answer = rng.choice(choices)
        prediction = " ".join(rng.choice(vocabulary) for _ in range(rng.randint(0, 4)))
        if rng.random() < 0.3:
            prediction = f"{prediction} {answer}".upper()
        expected = official_rule(answer, prediction, choices)
        assert mmau_string_match(answer, prediction, choices) is expected
        parsed = mmau_official_answer(prediction, choices)
        if parsed.letter is not None:  # the choice it names is right exactly when acc is
            assert (choices["ABCD".index(parsed.letter)] == answer) is expected


def test_lmms_reading_replays_theirs_without_a_random_letter():
    opts = ["Piano", "Violin", "Drums", "Bass"]
    cases = {
        "B": ("B", "spaced"),
        "B.": ("B", "spaced"),  # the trailing period is stripped first
        "The answer is (C).": ("C", "parenthesis"),
        "(A) or (D)": ("A", "parenthesis"),  # no spaced letter: the first candidate
        "A then D ": ("D", "spaced"),  # several: the latest spaced one
        "Option C.Drums": ("C", "period"),
        "Drums": (None, "unanswered"),  # theirs would draw a random letter here
        "": (None, "unanswered"),
    }
    for response, (letter, rule) in cases.items():
        parsed = mmau_lmms_answer(response, opts)
        assert (parsed.letter, parsed.rule) == (letter, rule), response


def test_gen_task_official_accuracy_is_the_rule_for_any_answers(tmp_path):
    """process_results_gen under protocol=official, averaged as the harness does, gives the
    rule's accuracy over the items, for free-text answers drawn at random."""
    path = write_mmau_json(tmp_path / "mmau.json")
    docs = list(load_mmau(mmau_data_path=str(path), protocol="official")["test"])
    rows = {r["id"]: r for r in mmau_rows()}
    rng = random.Random(3)
    for _ in range(40):
        answers = []
        for doc in docs:
            words = [w for c in doc["choices"] for w in c.split()] + ["maybe", "(B)"]
            answers.append(" ".join(rng.sample(words, rng.randint(0, 3))))
        scored = [process_results_gen(dict(d), [a]) for d, a in zip(docs, answers, strict=True)]
        expected = np.mean([
            official_rule(rows[d["id"]]["answer"], a, rows[d["id"]]["choices"])
            for d, a in zip(docs, answers, strict=True)
        ])  # fmt: skip
        assert np.mean([s["acc"] for s in scored]) == expected


def test_letter_task_counts_either_copy_of_a_repeated_answer(tmp_path):
    path = write_mmau_json(tmp_path / "mmau.json")
    doc = next(d for d in load_mmau(mmau_data_path=str(path), protocol="official")["test"]
               if d["options"].count(d["answer"]) == 2)  # fmt: skip
    assert doc["options"] == ["1.5 seconds", "2.5 seconds", "0.5 seconds", "1.5 seconds"]
    picked_last = process_results(dict(doc), [(-3.0, False), (-2.0, False), (-2.0, False),
                                              (-1.0, False)])  # fmt: skip
    assert picked_last["acc"] == 1.0
    probs = np.exp([-3.0, -2.0, -2.0, -1.0]) / np.exp([-3.0, -2.0, -2.0, -1.0]).sum()
    assert math.isclose(picked_last["perceptual_index"], 1 - probs[0] - probs[3])


def test_reader_refuses_bad_items_naming_each(tmp_path):
    rows = mmau_rows()
    rows[1]["answer"] = "Allegro"  # not one of its choices
    rows[2]["id"] = rows[0]["id"]
    del rows[3]["choices"]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(rows))
    with pytest.raises(DataValidationError) as caught:
        read_mmau_json(path)
    text = str(caught.value)
    assert "3 problem(s)" in text
    assert f"item {rows[1]['id']!r}: answer 'Allegro' is not one of its choices" in text
    assert f"item {rows[0]['id']!r}: appears more than once" in text
    assert "missing field(s) 'choices'" in text
    other = tmp_path / "rul.json"
    other.write_text(json.dumps({"1": {"question": "q", "correct_answer": "a",
                                       "distractors": ["b", "c", "d", "e"]}}))  # fmt: skip
    with pytest.raises(DataValidationError, match="not MMAU's layout"):
        read_mmau_json(other)


def test_question_readers_take_mmau_music_items(tmp_path):
    path = write_mmau_json(tmp_path / "mmau.json")
    questions = load_questions(path)
    assert len(questions) == 12  # the music items, not the two sound items
    first = questions[0]
    assert (first.correct_answer, first.distractors) == ("Flute", ("Trumpet", "Cello", "Organ"))
    assert first.track == f"test-mini-audios/{first.id}"
    repeated = questions[11]  # its repeated answer is kept once
    assert repeated.distractors == ("2.5 seconds", "0.5 seconds")
    unanswered = write_mmau_json(tmp_path / "test.json", mmau_rows(answers=False))
    with pytest.raises(DataValidationError, match="test split has no answers"):
        load_questions(unanswered)
