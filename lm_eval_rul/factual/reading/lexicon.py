"""Compiled lexicons: find every alias of a task's vocabulary in a normalised text.

:func:`lexicon_for` builds the :class:`Lexicon` of a task from the tables of
:mod:`lm_eval_rul.factual.reading.aliases` (and, for genre, from the FMA titles of a
:class:`~lm_eval_rul.factual.reading.genres.GenreTree`). :meth:`Lexicon.find` returns the
matches of one normalised text (one trie-shaped regex,
:mod:`~lm_eval_rul.factual.reading.trie`), longest alias first, on word boundaries;
:func:`normalize_text` is the normalisation both sides use (lower case, accents
stripped, typographic quotes and dashes made ASCII, runs of whitespace collapsed).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field

from .aliases import (
    COMPOSER_ALIASES,
    GENRE_EXTRA_ALIASES,
    GENRE_NEEDS_CONTEXT,
    INSTRUMENT_ALIASES,
    MOOD_ALIASES,
    REGIONAL_ALIASES,
    TIMESIG_ALIASES,
)
from .fuzzy import FuzzyIndex
from .genres import GenreTree
from .labels import task_info
from .names import (
    AGENT_NOUNS,
    MOOD_SYNONYMS,
    OPEN_COMPOSERS,
    OPEN_GENRES,
    OPEN_INSTRUMENTS,
    REGIONAL_SYNONYMS,
    SHORT_MISSPELLINGS,
)
from .senses import (
    CAPITALIZED,
    SENSE_LABELS,
    sense_pattern,
    timesig_phrase_label,
    timesig_phrase_pattern,
)
from .trie import trie_pattern

__all__ = ["Alias", "Match", "Lexicon", "lexicon_for", "normalize_text"]

_TRANSLATE = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u2010": "-",
        "\u2011": "-",
        "\u2012": "-",
        "\u2013": "-",
        "\u2014": " - ",
        "\u00a0": " ",
    }
)
_NUMBERS = {
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "fifteen": 15,
}
_DENOMINATORS = {"two": 2, "four": 4, "eight": 8, "sixteen": 16}
_NUM_WORD = "|".join(_NUMBERS)
_DEN_WORD = "|".join(_DENOMINATORS)
#: ``7/8``, ``7 / 8`` (numerator >= 2, a note-value denominator; not ``3/4 of``) and
#: spelled-out ``seven-eight`` / ``seven eight time``.
_TIMESIG_PATTERN = re.compile(
    r"(?<![\d/.])(?P<n>[2-9]|1[0-9])\s*/\s*(?P<d>1|2|4|8|16|32)(?![\d/])(?!\s*of\b)"
    rf"|\b(?P<nw>{_NUM_WORD})"
    rf"(?:-(?P<dw>{_DEN_WORD})|\s+(?P<dw2>{_DEN_WORD})(?=\s+(?:time|meter|metre)\b))\b"
    rf"|(?<=\bin )(?P<nw3>{_NUM_WORD})\s+(?P<dw3>{_DEN_WORD})\b(?!-)"  # "it's in six eight"
)


_SPACES = re.compile(r"\s+")
_TOKEN = re.compile(r"\b[a-z]{4,}(?:-[a-z]+)*|\b[a-z]{1,3}(?:-[a-z]+)+")  # 4+ or hyphenated
_PART = re.compile(r"[a-z]{4,}")


def normalize_text(text: str, *, keep_case: bool = False) -> str:
    """Lower case, no accents, ASCII quotes and dashes, single spaces.

    Examples
    --------
    >>> normalize_text("Dvořák’s  Fauré–like")
    "dvorak's faure-like"
    """
    text = str(text).translate(_TRANSLATE)
    if not text.isascii():
        text = unicodedata.normalize("NFKD", text)
        text = "".join(ch for ch in text if not unicodedata.combining(ch))
    return _SPACES.sub(" ", text if keep_case else text.lower()).strip()


@dataclass(frozen=True)
class Alias:
    """One surface form: normalised ``text``, its canonical ``label``, and whether it
    counts only before a genre noun (``needs_context``)."""

    text: str
    label: str
    needs_context: bool = False
    capitalized: bool = False


@dataclass(frozen=True)
class Match:
    """A lexicon hit in a normalised text: ``text[start:end]`` reads ``label``.

    ``via`` says how: ``alias``, ``fuzzy`` (a misspelling of ``form``), ``phrase`` (a
    time-signature phrase); ``sense`` is non-empty when the hit lies inside a phrase
    where the word means something else (:mod:`~lm_eval_rul.factual.reading.senses`), or when a
    form that needs a capital letter was written without one.
    """

    start: int
    end: int
    label: str
    surface: str
    needs_context: bool = False
    via: str = "alias"
    form: str = ""
    sense: str = ""


@dataclass(frozen=True)
class Lexicon:
    """The surface forms of one task and how the parser treats them.

    Attributes:
        task: Task key.
        aliases: Every surface form.
        labels: Canonical labels in vocabulary order.
        plurals: Also read ``alias + s/es`` (instruments).
        hedge_nouns: A mention followed by "feel", "vibe", "influences", "rhythm"... is
            an association, not a mention (genre, regional style).
        hedge_before: A mention after "influenced by", "reminiscent of", "in the style
            of"... is an association (genre, regional style, composer).
        timesig_pattern: Also read numeric and spelled-out time signatures.
        suffixes: Which suffixes make a mention an association (rule 2): ``all``
            ("-like", "-ish", "-sounding", "-inspired"...), ``associations`` (not
            "-sounding", "-ish", "-tinged": a "sad-sounding" tune is sad) or ``none``
            (regional style: an influence is the regional answer).
        fuzzy: Read misspellings of one-word forms (:mod:`~lm_eval_rul.factual.reading.fuzzy`).
    """

    task: str
    aliases: tuple[Alias, ...]
    labels: tuple[str, ...]
    plurals: bool = False
    hedge_nouns: bool = False
    hedge_before: bool = False
    timesig_pattern: bool = False
    suffixes: str = "all"
    fuzzy: bool = True
    _compiled: list = field(default_factory=list, repr=False, compare=False)
    _fuzzy: list = field(default_factory=list, repr=False, compare=False)

    def __post_init__(self) -> None:
        seen: dict[str, str] = {}
        for alias in self.aliases:
            if seen.get(alias.text, alias.label) != alias.label:
                raise ValueError(
                    f"{self.task} lexicon: alias {alias.text!r} maps to both "
                    f"{seen[alias.text]!r} and {alias.label!r}"
                )
            seen[alias.text] = alias.label

    @property
    def _pattern(self) -> tuple[re.Pattern[str], tuple[Alias, ...]]:
        if not self._compiled:
            pattern, order = trie_pattern([a.text for a in self.aliases], plurals=self.plurals)
            self._compiled.append((pattern, tuple(self.aliases[i] for i in order)))
        return self._compiled[0]

    @property
    def fuzzy_index(self) -> FuzzyIndex:
        """The one-word forms of the lexicon, for misspellings (built once)."""
        if not self._fuzzy:
            forms = (
                (a.text, a.label)
                for a in self.aliases
                if " " not in a.text and not (a.needs_context or a.capitalized)
            )
            self._fuzzy.append(FuzzyIndex(forms))
        return self._fuzzy[0]

    def find(self, text: str, cased: str | None = None) -> list[Match]:
        """Non-overlapping matches in normalised ``text``, left to right, longest first.

        Exact aliases first, then time-signature patterns and phrases, then misspelt
        words no alias covers; hits inside a phrase of another sense, or of a
        capital-only form written in lower case (``cased``: the same text with its case
        kept), are returned with ``sense`` set.
        """
        pattern, ordered = self._pattern
        found = []
        for m in pattern.finditer(text):
            alias = ordered[m.lastindex - 1]
            sense = ""
            if alias.capitalized and cased is not None and not cased[m.start()].isupper():
                sense = "written in lower case: a common word"
            found.append(
                Match(m.start(), m.end(), alias.label, m.group(), alias.needs_context, sense=sense)
            )
        if self.timesig_pattern:
            found.extend(_timesig_matches(text))
            found = _drop_overlaps(found)
        if self.fuzzy:
            found = _with_fuzzy(text, found, self.fuzzy_index)
        senses = sense_pattern(self.task)
        touched = SENSE_LABELS.get(self.task)
        if touched is not None and not any(m.label in touched for m in found):
            senses = None
        if senses is not None and found:
            regex, reasons = senses
            spans = [
                (m.start(), m.end(), f"{reasons[m.lastindex - 1]}: {m.group()!r}")
                for m in regex.finditer(text)
            ]
            if spans:
                found = [_in_sense(m, spans) for m in found]
        return found

    def canonical(self, term: str) -> str | None:
        """The label whose alias is exactly ``term`` (after normalisation), else None.

        Examples
        --------
        >>> lexicon_for("composer").canonical("J.S. Bach")
        'Bach'
        """
        norm = normalize_text(term).strip(" .,;:")
        matches = self.find(norm)
        if len(matches) == 1 and matches[0].start == 0 and matches[0].end == len(norm):
            return matches[0].label
        return None


def _timesig_matches(text: str) -> list[Match]:
    found = []
    for m in _TIMESIG_PATTERN.finditer(text):
        if m.group("n"):
            label = f"{int(m.group('n'))}/{int(m.group('d'))}"
        else:
            den = m.group("dw") or m.group("dw2") or m.group("dw3")
            label = f"{_NUMBERS[m.group('nw') or m.group('nw3')]}/{_DENOMINATORS[den]}"
        found.append(Match(m.start(), m.end(), label, m.group()))
    for m in timesig_phrase_pattern().finditer(text):
        label = timesig_phrase_label(m)
        found.append(Match(m.start(), m.end(), label, m.group(), via="phrase"))
    return found


def _with_fuzzy(text: str, found: list[Match], index: FuzzyIndex) -> list[Match]:
    """``found`` plus the misspelt words outside every match, in text order."""
    extra = []
    lookup = index.lookup
    for token in _TOKEN.finditer(text):
        word = token.group()
        hyphen = "-" in word
        hit = lookup(word.replace("-", "") if hyphen else word)  # cached: cheap for most words
        if hit is None and not hyphen:
            continue
        start, end = token.span()
        if (start and text[start - 1].isalnum()) or (end < len(text) and text[end].isalnum()):
            continue
        if any(m.start < end and start < m.end for m in found):
            continue
        if hit is not None:  # a word, or a compound misspelt as one ("hip-hopp")
            extra.append(Match(start, end, hit[1], word, via="fuzzy", form=hit[0]))
            continue
        for part in _PART.finditer(word):
            hit = lookup(part.group())
            if hit is not None:
                a, b = start + part.start(), start + part.end()
                extra.append(Match(a, b, hit[1], part.group(), via="fuzzy", form=hit[0]))
    if not extra:
        return found
    return sorted(found + extra, key=lambda m: m.start)


def _in_sense(match: Match, spans: list[tuple[int, int, str]]) -> Match:
    for start, end, reason in spans:
        if match.start < end and start < match.end and not match.sense:
            return Match(
                match.start,
                match.end,
                match.label,
                match.surface,
                match.needs_context,
                match.via,
                match.form,
                reason,
            )
    return match


def _drop_overlaps(matches: list[Match]) -> list[Match]:
    """Keep the earliest (then longest) of overlapping matches."""
    out: list[Match] = []
    for m in sorted(matches, key=lambda m: (m.start, -(m.end - m.start))):
        if not out or m.start >= out[-1].end:
            out.append(m)
    return out


def _aliases(
    *tables: Mapping[str, tuple[str, ...]], capitalized: frozenset[str] = frozenset()
) -> tuple[Alias, ...]:
    """Aliases of the tables in order; a form an earlier table has keeps its label."""
    out: dict[str, Alias] = {}
    for table in tables:
        for label, forms in table.items():
            for form in forms:
                text = normalize_text(form)
                out.setdefault(text, Alias(text, label, capitalized=text in capitalized))
    return tuple(out.values())


def _labels(*tables: Mapping[str, tuple[str, ...]]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(label for table in tables for label in table))


def _genre_aliases(tree: GenreTree) -> tuple[Alias, ...]:
    out: dict[str, Alias] = {}
    for title in tree.all_titles:
        if "/" in title or " - " in title:
            continue  # every alias of a compound title is listed explicitly
        text = normalize_text(title)
        out[text] = Alias(text, title, needs_context=title in GENRE_NEEDS_CONTEXT)
    for title, forms in GENRE_EXTRA_ALIASES.items():
        if title not in tree.titles.values():
            continue
        for form in forms:
            text = normalize_text(form)
            out.setdefault(text, Alias(text, title))
    for title, forms in SHORT_MISSPELLINGS.items():
        if title in tree.titles.values():
            for form in forms:
                out.setdefault(form, Alias(form, title))
    titles = {normalize_text(t) for t in tree.all_titles}
    for name, forms in OPEN_GENRES.items():
        if normalize_text(name) in titles:
            continue  # FMA has it: its title wins
        for form in forms:
            text = normalize_text(form)
            out.setdefault(text, Alias(text, name))
    return tuple(out.values())


@functools.lru_cache(maxsize=8)
def _fixed_lexicon(task: str) -> Lexicon:
    info = task_info(task)
    if task == "instrument":
        tables = (INSTRUMENT_ALIASES, OPEN_INSTRUMENTS, AGENT_NOUNS)
        tables += ({"oboe": SHORT_MISSPELLINGS["oboe"]},)
        return Lexicon(task, _aliases(*tables), _labels(*tables), plurals=True)
    if task == "composer":
        tables = (COMPOSER_ALIASES, OPEN_COMPOSERS)
        return Lexicon(task, _aliases(*tables), _labels(*tables), hedge_before=True)
    if task == "timesig":
        labels = tuple(dict.fromkeys((*info.candidates, *TIMESIG_ALIASES)))
        return Lexicon(
            task, _aliases(TIMESIG_ALIASES), labels, timesig_pattern=True, fuzzy=False
        )
    if task == "mood":
        aliases = _aliases(MOOD_ALIASES, MOOD_SYNONYMS)
        return Lexicon(task, aliases, info.candidates, suffixes="associations")
    if task == "regional":
        aliases = _aliases(REGIONAL_ALIASES, REGIONAL_SYNONYMS, capitalized=CAPITALIZED[task])
        return Lexicon(task, aliases, info.candidates, suffixes="none")
    raise ValueError(f"the {task} lexicon needs the FMA genre tree: lexicon_for('genre', tree)")


def lexicon_for(task: str, genre_tree: GenreTree | None = None) -> Lexicon:
    """The :class:`Lexicon` of ``task``; genre needs the FMA ``genre_tree`` (titles at run time).

    Examples
    --------
    >>> [m.label for m in lexicon_for("instrument").find("two violins and a french horn")]
    ['violin', 'horn']
    """
    task_info(task)
    if task != "genre":
        return _fixed_lexicon(task)
    if genre_tree is None:
        raise ValueError("the genre lexicon needs the FMA genre tree: lexicon_for('genre', tree)")
    return _genre_lexicon(genre_tree)


@functools.lru_cache(maxsize=4)
def _genre_lexicon(tree: GenreTree) -> Lexicon:
    labels = tuple(dict.fromkeys((*tree.all_titles, *(a.label for a in _genre_aliases(tree)))))
    return Lexicon("genre", _genre_aliases(tree), labels, hedge_nouns=True, hedge_before=True)
