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


def test_release_pi_prompt_is_the_released_code_character_for_character():
    # the released filter_based_on_PI.py: "; ".join(f"{letter}. {option}"), then
    # f"... The answer candidates are: {options_text}. Answer without the parenthesis."
    # and f"{base_prompt} The most likely answer is {letter}"
    options = ["Piano", "Violin", "Electric guitar", "Flute"]
    text = pi_prompt("Which instrument plays the melody?", options, style="release")
    assert text == (
        "Provide your best guess of this question. The question is: Which instrument plays "
        "the melody? The answer candidates are: A. Piano; B. Violin; C. Electric guitar; "
        "D. Flute. Answer without the parenthesis. The most likely answer is"
    )
    # the question is used as given (the release does not strip it)
    assert "is:  Padded?  The answer" in pi_prompt(" Padded? ", options, style="release")


def test_generation_prompts_of_the_authors_and_the_paper():
    options = ["Piano", "Violin", "Electric guitar", "Flute"]
    leave_one_out = gen_prompt("What plays?", options)
    assert leave_one_out == (
        "Provide your best guess of this question. Think step by step.\n\nQuestion: What "
        "plays?\n\nOptions: (A) Piano (B) Violin (C) Electric guitar (D) Flute\n\nWrite out "
        "your guess in the format of [[Letter]], such as [[A]], [[B]], [[C]], [[D]]."
    )
    one_shot = gen_prompt("What plays?", [*options, "Harp"])
    assert one_shot.endswith(
        "(D) Flute (E) Harp\n\nWrite out your guess in the format of [[Letter]], such as "
        "[[A]], [[B]], [[C]], [[D]] or [[E]]."
    )
    text_only = gen_prompt("What plays?", options, preamble="textonly")
    assert text_only == leave_one_out.replace(
        "Provide your best guess of this question. Think step by step.",
        "Provide your best guess of this question. You must guess one, even if you did not "
        "hear the audio. Think step by step.",
    )
    with pytest.raises(ValueError, match="preamble"):
        gen_prompt("Q?", options, preamble="loud")


def authors_leave_one_out_text(question: str, options_str: str) -> str:
    """The text part of ``format_leave_one_out_prompt`` (``ExampleAudioEval/qwen_2_audio.py``)."""
    return (
        f"Provide your best guess of this question. Think step by step.\n\nQuestion: "
        f"{question}\n\nOptions: {options_str}\n\nWrite out your guess in the format of "
        f"[[Letter]], such as [[A]], [[B]], [[C]], [[D]]."
    )


def authors_one_shot_text(question: str, options_str: str) -> str:
    """The text part of ``format_one_shot_prompt`` (same file)."""
    return (
        f"Provide your best guess of this question. Think step by step.\n\nQuestion: "
        f"{question}\n\nOptions: {options_str}\n\nWrite out your guess in the format of "
        f"[[Letter]], such as [[A]], [[B]], [[C]], [[D]] or [[E]]."
    )


@pytest.mark.parametrize("question", ["What plays? ", "  What plays?\n", "What plays?"])
def test_generation_prompts_are_the_authors_f_strings_byte_for_byte(question):
    """The question goes in as given: the release does not strip it (nor do we)."""
    options = ["Piano", "Violin", "Electric guitar", "Flute", "Harp"]

    def options_str(shown):
        letters = ["A", "B", "C", "D", "E"][: len(shown)]
        return " ".join(f"({letters[i]}) {option}" for i, option in enumerate(shown))

    assert gen_prompt(question, options[:4]) == authors_leave_one_out_text(
        question, options_str(options[:4])
    )
    assert gen_prompt(question, options) == authors_one_shot_text(question, options_str(options))
    # the paper's PI wording keeps the question as given too
    assert f"The question is: {question} The answer" in pi_prompt(question, options[:4])


def test_muchomusic_official_prompt_is_the_official_string():
    from lm_eval_rul.mcqa import muchomusic_official_prompt

    example = (
        "Question: What rhythm pattern do the digital drums primarily follow in this pop "
        "music piece? \n Options: (A) Four on the floor. (B) Off-beat syncopation. (C) Scat "
        "singing. (D) E-guitar playing a simple melody. \n The correct answer is: A"
    )
    question, answers = "What is the mood?", ["calm", "tense", "dark", "joyful"]
    # prepare_prompts.py: " ".join(examples) + "\n Question: " + question + "\n Options: ",
    # then f"({letter}) {answer} " per option, then "\n The correct answer is: "
    expected = example + "\n Question: " + question + "\n Options: "
    for letter, answer in zip("ABCD", answers, strict=True):
        expected += f"({letter}) {answer} "
    expected += "\n The correct answer is: "
    assert muchomusic_official_prompt(question, answers) == expected


def test_the_in_context_example_is_what_the_official_yaml_parses_to():
    import yaml

    from lm_eval_rul.mcqa.prompts import MUCHOMUSIC_EXAMPLE

    # muchomusic_eval/configs/default.yaml, verbatim
    config = (
        'in_context_examples:\n'
        '  - "Question: What rhythm pattern do the digital drums primarily follow in this pop '
        'music piece? \\n\n'
        '    Options: (A) Four on the floor. (B) Off-beat syncopation. (C) Scat singing. '
        '(D) E-guitar playing a simple melody. \\n\n'
        '    The correct answer is: A"\n'
    )
    assert yaml.safe_load(config)["in_context_examples"] == [MUCHOMUSIC_EXAMPLE]
