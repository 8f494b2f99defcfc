"""The deterministic lexicon parser: a model's free-text answer -> canonical labels.

It applies the eight output-parsing rules of the factual-comprehension paper (DESIGN
§3b) with the alias tables of :mod:`lm_eval_rul.factual.reading.aliases`, offline and
reproducibly (``PARSER_VERSION`` changes whenever a rule or a table changes what it
reads; each mention records how it was read and why it was dropped):

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
"nor", "neither", "lacks", "absence of", "n't", "except", "nothing", "unlike",
"hardly"... precede it by at most three words and no comma (not "not only", "no doubt",
"no-nonsense", ...), or when "is absent", "is missing", "is not present/heard/used"...
follows it. Rejection: a mention raised in a question and answered "no" ("Is that a
clarinet? No, it's an oboe.") or answered with another term ("Is that a flute? I'd say
a piccolo."), corrected right after ("a clarinet - no, an oboe", "or
rather", "X... no, actually Y"), or after "mistaken for", "at first I thought"... is
dropped. A negation carries along a list joined by "or"/"nor" ("no drums, bass or
guitar"), and along a bare "and" pair that closes its clause ("not cello and piano"),
not along one joined by "and" otherwise. After a negation, "other than", "apart from",
"except", "besides" mean only ("no instrument other than the cello" keeps the cello).
Families of instruments ("strings", "a keyboard instrument") are never labels. Clauses end at
``. ; : ! ?``, a spaced dash, a line break, "but", "however", "although", "though", "whereas",
"while" and "yet". Misspellings, agent nouns ("pianist"), other word senses ("bass
line") and time-signature phrases are the lexicon's (:mod:`~lm_eval_rul.factual.reading.lexicon`);
the scopes are in :mod:`~lm_eval_rul.factual.reading.scopes`.
"""

from __future__ import annotations

from dataclasses import dataclass

from .lexicon import Lexicon, normalize_text
from .scopes import DROP_REASONS, drop_reasons
from .senses import CAPITALIZED

__all__ = ["PARSER_VERSION", "Mention", "ParseResult", "parse_labels", "DROP_REASONS", "explain"]

#: Version of the parser's rules and alias tables; logged with every parse.
PARSER_VERSION = "lexicon-3"


@dataclass(frozen=True)
class Mention:
    """One lexicon hit and what the parser made of it.

    Attributes:
        label: Canonical label.
        surface: The matched text (normalised).
        start, end: Its span in the normalised answer.
        dropped: Empty for a mention that counts, else one of :data:`DROP_REASONS`.
        via: How it was read: ``alias``, ``fuzzy`` (a misspelling of ``form``) or
            ``phrase`` (a time-signature phrase).
        form: For ``fuzzy``, the vocabulary form it was read as.
        cue: The words that decided a drop ("not", "? no", "bass line"...).
    """

    label: str
    surface: str
    start: int
    end: int
    dropped: str = ""
    via: str = "alias"
    form: str = ""
    cue: str = ""


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


def parse_labels(answer: str, lexicon: Lexicon) -> ParseResult:
    """Read the labels of ``lexicon``'s task from a model's ``answer``.

    Args:
        answer: The model's free text (any case, accents, punctuation).
        lexicon: From :func:`~lm_eval_rul.factual.reading.lexicon.lexicon_for`.

    Returns:
        A :class:`ParseResult`; ``labels`` is empty when nothing counts.

    Examples
    --------
    >>> from lm_eval_rul.factual.reading.lexicon import lexicon_for
    >>> parse_labels("Piano and violins, no drums or bass.", lexicon_for("instrument")).text
    'piano, violin'
    >>> parse_labels("More J.S. Bach than Mozart", lexicon_for("composer")).labels
    ('Bach',)
    >>> parse_labels("A solo pianist, joined by a vilolinist.", lexicon_for("instrument")).labels
    ('piano', 'violin')
    """
    text = normalize_text(answer)
    cased = None
    if lexicon.task in CAPITALIZED:
        cased = normalize_text(answer, keep_case=True)
        cased = cased if len(cased) == len(text) else None
    matches = lexicon.find(text, cased)
    reasons = drop_reasons(text, matches, lexicon)
    mentions = tuple(
        Mention(m.label, m.surface, m.start, m.end, reason, m.via, m.form, cue)
        for m, (reason, cue) in zip(matches, reasons, strict=True)
    )
    labels = tuple(dict.fromkeys(m.label for m in mentions if not m.dropped))
    return ParseResult(labels, mentions)


def explain(result: ParseResult) -> list[str]:
    """One line per mention: what was read, how, and why it was dropped (for ``parse``).

    Examples
    --------
    >>> from lm_eval_rul.factual.reading.lexicon import lexicon_for
    >>> for line in explain(parse_labels("No drums; a pianno.", lexicon_for("instrument"))):
    ...     print(line)
    'drums' -> drums: dropped (negated: 'no')
    'pianno' -> piano: kept (misspelling of 'piano')
    """
    lines = []
    for m in result.mentions:
        how = {"fuzzy": f"misspelling of {m.form!r}", "phrase": "time-signature phrase"}
        note = how.get(m.via, "")
        if m.dropped:
            status = f"dropped ({m.dropped}: {m.cue!r})" if m.cue else f"dropped ({m.dropped})"
        else:
            status = "kept"
        lines.append(f"{m.surface!r} -> {m.label}: {status}{f' ({note})' if note else ''}")
    return lines
