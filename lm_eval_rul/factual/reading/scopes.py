"""Scopes of the lexicon parser: which mentions negation, rejection, hedges and comparisons reach.

:func:`drop_reasons` gives every lexicon hit of an answer its reason to be dropped (empty
when it counts) and the cue that decided it; :mod:`~lm_eval_rul.factual.reading.parser` documents
the rules. Cues are precompiled; everything works on the normalised text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .aliases import GENRE_CONTEXT_NOUNS
from .lexicon import Lexicon, Match

__all__ = ["DROP_REASONS", "RAISED_IN_QUESTION", "drop_reasons"]

#: Why a mention is not a predicted label.
DROP_REASONS: tuple[str, ...] = (
    "no-context",
    "hedged",
    "negated",
    "comparative",
    "rejected",
    "other-sense",
)

_CLAUSE_END = re.compile(
    r"[.!?](?=\s|$)|[;:\n]| - |\b(?:but|however|although|though|whereas|while|yet)\b"
)
_NEGATION = re.compile(
    r"(?:\b(?:no|not|without|never|nor|neither|lacks?|lacking|lack of|absence of|absent|"
    r"free of|devoid of|minus|except|excluding|cannot|nothing|unlike|far from|hardly)|n't)\b"
    r"(?!-)"  # "no-nonsense", "not-so-subtle": a compound, not a negation
    r"(?!\s*[,.!?;:])"
    r"(?!\s+(?:only|just|merely|simply|sure|certain|doubt|question|matter|mistaking|denying|"
    r"wonder|least|surprisingly|tell|know|say|decide|other than|short of|more than|"
    r"think so|believe so)\b)"
    r"(?!\s+a\s+doubt\b)"
)
_NEGATION_AFTER = re.compile(
    r"^\s*(?:(?:is|are|was|were|seems?|appears?)\s+)?(?:to be\s+)?"
    r"(?:(?:not|n't|never)\s+(?:present|heard|audible|used|featured|included|there|played|"
    r"playing)|absent|missing)\b"
)
#: A cue before a mention that takes it back ("could be mistaken for a viola").
_REJECT_BEFORE = re.compile(
    r"\b(?:mistaken for|mistake it for|confused with|confuse it with|could pass for|"
    r"(?:at first|initially|originally|first)\s+(?:i\s+)?(?:thought|assumed|guessed|believed|"
    r"heard)(?:\s+(?:it|this|that)\s+(?:was|to be))?)\b"
)
#: After a mention in a question: a "no" answer ("Is that a clarinet? No, an oboe.").
_QUESTION_REJECT = re.compile(
    r"[^.!?;\n]{0,80}?\?\s*[\"']?(?:no\b(?!\s+(?:doubt|question|idea)\b)|nope|nah|"
    r"not\b(?!\s+(?:sure|certain|entirely|only)\b)|hardly|far from it|wrong|never|"
    r"i (?:don't|do not) think so|i (?:wouldn't|would not) say|"
    r"actually\b(?!,?\s+(?:yes|yeah|it is|correct|right)\b))"
)
#: Right after a mention: a correction ("a clarinet - no, an oboe", "or rather").
_CORRECTION_AFTER = re.compile(
    r"\s*[,;:.\-]*\s*(?:(?:no|nope|sorry|wait|correction|scratch that)\s*[,!.:\-]|no wait\b|"
    r"or rather\b|i mean\b|i meant\b)"
)
_COMPARATIVE = re.compile(
    r"\b(?:rather than|instead of|as opposed to|than)\b"
    r"(?!\s+(?:one|two|three|four|five|a few|a couple|a single|a handful|\d+)\b)"
)
_LESS = re.compile(r"\b(?:less|fewer)\b")
_SUFFIXES = {
    "all": re.compile(
        r"^-?(?:like|ish|esque|inspired|influenced|tinged|flavou?red|infused|leaning|sounding)\b"
        r"|^-(?:less|free)\b"  # "drum-less", "piano-free": without it
    ),
    "associations": re.compile(
        r"^-?(?:like|esque|inspired|influenced|flavou?red|infused|leaning)\b|^-(?:less|free)\b"
    ),
}
_HEDGE_NOUN = re.compile(
    r"^\s+(?:feel|feels|feeling|vibes?|influences?|rhythms?|grooves?|elements?|flavou?rs?|"
    r"undertones?|overtones|touch(?:es)?|tinges?|inflections?|leanings?|sensibility|"
    r"sensibilities|traits?|accents?|attitude|ethos|aesthetics?)\b"
)
_HEDGE_BEFORE = re.compile(
    r"\b(?:hints? of|touch(?:es)? of|tinges? of|elements? of|influenced by|inspired by|"
    r"influences? (?:of|from)|reminiscent of|evocative of|evoking|evokes?|nods? to|"
    r"in the (?:style|manner|vein|spirit|tradition) of|a la|echoes of|recalls?|recalling|"
    r"reminds? (?:me |one |us )?of|calls? to mind|suggestive of)\b"
)
_CONNECTOR = re.compile(r"^(?:[\s,/&]|\b(?:and|or|nor|the|a|an|any|either|even|also)\b)*$")
_OR = re.compile(r"\b(?:or|nor)\b")
_ARTICLE = re.compile(r"\b(?:a|an|the)\b")
_TIGHT_NOT = re.compile(r"\b(?:not|no)\s+(?:(?:the|a|an)\s+)?$")
_WORD = re.compile(r"[a-z0-9']+")
_GAP_NEGATION = 3
#: Words that do not count toward the negation gap ("does not seem to be in 4/4").
_NEGATION_FILLER = frozenset(
    "seem seems sound sounds appear appears feel feels to be in like a an the any really".split()
)
#: "no instrument other than the cello", "nothing apart from": only the cello.
_EXCEPT = re.compile(
    r"\b(?:other than|apart from|aside from|except(?: for)?|besides|save for|beyond)\s+"
    r"(?:(?:the|a|an)\s+)?$"
)
_QUESTION_SPAN = re.compile(r"[^.!?;\n]*\?")
_YES_AFTER = re.compile(
    r"\s*[\"']?(?:yes|yeah|yep|indeed|definitely|exactly|right|correct|i think so)\b"
)
#: The cue of a term raised in a question and answered with another (binary choice reads
#: such a pair as an echo of both options).
RAISED_IN_QUESTION = "raised in a question, answered with another"
_ALL_BUT = re.compile(
    r"\b(?:everything|anything|all|every instrument|all (?:the )?instruments)\s+but\s+"
    r"(?:the\s+|a\s+|an\s+)?$"
)
_ONLY_NEGATION = re.compile(r"\b(?:no|not|nothing|none|never|without|n't)\b|n't\b")
#: After a mention, in the same sentence: "X... no, actually it's Y" takes X back.
_SELF_HINT = re.compile(r"\b(?:no|wait)\s*[,!.]")  # a cheap first test
_SELF_CORRECTION = re.compile(
    r"(?:'s)?(?:\s+[a-z'-]+){0,4}?\s*(?:\.\.\.|\u2026|,|-)\s*(?:no|wait|hmm,? no)\s*[,!.]"
    r"\s*(?:actually|wait|sorry|rather|i mean|it'?s)\b"
)
#: Composer: "Beethoven's influence", "in Beethoven's style": an association.
_POSSESSIVE_HEDGE = re.compile(
    r"'s?\s+(?:\w+\s+)?(?:influence|influences|style|shadow|spirit|legacy|manner|idiom|"
    r"school|footsteps|mould|mold|model|orbit|circle|imitators?|followers?)\b"
)
_GAP_COMPARATIVE = 3
_GAP_HEDGE = 2


#: Any cue a mention's prefix may hold (a first test: none found, none of them applies).
_ANY_BEFORE = re.compile(
    "|".join(
        f"(?:{p.pattern})"
        for p in (_HEDGE_BEFORE, _REJECT_BEFORE, _NEGATION, _COMPARATIVE, _LESS, _EXCEPT)
    )
)

class _Clauses:
    """Clause spans of a normalised text (boundaries: :data:`_CLAUSE_END`)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.bounds = [(m.start(), m.end()) for m in _CLAUSE_END.finditer(text)]
        self.self_correction = "no" in text and _SELF_HINT.search(text) is not None

    def start(self, pos: int) -> int:
        """Where the clause holding ``pos`` begins."""
        begin = 0
        for _, b_end in self.bounds:
            if b_end > pos:
                break
            begin = b_end
        return begin

    def after(self, pos: int) -> str:
        """The text from ``pos`` to the end of its clause."""
        for b_start, _ in self.bounds:
            if b_start >= pos:
                return self.text[pos:b_start]
        return self.text[pos:]


def _last_cue(
    pattern: re.Pattern[str], prefix: str, gap: int, skip: frozenset[str] = frozenset()
) -> re.Match[str] | None:
    """The last cue of ``pattern`` in ``prefix`` if at most ``gap`` words (not counting
    those of ``skip``) and no comma follow it."""
    cues = list(pattern.finditer(prefix))
    if not cues:
        return None
    rest = prefix[cues[-1].end() :]
    if "," in rest:
        return None
    words = _WORD.findall(rest)
    if skip and len(words) > gap:
        words = [w for w in words if w not in skip]
    return cues[-1] if len(words) <= gap else None


def _chains(text: str, matches: Sequence[Match]) -> list[list[int]]:
    """Runs of consecutive matches joined only by list connectors (commas, and, or...)."""
    chains: list[list[int]] = []
    for i, m in enumerate(matches):
        if chains and _CONNECTOR.match(text[matches[i - 1].end : m.start]):
            chains[-1].append(i)
        else:
            chains.append([i])
    return chains


def drop_reasons(text: str, matches: Sequence[Match], lexicon: Lexicon) -> list[tuple[str, str]]:
    """``(reason, cue)`` of every match: reason "" when it counts, else one of
    :data:`DROP_REASONS`; the cue is the words that decided it."""
    clauses = _Clauses(text)
    reasons = [_reason(text, matches, i, clauses, lexicon) for i in range(len(matches))]
    for chain in _chains(text, matches):
        _spread(text, matches, chain, reasons, clauses, lexicon)
    if "?" in text:
        _questions(text, matches, reasons)
    return reasons


def _questions(text: str, matches: Sequence[Match], reasons: list[tuple[str, str]]) -> None:
    """A term only raised in a question ("Is that a flute? ... I'd say a piccolo.") is no
    answer when the response answers with another term; a "yes" after it keeps it."""
    if len({m.label for i, m in enumerate(matches) if not reasons[i][0]}) < 2:
        return  # one term or none: nothing answered "with another"
    spans = [(q.start(), q.end()) for q in _QUESTION_SPAN.finditer(text)]
    asked = [
        i
        for i, m in enumerate(matches)
        if not reasons[i][0] and any(a <= m.start < b for a, b in spans)
    ]
    if not asked:
        return
    stated = {
        m.label
        for i, m in enumerate(matches)
        if not reasons[i][0] and not any(a <= m.start < b for a, b in spans)
    }
    for i in asked:
        end = next(b for a, b in spans if a <= matches[i].start < b)
        if stated - {matches[i].label} and not _YES_AFTER.match(text, end):
            reasons[i] = ("rejected", RAISED_IN_QUESTION)


def _reason(
    text: str, matches: Sequence[Match], i: int, clauses: _Clauses, lexicon: Lexicon
) -> tuple[str, str]:
    """Why mention ``i`` does not count on its own (("", "") when it counts)."""
    m = matches[i]
    if m.sense:
        return "other-sense", m.sense
    clause = clauses.start(m.start)
    # cues before a mention only reach it when no other mention stands between them
    prefix = text[max(clause, matches[i - 1].end if i else 0) : m.start]
    after = clauses.after(m.end)
    if m.needs_context:
        words = _WORD.findall(after)
        if not words or words[0] not in GENRE_CONTEXT_NOUNS:
            return "no-context", "no genre noun follows"
    suffix = _SUFFIXES.get(lexicon.suffixes)
    hedge = suffix.match(after) if suffix is not None else None
    if hedge is not None and hedge.group().endswith(("less", "free")):
        return "negated", hedge.group()
    if hedge is None and lexicon.hedge_nouns:
        hedge = _HEDGE_NOUN.match(after)
    cued = _ANY_BEFORE.search(prefix) is not None  # one scan: does any cue precede it?
    if hedge is None and lexicon.hedge_before and cued:
        hedge = _last_cue(_HEDGE_BEFORE, prefix, _GAP_HEDGE)
    if hedge is None and lexicon.task == "composer" and text.startswith("'", m.end):
        hedge = _POSSESSIVE_HEDGE.match(text, m.end)
    if hedge is not None:
        return "hedged", hedge.group().strip()
    if text.find("but", max(0, m.start - 30), m.start) >= 0 and _ALL_BUT.search(text, 0, m.start):
        return "negated", "everything but"  # "everything but the drums": all except them
    if not cued:
        return "", ""
    cue = _last_cue(_REJECT_BEFORE, prefix, _GAP_NEGATION)
    if cue is not None:
        return "rejected", cue.group()
    tail = prefix[-20:]  # a cheap first test before the pattern
    hint = "than" in tail or "from" in tail or "except" in tail or "besides" in tail
    only = _EXCEPT.search(prefix) if hint or "save" in tail or "beyond" in tail else None
    if only is not None:
        before = text[clause : m.start - len(prefix) + only.start()]
        if _ONLY_NEGATION.search(before):  # "no instrument other than the cello": only it
            return "", ""
        if not only.group().startswith(("apart", "aside", "besides", "beyond")):
            return "negated", only.group().strip()
        return "", ""
    cue = _last_cue(_NEGATION, prefix, _GAP_NEGATION, _NEGATION_FILLER)
    if cue is not None:
        return "negated", cue.group()
    than = _last_cue(_COMPARATIVE, prefix, _GAP_COMPARATIVE)
    if than is not None:
        # "more X than Y": Y loses; "less X than Y": Y wins
        before = text[clause : m.start - len(prefix) + than.start()]
        return ("", "") if _LESS.search(before) else ("comparative", than.group())
    if _last_cue(_LESS, prefix, _GAP_COMPARATIVE) and _COMPARATIVE.search(after):
        return "comparative", "less ... than"  # "less X than Y": X loses
    return "", ""


def _spread(
    text: str,
    matches: Sequence[Match],
    chain: list[int],
    reasons: list[tuple[str, str]],
    clauses: _Clauses,
    lexicon: Lexicon,
) -> None:
    """Carry a drop along a list ("no drums or bass", "Egyptian and Irish influences").

    A hedge or comparison on the first item reaches every item, a negation only through
    "or"/"nor"; "is absent", a hedge noun, a correction ("- no, ...") or a "no" answer to
    a question after the last item reaches every item.
    """
    joined = text[matches[chain[0]].end : matches[chain[-1]].start]
    head = reasons[chain[0]]
    end = matches[chain[-1]].end
    after = clauses.after(end)
    # "not cello and piano" closing its clause: the negation takes the whole pair
    close = head[0] == "negated" and not _WORD.search(after) and not _ARTICLE.search(joined)
    close = close and _TIGHT_NOT.search(
        text[clauses.start(matches[chain[0]].start) : matches[chain[0]].start]
    )
    if head[0] in ("hedged", "comparative") or (
        head[0] == "negated" and (_OR.search(joined) or close)
    ):
        for i in chain[1:]:
            reasons[i] = reasons[i] if reasons[i][0] else head
    tail: tuple[str, str] = ("", "")
    if (hit := _NEGATION_AFTER.match(after)) is not None:
        tail = ("negated", hit.group().strip())
    elif lexicon.hedge_nouns and (hit := _HEDGE_NOUN.match(after)) is not None:
        tail = ("hedged", hit.group().strip())
    elif (hit := _QUESTION_REJECT.match(text, end)) is not None:
        tail = ("rejected", hit.group().strip())
    elif (hit := _CORRECTION_AFTER.match(text, end)) is not None:
        tail = ("rejected", hit.group().strip())
    elif clauses.self_correction and (hit := _SELF_CORRECTION.match(text, end)):
        tail = ("rejected", hit.group().strip())
    if tail[0]:
        for i in chain:
            reasons[i] = reasons[i] if reasons[i][0] else tail
