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
    "FAMILY_LABELS",
    "SENSE_LABELS",
    "CAPITALIZED",
    "TIMESIG_PHRASES",
    "sense_pattern",
    "timesig_phrases",
    "timesig_label_of",
    "timesig_phrase_pattern",
    "timesig_phrase_label",
]

_S = r"[\s\-]+"  # a space or hyphen run, as in aliases
#: Words for a low register ("provides a deep bass").
_LOW = r"(?:deep|low|solid|firm|steady|rich|sonorous|resonant|sustained|walking|strong)"
#: What follows "Latin" when it names the language ("Latin liturgical chants").
_LATIN = (rf"(?:(?:liturgical|sacred|church|gregorian|medieval){_S})?(?:text|lyrics|words|"
          r"language|mass|hymns?|chants?|chanting|liturgy|liturgical|verses|plainchant|"
          r"plainsong|prayers?|psalms?|motets?|requiem)")

#: task -> ((regex, why the words inside are not that label), ...).
SENSES: dict[str, tuple[tuple[str, str], ...]] = {
    "instrument": (
        (
            rf"bass{_S}?lines?|bass{_S}(?:parts?|register|notes?|clef|voices?|range|figures?|"
            rf"ostinato|pedal)|in{_S}the{_S}bass\b(?!{_S}(?:guitar|drum|clarinet))",
            "a register or part, not the instrument bass",
        ),
        (rf"drum{_S}?(?:and|&|n|'n'|'n)\s*bass", "the genre drum and bass"),
        (
            rf"(?:carry|carries|carrying|provides?|providing|supply|supplies|supplying|"
            rf"adds?|adding|gives?|giving|forms?|forming|holds?|holding|doubles?|doubling|reinforces?|reinforcing|takes?|taking|anchors?|anchoring|covers?|covering)"
            rf"(?:{_S}down)?{_S}(?:the|a(?={_S}{_LOW}))(?:{_S}{_LOW})?{_S}bass\b(?!{_S}(?:guitar|drum|clarinet|player|flute))",
            "a register or part, not the instrument bass",
        ),
        (
            rf"(?:pedal|walking|alberti|figured|ground|continuo|drone){_S}bass(?:es)?\b",
            "a bass part, not the instrument bass",
        ),
        (
            rf"piano{_S}(?:dynamics?|marking)|(?:played|marked|sung){_S}piano\b(?!{_S}(?:and|with))"
            rf"|(?:enters?|entering|starts?|starting|begins?|beginning|opens?|ends?|ending|closes?|"
            rf"returns?|remains?|stays?|fades?{_S}to|drops?{_S}to|sempre|subito|molto|mezzo)"
            rf"{_S}piano\b(?!{_S}(?:with|trio|quartet|quintet|concerto|sonata|part|solo))"
            rf"|(?:from{_S})?piano(?:{_S}\w+)?{_S}(?:and{_S})?(?:then{_S})?(?:swells?|swelling|"
            rf"grows?|growing|builds?|building|rises?|crescendos?|to{_S}forte|to{_S}fortissimo)\b"
            rf"|(?:forte|fortissimo|loud){_S}(?:to|and){_S}piano\b|piano{_S}(?:or|/|and){_S}pianissimo"
            rf"|pianissimo{_S}(?:or|/|and){_S}piano"
            r"|(?:softly|quietly|soft|quiet|gently)\s*\(\s*piano\s*\)",
            "the dynamic marking piano (softly)",
        ),
        (
            rf"(?:(?:bowed|plucked|struck|blown|electric|acoustic){_S})?(?:string|stringed|woodwind|"
            rf"wind|brass|keyboard|percussion|reed|double{_S}reed|orchestral){_S}(?:instruments?|"
            rf"family|families|section|ensemble|quartet|quintet|trio|choir|band|orchestra)"
            rf"|(?:strings|woodwinds?|brass|winds)\b",
            "a family or class of instruments, not one instrument",
        ),
        (rf"(?:jazz|blues|rock){_S}organ{_S}trio", "a band line-up"),
        (
            rf"singing(?=(?:{_S}(?!the\b|a\b|an\b|along\b|over\b|with\b|in\b)[a-z]+)?{_S}"
            rf"(?:tone|qualit(?:y|ies)|lines?|melod(?:y|ies)|sound|timbre|legato|phrasing|"
            rf"phrases?|cantabile|lyricism|voice)\b)",
            "an instrument's singing (lyrical) tone, not vocals",
        ),
    ),
    "genre": (
        (rf"classical{_S}guitar(?:ists?|s)?", "an instrument, not the genre Classical"),
        (rf"classical{_S}(?:training|technique)", "a training, not the genre"),
        (rf"metal{_S}(?:percussion|bars|chimes|plates|pipes|strings)", "a material"),
        (
            rf"(?:sung|singing|sings|chanted|chanting|text|lyrics|words){_S}in{_S}latin\b"
            rf"|latin{_S}{_LATIN}",
            "the Latin language",
        ),
        (
            rf"rock{_S}(?:solid|steady|bottom|hard)|soul{_S}(?:stirring|searching|mates?|less)"
            rf"|heart{_S}and{_S}soul|(?:body|mind){_S}and{_S}soul|folk{_S}(?:tales?|lore)",
            "a figure of speech",
        ),
        (rf"spanish{_S}guitar", "an instrument"),
        (rf"(?:a|the)\s+country\b(?!{_S}(?:music|song|track|tune|style|genre))", "a land"),
    ),
    "regional": (
        (
            rf"(?:sung|singing|sings|chanted|chanting|text|lyrics|words|a\s+choir){_S}in{_S}latin\b"
            rf"|\bin{_S}latin\b(?!{_S}american?)"
            rf"|latin{_S}{_LATIN}",
            "the Latin language, not Latin American",
        ),
        (
            rf"french{_S}horn|english{_S}horn|turkish{_S}march|indian{_S}summer",
            "a name, not a regional style",
        ),
    ),
    "mood": (
        (
            rf"romantic{_S}(?:era|period|style|composers?|repertoire|tradition|age|symphony)"
            rf"|(?:late|early|high|post){_S}romantic(?:ism)?",
            "the Romantic period, not a mood",
        ),
        (rf"dark{_S}(?:tone|timbre|chocolate)", "a timbre"),
        (rf"funny{_S}(?:thing|enough)", "a figure of speech"),
        (rf"happy{_S}(?:birthday|accident)", "a name"),
    ),
    "composer": (),
    "timesig": (),
}

#: task -> the labels its senses can take back; a text with no match of these skips the
#: sense pass (speed). Tasks not listed always run it. Extend it with :data:`SENSES`.
SENSE_LABELS: dict[str, frozenset[str]] = {
    "instrument": frozenset(
        {
            "bass",
            "drums",
            "piano",
            "organ",
            "keyboard",
            "percussion",
            "strings",
            "woodwinds",
            "brass",
            "vocals",
        }
    ),
}

#: Instrument labels that name a family or class of instruments, not one instrument: read
#: (so the explanation shows them) and always dropped as ``other-sense``.
FAMILY_LABELS: frozenset[str] = frozenset({"strings", "woodwinds", "brass"})

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
    (
        rf"(?P<n>{_NUM_WORD}|[2-57]){_S}(?:strong{_S})?(?:beats|counts|pulses){_S}"
        r"(?:to|per|in)\s+(?:the|a|each|every)?\s*(?:bar|measure)",
        "{n}/4",
    ),
    (
        rf"(?P<n>{_NUM_WORD}|[2-57]){_S}(?:beats|counts){_S}(?:each|apiece|a{_S}bar|a{_S}measure)"
        rf"|(?:bars?|measures?){_S}(?:have|has|of|with|contain|contains|hold|holds){_S}"
        rf"(?P<n2>{_NUM_WORD}|[2-57]){_S}(?:beats|counts)",
        "{n}/4",
    ),
    (
        rf"(?:(?:it'?s|it{_S}is|is|in|counted|count{_S}it|counts|felt|feel{_S}it|feels|"
        rf"goes|moves|think{_S}of{_S}it){_S})in{_S}(?P<n3>two|three|four|[234])"
        r"(?=\s*(?:[.,;!)]|$|\s+(?:beats|time|to\s+the\s+bar)\b))",
        "{n}/4",
    ),
    (
        rf"(?:mixed|changing|shifting|variable|alternating|multiple|several){_S}(?:meters|metres|"
        rf"time{_S}signatures)",
        "variable",
    ),
    (
        rf"{_METER}\s+(?:is|seems|feels|sounds|appears|remains)\s+(?:\w+\s+)?"
        r"(?:irregular|odd|asymmetric(?:al)?|uneven|unusual|lopsided)",
        "irregular",
    ),
    (
        rf"(?:uneven|unusual|lopsided|asymmetrical|odd|irregular){_S}(?:meters?|metres?|"
        r"time{_S}signatures?|time|metered|meter)",
        "irregular",
    ),
    (
        rf"{_METER}\s+(?:is|seems|feels|sounds|appears|remains)\s+(?:\w+\s+)?(?:variable|changing|"
        r"mixed|shifting|fluid)",
        "variable",
    ),
    (
        r"(?:meter|metre|time\s+signatures?)\s+(?:keeps\s+)?(?:changes|changing|shifts|shifting|"
        r"varies|vary|switches|alternates)",
        "variable",
    ),
)


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
    groups = match.groupdict()
    n = groups.get("n") or groups.get("n2") or groups.get("n3") or ""
    return template.format(n=_NUM.get(n, n))


@functools.lru_cache(maxsize=1)
def timesig_phrase_pattern() -> re.Pattern[str]:
    """:data:`TIMESIG_PHRASES` as one alternation (one pass over a text), phrase ``i`` in
    group ``p<i>``; read a match with :func:`timesig_phrase_label`."""
    parts = []
    for i, (regex, _) in enumerate(TIMESIG_PHRASES):
        regex = re.sub(r"\(\?P<(n\d*)>", lambda m, i=i: f"(?P<t{i}_{m.group(1)}>", regex)
        parts.append(f"(?P<p{i}>{regex})")
    return re.compile(rf"(?<![a-z0-9/])(?:{'|'.join(parts)})(?![a-z0-9])")


def timesig_phrase_label(match: re.Match[str]) -> str:
    """The label of a :func:`timesig_phrase_pattern` match."""
    i = int(str(match.lastgroup)[1:])
    template = TIMESIG_PHRASES[i][1]
    if "{n}" not in template:
        return template
    n = next(v for k, v in match.groupdict().items() if v and k.startswith(f"t{i}_"))
    return template.format(n=_NUM.get(n, n))
