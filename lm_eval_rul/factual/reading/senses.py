"""Word senses: multi-word phrases read before single words, and time-signature phrases.

:data:`SENSES` lists, per task, phrases in which a label's word means something else
("bass line": a register, not the instrument bass; "classical guitar": an instrument,
not the genre Classical; "drum and bass": a genre, not drums + bass; "sung in Latin": a
language). A lexicon match inside such a phrase is dropped with the reason
``other-sense``. :data:`CAPITALIZED` lists forms that count only when written with a
capital letter ("Polish" folk, not "a glossy polish"). :data:`TIMESIG_PHRASES` are the
words for a meter ("three-quarter time", "waltz time" -> 3/4; "four beats to the bar",
"common time" -> 4/4; "the meter is irregular" -> irregular, OverClocked ReMix's
``timesig-irregular`` tag; "the meter keeps changing" -> variable, ``timesig-variable``).
Patterns are written for normalised text (lower case, no accents, ASCII dashes).
"""

from __future__ import annotations

import functools
import re

__all__ = [
    "SENSES",
    "CAPITALIZED",
    "TIMESIG_PHRASES",
    "sense_pattern",
    "timesig_phrases",
    "timesig_label_of",
]

_S = r"[\s\-]+"  # a space or hyphen run, as in aliases

#: task -> ((regex, why the words inside are not that label), ...).
SENSES: dict[str, tuple[tuple[str, str], ...]] = {
    "instrument": (
        (rf"bass{_S}?lines?|bass{_S}(?:parts?|register|notes?|clef|voices?|range|figures?|"
         rf"ostinato|pedal)|in{_S}the{_S}bass\b(?!{_S}(?:guitar|drum|clarinet))",
         "a register or part, not the instrument bass"),
        (rf"drum{_S}?(?:and|&|n|'n'|'n)\s*bass", "the genre drum and bass"),
        (rf"piano{_S}(?:dynamics?|marking)|(?:played|marked|sung){_S}piano\b(?!{_S}(?:and|with))",
         "the dynamic marking piano (softly)"),
        (rf"(?:jazz|blues|rock){_S}organ{_S}trio", "a band line-up"),
    ),
    "genre": (
        (rf"classical{_S}guitar(?:ists?|s)?", "an instrument, not the genre Classical"),
        (rf"classical{_S}(?:training|technique)", "a training, not the genre"),
        (rf"metal{_S}(?:percussion|bars|chimes|plates|pipes|strings)", "a material"),
        (rf"(?:sung|singing|sings|chanted|chanting|text|lyrics|words){_S}in{_S}latin\b"
         rf"|latin{_S}(?:text|lyrics|words|language|mass|hymns?|chant|liturgy|verses)",
         "the Latin language"),
        (rf"spanish{_S}guitar", "an instrument"),
        (rf"(?:a|the)\s+country\b(?!{_S}(?:music|song|track|tune|style|genre))", "a land"),
    ),
    "regional": (
        (rf"(?:sung|singing|sings|chanted|chanting|text|lyrics|words|a\s+choir){_S}in{_S}latin\b"
         rf"|\bin{_S}latin\b(?!{_S}american?)"
         rf"|latin{_S}(?:text|lyrics|words|language|mass|hymns?|chant|liturgy|verses)",
         "the Latin language, not Latin American"),
        (rf"french{_S}horn|english{_S}horn|turkish{_S}march|indian{_S}summer",
         "a name, not a regional style"),
    ),
    "mood": (
        (rf"romantic{_S}(?:era|period|style|composers?|repertoire|tradition|age|symphony)"
         rf"|(?:late|early|high|post){_S}romantic(?:ism)?",
         "the Romantic period, not a mood"),
        (rf"dark{_S}(?:tone|timbre|chocolate)", "a timbre"),
        (rf"funny{_S}(?:thing|enough)", "a figure of speech"),
        (rf"happy{_S}(?:birthday|accident)", "a name"),
    ),
    "composer": (),
    "timesig": (),
}  # fmt: skip

#: task -> forms that count only with a capital first letter in the answer.
CAPITALIZED: dict[str, frozenset[str]] = {"regional": frozenset({"polish"})}

_NUM = {"two": 2, "three": 3, "four": 4, "five": 5, "seven": 7}
_NUM_WORD = "|".join(_NUM)
_METER = r"(?:meter|metre|time\s+signature|time|pulse|rhythm)"

#: (regex, label or a template with ``{n}``): words for a meter.
TIMESIG_PHRASES: tuple[tuple[str, str], ...] = (
    (rf"three{_S}quarters?{_S}time|3/4{_S}time", "3/4"),
    (rf"waltz{_S}(?:time|meter|metre)", "3/4"),
    (rf"two{_S}quarters?{_S}time|march{_S}time", "2/4"),
    (rf"four{_S}quarters?{_S}time", "4/4"),
    (rf"(?:simple{_S})?triple{_S}(?:meter|metre|time)", "3/4"),
    (rf"(?:simple{_S})?duple{_S}(?:meter|metre|time)", "2/4"),
    (rf"(?:simple{_S})?quadruple{_S}(?:meter|metre|time)", "4/4"),
    (rf"compound{_S}duple(?:{_S}(?:meter|metre|time))?", "6/8"),
    (rf"compound{_S}triple(?:{_S}(?:meter|metre|time))?", "9/8"),
    (rf"compound{_S}quadruple(?:{_S}(?:meter|metre|time))?", "12/8"),
    (rf"(?P<n>{_NUM_WORD}|[2-57]){_S}(?:strong{_S})?(?:beats|counts|pulses){_S}"
     r"(?:to|per|in)\s+(?:the|a|each|every)?\s*(?:bar|measure)", "{n}/4"),
    (rf"{_METER}\s+(?:is|seems|feels|sounds|appears|remains)\s+(?:\w+\s+)?"
     r"(?:irregular|odd|asymmetric(?:al)?|uneven|unusual|lopsided)", "irregular"),
    (rf"(?:uneven|unusual|lopsided|asymmetrical|odd|irregular){_S}(?:meters?|metres?|"
     r"time{_S}signatures?|time|metered|meter)", "irregular"),
    (r"(?:meter|metre|time\s+signatures?)\s+(?:keeps\s+)?(?:changes|changing|shifts|shifting|"
     r"varies|vary|switches|alternates)", "variable"),
)  # fmt: skip


@functools.lru_cache(maxsize=8)
def sense_pattern(task: str) -> tuple[re.Pattern[str], tuple[str, ...]] | None:
    """One compiled alternation of ``task``'s senses and the reason of each group."""
    senses = SENSES.get(task, ())
    if not senses:
        return None
    groups = "|".join(f"({regex})" for regex, _ in senses)
    return re.compile(rf"(?<![a-z0-9])(?:{groups})(?![a-z0-9])"), tuple(w for _, w in senses)


@functools.lru_cache(maxsize=1)
def timesig_phrases() -> tuple[tuple[re.Pattern[str], str], ...]:
    """:data:`TIMESIG_PHRASES` compiled (the ``{n}`` of a template read from group ``n``)."""
    return tuple(
        (re.compile(rf"(?<![a-z0-9/]){regex}(?![a-z0-9])"), label)
        for regex, label in TIMESIG_PHRASES
    )


def timesig_label_of(match: re.Match[str], template: str) -> str:
    """The label of a phrase match (``{n}`` filled from a number word or digit)."""
    if "{n}" not in template:
        return template
    n = match.group("n")
    return template.format(n=_NUM.get(n, n))
