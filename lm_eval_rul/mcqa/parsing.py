"""Read the chosen option out of a free-form answer (generation tasks; ``docs/method.md``).

This is the default parser (``--metadata '{"parser": "default"}'``); the reference
codebases' own extraction rules are in :mod:`.reference_parsing`.

Rules, tried in order; the first that finds an offered letter wins:

1. ``brackets``: the LAST ``[[X]]`` (the format the prompt asks for);
2. ``letter_only``: the whole answer is one letter: ``B``, ``B.``, ``B)``, ``(B)``,
   ``**B**``;
3. ``answer_phrase``: the LAST phrase that names ONE letter: "answer is / answer: /
   choose / select / guess is ... X" (a few words may sit between the phrase and the
   letter: "the answer is clearly (B)"), and "option is X" / "it is X" (the letter right
   after the phrase; a bare letter must end the clause, so "it is A minor" is no answer).
   A negated letter is skipped ("the answer is not A, it is C" reads C; "neither A nor
   B", "C rather than A", "B instead of A", "none of A" negate the letter after them;
   after a negation, "or B" / "nor B" is negated too). A phrase naming two different letters
   ("the answer is A or B", "answer: B, C") reads nothing: never a guess between them;
4. ``option_mention``: the FIRST "option X" or "(X)";
5. ``option_text``: the option whose text appears verbatim (case-insensitive, on word
   boundaries) EARLIEST in the answer; at the same position the longer text wins;
6. otherwise ``unparsed``: no letter. It counts as wrong and as a ``parse_failure``;
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
    "letter_only",
    "answer_phrase",
    "option_mention",
    "option_text",
    "unparsed",
)

_EMPH = r"[*_`]{0,3}"  # markdown emphasis: **B**, *B*, __B__, `B`, ***B***
_LETTER = re.compile(
    r"(?<![A-Za-z])"
    + _EMPH
    + r"(\(?\[?)"
    + _EMPH
    + r"([A-Z])"
    + _EMPH
    + r"(\]?\)?)"
    + _EMPH
    + r"(?![A-Za-z])"
)
_BRACKETS = re.compile(r"\[\[\s*" + _EMPH + r"([A-Z])" + _EMPH + r"\s*\]\]")
_ONLY_LETTER = re.compile(
    r"\s*[\"']?"
    + _EMPH
    + r"[(\[]?"
    + _EMPH
    + r"([A-Z])"
    + _EMPH
    + r"[)\]]?"
    + _EMPH
    + r"[.):]?"
    + _EMPH
    + r"[\"']?\s*"
)
# phrases after which a few words may come before the letter
_PHRASE = re.compile(
    r"(?i:\banswer\s+is|\banswer\s*:|\bchoose|\bchose|\bselect|\bguess\s+is|\bguess\s*:)"
)
# phrases whose letter must come right after them ("it is B.", "the correct option is (C)")
_STRICT_PHRASE = re.compile(r"(?i:\boption\s+is|\bit\s+is|\bit['’]s)")
_STRICT_START = re.compile(r"[^\S\n]*" + _EMPH + r"[:\-]?" + _EMPH + r"[^\S\n]*(?=[*_`(\[]*[A-Z])")
# a clause ends at a sentence stop or a line break (a "." right after a letter included)
_CLAUSE_END = re.compile(r"[.;!?\n]")
_CONTINUES = re.compile(r"\s*[,:)\]]")  # "it is B, the violin": the letter ends its clause
_WINDOW = 40  # characters after a phrase where its letter may be
# words that negate the letter right after them: "not A", "neither A nor B", "C rather
# than A", "B instead of A", "none of A or B"
_NEGATION = re.compile(r"(?i:\b(?:not|nor|neither|none\s+of|rather\s+than|instead\s+of)\s+$)")
_ALTERNATIVE = re.compile(r"(?i:\bor\s+$)")
_MENTION = re.compile(
    r"(?i:option)" + _EMPH + r"\s+" + _EMPH + r"\(?" + _EMPH + r"([A-Z])" + _EMPH + r"\)?"
    r"(?![A-Za-z])|\(" + _EMPH + r"([A-Z])" + _EMPH + r"\)"
)


@dataclass(frozen=True)
class ParsedAnswer:
    """The letter read from an answer and the rule that read it.

    Attributes:
        letter: The chosen letter, or ``None`` when no rule applied. A reference parser
            (:mod:`.reference_parsing`) may return a letter that was not offered, as its
            original does; such an answer chooses no option.
        rule: The rule that fired (:data:`PARSE_RULES` for this parser).
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


def _only_letter(text: str, offered: set[str]) -> str | None:
    match = _ONLY_LETTER.fullmatch(text)
    return match.group(1) if match and match.group(1) in offered else None


def _named_letters(window: str, offered: set[str]) -> list[str]:
    """The offered letters a clause names, negated ones ("not A", "not A or B") left out."""
    named: list[str] = []
    negated = False
    for match in _LETTER.finditer(window):
        letter = match.group(2)
        if letter not in offered:
            continue
        before = window[: match.start()]
        negated = bool(_NEGATION.search(before)) or (negated and bool(_ALTERNATIVE.search(before)))
        if not negated:
            named.append(letter)
    return named


def _clause(text: str, start: int) -> str:
    window = text[start : start + _WINDOW]
    end = _CLAUSE_END.search(window)
    return window[: end.start()] if end else window


def _phrase_letter(text: str, offered: set[str]) -> str | None:
    """The letter of the LAST answer phrase that names exactly one letter."""
    found: list[tuple[int, str]] = []
    for match in _PHRASE.finditer(text):
        named = set(_named_letters(_clause(text, match.end()), offered))
        if len(named) == 1:
            found.append((match.start(), named.pop()))
    for match in _STRICT_PHRASE.finditer(text):
        start = _STRICT_START.match(text, match.end())
        if start is None:
            continue
        clause = _clause(text, start.end())
        first = _LETTER.match(clause)
        if first is None or first.group(2) not in offered:
            continue
        rest = clause[first.end() :]
        if _is_bare(first.group(0)) and rest.strip() and not _CONTINUES.match(rest):
            continue  # "it is A minor": a bare capital followed by more words is no answer
        if set(_named_letters(clause, offered)) == {first.group(2)}:
            found.append((match.start(), first.group(2)))
    return max(found)[1] if found else None


def _is_bare(token: str) -> bool:
    """A letter written without brackets, parentheses or emphasis (``B``, not ``(B)``)."""
    return len(token.strip()) == 1


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
    >>> parse_answer("**B**", ["x", "y", "z", "w"])
    ParsedAnswer(letter='B', rule='letter_only')
    >>> parse_answer("I think it is B.", ["x", "y", "z", "w"])
    ParsedAnswer(letter='B', rule='answer_phrase')
    >>> parse_answer("The answer is A or B", ["x", "y", "z", "w"])
    ParsedAnswer(letter=None, rule='unparsed')
    """
    letters = list(letters) if letters is not None else list(letters_for(len(options)))
    if len(letters) != len(options):
        raise ValueError(f"{len(options)} options but {len(letters)} letters: {letters}")
    text = str(response or "")
    offered = set(letters)
    for rule, find in (
        ("brackets", lambda: _last(_BRACKETS, text, offered)),
        ("letter_only", lambda: _only_letter(text, offered)),
        ("answer_phrase", lambda: _phrase_letter(text, offered)),
        ("option_mention", lambda: _first(_MENTION, text, offered)),
        ("option_text", lambda: _by_text(text, options, letters)),
    ):
        letter = find()
        if letter is not None:
            return ParsedAnswer(letter, rule)
    return ParsedAnswer(None, "unparsed")
