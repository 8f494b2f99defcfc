"""The deterministic lexicon parser: a model's free-text answer -> canonical labels.

It applies the eight output-parsing rules of the factual-comprehension paper (DESIGN
§3b) with the alias tables of :mod:`lm_eval_rul.factual.aliases`, offline and
reproducibly (``PARSER_VERSION`` changes whenever a rule or a table changes what it
reads):

1. only terms explicitly in the output: lexicon matches on word boundaries;
2. no inference from associations: aliases are names, never associations; a term
   followed by "-like"/"-ish"/"-esque"/"-inspired"... is not a mention, and for genre
   and regional style neither is one followed by "feel", "vibe", "influences",
   "rhythm"... ("swing rhythm") or after "influenced by", "reminiscent of", "in the
   style of"... (also for composer);
3. "X more than Y" keeps X: the mentions right after "than", "rather than", "instead
   of", "as opposed to" are dropped ("less X than Y" drops X instead); "more than one"
   is no comparison;
4. de-duplicated, in order of first mention;
5. a comma-separated list: :attr:`ParseResult.text`;
6. the empty string when nothing is mentioned (an empty prediction, never a guess);
7. canonical forms through the alias tables ("J.S. Bach" -> "Bach");
8. no mood from descriptions: only the mood words and their listed synonyms count,
   and "a jazz-like feeling" is dropped by rule 2's suffix test.

Negation: a mention is dropped when, in its clause, "no", "not", "without", "never",
"nor", "neither", "lacks", "absence of", "n't", "except"... precede it by at most three
words and no comma (not "not only", "no doubt", ...), or when "is absent", "is missing", "is not
present/heard/used"... follows it. A negation carries along a list joined by "or"/"nor"
("no drums, bass or guitar"), not along one joined by "and" only. Clauses end at
``. ; : ! ?``, a line break, "but", "however", "although", "though", "whereas",
"while" and "yet".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from .aliases import GENRE_CONTEXT_NOUNS
from .lexicon import Lexicon, Match, normalize_text

__all__ = ["PARSER_VERSION", "Mention", "ParseResult", "parse_labels", "DROP_REASONS"]

#: Version of the parser's rules and alias tables; logged with every parse.
PARSER_VERSION = "lexicon-1"

#: Why a mention is not a predicted label.
DROP_REASONS: tuple[str, ...] = ("no-context", "hedged", "negated", "comparative")

_CLAUSE_END = re.compile(
    r"[.!?](?=\s|$)|[;:\n]|\b(?:but|however|although|though|whereas|while|yet)\b"
)
_NEGATION = re.compile(
    r"(?:\b(?:no|not|without|never|nor|neither|lacks?|lacking|absence of|absent|free of|"
    r"minus|except|excluding|cannot)|n't)\b"
    r"(?!\s*[,.!?;:])"
    r"(?!\s+(?:only|just|merely|simply|sure|certain|doubt|question|matter)\b)"
    r"(?!\s+a\s+doubt\b)"
)
_NEGATION_AFTER = re.compile(
    r"^\s*(?:(?:is|are|was|were|seems?|appears?)\s+)?(?:to be\s+)?"
    r"(?:(?:not|n't|never)\s+(?:present|heard|audible|used|featured|included|there|played|"
    r"playing)|absent|missing)\b"
)
_COMPARATIVE = re.compile(
    r"\b(?:rather than|instead of|as opposed to|than)\b"
    r"(?!\s+(?:one|two|three|four|five|a few|a couple|a single|a handful|\d+)\b)"
)
_LESS = re.compile(r"\b(?:less|fewer)\b")
_HEDGE_SUFFIX = re.compile(
    r"^-?(?:like|ish|esque|inspired|influenced|tinged|flavou?red|infused|leaning|sounding)\b"
)
_HEDGE_NOUN = re.compile(
    r"^\s+(?:feel|feels|feeling|vibes?|influences?|rhythms?|grooves?|elements?|flavou?rs?|"
    r"undertones?|overtones|touch(?:es)?|tinges?|inflections?|leanings?|sensibility|"
    r"sensibilities|traits?|accents?)\b"
)
_HEDGE_BEFORE = re.compile(
    r"\b(?:hints? of|touch(?:es)? of|tinges? of|elements? of|influenced by|inspired by|"
    r"influences? (?:of|from)|reminiscent of|evocative of|evoking|evokes?|nods? to|"
    r"in the (?:style|manner|vein|spirit|tradition) of|a la|echoes of)\b"
)
_CONNECTOR = re.compile(r"^(?:[\s,/&]|\b(?:and|or|nor|the|a|an|any|either|even|also)\b)*$")
_OR = re.compile(r"\b(?:or|nor)\b")
_WORD = re.compile(r"[a-z0-9']+")
_GAP_NEGATION = 3
_GAP_COMPARATIVE = 3
_GAP_HEDGE = 2


@dataclass(frozen=True)
class Mention:
    """One lexicon hit and what the parser made of it.

    Attributes:
        label: Canonical label.
        surface: The matched text (normalised).
        start, end: Its span in the normalised answer.
        dropped: Empty for a mention that counts, else one of :data:`DROP_REASONS`.
    """

    label: str
    surface: str
    start: int
    end: int
    dropped: str = ""


@dataclass(frozen=True)
class ParseResult:
    """Labels read from one answer, with the evidence (for sample logs).

    Attributes:
        labels: Canonical labels, de-duplicated, in order of first mention.
        mentions: Every lexicon hit, kept or dropped, left to right.
        version: :data:`PARSER_VERSION`.
    """

    labels: tuple[str, ...]
    mentions: tuple[Mention, ...]
    version: str = PARSER_VERSION

    @property
    def text(self) -> str:
        """Rules 5 and 6: the comma-separated list; empty when nothing was mentioned."""
        return ", ".join(self.labels)

    @property
    def empty(self) -> bool:
        """No label was read (an empty prediction)."""
        return not self.labels

    def to_log(self) -> dict[str, object]:
        """Plain data for a sample log: labels, dropped mentions with reasons, version."""
        return {
            "labels": list(self.labels),
            "dropped": [
                {"label": m.label, "surface": m.surface, "reason": m.dropped}
                for m in self.mentions
                if m.dropped
            ],
            "parser": self.version,
        }


class _Clauses:
    """Clause spans of a normalised text (boundaries: :data:`_CLAUSE_END`)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.bounds = [(m.start(), m.end()) for m in _CLAUSE_END.finditer(text)]

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


def _last_cue(pattern: re.Pattern[str], prefix: str, gap: int) -> re.Match[str] | None:
    """The last cue of ``pattern`` in ``prefix`` if at most ``gap`` words and no comma follow it."""
    cues = list(pattern.finditer(prefix))
    if not cues:
        return None
    rest = prefix[cues[-1].end() :]
    return cues[-1] if "," not in rest and len(_WORD.findall(rest)) <= gap else None


def _chains(text: str, matches: Sequence[Match]) -> list[list[int]]:
    """Runs of consecutive matches joined only by list connectors (commas, and, or...)."""
    chains: list[list[int]] = []
    for i, m in enumerate(matches):
        if chains and _CONNECTOR.match(text[matches[i - 1].end : m.start]):
            chains[-1].append(i)
        else:
            chains.append([i])
    return chains


def parse_labels(answer: str, lexicon: Lexicon) -> ParseResult:
    """Read the labels of ``lexicon``'s task from a model's ``answer``.

    Args:
        answer: The model's free text (any case, accents, punctuation).
        lexicon: From :func:`~lm_eval_rul.factual.lexicon.lexicon_for`.

    Returns:
        A :class:`ParseResult`; ``labels`` is empty when nothing counts.

    Examples
    --------
    >>> from lm_eval_rul.factual.lexicon import lexicon_for
    >>> parse_labels("Piano and violins, no drums or bass.", lexicon_for("instrument")).text
    'piano, violin'
    >>> parse_labels("More J.S. Bach than Mozart", lexicon_for("composer")).labels
    ('Bach',)
    """
    text = normalize_text(answer)
    matches = lexicon.find(text)
    clauses = _Clauses(text)
    reasons = [_reason(text, matches, i, clauses, lexicon) for i in range(len(matches))]
    for chain in _chains(text, matches):
        _spread(text, matches, chain, reasons, clauses, lexicon)
    mentions = tuple(
        Mention(m.label, m.surface, m.start, m.end, r)
        for m, r in zip(matches, reasons, strict=True)
    )
    labels = tuple(dict.fromkeys(m.label for m in mentions if not m.dropped))
    return ParseResult(labels, mentions)


def _reason(
    text: str, matches: Sequence[Match], i: int, clauses: _Clauses, lexicon: Lexicon
) -> str:
    """Why mention ``i`` does not count on its own ("" when it counts)."""
    m = matches[i]
    clause = clauses.start(m.start)
    # cues before a mention only reach it when no other mention stands between them
    prefix = text[max(clause, matches[i - 1].end if i else 0) : m.start]
    after = clauses.after(m.end)
    if m.needs_context:
        words = _WORD.findall(after)
        if not words or words[0] not in GENRE_CONTEXT_NOUNS:
            return "no-context"
    if _HEDGE_SUFFIX.match(after) or (lexicon.hedge_nouns and _HEDGE_NOUN.match(after)):
        return "hedged"
    if lexicon.hedge_before and _last_cue(_HEDGE_BEFORE, prefix, _GAP_HEDGE):
        return "hedged"
    if _last_cue(_NEGATION, prefix, _GAP_NEGATION):
        return "negated"
    than = _last_cue(_COMPARATIVE, prefix, _GAP_COMPARATIVE)
    if than is not None:
        # "more X than Y": Y loses; "less X than Y": Y wins
        before = text[clause : m.start - len(prefix) + than.start()]
        return "" if _LESS.search(before) else "comparative"
    if _last_cue(_LESS, prefix, _GAP_COMPARATIVE) and _COMPARATIVE.search(after):
        return "comparative"  # "less X than Y": X loses
    return ""


def _spread(
    text: str,
    matches: Sequence[Match],
    chain: list[int],
    reasons: list[str],
    clauses: _Clauses,
    lexicon: Lexicon,
) -> None:
    """Carry a drop along a list ("no drums or bass", "Egyptian and Irish influences").

    A hedge or comparison on the first item reaches every item, a negation only through
    "or"/"nor"; "is absent" or a hedge noun after the last item reaches every item.
    """
    joined = text[matches[chain[0]].end : matches[chain[-1]].start]
    head = reasons[chain[0]]
    if head in ("hedged", "comparative") or (head == "negated" and _OR.search(joined)):
        for i in chain[1:]:
            reasons[i] = reasons[i] or head
    after = clauses.after(matches[chain[-1]].end)
    tail = ""
    if _NEGATION_AFTER.match(after):
        tail = "negated"
    elif lexicon.hedge_nouns and _HEDGE_NOUN.match(after):
        tail = "hedged"
    if tail:
        for i in chain:
            reasons[i] = reasons[i] or tail
