"""The multiple-choice prompt templates and option letters, in one place.

The wording follows the RUListening paper (Zang et al., ISMIR 2025); where the
released code differs (option format), both forms are kept and named. The distractor
generator's prompt lives with the build stage (:mod:`lm_eval_rul.build.prompts`).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "LETTERS",
    "PI_PROMPT",
    "GEN_PROMPT",
    "format_options_paper",
    "format_options_release",
    "pi_prompt",
    "gen_prompt",
    "letters_for",
]

LETTERS: tuple[str, ...] = tuple("ABCDEFGHIJKLMNOPQRSTUVWXYZ")

#: The paper's text-only prompt; the model's next token after it is the answer letter.
PI_PROMPT = (
    "Provide your best guess of this question. The question is: {question} "
    "The answer candidates are: {options} Answer without the parenthesis. "
    "The most likely answer is"
)

#: The paper's generation prompt for audio LMs (answers parsed from ``[[X]]``).
GEN_PROMPT = (
    "Provide your best guess of this question. Think step by step.\n\n"
    "Question: {question}\n\n"
    "Options: {options}\n\n"
    "Write out your guess in the format of [[Letter]], such as {examples}."
)


def letters_for(n_options: int) -> tuple[str, ...]:
    """The first ``n_options`` option letters (A, B, ...)."""
    if not 1 <= n_options <= len(LETTERS):
        raise ValueError(f"n_options must be between 1 and {len(LETTERS)}, got {n_options}")
    return LETTERS[:n_options]


def format_options_paper(options: Sequence[str]) -> str:
    """``(A) x (B) y ...`` as in the paper's prompt."""
    pairs = zip(letters_for(len(options)), options, strict=True)
    return " ".join(f"({letter}) {text}" for letter, text in pairs)


def format_options_release(options: Sequence[str]) -> str:
    """``A. x; B. y; ...`` as in the released RUListening code."""
    return "; ".join(
        f"{letter}. {text}" for letter, text in zip(letters_for(len(options)), options, strict=True)
    )


def pi_prompt(question: str, options: Sequence[str], *, style: str = "paper") -> str:
    """The text-only prompt whose next token is read as the answer letter.

    ``style="paper"`` writes options as ``(A) x``; ``style="release"`` as ``A. x;``.
    """
    if style == "paper":
        formatted = format_options_paper(options)
    elif style == "release":
        formatted = format_options_release(options)
    else:
        raise ValueError(f"style must be 'paper' or 'release', got {style!r}")
    return PI_PROMPT.format(question=question.strip(), options=formatted)


def gen_prompt(question: str, options: Sequence[str]) -> str:
    """The paper's step-by-step generation prompt."""
    letters = letters_for(len(options))
    examples = ", ".join(f"[[{letter}]]" for letter in letters)
    return GEN_PROMPT.format(
        question=question.strip(), options=format_options_paper(options), examples=examples
    )
