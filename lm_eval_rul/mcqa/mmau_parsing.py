"""MMAU's answer readers, replayed rule for rule: the authors' scorer and lmms-eval's.

* :func:`mmau_string_match`: ``string_match`` of MMAU's ``evaluation.py``
  (``Sakshi113/MMAU``), the official rule. Words are the lower-cased ``\\b\\w+\\b``
  tokens (Python's Unicode ``\\w``). A prediction matches the answer when (1) every word
  of the answer is in it and (2) none of the words of the other choices is, a wrong
  choice's words counted without those it shares with the answer, and a choice with
  exactly the answer's word set counting none. An empty prediction (no word) never
  matches. :func:`mmau_official_answer` turns the rule into "which choice was given".
* :func:`mmau_lmms_answer`: lmms-eval's ``mmau`` letter reading (MMMU-style: ``(A)``,
  then `` A ``, then ``A.``; the last found when several), WITHOUT its random letter
  when none is found: that answer is unanswered, never a guess.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .parsing import ParsedAnswer
from .prompts import letters_for

__all__ = [
    "MMAU_OFFICIAL_RULES",
    "MMAU_LMMS_RULES",
    "mmau_words",
    "mmau_string_match",
    "mmau_matching_choices",
    "mmau_official_answer",
    "mmau_lmms_answer",
]

MMAU_OFFICIAL_RULES: tuple[str, ...] = ("string_match", "no_match")
MMAU_LMMS_RULES: tuple[str, ...] = ("parenthesis", "spaced", "period", "unanswered")

_WORD = re.compile(r"\b\w+\b")
#: What lmms-eval strips from both ends of a response, one character kind after another.
_LMMS_STRIP = (",", ".", "!", "?", ";", ":", "'")


def mmau_words(text: str) -> set[str]:
    """The word set MMAU's scorer compares (``set(re.findall(r'\\b\\w+\\b', text.lower()))``).

    >>> sorted(mmau_words("Electric-Guitar, 4/4!"))
    ['4', 'electric', 'guitar']
    """
    return set(_WORD.findall(str(text).lower()))


def mmau_string_match(answer: str, prediction: str, choices: Sequence[str]) -> bool:
    """MMAU's official rule: does the free-text ``prediction`` give ``answer``?

    >>> choices = ["Piano", "Electric piano", "Violin", "Drums"]
    >>> mmau_string_match("Piano", "It is a piano.", choices)
    True
    >>> mmau_string_match("Piano", "An electric piano", choices)
    False
    >>> mmau_string_match("Electric piano", "An electric piano", choices)
    True
    >>> mmau_string_match("Piano", "", choices)
    False
    """
    prediction_words = mmau_words(prediction)
    answer_words = mmau_words(answer)
    if not prediction_words:
        return False
    wrong_words: set[str] = set()
    for choice in choices:
        words = mmau_words(choice)
        if words != answer_words:
            wrong_words.update(words - answer_words)
    return answer_words.issubset(prediction_words) and prediction_words.isdisjoint(wrong_words)


def mmau_matching_choices(prediction: str, choices: Sequence[str]) -> list[int]:
    """Indices of the choices the official rule accepts ``prediction`` for."""
    return [i for i, c in enumerate(choices) if mmau_string_match(c, prediction, choices)]


def mmau_official_answer(
    prediction: str, options: Sequence[str], letters: Sequence[str] | None = None
) -> ParsedAnswer:
    """The choice a free-text answer gives under MMAU's official rule.

    The letter of the choice :func:`mmau_string_match` accepts the prediction for (rule
    ``string_match``). When it accepts it for several choices of the same text (the
    release repeats a few choices), the first; for several different texts (two choices
    with the same word set) or none: no letter (``no_match``). Accuracy itself is
    :func:`mmau_string_match` of the answer, which this agrees with whenever it names
    a letter.

    >>> mmau_official_answer("a violin", ["Piano", "Electric piano", "Violin", "Drums"])
    ParsedAnswer(letter='C', rule='string_match')
    >>> mmau_official_answer("piano or violin", ["Piano", "Violin"])
    ParsedAnswer(letter=None, rule='no_match')
    """
    letters = list(letters) if letters is not None else list(letters_for(len(options)))
    if len(letters) != len(options):
        raise ValueError(f"{len(options)} options but {len(letters)} letters: {letters}")
    matching = mmau_matching_choices(prediction, options)
    if matching and len({options[i] for i in matching}) == 1:
        return ParsedAnswer(letters[matching[0]], "string_match")
    return ParsedAnswer(None, "no_match")


def mmau_lmms_answer(
    response: str, options: Sequence[str], letters: Sequence[str] | None = None
) -> ParsedAnswer:
    """lmms-eval's ``mmau`` letter reading (``parse_multi_choice_response``), no guessing.

    The response is stripped of ``, . ! ? ; : '`` at both ends (each kind in turn) and
    padded with a space; then, over the offered letters in order: ``(X)`` anywhere;
    else `` X `` between spaces; else ``X.``. Several candidates: the one whose last
    `` X `` is latest (the first candidate when none is spaced, as ``np.argmax`` picks).
    None found: unanswered (lmms-eval draws a random letter there; we never do).

    >>> opts = ["Piano", "Violin", "Drums", "Bass"]
    >>> mmau_lmms_answer("B", opts), mmau_lmms_answer("(C) Drums", opts)
    (ParsedAnswer(letter='B', rule='spaced'), ParsedAnswer(letter='C', rule='parenthesis'))
    >>> mmau_lmms_answer("I think A or maybe D here", opts)
    ParsedAnswer(letter='D', rule='spaced')
    >>> mmau_lmms_answer("No idea.", opts)
    ParsedAnswer(letter=None, rule='unanswered')
    """
    letters = list(letters) if letters is not None else list(letters_for(len(options)))
    if len(letters) != len(options):
        raise ValueError(f"{len(options)} options but {len(letters)} letters: {letters}")
    text = str(response or "")
    for char in _LMMS_STRIP:
        text = text.strip(char)
    text = f" {text} "
    rules = (
        ("parenthesis", lambda x: f"({x})" in text),
        ("spaced", lambda x: f" {x} " in text),
        ("period", lambda x: f"{x}." in text),
    )
    for rule, found in rules:
        candidates = [x for x in letters if found(x)]
        if len(candidates) == 1:
            return ParsedAnswer(candidates[0], rule)
        if candidates:
            starts = [text.rfind(f" {x} ") for x in candidates]
            return ParsedAnswer(candidates[starts.index(max(starts))], rule)
    return ParsedAnswer(None, "unanswered")
