"""The reference protocols by name: the RUListening authors' answer extraction and
leave-one-out vote, their one-shot tasks, and MuChoMusic's official scorer, each checked
against a replay of the reference code on hand-written inputs that exercise its quirks."""

from __future__ import annotations

import itertools
import random
import re
from collections import Counter

import pytest

from lm_eval_rul.errors import UserInputError
from lm_eval_rul.mcqa import (
    majority_vote,
    muchomusic_official_answer,
    parse_answer,
    parse_answer_release,
    plurality_answer_release,
    plurality_from_answers,
    plurality_vote_release,
)
from lm_eval_rul.mcqa.tasks import (
    doc_to_text_gen,
    load_rul_muchomusic,
    load_rul_muchomusic_oneshot,
    process_results_gen,
    process_results_official,
)
from lm_eval_rul.report import majority_from_samples

OPTIONS = ["Piano", "Electric piano", "Violin", "Drums"]


# ------------------------------------------------------------- replays of the reference code


def authors_extract_answer(response: str, letter_mapping: dict) -> str:
    """``extract_answer`` of the authors' ``ExampleAudioEval/qwen_2_audio.py``, as written."""
    matches = re.findall(r"\[\[([A-E])\]\]", response)
    if matches:
        return matches[-1]
    letter_pattern = (
        r"(?:answer is|chose|choose|select|guess is|I choose|I select|I guess) ([A-E])\b"
    )
    letter_matches = re.findall(letter_pattern, response, re.IGNORECASE)
    if letter_matches:
        return letter_matches[-1].upper()
    for letter in ["A", "B", "C", "D", "E"]:
        if f"option {letter}" in response or f"Option {letter}" in response or (
            f"({letter})" in response
        ):
            return letter
    response_lower = response.lower()
    for letter, text in letter_mapping.items():
        if not text:
            continue
        if text.lower() in response_lower:
            return letter
    return ""


def authors_leave_one_out(answer_texts: list[str]) -> str:
    """The authors' vote: non-empty answers, ``Counter(...).most_common(1)``."""
    extracted = [a for a in answer_texts if a]
    most_common = Counter(extracted).most_common(1)
    return most_common[0][0] if most_common else ""


def official_extract_responses(model_outputs, answer_options):
    """``extract_responses`` of MuChoMusic's ``muchomusic_eval/scoring.py``, as written."""
    prefix, letter_options = "The correct answer is:", ["A", "B", "C", "D"]
    responses = []
    for i, output in enumerate(model_outputs):
        output = output.split(prefix)[-1].strip()
        response = list(set(letter_options).intersection(output))
        if len(response) == 1:
            responses.append(letter_options.index(response[0]))
        else:
            normalized_output = output.lower().strip()
            normalized_answers = [j.lower().strip() for j in answer_options[i]]
            for k, answer in enumerate(normalized_answers):
                if answer in normalized_output:
                    responses.append(k)
                    break
            else:
                responses.append(-1)
    return responses


# ---------------------------------------------------------------- the authors' extraction

RELEASE_CASES = [
    # (response, their letter, what the quirk is)
    ("Final: [[B]] ... no, [[E]]", "E", "last [[X]] even when E is not offered"),
    ("the answer is a synth", "A", "case-insensitive phrase reads the article 'a'"),
    ("I guess C, or maybe D", "C", "phrase, no hedging check"),
    ("Option A is not it", "A", "no negation"),
    ("The answer is not A", "", "no letter right after the phrase"),
    ("(D) sounds wrong; option B fits", "B", "option mentions in letter order, not text order"),
    ("I hear an electric piano", "A", "'piano' is a substring of 'electric piano'"),
    ("It is the VIOLIN.", "C", "option text, case-insensitive"),
    ("B", "", "a bare letter is not read"),
    ("no idea", "", "unparsed"),
]


@pytest.mark.parametrize(("response", "letter", "quirk"), RELEASE_CASES)
def test_release_parser_replays_the_authors_extraction(response, letter, quirk):
    mapping = dict(zip("ABCD", OPTIONS, strict=True))
    assert authors_extract_answer(response, mapping) == letter, quirk
    parsed = parse_answer_release(response, OPTIONS)
    assert (parsed.letter or "") == letter, quirk


def test_release_parser_agrees_with_the_replay_on_many_responses():
    pieces = ["[[A]]", "[[E]]", "the answer is b", "I select D", "option C", "(A)", "violin",
              "Electric Piano", "not ", "Option B", "drums", " and ", "maybe"]  # fmt: skip
    mapping = dict(zip("ABCD", OPTIONS, strict=True))
    for a, b, c in itertools.product(pieces, repeat=3):
        response = f"{a} {b} {c}"
        assert (parse_answer_release(response, OPTIONS).letter or "") == authors_extract_answer(
            response, mapping
        ), response


def test_our_parser_differs_where_the_release_guesses():
    assert parse_answer("Option A is not it; the answer is C", OPTIONS).letter == "C"
    assert parse_answer("the answer is a synth", OPTIONS).letter is None
    assert parse_answer("B", OPTIONS).letter == "B"


# ---------------------------------------------------------------- the leave-one-out votes


@pytest.mark.parametrize(
    ("answers", "theirs"),
    [
        (["harp", "piano", "piano", "harp"], "harp"),  # 2-2 tie: the earliest fold's answer
        (["piano", "harp", "harp", "piano"], "piano"),
        ([None, "flute", None, None], "flute"),  # unparsed answers are dropped
        ([None, None, None, None], None),
        (["a", "b", "c", "d"], "a"),  # all different: the first fold
        (["b", "a", "a", "c"], "a"),
    ],
)
def test_plurality_vote_with_the_earliest_tie(answers, theirs):
    assert authors_leave_one_out([a or "" for a in answers]) == (theirs or "")
    assert plurality_answer_release(answers) == theirs
    if theirs is not None:
        assert plurality_vote_release(answers, theirs)


def test_plurality_replays_counter_most_common_and_differs_from_our_strict_majority():
    rng = random.Random(0)
    differ = 0
    for _ in range(500):
        answers = [rng.choice(["x", "y", "z", None]) for _ in range(4)]
        theirs = authors_leave_one_out([a or "" for a in answers])
        assert (plurality_answer_release(answers) or "") == theirs
        differ += plurality_vote_release(answers, "x") != majority_vote(answers, "x")
    assert differ > 0  # ties: theirs may be right, ours never is


def test_plurality_puts_folds_in_order_before_voting():
    rows = [("7", 3, "harp", "piano"), ("7", 1, "piano", "piano"),
            ("7", 2, "harp", "piano"), ("7", 0, "piano", "piano")]  # fmt: skip
    assert plurality_from_answers(rows)["plurality_acc_release"] == 1.0  # fold 0 said piano
    assert plurality_from_answers([(q, 3 - f, a, c) for q, f, a, c in rows]) == {
        "plurality_acc_release": 0.0,
        "n_items": 1,
    }


# ----------------------------------------------------------------- MuChoMusic's scorer

OFFICIAL_OPTIONS = ["Four on the floor", "Off-beat syncopation", "Scat singing", "Bass drum"]
OFFICIAL_CASES = [
    ("B", "B", "letter"),
    ("(C) Scat singing", "C", "letter"),
    ("A or B", None, "unanswered"),  # two of the letter characters
    ("Answer: scat singing", "A", "letter"),  # the 'A' of 'Answer' is the only letter
    ("bass drum, I think", "D", "option_text"),  # no capital letter at all
    ("Bass drum", "B", "letter"),  # the 'B' of 'Bass' is read as option B
    ("i think it is four on the floor", "A", "option_text"),
    ("The correct answer is: A\n Question: x\n The correct answer is: D", "D", "letter"),
    ("hmm", None, "unanswered"),
]


@pytest.mark.parametrize(("output", "letter", "rule"), OFFICIAL_CASES)
def test_official_scorer_replays_muchomusic_eval(output, letter, rule):
    (index,) = official_extract_responses([output], [OFFICIAL_OPTIONS])
    assert index == (-1 if letter is None else "ABCD".index(letter))
    parsed = muchomusic_official_answer(output, OFFICIAL_OPTIONS)
    assert (parsed.letter, parsed.rule) == (letter, rule)


def test_official_task_scores_acc_and_unanswered_rate():
    doc = {"options": OFFICIAL_OPTIONS, "letters": list("ABCD"), "gold": 2, "gold_letter": "C"}
    assert process_results_official(doc, ["C"]) == {"acc": 1.0, "unanswered_rate": 0.0}
    assert (doc["parsed_letter"], doc["parse_rule"]) == ("C", "letter")
    assert process_results_official(doc, ["Bass drum"]) == {"acc": 0.0, "unanswered_rate": 0.0}
    assert process_results_official(doc, ["A or C"]) == {"acc": 0.0, "unanswered_rate": 1.0}


# ----------------------------------------------------- one-shot tasks and the parser option


def test_one_shot_documents_show_all_five_options(data_dir):
    meta = {"rul_data_path": str(data_dir / "rul.json")}
    docs = list(load_rul_muchomusic_oneshot(**meta)["test"])
    folds = list(load_rul_muchomusic(0, **meta)["test"])
    assert len(docs) == 8
    for doc, fold_doc in zip(docs, folds, strict=True):
        assert doc["letters"] == list("ABCDE") and doc["fold"] == -1
        assert doc["dropped_distractor"] is None
        assert sorted(doc["options"]) == sorted([fold_doc["dropped_distractor"],
                                                 *fold_doc["options"]])  # fmt: skip
        assert doc["options"][doc["gold"]] == doc["correct_answer"]
        assert doc_to_text_gen(doc).endswith("[[C]], [[D]] or [[E]].")
    assert len({tuple(d["options"]) for d in docs}) == 8
    assert [d["options"] for d in docs] == [
        d["options"] for d in load_rul_muchomusic_oneshot(**meta)["test"]
    ]  # seeded


def _gen_doc(parser: str, options=OPTIONS, gold=2) -> dict:
    letters = list("ABCDE")[: len(options)]
    return {
        "id": "1",
        "fold": 0,
        "options": list(options),
        "letters": letters,
        "gold": gold,
        "gold_letter": letters[gold],
        "correct_answer": options[gold],
        "parser": parser,
    }


def test_parser_is_chosen_by_name_and_logged(data_dir):
    meta = {"rul_data_path": str(data_dir / "rul.json"), "parser": "release"}
    assert {d["parser"] for d in load_rul_muchomusic(1, **meta)["test"]} == {"release"}
    release, default = _gen_doc("release"), _gen_doc("default")
    assert process_results_gen(release, ["the answer is c"]) == {"acc": 1.0, "parse_failure": 0.0}
    assert process_results_gen(default, ["the answer is c"]) == {"acc": 0.0, "parse_failure": 1.0}
    # their [[E]] with four options: a letter that chooses no option, wrong and unparsed
    assert process_results_gen(release, ["[[E]]"]) == {"acc": 0.0, "parse_failure": 1.0}
    assert (release["parsed_letter"], release["parse_rule"]) == ("E", "brackets")
    with pytest.raises(UserInputError, match="parser='regex'.*'default'.*'release'"):
        load_rul_muchomusic(0, rul_data_path=str(data_dir / "rul.json"), parser="regex")


def test_fold_votes_read_answers_with_each_documents_parser():
    def sample(fold: int, options: list[str], text: str) -> dict:
        doc = {**_gen_doc("release", options, options.index("Violin")), "fold": fold}
        return {"doc": doc, "filtered_resps": [text], "filter": "none"}

    folds = [
        [sample(0, ["Violin", "Piano", "Drums", "Harp"], "the answer is b")],  # Piano
        [sample(1, ["Piano", "Violin", "Harp", "Flute"], "the answer is b")],  # Violin
        [sample(2, ["Drums", "Flute", "Violin", "Piano"], "[[D]]")],  # Piano
        [sample(3, ["Harp", "Flute", "Drums", "Violin"], "[[D]]")],  # Violin
    ]
    votes = majority_from_samples(folds)
    # 2-2 between Piano (fold 0 first) and Violin: the authors' plurality says Piano
    assert votes["plurality_acc_release"] == 0.0 and votes["majority_acc"] == 0.0
    folds[0][0]["filtered_resps"] = ["the answer is a"]  # Violin x3
    assert majority_from_samples(folds)["plurality_acc_release"] == 1.0
