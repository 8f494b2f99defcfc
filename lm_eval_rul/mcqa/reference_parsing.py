"""The reference codebases' answer extraction, replayed rule for rule, quirks included.

* :func:`parse_answer_release`: the RUListening authors' ``extract_answer``
  (``ExampleAudioEval``). Selected for the generation tasks with
  ``--metadata '{"parser": "release"}'``, so their published numbers can be reproduced.
  Its quirks, kept on purpose: the letter regexes accept A-E whatever the number of
  options (``[[E]]`` with four options is read as E, an answer that chooses no option);
  the phrase rule is case-insensitive, so "the answer is a synth" reads A; "option X" /
  "(X)" is looked up in letter order, not text order; an option's text counts when it is
  a substring of the answer ("piano" inside "electric piano"); nothing is negation-aware.
* :func:`muchomusic_official_answer`: MuChoMusic's official ``extract_responses``
  (``muchomusic_eval/scoring.py``), the scorer of the ``muchomusic_official`` task. Its
  quirks: the output is cut after the LAST "The correct answer is:"; the first rule looks
  at single CHARACTERS, so "B" counts when it is the only one of A, B, C, D anywhere in
  the rest (in "Bass", say) and "A or B" has two; an option counts when its lower-cased
  text is a substring of the lower-cased output.

:data:`PARSERS` names the parsers a generation task can use; :func:`parse_with` applies one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from ..errors import UserInputError
from ..questions.metadata_naming import metadata_key
from .mmau_parsing import mmau_lmms_answer, mmau_official_answer
from .parsing import ParsedAnswer, parse_answer
from .prompts import MUCHOMUSIC_ANSWER_PREFIX, letters_for

__all__ = [
    "RELEASE_RULES",
    "OFFICIAL_RULES",
    "PARSERS",
    "DEFAULT_PARSER",
    "parse_answer_release",
    "muchomusic_official_answer",
    "parse_with",
    "check_parser",
    "UnknownParserError",
]

RELEASE_RULES: tuple[str, ...] = (
    "brackets",
    "answer_phrase",
    "option_mention",
    "option_text",
    "unparsed",
)
OFFICIAL_RULES: tuple[str, ...] = ("letter", "option_text", "unanswered")

_RELEASE_BRACKETS = re.compile(r"\[\[([A-E])\]\]")
_RELEASE_PHRASE = re.compile(
    r"(?:answer is|chose|choose|select|guess is|I choose|I select|I guess) ([A-E])\b",
    re.IGNORECASE,
)
_RELEASE_LETTERS = ("A", "B", "C", "D", "E")
_OFFICIAL_LETTERS = ("A", "B", "C", "D")


def parse_answer_release(
    response: str, options: Sequence[str], letters: Sequence[str] | None = None
) -> ParsedAnswer:
    """The RUListening authors' answer extraction (see the module docstring).

    Args:
        response: The generated text.
        options: The option texts in the order shown.
        letters: Their letters (default ``A``, ``B``, ...).

    Returns:
        The letter their code returns (``None`` for their empty string) and the rule. The
        letter may be one that was not offered; it then chooses no option.

    >>> opts = ["Piano", "Electric piano", "Violin", "Drums"]
    >>> parse_answer_release("the answer is a synth", opts)
    ParsedAnswer(letter='A', rule='answer_phrase')
    >>> parse_answer_release("Electric piano, not (D)", opts)
    ParsedAnswer(letter='D', rule='option_mention')
    >>> parse_answer_release("I hear an electric piano", opts)
    ParsedAnswer(letter='A', rule='option_text')
    """
    letters = list(letters) if letters is not None else list(letters_for(len(options)))
    if len(letters) != len(options):
        raise ValueError(f"{len(options)} options but {len(letters)} letters: {letters}")
    text = str(response or "")
    matches = _RELEASE_BRACKETS.findall(text)
    if matches:
        return ParsedAnswer(matches[-1], "brackets")
    matches = _RELEASE_PHRASE.findall(text)
    if matches:
        return ParsedAnswer(matches[-1].upper(), "answer_phrase")
    for letter in _RELEASE_LETTERS:
        if f"option {letter}" in text or f"Option {letter}" in text or f"({letter})" in text:
            return ParsedAnswer(letter, "option_mention")
    lowered = text.lower()
    for letter, option in zip(letters, options, strict=True):
        if option and str(option).lower() in lowered:
            return ParsedAnswer(letter, "option_text")
    return ParsedAnswer(None, "unparsed")


def muchomusic_official_answer(
    output: str, options: Sequence[str], letters: Sequence[str] | None = None
) -> ParsedAnswer:
    """MuChoMusic's official answer extraction (see the module docstring).

    Args:
        output: The model's output (a prompt echoed before it is cut away).
        options: The option texts in the order shown.
        letters: Accepted for a uniform signature; the official code always uses A-D.

    Returns:
        The letter (``None`` when unanswered) and the rule: ``letter``, ``option_text``
        or ``unanswered``.

    >>> opts = ["Four on the floor", "Off-beat syncopation", "Scat singing", "Waltz"]
    >>> muchomusic_official_answer("B", opts)
    ParsedAnswer(letter='B', rule='letter')
    >>> muchomusic_official_answer("A or B", opts)
    ParsedAnswer(letter=None, rule='unanswered')
    >>> muchomusic_official_answer("it is scat singing", opts)
    ParsedAnswer(letter='C', rule='option_text')
    """
    del letters  # the official scorer's letters are fixed
    rest = str(output or "").split(MUCHOMUSIC_ANSWER_PREFIX)[-1].strip()
    present = set(_OFFICIAL_LETTERS).intersection(rest)
    if len(present) == 1:
        return ParsedAnswer(present.pop(), "letter")
    normalized = rest.lower().strip()
    for index, option in enumerate(str(o).lower().strip() for o in options):
        if option in normalized:
            return ParsedAnswer(_OFFICIAL_LETTERS[index] if index < 4 else None, "option_text")
    return ParsedAnswer(None, "unanswered")


DEFAULT_PARSER = "default"
#: Parser name -> ``parse(response, options, letters)`` for the generation tasks.
PARSERS: dict[str, Callable[..., ParsedAnswer]] = {
    DEFAULT_PARSER: parse_answer,
    "release": parse_answer_release,
    "muchomusic_official": muchomusic_official_answer,
    "mmau_official": mmau_official_answer,  # MMAU's string-match rule (mmau_parsing)
    "mmau_lmms": mmau_lmms_answer,  # lmms-eval's mmau letter reading, never a random letter
}


class UnknownParserError(UserInputError, ValueError):
    """``--metadata parser=...`` names no parser."""


def check_parser(name: object, *, key: str = "parser") -> str:
    """``name`` if it names a parser of :data:`PARSERS`.

    Raises:
        UnknownParserError: naming the parsers there are.
    """
    if not isinstance(name, str) or name not in PARSERS:
        raise UnknownParserError(
            f"{metadata_key(key)}={name!r} is not a parser; use one of {sorted(PARSERS)} "
            f"({DEFAULT_PARSER!r} is ours, 'release' the RUListening authors' extraction)"
        )
    return str(name)


def parse_with(
    parser: str, response: str, options: Sequence[str], letters: Sequence[str]
) -> tuple[ParsedAnswer, int | None]:
    """Parse ``response`` with the named parser; returns the answer and the chosen option index.

    The index is ``None`` when nothing was parsed or the letter was not offered.

    >>> parse_with("release", "[[E]]", ["a", "b", "c", "d"], ["A", "B", "C", "D"])
    (ParsedAnswer(letter='E', rule='brackets'), None)
    """
    parsed = PARSERS[check_parser(parser)](response, options, letters)
    letters = list(letters)
    index = letters.index(parsed.letter) if parsed.letter in letters else None
    return parsed, index
