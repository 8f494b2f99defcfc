"""The prompt of the distractor-generating LLM (RUListening, "Distractor generation").

One template with two in-context examples; candidates come back in ``<distractor>`` tags
(:func:`lm_eval_rul.distractors.generation.parse_candidates`).
"""

from __future__ import annotations

__all__ = [
    "DISTRACTOR_SYSTEM_PROMPT",
    "DISTRACTOR_GEN_PROMPT",
    "DISTRACTOR_EXAMPLES",
    "distractor_messages",
]

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
