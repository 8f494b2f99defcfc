"""Answer parsing of the generation tasks (docs/method.md, "Generation tasks") and the
majority vote over folds."""

from __future__ import annotations

import pytest

from lm_eval_rul.mcqa import PARSE_RULES, parse_answer
from lm_eval_rul.mcqa.tasks import process_results_gen
from lm_eval_rul.report import majority_from_samples, sample_answer

OPTIONS = ["Piano", "Electric piano", "Violin", "Drums"]


@pytest.mark.parametrize(
    ("response", "letter", "rule"),
    [
        # 1. the LAST [[X]] wins over everything else
        ("Maybe (A)... the answer is B. Final: [[C]] or rather [[D]]", "D", "brackets"),
        ("[[ B ]]", "B", "brackets"),
        # an unoffered letter in brackets is skipped, the next rule reads the answer
        ("[[E]] - no: the answer is A", "A", "answer_phrase"),
        # 2. the LAST answer phrase, a few words may come between
        ("I first thought (A). The answer is clearly (B). I choose D.", "D", "answer_phrase"),
        ("My guess is C", "C", "answer_phrase"),
        ("Answer: B", "B", "answer_phrase"),
        ("I would select option A here.", "A", "answer_phrase"),
        # 3. the FIRST "option X" / "(X)"
        ("Option C fits better than (A).", "C", "option_mention"),
        ("It sounds like (B) to me, not (D)", "B", "option_mention"),
        # 4. the option text appearing earliest, the longer one at the same place
        ("I hear an electric piano and a violin", "B", "option_text"),
        ("There are drums, then a violin.", "D", "option_text"),
        ("I hear a PIANO", "A", "option_text"),
        # a lower-case "a" is an article, not the letter A
        ("I choose a violin.", "C", "option_text"),
    ],
)
def test_rules_in_order(response, letter, rule):
    parsed = parse_answer(response, OPTIONS)
    assert (parsed.letter, parsed.rule) == (letter, rule)
    assert parsed.rule in PARSE_RULES


@pytest.mark.parametrize(
    ("response", "letter", "rule"),
    [
        # chat models wrap the letter in markdown emphasis, in every rule
        ("The answer is: **B**", "B", "answer_phrase"),
        ("**Answer:** C", "C", "answer_phrase"),
        ("The answer is *D*.", "D", "answer_phrase"),
        ("I choose __A__", "A", "answer_phrase"),
        ("The answer is `C`", "C", "answer_phrase"),
        ("The answer is **(B)**", "B", "answer_phrase"),
        ("Final: [[**C**]]", "C", "brackets"),
        ("It must be option **D**, or (A)", "D", "option_mention"),
        ("It sounds like (**B**)", "B", "option_mention"),
        ("**Option** C fits", "C", "option_mention"),
        ("I hear a _violin_ and drums", "C", "option_text"),
        ("I hear **drums**", "D", "option_text"),
    ],
)
def test_markdown_emphasis_around_the_letter(response, letter, rule):
    parsed = parse_answer(response, OPTIONS)
    assert (parsed.letter, parsed.rule) == (letter, rule)


@pytest.mark.parametrize(
    ("response", "letter", "rule"),
    [
        # a negated letter is not the answer; the phrase goes on to the stated one
        ("The answer is not A, it is C", "C", "answer_phrase"),
        ("The answer is NOT **A**; it is **D**", "D", "answer_phrase"),
        ("The answer is not A nor B, it is D", "D", "answer_phrase"),
        # nothing stated but negations: no letter from the phrase, and no guess
        ("The answer is not A or B", None, "unparsed"),
        ("The answer is not A.", None, "unparsed"),
        # "neither A nor B" negates both; "rather than" / "instead of" / "none of" negate too
        ("I choose neither A nor B; C.", None, "unparsed"),
        ("I choose neither A nor B, but C", "C", "answer_phrase"),
        ("I'd choose C rather than A.", "C", "answer_phrase"),
        ("I select B instead of A.", "B", "answer_phrase"),
        ("I choose none of A or B", None, "unparsed"),
        ("Rather than A, the answer is D.", "D", "answer_phrase"),
        # "my_violin" is an identifier, not the option text
        ("see my_violin", None, "unparsed"),
    ],
)
def test_negated_letters_are_skipped_never_guessed(response, letter, rule):
    parsed = parse_answer(response, OPTIONS)
    assert (parsed.letter, parsed.rule) == (letter, rule)


@pytest.mark.parametrize(
    ("response", "letter", "rule"),
    [
        # the answers models really give: a letter alone, or one letter after a phrase
        ("B", "B", "letter_only"),
        ("B.", "B", "letter_only"),
        ("B)", "B", "letter_only"),
        ("**B**", "B", "letter_only"),
        ("(B)", "B", "letter_only"),
        ("  'C'\n", "C", "letter_only"),
        ("The correct option is B.", "B", "answer_phrase"),
        ("I think it is B.", "B", "answer_phrase"),
        ("It's (D), the drums", "D", "answer_phrase"),
        ("It is B, the electric piano", "B", "answer_phrase"),
        ("The answer is B", "B", "answer_phrase"),
        # never a guess: two letters, a negated letter, a capital that is a word
        ("A or B", None, "unparsed"),
        ("not A", None, "unparsed"),
        ("A C", None, "unparsed"),
        ("B and D", None, "unparsed"),
        ("The answer is A or B", None, "unparsed"),
        ("Answer: B, C", None, "unparsed"),
        ("I think it is B or C.", None, "unparsed"),
        ("I think it is A minor", None, "unparsed"),
        ("It is in A major", None, "unparsed"),
        ("E", None, "unparsed"),  # not offered
    ],
)
def test_answers_models_really_give(response, letter, rule):
    parsed = parse_answer(response, OPTIONS)
    assert (parsed.letter, parsed.rule) == (letter, rule)


@pytest.mark.parametrize("response", ["", "I am not sure what this is.", "pianos galore", "[[Z]]"])
def test_unparsable_answer_is_a_failure_not_a_guess(response):
    parsed = parse_answer(response, OPTIONS)
    assert parsed.letter is None and parsed.rule == "unparsed" and not parsed.parsed


def test_letters_must_match_options():
    with pytest.raises(ValueError, match="4 options but 3 letters"):
        parse_answer("[[A]]", OPTIONS, ["A", "B", "C"])


def _doc(item: str, options: list[str], correct: str) -> dict:
    letters = ["A", "B", "C", "D"][: len(options)]
    gold = options.index(correct)
    return {
        "id": item,
        "options": options,
        "letters": letters,
        "gold": gold,
        "gold_letter": letters[gold],
        "correct_answer": correct,
    }


def test_process_results_gen_scores_and_logs_the_rule():
    doc = _doc("7", OPTIONS, "Violin")
    assert process_results_gen(doc, ["so [[C]]"]) == {"acc": 1.0, "parse_failure": 0.0}
    assert (doc["parsed_letter"], doc["parse_rule"]) == ("C", "brackets")
    assert process_results_gen(doc, ["[[A]]"]) == {"acc": 0.0, "parse_failure": 0.0}
    assert process_results_gen(doc, ["no idea"]) == {"acc": 0.0, "parse_failure": 1.0}
    assert doc["parsed_letter"] is None and doc["parse_rule"] == "unparsed"


def _gen_sample(doc: dict, text: str) -> dict:
    return {"doc": doc, "filtered_resps": [text], "filter": "none"}


def test_majority_vote_over_folds_votes_with_option_text():
    # item "1": options reshuffled per fold; letters differ, the chosen TEXT is Violin 3 times
    folds = [
        [_gen_sample(_doc("1", ["Violin", "Piano", "Drums", "Harp"], "Violin"), "[[A]]")],
        [_gen_sample(_doc("1", ["Piano", "Violin", "Harp", "Flute"], "Violin"), "[[B]]")],
        [_gen_sample(_doc("1", ["Drums", "Flute", "Violin", "Piano"], "Violin"), "[[A]]")],
        [_gen_sample(_doc("1", ["Harp", "Flute", "Drums", "Violin"], "Violin"), "[[D]]")],
    ]
    assert sample_answer(folds[1][0]) == "Violin"
    assert majority_from_samples(folds) == {
        "majority_acc": 1.0,
        "plurality_acc_release": 1.0,
        "n_items": 1,
        "n_folds": 4,
    }
    # 2-2 tie between the correct and a wrong answer: wrong (no random tie-break)
    folds[3][0] = _gen_sample(folds[3][0]["doc"], "[[B]]")  # Flute
    folds[2][0] = _gen_sample(folds[2][0]["doc"], "[[B]]")  # Flute
    assert majority_from_samples(folds)["majority_acc"] == 0.0
    # unparsed answers vote for nothing: one correct vote against nothing wins
    for k in (1, 2, 3):
        folds[k][0] = _gen_sample(folds[k][0]["doc"], "hmm")
    assert sample_answer(folds[1][0]) is None
    assert majority_from_samples(folds)["majority_acc"] == 1.0


def test_majority_vote_reads_multiple_choice_samples():
    doc = _doc("3", ["Harp", "Drums", "Piano", "Flute"], "Piano")
    sample = {"doc": doc, "filtered_resps": [[-3.0, False], [-2.0, False], [-0.5, True], [-9, 0]]}
    assert sample_answer(sample) == "Piano"
    with pytest.raises(ValueError, match="2 responses for 4 options"):
        sample_answer({"doc": doc, "filtered_resps": [[-1.0, True], [-2.0, False]]})
