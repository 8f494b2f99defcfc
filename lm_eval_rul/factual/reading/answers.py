"""Reading a generated answer to a true/false or a binary-choice question.

**True/false** (:func:`read_truefalse`): an echo of "true or false" is removed, and so are
polite and hedging phrases that hold a yes/no word without answering ("No problem!", "no
doubt", "not sure", "no idea"). A verdict word then decides: "true", "correct", "right"
(true) or "false", "incorrect", "wrong" (false), the first one outside a question,
reversed after "not" / "n't" ("that's not true"); without one, the first answer word:
"yes", "yep", "yeah", "absolutely", "definitely", "certainly", "indeed", "of course"
(true) or "no", "nope", "nah", "not really", "not at all", "definitely not", "of
course not", "I don't think so", "unlikely", "doubtful", "probably not" (false); a lone
"T"/"F"; "probably"/"likely" as the whole answer (true). "Yes and no", "neither true nor
false", "partly true", "not necessarily", "I can't really tell", "I am unable to listen"
and an answer with no such word are unreadable (None, never a guess).

**Binary choice** (:func:`read_choice`): the lexicon parser reads the answer (negation,
misspellings, agent nouns: "played by a cellist" is the cello). An echo of both
options ("Between oboe and clarinet, ...", "Haydn or Brahms?") is set aside; exactly one
option named in what is left is the choice. When both are still named, the one named
after the last verdict cue ("I'd say", "I think", "it's", "I'd lean toward", "answer:")
is, if only one is; else the one not set aside ("choose X over Y", "X (though it could be
Y)", "X. A Y would sound more nasal."). An echo also reads "Of A and B, ...", "Both A and B ...".
Ordinals read too ("the first one", "the former", "option B", "(B)", "B", "the latter"), when no
option is named or they agree. Both, neither, or a contradiction: None.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from .lexicon import Lexicon, normalize_text
from .parser import ParseResult, parse_labels
from .scopes import RAISED_IN_QUESTION

__all__ = ["Reading", "read_truefalse", "read_choice"]


@dataclass(frozen=True)
class Reading:
    """What an answer says and why: ``value`` (True/False, an option index, or None)."""

    value: bool | int | None
    why: tuple[str, ...] = field(default_factory=tuple)


_ECHO = re.compile(r"\btrue\s*(?:or|/)\s*false\b")
_UNDECIDED = re.compile(
    r"\b(?:yes and no|neither true nor false|both true and false|(?:partially|partly|half|"
    r"somewhat) (?:true|false|correct))\b"
)
_POLITE = re.compile(
    r"\b(?:no (?:problem|worries|doubt(?: about it)?|question(?: about it)?|idea)|"
    r"not (?:sure|certain|entirely sure)|(?:i'm|i am) not sure|without (?:a )?doubt|"
    r"no matter|not only|if not|whether or not|not to mention|"
    r"(?:can't|cannot|can not|couldn't) (?:really |quite |honestly )?(?:tell|say|determine|"
    r"be sure|know|decide|confirm)|not necessarily|not always|"
    r"(?:(?:i'm|i am) (?:not able|unable)|i (?:can't|cannot)) (?:to )?(?:listen|hear|access)"
    r"\b[^.!?]*|"
    r"(?:don't|do not) know|(?:hard|difficult|impossible) to (?:say|tell))\b"
)
_VERDICT = re.compile(
    r"\b(?:(?P<neg>not|n't|never)\s+(?:\w+\s+)?)?"
    r"(?P<word>true|false|correct|incorrect|wrong|accurate|inaccurate)\b"
)
_VERDICT_VALUE = {"true": True, "correct": True, "accurate": True}
_ANSWER = re.compile(
    r"\b(?P<false>definitely not|certainly not|absolutely not|of course not|not really|"
    r"not at all|not quite|i (?:don't|do not) think so|no way|nope|nah|no|negative|"
    r"probably not|likely not|not|"
    r"(?:very |highly |quite )?unlikely|improbable|doubtful|i doubt it)\b"
    r"|\b(?P<true>yes|yep|yeah|yup|absolutely|definitely|certainly|indeed|of course|"
    r"affirmative|i think so|i believe so|sure|that'?s right|that is right|"
    r"(?:(?:very |most |quite )?likely|probably)(?=\s*(?:[.!,;]|$)))\b|(?P<nt>n't)\b"
)
_QUESTION = re.compile(r"[^.!?\n]*\?")
_LONE_LETTER = re.compile(r"^\W*(?:(?P<t>t)|(?P<f>f))\W*$")
#: "choose X over Y", "X (though it could be Y)": Y is set aside when both are named.
_SECOND = re.compile(
    r"(?:\b(?:choose|choosing|pick|picking|prefer|select|go with|going with|favou?r)\b[^.;?!]*?"
    r"\bover|\b(?:could|might|may)\s+(?:also\s+|possibly\s+|well\s+)?be)\s+(?:the\s+|an?\s+)?$"
)
_PAREN = re.compile(r"\([^)]*\)")
#: "an oboe would sound more nasal": an option named in a hypothetical is not chosen.
_HYPOTHETICAL = re.compile(r"(?:\s+[a-z']+){0,3}?\s+(?:would|wouldn't|would not)\b")


def read_truefalse(answer: str) -> Reading:
    """Read a true/false answer (see the module docstring).

    Examples
    --------
    >>> read_truefalse("No problem! The answer is true.").value
    True
    >>> read_truefalse("Nope.").value, read_truefalse("That is not right.").value
    (False, False)
    """
    text = normalize_text(answer)
    if _UNDECIDED.search(text):
        return Reading(None, ("says both or neither",))
    text = _ECHO.sub(" ", text)
    text = _POLITE.sub(" ", text)
    plain = _QUESTION.sub(" ", text)
    letter = _LONE_LETTER.match(plain)
    if letter is not None:
        return Reading(letter.group("t") is not None, (f"letter {letter.group().strip()!r}",))
    verdict = _VERDICT.search(plain)
    if verdict is not None:
        value = _VERDICT_VALUE.get(verdict.group("word"), False)
        if verdict.group("neg"):
            value = not value
        return Reading(value, (f"verdict {verdict.group()!r}",))
    word = _ANSWER.search(plain)
    if word is not None:
        return Reading(word.group("true") is not None, (f"answer word {word.group()!r}",))
    return Reading(None, ("no verdict or answer word",))


_ORDINALS = re.compile(
    r"\b(?P<neg>not\s+)?(?:(?:the\s+)?(?P<first>first|former|1st)(?=\s+(?:one|option|choice))"
    r"|(?:the\s+)?(?P<second>second|latter|last|2nd)(?=\s+(?:one|option|choice))"
    r"|the\s+(?:(?P<first2>first|former)|(?P<second2>second|latter))\b"
    r"|(?:option|choice|answer)\s*:?\s*\(?(?P<letter>[ab12])\b\)?)"
    r"|(?<![\w(])\((?P<paren>[ab])\)"
)
_LETTER_ONLY = re.compile(r"^\W*(?:(?:answer|option|choice)\W*)?(?P<letter>[ab])\W*$")
_ECHO_JOIN = re.compile(r"^\s*(?:,?\s*(?:and|or|vs\.?|versus|/)\s*|\s*,\s*)(?:the\s+|an?\s+)?$")
_ECHO_BEFORE = re.compile(
    r"(?:\b(?:between|either|whether(?: it'?s)?|choose|choosing|deciding|"
    r"both)|(?:^|[.!?;:]\s*)(?:of|out of|among|from))\s+"
    r"(?:the\s+|an?\s+)?$"
)
_ECHO_AFTER = re.compile(r"^\s*\?")
_DECIDE = re.compile(
    r"\b(?:i'?d say|i would say|i think|i believe|i'd go with|i would go with|i'd guess|"
    r"my (?:guess|answer|choice) is|the answer is|answer|it'?s|it is|it must be|probably|"
    r"likely|definitely|sounds like|i hear|i'm hearing|this is|lean(?:ing)? towards?|"
    r"i'?d (?:pick|choose)|i (?:would )?(?:pick|choose)|go(?:ing)? with|my pick is)\b|[:?]"
)


def _option_labels(options: Sequence[str], lexicon: Lexicon) -> list[str]:
    labels = []
    for option in options:
        parsed = parse_labels(option, lexicon).labels
        labels.append(parsed[0] if len(parsed) == 1 else option)
    return labels


def _ordinal(text: str) -> tuple[int | None, str]:
    letter = _LETTER_ONLY.match(text)
    if letter is not None:
        return "ab".index(letter.group("letter")), f"letter {letter.group('letter')!r}"
    found = {}
    for m in _ORDINALS.finditer(text):
        if m.group("neg"):
            continue
        if m.group("first") or m.group("first2"):
            found[0] = m.group()
        elif m.group("second") or m.group("second2"):
            found[1] = m.group()
        else:
            code = m.group("letter") or m.group("paren")
            found[0 if code in "a1" else 1] = m.group()
    if len(found) == 1:
        index, words = next(iter(found.items()))
        return index, f"ordinal {words.strip()!r}"
    return None, ""


def _echoes(text: str, result: ParseResult, labels: list[str]) -> set[int]:
    """Positions (in ``result.mentions``) of the two options named together as an echo."""
    kept = [
        i
        for i, m in enumerate(result.mentions)
        if m.label in labels and (not m.dropped or m.cue == RAISED_IN_QUESTION)
    ]
    out: set[int] = set()
    for a, b in zip(kept, kept[1:], strict=False):
        first, second = result.mentions[a], result.mentions[b]
        if first.label == second.label or not _ECHO_JOIN.match(text[first.end : second.start]):
            continue
        if _ECHO_BEFORE.search(text[: first.start]) or _ECHO_AFTER.match(text[second.end :]):
            out.update((a, b))
    return out


def read_choice(answer: str, options: Sequence[str], lexicon: Lexicon) -> Reading:
    """The option (0 or 1) an answer chooses, or None (see the module docstring).

    Examples
    --------
    >>> from lm_eval_rul.factual.reading.lexicon import lexicon_for
    >>> lex = lexicon_for("instrument")
    >>> read_choice("Between oboe and clarinet, I'd say it's the clarinet.",
    ...             ["oboe", "clarinet"], lex).value
    1
    >>> read_choice("The first one.", ["oboe", "clarinet"], lex).value
    0
    """
    labels = _option_labels(options, lexicon)
    text = normalize_text(answer)
    result = parse_labels(answer, lexicon)
    echo = _echoes(text, result, labels)
    named = [
        (i, m)
        for i, m in enumerate(result.mentions)
        if not m.dropped and m.label in labels and i not in echo
    ]
    why = [f"echo of both options: {result.mentions[i].surface!r}" for i in sorted(echo)]
    chosen = {m.label for _, m in named}
    if len(chosen) > 1:
        cues = list(_DECIDE.finditer(text))
        if cues:
            late = {m.label for _, m in named if m.start >= cues[-1].end()}
            if len(late) == 1:
                chosen = late
                why.append(f"named after {cues[-1].group()!r}")
    if len(chosen) > 1:  # "choose X over Y", "X (though it could be Y)": Y is set aside
        parens = [p.span() for p in _PAREN.finditer(text)]
        first = {
            m.label
            for _, m in named
            if not _SECOND.search(text[max(0, m.start - 60) : m.start])
            and not any(a < m.start < b for a, b in parens)
            and not _HYPOTHETICAL.match(text, m.end)
        }
        if len(first) == 1:
            chosen = first
            why.append("the other option is set aside ('over', 'could be', 'would', brackets)")
    if len(chosen) == 1:
        index = labels.index(next(iter(chosen)))
        return Reading(index, (*why, f"names {labels[index]!r}"))
    if chosen:
        return Reading(None, (*why, "names both options"))
    refused = {
        m.label
        for i, m in enumerate(result.mentions)
        if m.dropped in ("negated", "rejected") and m.label in labels and i not in echo
    }
    if len(refused) == 1 and len(set(labels)) == 2:
        index = 1 - labels.index(next(iter(refused)))
        return Reading(index, (*why, f"refuses {labels[1 - index]!r}: the other option"))
    ordinal, ordinal_why = _ordinal(text)
    if ordinal is not None:
        return Reading(ordinal, (*why, ordinal_why))
    return Reading(None, (*why, "names neither option"))
