"""How answers are read, second round: the classes a held-out check still found wrong.

Each row is (task, answer, what a careful annotator reads under the paper's eight rules),
worded afresh for each class: family words, other senses (a register, a dynamic, a
language, a figure of speech), real words near a name, short and hyphenated
misspellings, compound genre names, negation and exception scopes, self-corrections,
influences, mood nouns, beat counts, second-tier composers, and the binary and
true/false phrasings.
"""

from __future__ import annotations

import pytest

from lm_eval_rul.factual.reading.answers import read_choice, read_truefalse
from lm_eval_rul.factual.reading.fuzzy import FuzzyIndex
from lm_eval_rul.factual.reading.genres import GenreTree
from lm_eval_rul.factual.reading.lexicon import lexicon_for
from lm_eval_rul.factual.reading.parser import explain, parse_labels
from lm_eval_rul.testing.factual import FMA_GENRE_ROWS

#: The fixture's FMA rows plus real FMA titles these answers name (made-up ids).
_MORE = {9010: ("Soul-RnB", 0), 9017: ("Folk", 0), 9178: ("Be-Bop", 4), 9015: ("Blues", 0)}
TREE = GenreTree(
    {**{r[0]: r[3] for r in FMA_GENRE_ROWS}, **{k: v[0] for k, v in _MORE.items()}},
    {**{r[0]: r[2] for r in FMA_GENRE_ROWS}, **{k: v[1] for k, v in _MORE.items()}},
    {r[0]: r[1] for r in FMA_GENRE_ROWS},
)


def read(task: str, answer: str) -> tuple[str, ...]:
    return parse_labels(answer, lexicon_for(task, TREE if task == "genre" else None)).labels


CASES = [
    # "singing" describing an instrument's tone is no voice; someone singing is
    ("instrument", "The clarinet has a warm, singing tone over soft piano.", ("clarinet", "piano")),
    ("instrument", "A singing cello melody, then the harpsichord.", ("cello", "harpsichord")),
    ("instrument", "A tenor is singing over a guitar.", ("vocals", "guitar")),
    # a spelled-out meter after "in", without "time"
    ("timesig", "I believe it's in seven eight.", ("7/8",)),
    ("timesig", "Counting one two three four, it sits in three four.", ("3/4",)),
    # a family or class of instruments is no instrument label
    ("instrument", "A brass quintet led by a trumpet.", ("trumpet",)),
    ("instrument", "Some kind of plucked string instrument.", ()),
    ("instrument", "The organ, a keyboard instrument, fills the church.", ("organ",)),
    ("instrument", "Percussion instruments and a marimba.", ("marimba",)),
    ("instrument", "Lush strings under a solo oboe.", ("oboe",)),
    ("instrument", "A woodwind trio: oboe, clarinet, bassoon.", ("oboe", "clarinet", "bassoon")),
    ("instrument", "A keyboard and drums.", ("keyboard", "drums")),  # a keyboard is played
    # "the bass" as a register, "piano" as a dynamic
    ("instrument", "The viola takes the bass while the violins sing.", ("viola", "violin")),
    ("instrument", "A bassoon supplying the bass underneath a flute.", ("bassoon", "flute")),
    ("instrument", "He plays the bass and a drummer keeps time.", ("bass", "drums")),
    ("instrument", "The horn begins piano, then builds to fortissimo.", ("horn",)),
    ("instrument", "Cello, starting from piano and growing louder.", ("cello",)),
    ("instrument", "The oboe stays piano throughout.", ("oboe",)),
    ("instrument", "She plays piano and a singer joins.", ("piano", "vocals")),
    ("instrument", "A piano sonata.", ("piano",)),
    ("instrument", "A cello holding down the bass, a flute on top.", ("cello", "flute")),
    ("instrument", "The tuba gives a deep bass to the band.", ("tuba",)),
    ("instrument", "The clarinet, quietly (piano), then a horn.", ("clarinet", "horn")),
    ("instrument", "The piano (softly) enters.", ("piano",)),
    ("instrument", "A gamba doubling the bass, a harpsichord.", ("viola da gamba", "harpsichord")),
    ("instrument", "Organ, with a pedal bass and a ground bass below.", ("organ",)),
    ("composer", "Probably Brahms; a few turns recall Schumann.", ("Brahms",)),
    ("timesig", "The meter is constantly changing.", ("variable",)),
    # "-less", "-free", "everything but"
    ("instrument", "A piano-less trio: violin, cello, flute.", ("violin", "cello", "flute")),
    ("instrument", "All the instruments but the harp.", ()),
    ("instrument", "Nothing but the harp.", ("harp",)),
    ("genre", "A punk attitude, yet plainly pop.", ("Pop",)),
    # real English words near an instrument name
    ("instrument", "Rich harmonies on the guitar; harmonically simple.", ("guitar",)),
    ("instrument", "An organic, earthy cello sound.", ("cello",)),
    ("instrument", "Recorded in a cell of a monastery: a lute.", ("lute",)),
    # short and hyphenated misspellings
    ("instrument", "A flut and a harp.", ("flute", "harp")),
    ("instrument", "Some celo with piano.", ("cello", "piano")),
    ("instrument", "Violn, maybe two.", ("violin",)),
    ("instrument", "A solo obo.", ("oboe",)),
    ("genre", "Some hip-hp beats.", ("Hip-Hop",)),
    # genre: compound names and figures of speech
    ("genre", "Straight-up punk-rock energy.", ("Punk",)),
    ("genre", "It's bebop jazz from the fifties.", ("Be-Bop", "Jazz")),
    ("genre", "Rock-steady drumming in a soul-searching ballad; folk at heart.", ("Folk",)),
    ("genre", "Heart and soul, pure blues.", ("Blues",)),
    ("regional", "A Latin sacred motet for choir.", ()),
    ("regional", "A choir singing Latin plainchant, with Irish pipes.", ("celtic",)),
    ("genre", "Somewhere between indie pop and folk rock.", ("Indie Pop", "Folk Rock")),
    ("regional", "An Eastern European dance, Balkan brass.", ("slavic",)),
    ("instrument", "A Bosendorfer, beautifully voiced.", ("piano",)),
    ("instrument", "A stairway of notes on the oboe.", ("oboe",)),  # no Steinway
    # negation, exception and self-correction scopes
    ("instrument", "A viola duo, not viola and cello.", ("viola",)),
    ("instrument", "No oboe, and the flute leads.", ("flute",)),
    ("instrument", "No instruments besides the harp.", ("harp",)),
    ("instrument", "Nothing other than a clarinet is heard.", ("clarinet",)),
    ("instrument", "Any instrument except the tuba would fit; I hear a trombone.", ("trombone",)),
    ("instrument", "Apart from the piano there is a cello.", ("piano", "cello")),
    ("timesig", "It does not sound like 3/4 to me; I'd say 6/8.", ("6/8",)),
    ("timesig", "This doesn't feel like it's in 4/4.", ()),
    ("composer", "Reminds me of Chopin's nocturnes... no, actually it's Field.", ()),
    ("composer", "Sounds like Haydn... no, wait, it's Mozart.", ("Mozart",)),
    ("composer", "Written in Handel's style, probably by Geminiani.", ("Geminiani",)),
    ("composer", "Mozart's influence shows, but I think it is Hummel.", ("Hummel",)),
    ("composer", "This is Mozart's Requiem.", ("Mozart",)),
    # a term raised in a question and answered with another
    ("instrument", "Could it be a viola? I'd rather say a violin.", ("violin",)),
    ("instrument", "Oboe? Clarinet? I'll settle on clarinet.", ("clarinet",)),
    ("instrument", "Is there a harp? Yes, and a flute too.", ("harp", "flute")),
    ("instrument", "Is it a viola or a cello? It's a cello.", ("cello",)),
    # composers of the second tier
    ("composer", "Probably Locatelli or Viotti.", ("Locatelli", "Viotti")),
    ("composer", "Boccherini, or maybe Kreutzer.", ("Boccherini", "Kreutzer")),
    ("composer", "Marin Marais, a viol piece.", ("Marais",)),
    # mood nouns and synonyms
    ("mood", "A feeling of pure joy.", ("happy",)),
    ("mood", "It is bursting with energy.", ("energetic",)),
    ("mood", "A lonesome, desolate tune.", ("sad",)),
    ("mood", "An air of foreboding.", ("suspenseful",)),
    # beats per bar, counts, changing meters
    ("timesig", "I'd count it in four.", ("4/4",)),
    ("timesig", "It moves in three, like a dance.", ("3/4",)),
    ("timesig", "Two beats each, a march.", ("2/4",)),
    ("timesig", "Its bars have five beats.", ("5/4",)),
    ("timesig", "Shifting meters all the way through.", ("variable",)),
    ("timesig", "A song in three verses.", ()),
    ("timesig", "Written in four parts.", ()),
]


@pytest.mark.parametrize("task, answer, expected", CASES)
def test_labels_read_as_an_annotator_reads_them(task, answer, expected):
    assert read(task, answer) == expected


def test_a_family_word_is_read_and_explained_but_never_predicted():
    result = parse_labels("Strings and a harp.", lexicon_for("instrument"))
    assert result.labels == ("harp",)
    assert result.mentions[0].dropped == "other-sense"
    assert "family" in explain(result)[0]


def test_a_four_letter_slip_reads_only_when_it_is_no_english_word():
    index = FuzzyIndex([("oboe", "oboe"), ("cello", "cello"), ("bass", "bass"), ("tuba", "tuba")])
    assert index.lookup("obeo") == ("oboe", "oboe")
    assert index.lookup("celo") == ("cello", "cello")
    assert index.lookup("base") is None and index.lookup("tube") is None
    assert index.lookup("bas") is None  # three letters: never guessed


def test_a_tie_goes_to_the_form_the_word_drops_letters_of():
    index = FuzzyIndex([("violin", "violin"), ("viola", "viola")])
    assert index.lookup("violn") == ("violin", "violin")
    index = FuzzyIndex([("funny", "funny"), ("funky", "funky")])
    assert index.lookup("funmy") is None  # a real tie: nothing


TRUEFALSE = [
    ("I honestly can't tell.", None),
    ("Highly unlikely.", False),
    ("Not necessarily true or false.", None),
    ("Not necessarily.", None),
    ("T.", True),
    ("f", False),
    ("Doubtful.", False),
    ("Probably.", True),
    ("Probably not.", False),
    ("The flute is likely missing.", None),  # "likely" alone answers only on its own
    ("Partly true.", None),
    ("I am unable to hear the audio, so I cannot answer.", None),
]


@pytest.mark.parametrize("answer, expected", TRUEFALSE)
def test_true_false_answers(answer, expected):
    assert read_truefalse(answer).value == expected


BINARY = [
    ("instrument", ["oboe", "flute"], "Of oboe and flute, it is the flute.", 1),
    ("instrument", ["oboe", "flute"], "Out of oboe and flute: oboe.", 0),
    ("instrument", ["oboe", "flute"], "(A)", 0),
    ("instrument", ["oboe", "flute"], "My answer: option (b)", 1),
    ("instrument", ["oboe", "flute"], "b", 1),
    ("composer", ["Bach", "Ravel"], "Both Bach and Ravel seem possible; I'd pick Ravel.", 1),
    ("composer", ["Bach", "Ravel"], "I'd go with Bach over Ravel.", 0),
    ("composer", ["Bach", "Ravel"], "Ravel (it might also be Bach).", 1),
    ("composer", ["Bach", "Ravel"], "Bach, though it could be Ravel.", 0),
    ("instrument", ["oboe", "flute"], "The oboe plays over the flute.", None),
    ("instrument", ["oboe", "flute"], "Oboe or flute? Flute.", 1),
    ("instrument", ["oboe", "flute"], "A flute. An oboe would sound reedier.", 1),
    ("composer", ["Bach", "Ravel"], "It's Ravel; Bach would be more contrapuntal.", 1),
]


@pytest.mark.parametrize("task, options, answer, expected", BINARY)
def test_binary_choices(task, options, answer, expected):
    assert read_choice(answer, options, lexicon_for(task)).value == expected
