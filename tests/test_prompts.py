import pytest

from lm_eval_rul.mcqa import gen_prompt, pi_prompt


def test_pi_prompt_is_the_papers_wording():
    text = pi_prompt("What plays?", ["piano", "violin", "flute", "drums"])
    assert text == (
        "Provide your best guess of this question. The question is: What plays? The answer "
        "candidates are: (A) piano (B) violin (C) flute (D) drums Answer without the "
        "parenthesis. The most likely answer is"
    )


def test_release_style_options():
    text = pi_prompt("Q?", ["x", "y", "z", "w"], style="release")
    assert "A. x; B. y; C. z; D. w" in text
    with pytest.raises(ValueError, match="style"):
        pi_prompt("Q?", ["x"], style="other")


def test_gen_prompt_lists_letter_examples():
    text = gen_prompt("Q?", ["a", "b", "c", "d"])
    assert text.startswith("Provide your best guess of this question. Think step by step.")
    assert "Options: (A) a (B) b (C) c (D) d" in text
    assert text.endswith("such as [[A]], [[B]], [[C]], [[D]].")
