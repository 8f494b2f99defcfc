"""Prompts of the factual tasks: one table of templates, task x variant.

:data:`TEMPLATES` holds every question the model is asked, ``{labels}`` marking where
a list variant enumerates the candidate labels (display names, comma-separated, in
vocabulary order: the same for every item). Every task has the ``open`` ("what do you
hear") and ``list`` variants; instrument, composer and genre add two more open
phrasings, ``open_casual`` and ``open_formal`` (:data:`PHRASINGS`: casual to formal, then
the list). The robustness studies' questions are keys of the same table:

* ``binary`` ("Between {first} and {second}, ..."; :func:`binary_prompt` adds the
  generation tail, or the lettered options and "The answer is" for log-likelihood
  scoring of `` A`` / `` B``);
* ``truefalse`` ("True or false: ... {label} ..."; :func:`truefalse_prompt` adds the
  tail, "The answer is" before `` true`` / `` false`` for log-likelihood scoring).

:func:`parser_prompt` is the instruction for an LLM parser (the paper's method) with
the eight rules; :func:`read_parser_reply` turns its comma-separated reply into
canonical labels through the same lexicon as the deterministic parser.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .reading.genres import GenreTree
from .reading.labels import display_name, task_info
from .reading.lexicon import Lexicon, normalize_text

__all__ = [
    "PROMPT_VARIANTS",
    "PHRASINGS",
    "BINARY_TASKS",
    "TEMPLATES",
    "SCORINGS",
    "BINARY_TAILS",
    "TRUEFALSE_TAILS",
    "BINARY_LETTERS",
    "TRUEFALSE_WORDS",
    "candidate_labels",
    "prompt",
    "binary_prompt",
    "truefalse_prompt",
    "statement_label",
    "PARSER_PROMPT_VERSION",
    "parser_prompt",
    "parser_retry_prompt",
    "parser_reply_terms",
    "read_parser_reply",
]

#: The variants every task has (more keys may follow in :data:`TEMPLATES`).
PROMPT_VARIANTS: tuple[str, ...] = ("open", "list")
#: The phrasing study: task -> its four phrasings, three open (casual to formal) and the list.
PHRASINGS: dict[str, tuple[str, ...]] = {
    task: ("open_casual", "open", "open_formal", "list")
    for task in ("instrument", "composer", "genre")
}
#: The tasks with a binary-choice question (MusicNet and FMA).
BINARY_TASKS: tuple[str, ...] = ("instrument", "composer", "genre")
#: How a binary or true/false answer is read: ``generate`` (free text, parsed) or
#: ``loglikelihood`` (the options' log-likelihoods, the harness's multiple-choice path).
SCORINGS: tuple[str, ...] = ("generate", "loglikelihood")

_LIST_TAIL = " Answer with the names from the list that apply, separated by commas."

TEMPLATES: dict[str, dict[str, str]] = {
    "instrument": {
        "open_casual": "Which instruments are playing here?",
        "open": "What instruments do you hear in this recording?",
        "open_formal": "Identify every musical instrument that can be heard in this recording.",
        "list": "Which of these instruments do you hear in this recording: {labels}?" + _LIST_TAIL,
        "binary": "Between {first} and {second}, which instrument do you hear in this recording?",
        "truefalse": "True or false: the {label} can be heard in this recording.",
    },
    "composer": {
        "open_casual": "Who wrote this piece?",
        "open": "Who composed the music in this recording?",
        "open_formal": "Identify the composer of the music in this recording.",
        "list": "Which of these composers wrote the music in this recording: {labels}?"
        + _LIST_TAIL,
        "binary": "Between {first} and {second}, who composed the music in this recording?",
        "truefalse": "True or false: the music in this recording was composed by {label}.",
    },
    "genre": {
        "open_casual": "What kind of music is this?",
        "open": "What genre is the music in this recording?",
        "open_formal": "Identify the musical genre of this recording.",
        "list": "Which of these genres describe the music in this recording: {labels}?"
        + _LIST_TAIL,
        "binary": "Between {first} and {second}, which genre describes the music in this "
        "recording?",
        "truefalse": "True or false: the music in this recording belongs to the {label} genre.",
    },
    "regional": {
        "open": "What regional or cultural musical style do you hear in this recording?",
        "list": "Which of these regional styles do you hear in this recording: {labels}?"
        + _LIST_TAIL,
        "truefalse": "True or false: the music in this recording shows the {label} regional "
        "style.",
    },
    "mood": {
        "open": "What is the mood of the music in this recording?",
        "list": "Which of these moods describe the music in this recording: {labels}?" + _LIST_TAIL,
        "truefalse": "True or false: the mood of the music in this recording is {label}.",
    },
    "timesig": {
        "open": "What is the time signature of the music in this recording?",
        "list": "Which of these time signatures does the music in this recording use: "
        "{labels}?" + _LIST_TAIL,
        "truefalse": "True or false: the music in this recording is in {label} time.",
    },
}
#: What follows a binary question: per scoring (``loglikelihood``: `` A`` or `` B`` next).
BINARY_TAILS: dict[str, str] = {
    "generate": " Answer with one of the two.",
    "loglikelihood": " Options: (A) {first} (B) {second}. Answer with the letter of the "
    "option. The answer is",
}
#: What follows a true/false statement, per scoring (``loglikelihood``: `` true`` or
#: `` false`` next).
TRUEFALSE_TAILS: dict[str, str] = {
    "generate": " Answer with true or false.",
    "loglikelihood": " Answer with true or false. The answer is",
}
#: The continuations the log-likelihood scorings compare (after the harness's " ").
BINARY_LETTERS: tuple[str, str] = ("A", "B")
TRUEFALSE_WORDS: tuple[str, str] = ("true", "false")


def candidate_labels(task: str, genre_tree: GenreTree | None = None) -> tuple[str, ...]:
    """The canonical labels a list prompt enumerates (genre: every FMA title)."""
    if task == "genre":
        if genre_tree is None:
            raise ValueError("the genre candidates are FMA's titles: pass genre_tree")
        return genre_tree.all_titles
    return task_info(task).candidates


def _template(task: str, variant: str) -> str:
    try:
        return TEMPLATES[task][variant]
    except KeyError:
        task_info(task)
        raise ValueError(
            f"{task} has no prompt variant {variant!r}; use one of {', '.join(TEMPLATES[task])}"
        ) from None


def prompt(task: str, variant: str = "open", *, genre_tree: GenreTree | None = None) -> str:
    """The question of ``task`` in a label-set ``variant`` (list variants enumerate the candidates).

    The binary and true/false questions have their own functions
    (:func:`binary_prompt`, :func:`truefalse_prompt`).

    Examples
    --------
    >>> prompt("timesig", "list").split(":")[1].split("?")[0]
    ' 4/4, 3/4, 6/8, 5/4, 7/8, 7/4, 9/8, irregular, variable'
    """
    if variant in ("binary", "truefalse"):
        raise ValueError(f"the {variant} question takes labels: use {variant}_prompt()")
    template = _template(task, variant)
    if "{labels}" not in template:
        return template
    names = [display_name(task, label) for label in candidate_labels(task, genre_tree)]
    return template.format(labels=", ".join(names))


def _scoring(scoring: str) -> str:
    if scoring not in SCORINGS:
        raise ValueError(f"scoring must be one of {', '.join(SCORINGS)}, got {scoring!r}")
    return scoring


def binary_prompt(task: str, first: str, second: str, *, scoring: str = "generate") -> str:
    """"Between ``first`` and ``second``, ..." (canonical labels, shown as display names).

    Examples
    --------
    >>> binary_prompt("composer", "Bach", "Ravel")
    'Between Bach and Ravel, who composed the music in this recording? Answer with one of the two.'
    >>> binary_prompt("instrument", "violin", "oboe", scoring="loglikelihood").split("? ")[1]
    'Options: (A) violin (B) oboe. Answer with the letter of the option. The answer is'
    """
    names = {"first": display_name(task, first), "second": display_name(task, second)}
    template = _template(task, "binary") + BINARY_TAILS[_scoring(scoring)]
    return template.format(**names)


def statement_label(task: str, label: str) -> str:
    """How ``label`` reads inside a true/false statement (moods in lower case)."""
    name = display_name(task, label)
    return name.lower() if task == "mood" else name


def truefalse_prompt(task: str, label: str, *, scoring: str = "generate") -> str:
    """"True or false: ..." about one canonical ``label`` of ``task``.

    Examples
    --------
    >>> truefalse_prompt("mood", "sad")
    'True or false: the mood of the music in this recording is sad. Answer with true or false.'
    """
    template = _template(task, "truefalse") + TRUEFALSE_TAILS[_scoring(scoring)]
    return template.format(label=statement_label(task, label))


#: Version of the LLM parser's instruction (:func:`parser_prompt`, :func:`parser_retry_prompt`)
#: and of how its replies are read; part of the parser cache's scope.
PARSER_PROMPT_VERSION = "llm-parser-3"

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

#: How the rules read the answers models give (the lexicon parser's readings, spelled out).
_PARSER_READING = """Reading the response:
- A term the response rejects or negates is not mentioned ("Is it a clarinet? No, it's an \
oboe." gives oboe; "no drums" gives nothing; "nothing Celtic about it" gives nothing).
- A player names the instrument ("a pianist" is piano, "a cellist" is cello).
- Correct misspellings to the canonical form ("Beethovan" is Beethoven, "vilolin" is violin).
- A word used in another sense is not a mention ("bass line" is not the instrument bass, \
"the violin enters piano" is a dynamic, "classical guitar" is an instrument and not the \
genre Classical, "sung in Latin" is a language, "rock-solid" is not Rock).
- A family or class of instruments is not an instrument ("strings", "brass", "a keyboard \
instrument", "a woodwind quintet" give nothing of their own).
- Words for a meter are time signatures ("waltz time" is 3/4, "common time" is 4/4)."""


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
        _PARSER_READING,
    ]
    if info.label_matching:
        names = [display_name(task, label) for label in (labels or info.candidates)]
        reach = (
            "a regional style named as an influence counts"
            if task == "regional"
            else "a mood counts only when a mood word is used"
        )
        lines.append(
            f"Choose only from these {info.noun}, picking those the response reflects "
            f'(for example, "Egyptian" reflects Middle Eastern): {", ".join(names)}. Map '
            f"each {info.noun[:-1]} the response names onto the label of this list that fits "
            'it best ("upbeat" -> Energetic, "heartbroken" -> Sad, "Irish" -> Celtic); '
            f"{reach}."
        )
    lines.append(f"Response: {response}")
    lines.append(f"{info.noun.capitalize()}:")
    return "\n\n".join(lines)


def parser_retry_prompt(task: str, problem: str) -> str:
    """The follow-up message after a malformed parser reply (what was wrong, what to send)."""
    noun = task_info(task).noun
    return (
        f"Your reply could not be read ({problem}). Reply again with only the {noun}, as a "
        f"comma-separated list and nothing else, or with an empty reply if no {noun} are "
        "mentioned."
    )


_BULLET = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)])\s+")
_NOTHING = {"", "none", "n/a", "na", "nothing", "empty", "(empty)", "[]", '""', "''", "-", "none."}


def parser_reply_terms(reply: str, task: str) -> list[str]:
    """The items of a parser reply: split at commas and line breaks, without bullets, quotes,
    a leading echo of the final prompt line ("Instruments:") or a "none" placeholder.

    Examples
    --------
    >>> parser_reply_terms("Instruments: piano, violin", "instrument")
    ['piano', 'violin']
    >>> parser_reply_terms("- Bach\\n- Mozart", "composer"), parser_reply_terms("None", "mood")
    (['Bach', 'Mozart'], [])
    """
    text = (reply or "").strip().strip("`").strip()
    echo = task_info(task).noun + ":"
    if text.lower().startswith(echo):
        text = text[len(echo) :]
    if normalize_text(text) in _NOTHING:
        return []
    terms = []
    for line in text.splitlines():
        for part in line.split(","):
            term = _BULLET.sub("", part).strip().strip("\"'.;:").strip()
            if term and normalize_text(term) not in _NOTHING:
                terms.append(term)
    return terms


def read_parser_reply(reply: str, lexicon: Lexicon) -> tuple[str, ...]:
    """Canonical labels of an LLM parser's comma-separated ``reply``.

    Each item (:func:`parser_reply_terms`) is mapped through ``lexicon``'s aliases; an item
    it does not know is kept as written for the open tasks (a wrong but real prediction)
    and dropped for the label-matching tasks (it is not on the list).
    """
    closed = task_info(lexicon.task).label_matching
    by_display = {normalize_text(display_name(lexicon.task, lb)): lb for lb in lexicon.labels}
    out: dict[str, None] = {}
    for term in parser_reply_terms(reply, lexicon.task):
        label = lexicon.canonical(term) or by_display.get(normalize_text(term))
        if label is None and not closed:
            label = term
        if label is not None:
            out.setdefault(label, None)
    return tuple(out)
