"""Prompts of the factual tasks: one table of templates, task x variant.

:data:`TEMPLATES` holds every question the model is asked, ``{labels}`` marking where
a list variant enumerates the candidate labels (display names, comma-separated, in
vocabulary order: the same for every item). Phase 1 has the ``open`` ("what do you
hear") and ``list`` variants; further phrasings (issue 11: three open phrasings from
casual to formal) are further keys of the same table, and :func:`prompt` serves them
unchanged.

:func:`parser_prompt` is the instruction for an LLM parser (the paper's method) with
the eight rules; :func:`read_parser_reply` turns its comma-separated reply into
canonical labels through the same lexicon as the deterministic parser.
"""

from __future__ import annotations

from collections.abc import Sequence

from .genres import GenreTree
from .labels import display_name, task_info
from .lexicon import Lexicon, normalize_text

__all__ = [
    "PROMPT_VARIANTS",
    "TEMPLATES",
    "candidate_labels",
    "prompt",
    "parser_prompt",
    "read_parser_reply",
]

#: The variants every task has (more keys may follow in :data:`TEMPLATES`).
PROMPT_VARIANTS: tuple[str, ...] = ("open", "list")

_LIST_TAIL = " Answer with the names from the list that apply, separated by commas."

TEMPLATES: dict[str, dict[str, str]] = {
    "instrument": {
        "open": "What instruments do you hear in this recording?",
        "list": "Which of these instruments do you hear in this recording: {labels}?" + _LIST_TAIL,
    },
    "composer": {
        "open": "Who composed the music in this recording?",
        "list": "Which of these composers wrote the music in this recording: {labels}?"
        + _LIST_TAIL,
    },
    "genre": {
        "open": "What genre is the music in this recording?",
        "list": "Which of these genres describe the music in this recording: {labels}?"
        + _LIST_TAIL,
    },
    "regional": {
        "open": "What regional or cultural musical style do you hear in this recording?",
        "list": "Which of these regional styles do you hear in this recording: {labels}?"
        + _LIST_TAIL,
    },
    "mood": {
        "open": "What is the mood of the music in this recording?",
        "list": "Which of these moods describe the music in this recording: {labels}?" + _LIST_TAIL,
    },
    "timesig": {
        "open": "What is the time signature of the music in this recording?",
        "list": "Which of these time signatures does the music in this recording use: "
        "{labels}?" + _LIST_TAIL,
    },
}


def candidate_labels(task: str, genre_tree: GenreTree | None = None) -> tuple[str, ...]:
    """The canonical labels a list prompt enumerates (genre: every FMA title)."""
    if task == "genre":
        if genre_tree is None:
            raise ValueError("the genre candidates are FMA's titles: pass genre_tree")
        return genre_tree.all_titles
    return task_info(task).candidates


def prompt(task: str, variant: str = "open", *, genre_tree: GenreTree | None = None) -> str:
    """The question of ``task`` in ``variant`` (list variants enumerate the candidates).

    Examples
    --------
    >>> prompt("timesig", "list").split(":")[1].split("?")[0]
    ' 4/4, 3/4, 6/8, 5/4, 7/8, 7/4, 9/8, irregular, variable'
    """
    try:
        template = TEMPLATES[task][variant]
    except KeyError:
        task_info(task)
        raise ValueError(
            f"{task} has no prompt variant {variant!r}; use one of {', '.join(TEMPLATES[task])}"
        ) from None
    if "{labels}" not in template:
        return template
    names = [display_name(task, label) for label in candidate_labels(task, genre_tree)]
    return template.format(labels=", ".join(names))


_PARSER_RULES = """\
Rules:
1. Only include {noun} explicitly mentioned in the response.
2. Do not infer {noun} from associations (for example, "swing rhythm" is not "jazz").
3. If the response says "X more than Y", include only X.
4. Remove duplicates, keeping the order of first appearance.
5. Answer with a comma-separated list.
6. Answer with an empty string if no {noun} are mentioned.
7. Use canonical forms (for example, "J.S. Bach" -> "Bach", "Acoustic Grand Piano" -> "piano").
8. Do not include moods or affect descriptions unless explicitly mentioned (for example, \
"a jazz-like feeling" is ignored)."""


def parser_prompt(task: str, response: str, *, labels: Sequence[str] | None = None) -> str:
    """The instruction for an LLM parser to extract ``task``'s labels from ``response``.

    Args:
        task: Task key.
        response: The evaluated model's answer.
        labels: For the label-matching tasks (mood, regional style), the closed list the
            parser must choose from (default: the task's candidates).
    """
    info = task_info(task)
    lines = [
        f"Extract the {info.noun} mentioned in the response below.",
        _PARSER_RULES.format(noun=info.noun),
    ]
    if info.label_matching:
        names = [display_name(task, label) for label in (labels or info.candidates)]
        lines.append(
            f"Choose only from these {info.noun}, picking those the response reflects "
            f'(for example, "Egyptian" reflects Middle Eastern): {", ".join(names)}.'
        )
    lines.append(f"Response: {response}")
    lines.append(f"{info.noun.capitalize()}:")
    return "\n\n".join(lines)


def read_parser_reply(reply: str, lexicon: Lexicon) -> tuple[str, ...]:
    """Canonical labels of an LLM parser's comma-separated ``reply``.

    Each item is mapped through ``lexicon``'s aliases; an item it does not know is kept
    as written for the open tasks (a wrong but real prediction) and dropped for the
    label-matching tasks (it is not on the list).
    """
    closed = task_info(lexicon.task).label_matching
    by_display = {normalize_text(display_name(lexicon.task, lb)): lb for lb in lexicon.labels}
    out: dict[str, None] = {}
    for part in reply.replace("\n", ",").split(","):
        term = part.strip().strip("\"'.;:")
        if not term:
            continue
        label = lexicon.canonical(term) or by_display.get(normalize_text(term))
        if label is None and not closed:
            label = term
        if label is not None:
            out.setdefault(label, None)
    return tuple(out)
