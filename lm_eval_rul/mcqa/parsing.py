"""Read the chosen option out of a free-form answer (generation tasks; ``docs/method.md``).

Rules, tried in order; the first that finds an offered letter wins:

1. ``brackets``: the LAST ``[[X]]`` (the format the prompt asks for);
2. ``answer_phrase``: the LAST "answer is / choose / select / guess is ... X"
   (a few words may sit between the phrase and the letter: "the answer is clearly (B)").
   A negated letter is skipped: in "the answer is not A, it is C" the phrase reads C,
   and a letter right after "or"/"nor" is skipped too, so "the answer is not A or B"
   reads no letter from the phrase (never a guess between A and B);
3. ``option_mention``: the FIRST "option X" or "(X)";
4. ``option_text``: the option whose text appears verbatim (case-insensitive, on word
   boundaries) EARLIEST in the answer; at the same position the longer text wins;
5. otherwise ``unparsed``: no letter. It counts as wrong and as a ``parse_failure``;
   it is never replaced by a random guess.

Letters are upper case (a lone lower-case "a" is the article) and must be among the
offered ones (``[[E]]`` with four options is skipped). Every rule accepts markdown
emphasis around the letter or option text, as chat models write it: ``**B**``,
``*B*``, ``__B__``, ```B```, ``**(B)**``, ``[[**B**]]``, ``option **C**``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from .prompts import letters_for

__all__ = ["PARSE_RULES", "ParsedAnswer", "parse_answer"]

PARSE_RULES: tuple[str, ...] = (
    "brackets",
    "answer_phrase",
    "option_mention",
    "option_text",
    "unparsed",
)

_EMPH = r"[*_`]{0,3}"  # markdown emphasis: **B**, *B*, __B__, `B`, ***B***
_LETTER = (
    r"(?<![A-Za-z])" + _EMPH + r"\(?\[?" + _EMPH + r"([A-Z])" + _EMPH + r"\]?\)?" + _EMPH
) + r"(?![A-Za-z])"
# "not A", and "nor B" / "or B" after a negation: never read as the answer
_NOT_NEGATED = r"(?i:(?<!\bnot\s)(?<!\bnor\s)(?<!\bor\s))"
_BRACKETS = re.compile(r"\[\[\s*" + _EMPH + r"([A-Z])" + _EMPH + r"\s*\]\]")
_PHRASE = re.compile(
    r"(?i:answer\s+is|answer\s*:|choose|chose|select|guess\s+is|guess\s*:)"
    r"[^\S\n]*" + _EMPH + r"[:\-]?" + _EMPH + r"[^\S\n]*"
    r"(?:[^.\n\[\](){}]{0,30}?[^\S\n])?"  # a few words: "most likely", "option", "not A, it is"
     + _NOT_NEGATED + _LETTER
)
_MENTION = re.compile(
    r"(?i:option)" + _EMPH + r"\s+" + _EMPH + r"\(?" + _EMPH + r"([A-Z])" + _EMPH + r"\)?"
    r"(?![A-Za-z])|\(" + _EMPH + r"([A-Z])" + _EMPH + r"\)"
)


@dataclass(frozen=True)
class ParsedAnswer:
    """The letter read from an answer and the rule that read it.

    Attributes:
        letter: The chosen letter, or ``None`` when no rule applied.
        rule: One of :data:`PARSE_RULES`.
    """

    letter: str | None
    rule: str

    @property
    def parsed(self) -> bool:
        """Whether a rule found a letter."""
        return self.letter is not None


def _last(pattern: re.Pattern[str], text: str, offered: set[str]) -> str | None:
    found = None
    for match in pattern.finditer(text):
        letter = next(g for g in match.groups() if g)
        if letter in offered:
            found = letter
    return found


def _first(pattern: re.Pattern[str], text: str, offered: set[str]) -> str | None:
    for match in pattern.finditer(text):
        letter = next(g for g in match.groups() if g)
        if letter in offered:
            return letter
    return None


def _by_text(text: str, options: Sequence[str], letters: Sequence[str]) -> str | None:
    best: tuple[int, int, str] | None = None  # (position, -length, letter)
    for letter, option in zip(letters, options, strict=True):
        needle = " ".join(str(option).split())
        if not needle:
            continue
        match = re.search(
            # on word boundaries; "_violin_" (markdown emphasis) counts, "my_violin" does not
            r"(?<![^\W_])(?<![^\W_]_)"
            + re.escape(needle).replace(r"\ ", r"\s+")
            + r"(?![^\W_])(?!_[^\W_])",
            text,
            re.IGNORECASE,
        )
        if match:
            candidate = (match.start(), -len(needle), letter)
            if best is None or candidate < best:
                best = candidate
    return best[2] if best else None


def parse_answer(
    response: str, options: Sequence[str], letters: Sequence[str] | None = None
) -> ParsedAnswer:
    """Apply the rules of the module docstring to a model's answer.

    Args:
        response: The generated text.
        options: The option texts in the order shown.
        letters: Their letters (default ``A``, ``B``, ... for ``len(options)``).

    Returns:
        The letter (``None`` if unparsed) and the rule that fired.

    >>> parse_answer("I think (A)... final: [[C]]", ["x", "y", "z", "w"])
    ParsedAnswer(letter='C', rule='brackets')
    >>> parse_answer("no idea", ["x", "y", "z", "w"])
    ParsedAnswer(letter=None, rule='unparsed')
    """
    letters = list(letters) if letters is not None else list(letters_for(len(options)))
    if len(letters) != len(options):
        raise ValueError(f"{len(options)} options but {len(letters)} letters: {letters}")
    text = str(response or "")
    offered = set(letters)
    for rule, find in (
        ("brackets", lambda: _last(_BRACKETS, text, offered)),
        ("answer_phrase", lambda: _last(_PHRASE, text, offered)),
        ("option_mention", lambda: _first(_MENTION, text, offered)),
        ("option_text", lambda: _by_text(text, options, letters)),
    ):
        letter = find()
        if letter is not None:
            return ParsedAnswer(letter, rule)
    return ParsedAnswer(None, "unparsed")
