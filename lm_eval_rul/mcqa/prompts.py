"""The multiple-choice prompt templates and option letters, in one place.

The wording follows the RUListening paper (Zang et al., ISMIR 2025) and the authors'
released code; where they differ, both forms are kept and named:

* :data:`PI_PROMPT` (the paper) and :data:`RELEASE_PI_PROMPT` (the released PI code:
  ``A. x; B. y`` options and a period after the last one);
* :data:`GEN_PROMPT`: the step-by-step generation prompt of the authors' audio
  evaluation, with :data:`TEXTONLY_GEN_PREAMBLE` as the opening the paper used for
  text-only LLMs (its Section 3);
* :data:`MUCHOMUSIC_EXAMPLE` and :func:`muchomusic_official_prompt`: MuChoMusic's official
  in-context example and prompt (Weck et al., ISMIR 2024).

The distractor generator's prompt lives with the distractor pipeline
(:mod:`lm_eval_rul.distractors.prompts`).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..questions.schema import OPTION_LETTERS

__all__ = [
    "LETTERS",
    "PI_PROMPT",
    "RELEASE_PI_PROMPT",
    "GEN_PROMPT",
    "GEN_PREAMBLE",
    "TEXTONLY_GEN_PREAMBLE",
    "GEN_PREAMBLES",
    "MUCHOMUSIC_EXAMPLE",
    "MUCHOMUSIC_ANSWER_PREFIX",
    "format_options_paper",
    "format_options_release",
    "pi_prompt",
    "gen_prompt",
    "bracket_examples",
    "muchomusic_official_prompt",
    "letters_for",
]

LETTERS: tuple[str, ...] = OPTION_LETTERS

#: The paper's text-only prompt; the model's next token after it is the answer letter.
PI_PROMPT = (
    "Provide your best guess of this question. The question is: {question} "
    "The answer candidates are: {options} Answer without the parenthesis. "
    "The most likely answer is"
)

#: The released PI code's prompt, character for character: ``A. x; B. y`` options, a
#: period right after the last option, the question as given (not stripped).
RELEASE_PI_PROMPT = (
    "Provide your best guess of this question. The question is: {question} "
    "The answer candidates are: {options}. Answer without the parenthesis. "
    "The most likely answer is"
)

#: Opening of the authors' generation prompt for audio LMs.
GEN_PREAMBLE = "Provide your best guess of this question. Think step by step."
#: Opening the paper used for text-only LLMs answering by generation (its Section 3):
#: MuChoMusic's own prompt made them decline ("I cannot hear the audio").
TEXTONLY_GEN_PREAMBLE = (
    "Provide your best guess of this question. You must guess one, even if you did not "
    "hear the audio. Think step by step."
)
#: Name -> opening of the generation prompt.
GEN_PREAMBLES: dict[str, str] = {"audio": GEN_PREAMBLE, "textonly": TEXTONLY_GEN_PREAMBLE}

#: The generation prompt (answers parsed from ``[[X]]``).
GEN_PROMPT = (
    "{preamble}\n\n"
    "Question: {question}\n\n"
    "Options: {options}\n\n"
    "Write out your guess in the format of [[Letter]], such as {examples}."
)

#: MuChoMusic's official in-context example (``muchomusic_eval/configs/default.yaml``,
#: as YAML parses it: ``\n`` escapes, folded line breaks read as one space).
MUCHOMUSIC_EXAMPLE = (
    "Question: What rhythm pattern do the digital drums primarily follow in this pop music "
    "piece? \n Options: (A) Four on the floor. (B) Off-beat syncopation. (C) Scat singing. "
    "(D) E-guitar playing a simple melody. \n The correct answer is: A"
)
#: What MuChoMusic's official scorer cuts the output at (everything up to its last match).
MUCHOMUSIC_ANSWER_PREFIX = "The correct answer is:"


def letters_for(n_options: int) -> tuple[str, ...]:
    """The first ``n_options`` option letters (A, B, ...).

    >>> letters_for(3)
    ('A', 'B', 'C')
    """
    if not 1 <= n_options <= len(LETTERS):
        raise ValueError(f"n_options must be between 1 and {len(LETTERS)}, got {n_options}")
    return LETTERS[:n_options]


def format_options_paper(options: Sequence[str]) -> str:
    """``(A) x (B) y ...`` as in the paper's prompt.

    >>> format_options_paper(["x", "y"])
    '(A) x (B) y'
    """
    pairs = zip(letters_for(len(options)), options, strict=True)
    return " ".join(f"({letter}) {text}" for letter, text in pairs)


def format_options_release(options: Sequence[str]) -> str:
    """``A. x; B. y; ...`` as in the released RUListening code.

    >>> format_options_release(["x", "y"])
    'A. x; B. y'
    """
    pairs = zip(letters_for(len(options)), options, strict=True)
    return "; ".join(f"{letter}. {text}" for letter, text in pairs)


def pi_prompt(question: str, options: Sequence[str], *, style: str = "paper") -> str:
    """The text-only prompt whose next token is read as the answer letter.

    ``style="paper"`` writes options as ``(A) x`` (:data:`PI_PROMPT`); ``style="release"``
    is the released code's prompt exactly (:data:`RELEASE_PI_PROMPT`). Both take the
    question as given (the released code does not strip it).

    >>> pi_prompt("Which?", ["x", "y"], style="release").split("candidates are: ")[1]
    'A. x; B. y. Answer without the parenthesis. The most likely answer is'
    """
    if style == "paper":
        return PI_PROMPT.format(question=question, options=format_options_paper(options))
    if style == "release":
        return RELEASE_PI_PROMPT.format(question=question, options=format_options_release(options))
    raise ValueError(f"style must be 'paper' or 'release', got {style!r}")


def bracket_examples(n_options: int) -> str:
    """The ``[[A]], [[B]], ...`` examples of the generation prompt.

    Written as the authors' two prompts write them: commas only up to four options (their
    leave-one-out prompt), ``... [[D]] or [[E]]`` from five on (their one-shot prompt).

    >>> bracket_examples(4)
    '[[A]], [[B]], [[C]], [[D]]'
    >>> bracket_examples(5)
    '[[A]], [[B]], [[C]], [[D]] or [[E]]'
    """
    shown = [f"[[{letter}]]" for letter in letters_for(n_options)]
    if n_options <= 4:
        return ", ".join(shown)
    return ", ".join(shown[:-1]) + " or " + shown[-1]


def gen_prompt(question: str, options: Sequence[str], *, preamble: str = "audio") -> str:
    """The step-by-step generation prompt (answer asked for as ``[[X]]``).

    Byte for byte the text of the authors' ``format_leave_one_out_prompt`` (four options)
    and ``format_one_shot_prompt`` (five): the question goes in as given, not stripped.

    Args:
        question: The question text.
        options: Option texts in the order shown (A, B, ...).
        preamble: ``audio`` (the authors' prompt for audio LMs) or ``textonly`` (the
            paper's prompt for text-only LLMs); see :data:`GEN_PREAMBLES`.
    """
    if preamble not in GEN_PREAMBLES:
        raise ValueError(f"preamble must be one of {sorted(GEN_PREAMBLES)}, got {preamble!r}")
    return GEN_PROMPT.format(
        preamble=GEN_PREAMBLES[preamble],
        question=question,
        options=format_options_paper(options),
        examples=bracket_examples(len(options)),
    )


def muchomusic_official_prompt(question: str, options: Sequence[str]) -> str:
    """MuChoMusic's official prompt: the in-context example, the question, its options.

    As the official ``prepare_prompts.py`` builds it: ``example + "\\n Question: " +
    question + "\\n Options: " + "(A) x " ... + "\\n The correct answer is: "``
    (letters A-D; a space after every option).

    >>> muchomusic_official_prompt("Mood?", ["calm", "dark"]).partition(MUCHOMUSIC_EXAMPLE)[2]
    '\\n Question: Mood?\\n Options: (A) calm (B) dark \\n The correct answer is: '
    """
    pairs = zip(letters_for(len(options)), options, strict=True)
    listed = "".join(f"({letter}) {text} " for letter, text in pairs)
    return (
        f"{MUCHOMUSIC_EXAMPLE}\n Question: {question}\n Options: {listed}\n "
        f"{MUCHOMUSIC_ANSWER_PREFIX} "
    )
