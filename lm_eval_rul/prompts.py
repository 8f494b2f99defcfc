"""Every prompt template of the plugin, in one place.

The wording follows the RUListening paper (Zang et al., ISMIR 2025); where the
released code differs (option format), both forms are kept and named.
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
    "DISTRACTOR_SYSTEM_PROMPT",
    "DISTRACTOR_GEN_PROMPT",
    "DISTRACTOR_EXAMPLES",
    "distractor_messages",
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


#: System message of the distractor-generating LLM (RUListening §3, "Distractor generation").
DISTRACTOR_SYSTEM_PROMPT = (
    "You write wrong answer options (distractors) for multiple-choice questions about music "
    "recordings. A good distractor is plausible for someone who has NOT heard the audio, "
    "matches the correct answer in style, length and level of detail, and is clearly "
    "different from the correct answer for someone who HAS heard it."
)

#: In-context examples: (question, caption, correct answer, distractors).
DISTRACTOR_EXAMPLES: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    (
        "Which instrument plays the main melody?",
        "A gentle waltz where a solo cello carries the melody over soft piano chords.",
        "Cello",
        ("Viola", "Bassoon", "French horn", "Baritone saxophone"),
    ),
    (
        "What is the overall mood of the piece?",
        "Fast, distorted guitars and shouted vocals give this punk song an angry, rebellious "
        "energy.",
        "Angry and rebellious",
        (
            "Defiant and triumphant",
            "Tense and anxious",
            "Bitter and sarcastic",
            "Wild and euphoric",
        ),
    ),
)

#: User message: the example block, then the item; one candidate per ``<distractor>`` tag.
DISTRACTOR_GEN_PROMPT = (
    "Write {n_candidates} distractors for the question below. Use the audio caption to make "
    "them tempting yet wrong for this recording. Do not repeat the correct answer or "
    "paraphrase it. Put each distractor in its own <distractor></distractor> tag and write "
    "nothing else.\n\n"
    "{examples}"
    "Question: {question}\n"
    "Caption: {caption}\n"
    "Correct answer: {correct_answer}\n"
    "Distractors:"
)

_DISTRACTOR_EXAMPLE = (
    "Question: {question}\nCaption: {caption}\nCorrect answer: {correct_answer}\n"
    "Distractors:\n{tagged}\n\n"
)


def distractor_messages(
    question: str, correct_answer: str, caption: str | None = None, *, n_candidates: int = 10
) -> list[dict[str, str]]:
    """Chat messages asking an instruction LLM for distractors in ``<distractor>`` tags.

    Args:
        question: The question text.
        correct_answer: The correct answer the distractors must differ from.
        caption: The audio caption (``"(no caption)"`` is shown when unknown).
        n_candidates: How many distractors to ask for in one reply.

    Returns:
        ``[{"role": "system", ...}, {"role": "user", ...}]``, ready for a chat template or a
        chat-completions API.
    """
    if n_candidates < 1:
        raise ValueError(f"n_candidates must be at least 1, got {n_candidates}")
    examples = "".join(
        _DISTRACTOR_EXAMPLE.format(
            question=q,
            caption=c,
            correct_answer=a,
            tagged="\n".join(f"<distractor>{d}</distractor>" for d in ds),
        )
        for q, c, a, ds in DISTRACTOR_EXAMPLES
    )
    user = DISTRACTOR_GEN_PROMPT.format(
        n_candidates=n_candidates,
        examples=examples,
        question=question.strip(),
        caption=(caption or "(no caption)").strip(),
        correct_answer=correct_answer.strip(),
    )
    return [
        {"role": "system", "content": DISTRACTOR_SYSTEM_PROMPT},
        {"role": "user", "content": user},
    ]
