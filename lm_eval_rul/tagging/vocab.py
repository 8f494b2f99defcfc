"""The tagging vocabularies, their display forms and the free-text aliases of every tag.

One source of truth per vocabulary:

* GTZAN: the ten genres (:data:`GTZAN_GENRES`, the release's folder names);
* MTG-Jamendo: whatever ``category---tag`` columns the split's TSV names (split-0's test
  has 87 genre, 56 mood/theme, 40 instrument and 50 top-50 tags); the category prefix is
  kept in the label (``genre---hiphop``), the part after it is what the model reads;
* MagnaTagATune: the 50 tags of the top-50 split, in the label matrix's order
  (:data:`MTT_TOP50`), negative tags (``no vocals``) included;
* NSynth: the 11 instrument families (:data:`NSYNTH_FAMILIES`) and the 3 sources
  (:data:`NSYNTH_SOURCES`), as ``examples.json`` writes them (``synth_lead``);
* Medley-solos-DB: its 8 instruments in ``instrument_id`` order
  (:data:`MEDLEY_INSTRUMENTS`), as its metadata CSV writes them.

:func:`tag_text` is how a tag is shown to the model ("hip hop", "alternative rock");
:func:`tag_lexicon` builds the lexicon parser's aliases
(:class:`~lm_eval_rul.factual.reading.lexicon.Lexicon`) of a vocabulary: the tag as
written, its spaced and hyphenated spellings (:data:`COMPOUND_WORDS`), every spelling of
a joining "n" (:data:`JOINERS`: "rock 'n' roll", "rock n' roll", "drum and bass",
"drum'n'bass"...) and the few names listed in :data:`EXTRA_ALIASES`. Longest match first,
so "alternative rock" reads ``alternativerock`` and not also ``rock``.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from ..factual.reading.lexicon import Alias, Lexicon, normalize_text

__all__ = [
    "GTZAN_GENRES",
    "MTT_TOP50",
    "MTG_CATEGORIES",
    "NSYNTH_FAMILIES",
    "NSYNTH_SOURCES",
    "MEDLEY_INSTRUMENTS",
    "COMPOUND_WORDS",
    "EXTRA_ALIASES",
    "JOINERS",
    "tag_name",
    "tag_text",
    "tag_aliases",
    "tag_lexicon",
]

#: GTZAN's ten genres, as its folders name them (alphabetical, the options' order).
GTZAN_GENRES: tuple[str, ...] = (
    "blues",
    "classical",
    "country",
    "disco",
    "hiphop",
    "jazz",
    "metal",
    "pop",
    "reggae",
    "rock",
)

#: MagnaTagATune's top-50 tags in the order of the split's label matrix (Lee et al. 2017).
MTT_TOP50: tuple[str, ...] = (
    "guitar",
    "classical",
    "slow",
    "techno",
    "strings",
    "drums",
    "electronic",
    "rock",
    "fast",
    "piano",
    "ambient",
    "beat",
    "violin",
    "vocal",
    "synth",
    "female",
    "indian",
    "opera",
    "male",
    "singing",
    "vocals",
    "no vocals",
    "harpsichord",
    "loud",
    "quiet",
    "flute",
    "woman",
    "male vocal",
    "no vocal",
    "pop",
    "soft",
    "sitar",
    "solo",
    "man",
    "classic",
    "choir",
    "voice",
    "new age",
    "dance",
    "male voice",
    "female vocal",
    "beats",
    "harp",
    "cello",
    "no voice",
    "weird",
    "country",
    "metal",
    "female voice",
    "choral",
)

#: NSynth's instrument families, in ``instrument_family`` order (magenta's dataset page).
NSYNTH_FAMILIES: tuple[str, ...] = (
    "bass",
    "brass",
    "flute",
    "guitar",
    "keyboard",
    "mallet",
    "organ",
    "reed",
    "string",
    "synth_lead",
    "vocal",
)
#: NSynth's instrument sources, in ``instrument_source`` order.
NSYNTH_SOURCES: tuple[str, ...] = ("acoustic", "electronic", "synthetic")
#: Medley-solos-DB's instruments; the position is the metadata CSV's ``instrument_id``.
MEDLEY_INSTRUMENTS: tuple[str, ...] = (
    "clarinet",
    "distorted electric guitar",
    "female singer",
    "flute",
    "piano",
    "tenor saxophone",
    "trumpet",
    "violin",
)

#: MTG-Jamendo's category prefixes, by task.
MTG_CATEGORIES: dict[str, tuple[str, ...]] = {
    "genre": ("genre",),
    "moodtheme": ("mood/theme",),
    "instrument": ("instrument",),
    "top50tags": ("genre", "mood/theme", "instrument"),
}

#: Tags written as one word -> the words they are spoken as (MTG-Jamendo, GTZAN).
COMPOUND_WORDS: dict[str, str] = {
    "hiphop": "hip hop",
    "alternativerock": "alternative rock",
    "easylistening": "easy listening",
    "popfolk": "pop folk",
    "poprock": "pop rock",
    "instrumentalpop": "instrumental pop",
    "newage": "new age",
    "darkambient": "dark ambient",
    "triphop": "trip hop",
    "singersongwriter": "singer songwriter",
    "electropop": "electro pop",
    "punkrock": "punk rock",
    "darkwave": "dark wave",
    "instrumentalrock": "instrumental rock",
    "synthpop": "synth pop",
    "drumnbass": "drum n bass",
    "postrock": "post rock",
    "classicrock": "classic rock",
    "rocknroll": "rock n roll",
    "hardrock": "hard rock",
    "newwave": "new wave",
    "eurodance": "euro dance",
    "bluesrock": "blues rock",
    "worldfusion": "world fusion",
    "acidjazz": "acid jazz",
    "deephouse": "deep house",
    "jazzfusion": "jazz fusion",
    "bossanova": "bossa nova",
    "chillout": "chill out",
    "downtempo": "down tempo",
    "breakbeat": "break beat",
    "dubstep": "dub step",
    "electricguitar": "electric guitar",
    "acousticguitar": "acoustic guitar",
    "drummachine": "drum machine",
    "electricpiano": "electric piano",
    "classicalguitar": "classical guitar",
    "doublebass": "double bass",
    "acousticbassguitar": "acoustic bass guitar",
    "pipeorgan": "pipe organ",
    "filmscore": "film score",
    "synth_lead": "synth lead",
}

#: More names of a tag (normalised text -> the tag's name without category).
EXTRA_ALIASES: dict[str, tuple[str, ...]] = {
    "drumnbass": ("dnb",),
    "rnb": ("r&b", "r and b", "rhythm and blues"),
    "hiphop": ("hip-hop",),
    "idm": ("intelligent dance music",),
    "edm": ("electronic dance music",),
    "80s": ("eighties",),
    "90s": ("nineties",),
    "70s": ("seventies",),
    "60s": ("sixties",),
    "synthesizer": ("synthesiser", "synth"),
    "saxophone": ("sax",),
    # NSynth and Medley-solos-DB: names a free-text answer gives these labels, each unique
    # within its own vocabulary (an answer naming two labels is unparsed, never guessed)
    "synth_lead": (
        "lead synth",
        "synthesizer lead",
        "synthesiser lead",
        "synthesizer",
        "synthesiser",
        "synth",
    ),
    "synthetic": ("synthesized", "synthesised"),
    "distorted electric guitar": ("distorted guitar", "electric guitar", "guitar"),
    "female singer": (
        "singer",
        "female voice",
        "female vocal",
        "female vocals",
        "voice",
        "vocals",
        "singing",
    ),
    "tenor saxophone": ("tenor sax", "saxophone", "sax"),
}


#: How people write the "n" joining two words ("rock n roll", "drum n bass"): with
#: apostrophes on either side or both, as "and" or "&"; spaced, and without spaces when
#: both apostrophes are there ("rock'n'roll").
JOINERS: tuple[str, ...] = (" n ", " 'n' ", " n' ", " 'n ", " and ", " & ", "'n'", " 'n'", "'n' ")


def _joined_forms(form: str) -> list[str]:
    """Every spelling of ``form``'s joining "n" (:data:`JOINERS`; none when it has none).

    >>> _joined_forms("rock n roll")[:3]
    ['rock n roll', "rock 'n' roll", "rock n' roll"]
    """
    words = form.split(" ")
    if len(words) < 3 or "n" not in words[1:-1]:
        return []
    at = words.index("n", 1)
    left, right = " ".join(words[:at]), " ".join(words[at + 1 :])
    return [f"{left}{joiner}{right}" for joiner in JOINERS]


def tag_name(tag: str) -> str:
    """The tag without its MTG-Jamendo category (``genre---hiphop`` -> ``hiphop``)."""
    return tag.rsplit("---", 1)[-1]


def tag_text(tag: str) -> str:
    """How a tag is written for the model: its words, without the category.

    >>> tag_text("genre---alternativerock"), tag_text("no vocals"), tag_text("hiphop")
    ('alternative rock', 'no vocals', 'hip hop')
    """
    name = tag_name(tag)
    return COMPOUND_WORDS.get(name, name)


def tag_aliases(tag: str) -> tuple[str, ...]:
    """Every normalised surface form of ``tag`` (its name, spaced, hyphenated, extras).

    >>> tag_aliases("genre---hiphop")
    ('hiphop', 'hip hop', 'hip-hop')
    """
    name = tag_name(tag)
    spoken = COMPOUND_WORDS.get(name, name)
    forms = [
        name,
        spoken,
        spoken.replace(" ", "-"),
        *_joined_forms(spoken),
        *EXTRA_ALIASES.get(name, ()),
    ]
    if "/" in name:
        forms.append(name.replace("/", " "))
    return tuple(dict.fromkeys(normalize_text(f) for f in forms if f))


@functools.lru_cache(maxsize=32)
def _lexicon(name: str, tags: tuple[str, ...], plurals: bool) -> Lexicon:
    aliases: dict[str, Alias] = {}
    for tag in tags:
        for text in tag_aliases(tag):
            if text in aliases and aliases[text].label != tag:
                # an extra alias that is also another tag's own name stays that tag's
                if text == normalize_text(tag_name(tag)):
                    aliases[text] = Alias(text, tag)
                continue
            aliases.setdefault(text, Alias(text, tag))
    return Lexicon(
        task=f"tagging:{name}",
        aliases=tuple(aliases.values()),
        labels=tags,
        plurals=plurals,
        fuzzy=False,
    )


def tag_lexicon(name: str, tags: Sequence[str]) -> Lexicon:
    """The lexicon parser's lexicon of a vocabulary (built once per vocabulary).

    Plural forms ("guitars") are read for vocabularies without a tag that is another
    tag's plural (MagnaTagATune has both ``vocal`` and ``vocals``: there, exact forms only).
    """
    tags = tuple(tags)
    names = {normalize_text(tag_name(t)) for t in tags}
    plurals = not any(f"{n}s" in names for n in names)
    return _lexicon(name, tags, plurals)
