"""How answers are read, kind by kind: new hand-written answers worded as audio LMs word them.

Each row is (task, answer, what a careful annotator reads under the paper's eight rules).
The kinds: rejection and negation scopes, misspellings, agent nouns, word senses,
time-signature phrases, names outside the vocabulary, regional phrasing, mood words,
true/false answers and binary choices.
"""

from __future__ import annotations

import pytest

from lm_eval_rul.factual.answers import read_choice, read_truefalse
from lm_eval_rul.factual.genres import GenreTree
from lm_eval_rul.factual.labels import out_of_vocabulary
from lm_eval_rul.factual.lexicon import lexicon_for
from lm_eval_rul.factual.parser import parse_labels
from lm_eval_rul.testing.factual import FMA_GENRE_ROWS

#: The fixture's FMA rows plus three real FMA titles these answers name (made-up ids).
_MORE = {9005: ("Classical", 0), 9181: ("Drum & Bass", 15), 9027: ("Lo-Fi", 12)}
TREE = GenreTree(
    {**{r[0]: r[3] for r in FMA_GENRE_ROWS}, **{k: v[0] for k, v in _MORE.items()}},
    {**{r[0]: r[2] for r in FMA_GENRE_ROWS}, **{k: v[1] for k, v in _MORE.items()}},
    {r[0]: r[1] for r in FMA_GENRE_ROWS},
)


def read(task: str, answer: str) -> tuple[str, ...]:
    return parse_labels(answer, lexicon_for(task, TREE if task == "genre" else None)).labels


SCOPES = [
    ("instrument", "Is this a viola? No, it's a cello playing high.", ("cello",)),
    ("instrument", "Could that be a flute? Nope, a piccolo.", ("piccolo",)),
    ("instrument", "A trumpet? Not really, it's a French horn.", ("horn",)),
    ("instrument", "It sounds like a clarinet - no, wait, an oboe.", ("oboe",)),
    ("instrument", "A violin, or rather a viola.", ("viola",)),
    ("instrument", "At first I thought it was a harpsichord, but it is a piano.", ("piano",)),
    ("instrument", "The bassoon could be mistaken for a cello here.", ("bassoon",)),
    ("instrument", "There is nothing orchestral, just a lone guitar.", ("guitar",)),
    ("instrument", "A timbre quite unlike a trumpet; it is a soprano saxophone.", ("saxophone",)),
    ("instrument", "A no-frills piano recording.", ("piano",)),
    ("instrument", "There's no mistaking the harpsichord.", ("harpsichord",)),
    ("instrument", "Nothing but strings.", ("strings",)),
    ("instrument", "Hardly any drums, mostly piano.", ("piano",)),
    ("instrument", "Is there an oboe? Yes, an oboe carries the melody.", ("oboe",)),
    ("mood", "Angry? No, it's more playful and goofy.", ("goofy",)),
    ("mood", "Is it dark? Not at all; it's cheerful.", ("happy",)),
    ("mood", "There is nothing sad about this tune; it is joyful.", ("happy",)),
    ("regional", "Is it Chinese? No, it sounds Japanese.", ("japanese",)),
    ("regional", "Nothing Celtic here, it's clearly Indian.", ("indian",)),
    ("composer", "Is this Mozart? No, I believe it's Haydn.", ("Haydn",)),
    ("composer", "Far from Bach, this sounds like Debussy.", ("Debussy",)),
    ("genre", "Is it rock? No, it's jazz.", ("Jazz",)),
]

MISSPELLINGS = [
    ("instrument", "A lone violine.", ("violin",)),
    ("instrument", "Piano and celo", ("piano",)),  # "celo": too short to guess
    ("instrument", "I hear a clarient and a basoon.", ("clarinet", "bassoon")),
    ("instrument", "A pianoo with strings", ("piano", "strings")),
    ("instrument", "The harpsicord dominates.", ("harpsichord",)),
    ("instrument", "A flutte and an obo", ("flute",)),  # "obo": too short
    ("instrument", "Violas and a contrabas", ("viola", "contrabass")),
    ("instrument", "A saxaphone solo", ("saxophone",)),
    ("instrument", "This is played according to the score.", ()),  # not an accordion
    ("composer", "Likely Mozzart.", ("Mozart",)),
    ("composer", "Possibly Dvorjak or Brahams.", ("Dvorak", "Brahms")),
    ("composer", "Sounds like Rachmaninov or Shostakovitch.", ("Rachmaninoff", "Shostakovich")),
    ("composer", "Schuberth, I think.", ("Schubert",)),
    ("composer", "Perhaps Hayden.", ("Haydn",)),
    ("composer", "I'd guess Beethoven's handle on form; a Handel piece, not Chopan", ("Beethoven", "Handel")),  # noqa: E501
    ("mood", "Very melancholly and spookey, a bit eery.", ("sad", "spooky")),  # "eery": short
    ("mood", "Energitic and happpy.", ("energetic", "happy")),
    ("mood", "A musical, mysterious mood.", ("mystical",)),  # "musical" is not mystical
    ("regional", "Japanesse flavour, maybe Chinease.", ("japanese", "chinese")),
    ("regional", "A Carribean steel band", ("carribean",)),
    ("genre", "Some Elektronic dance track", ("Electronic",)),
    ("genre", "An electric guitar riff", ()),  # "electric" is not Electronic
]

AGENT_NOUNS = [
    ("instrument", "A cellist and a violist in duet.", ("cello", "viola")),
    ("instrument", "Played by two violinists.", ("violin",)),
    ("instrument", "An oboist accompanied by a harpsichordist.", ("oboe", "harpsichord")),
    ("instrument", "The flautist takes the lead.", ("flute",)),
    ("instrument", "A flutist and a bassoonist.", ("flute", "bassoon")),
    ("instrument", "A clarinettist plays alone.", ("clarinet",)),
    ("instrument", "A hornist and a pianist.", ("horn", "piano")),
    ("instrument", "Drummer and guitarist jam.", ("drums", "guitar")),
    ("instrument", "A double bassist supports the texture.", ("contrabass",)),
    ("instrument", "There's a bassist in the band.", ("bass",)),
    ("instrument", "An organist improvising.", ("organ",)),
    ("instrument", "A harpist and a percussionist.", ("harp", "percussion")),
    ("instrument", "A jazz saxophonist and a trumpeter.", ("saxophone", "trumpet")),
    ("instrument", "No pianist, only a violinist.", ("violin",)),
    ("instrument", "The clarinetist is joined by a cellist.", ("clarinet", "cello")),
]

SENSES = [
    ("instrument", "The walking bass line comes from a piano.", ("piano",)),
    ("instrument", "A piano plays the bassline.", ("piano",)),
    ("instrument", "The cello takes the bass part.", ("cello",)),
    ("instrument", "A drum n bass beat with a synth.", ("synthesizer",)),
    ("instrument", "Drums and bass underpin a guitar.", ("drums", "bass", "guitar")),
    ("instrument", "A viola da gamba and a harpsichord.", ("viola da gamba", "harpsichord")),
    ("instrument", "A classical guitar piece.", ("guitar",)),
    ("instrument", "Bass notes on the organ.", ("organ",)),
    ("genre", "A classical guitar solo with a folk feel.", ()),
    ("genre", "Played on a classical guitar, clearly a Rock song.", ("Rock",)),
    ("genre", "A drum and bass track.", ("Drum & Bass",)),
    ("genre", "Classical music for a string quartet.", ("Classical",)),
    ("regional", "A choir chanting in Latin over an organ.", ()),
    ("regional", "Lyrics sung in Latin with Latin American percussion.", ("latin-american",)),
    ("regional", "The polish of the production is glossy.", ()),
    ("regional", "A Polish mazurka.", ("slavic",)),
    ("regional", "A French horn melody.", ()),
    ("mood", "Offbeat guitar strums and a happy melody.", ("happy",)),
    ("mood", "A Romantic-era piano piece, tender and sad.", ("romantic", "sad")),
    ("mood", "A late Romantic symphony.", ()),
]

TIMESIG = [
    ("timesig", "It's in three-quarter time.", ("3/4",)),
    ("timesig", "Three quarter time, like a waltz.", ("3/4",)),
    ("timesig", "Definitely waltz time.", ("3/4",)),
    ("timesig", "There are four beats to the bar.", ("4/4",)),
    ("timesig", "Three beats per measure.", ("3/4",)),
    ("timesig", "It counts five beats in a bar.", ("5/4",)),
    ("timesig", "Played in common time throughout.", ("4/4",)),
    ("timesig", "The meter is irregular.", ("irregular",)),
    ("timesig", "The meter seems quite odd.", ("irregular",)),
    ("timesig", "An odd time signature.", ("irregular",)),
    ("timesig", "The time signature changes often.", ("variable",)),
    ("timesig", "The meter keeps shifting between sections.", ("variable",)),
    ("timesig", "In 6/8 time.", ("6/8",)),
    ("timesig", "Compound duple meter.", ("6/8",)),
    ("timesig", "A triple meter.", ("3/4",)),
    ("timesig", "A waltz.", ()),  # a dance, not a meter
    ("timesig", "Not in 4/4, it is in 7/8.", ("7/8",)),
]

OUT_OF_VOCABULARY = [
    ("genre", "It sounds like synthwave.", ("Synthwave",)),
    ("genre", "Bossa nova with soft vocals.", ("Bossa Nova",)),
    ("genre", "Some K-pop, maybe J-pop.", ("K-Pop", "J-Pop")),
    ("genre", "Vaporwave or lo-fi.", ("Vaporwave", "Lo-Fi")),
    ("genre", "A grunge song.", ("Grunge",)),
    ("genre", "Reggaeton beat.", ("Reggaeton",)),
    ("composer", "This might be Antonio Salieri.", ("Salieri",)),
    ("composer", "Perhaps Scriabin or Messiaen.", ("Scriabin", "Messiaen")),
    ("composer", "John Williams film score.", ("Williams",)),
    ("composer", "Palestrina, I believe.", ("Palestrina",)),
    ("composer", "Gabriel Faure.", ("Faure",)),
    ("instrument", "A theremin and a melodica.", ("theremin", "melodica")),
    ("instrument", "Tabla and sitar.", ("tabla", "sitar")),
    ("instrument", "A lone didgeridoo.", ("didgeridoo",)),
    ("instrument", "Bagpipes over a drum machine.", ("bagpipes", "drum machine")),
    ("timesig", "It is in 12/8.", ("12/8",)),
]

REGIONAL = [
    ("regional", "Latin American rhythms throughout.", ("latin-american",)),
    ("regional", "A strong Middle Eastern influence.", ("middle-eastern",)),
    ("regional", "Celtic-inspired fiddle tune.", ("celtic",)),
    ("regional", "Egyptian-sounding scales.", ("middle-eastern",)),
    ("regional", "It has an Irish lilt.", ("celtic",)),
    ("regional", "A Brazilian samba feel.", ("south-american",)),
    ("regional", "Cuban percussion.", ("carribean",)),
    ("regional", "Reminiscent of Andean folk.", ("south-american",)),
    ("regional", "Welsh choir.", ("celtic",)),
    ("regional", "Persian and Turkish modes.", ("middle-eastern",)),
    ("regional", "A Russian folk melody.", ("slavic",)),
    ("regional", "West African drumming.", ("african",)),
    ("regional", "It evokes the Caribbean islands.", ("carribean",)),
    ("regional", "Native American flute music.", ("native-american",)),
    ("regional", "An Appalachian fiddle tune.", ("appalachian",)),
    ("regional", "A Cajun two-step.", ("cajun",)),
    ("regional", "Sounds like Bollywood.", ("indian",)),
    ("regional", "Mediterranean, perhaps Greek.", ("mediterranean",)),
]

MOODS = [
    ("mood", "A depressing, heartbroken ballad.", ("sad",)),
    ("mood", "Hilarious and wacky.", ("funny", "goofy")),
    ("mood", "Uplifting and triumphant.", ("happy", "epic")),
    ("mood", "A groovy bass line.", ("funky",)),
    ("mood", "Wistful and tender.", ("sad", "romantic")),
    ("mood", "Ethereal, dreamlike pads.", ("mystical",)),
    ("mood", "Bouncy and peppy.", ("energetic",)),
    ("mood", "A bleak, foreboding atmosphere.", ("dark",)),
    ("mood", "Ghostly and macabre.", ("spooky",)),
    ("mood", "Anxious, nail-biting tension.", ("suspenseful",)),
    ("mood", "Serene and meditative.", ("peaceful",)),
    ("mood", "Laid-back and breezy.", ("chill",)),
    ("mood", "Sultry, seductive saxophone.", ("sexy",)),
    ("mood", "A brutal, abrasive track.", ("aggressive",)),
    ("mood", "Surreal and psychedelic.", ("trippy",)),
    ("mood", "A sad-sounding melody.", ("sad",)),
    ("mood", "It is fast, in a minor key, with strings.", ()),  # no mood word
    ("mood", "Upbeat and jazzy.", ("energetic", "jazzy")),
]

LABEL_CASES = SCOPES + MISSPELLINGS + AGENT_NOUNS + SENSES + TIMESIG + OUT_OF_VOCABULARY
LABEL_CASES += REGIONAL + MOODS


@pytest.mark.parametrize("task, answer, expected", LABEL_CASES)
def test_labels_read_as_an_annotator_reads_them(task, answer, expected):
    assert read(task, answer) == expected


TRUEFALSE = [
    ("No problem! The statement is true.", True),
    ("No worries, that's false.", False),
    ("No doubt: true.", True),
    ("Without a doubt, true.", True),
    ("Nope.", False),
    ("Yep, there's a piano.", True),
    ("Yeah.", True),
    ("Absolutely!", True),
    ("Definitely not.", False),
    ("Of course not, it's a harpsichord.", False),
    ("Of course.", True),
    ("Certainly.", True),
    ("I don't think so.", False),
    ("Not really.", False),
    ("That's incorrect.", False),
    ("That is not correct.", False),
    ("Correct: a violin is playing.", True),
    ("Is it a piano? False.", False),
    ("False. True or false questions are tricky, but no.", False),
    ("It's true that there's no piano.", True),
    ("Yes and no.", None),
    ("I'm not sure.", None),
    ("The recording features a guitar.", None),
    ("Not only a piano but also violins, so yes.", True),
]


@pytest.mark.parametrize("answer, expected", TRUEFALSE)
def test_true_false_reads_the_answer_not_the_first_polite_word(answer, expected):
    assert read_truefalse(answer).value == expected


BINARY = [
    ("instrument", ("oboe", "clarinet"), "Between oboe and clarinet, it's the oboe.", 0),
    ("instrument", ("violin", "viola"), "Violin or viola? I'd say viola.", 1),
    ("instrument", ("piano", "harpsichord"), "Piano vs harpsichord: harpsichord.", 1),
    ("instrument", ("flute", "cello"), "The former.", 0),
    ("instrument", ("flute", "cello"), "The second one.", 1),
    ("instrument", ("flute", "cello"), "Option B.", 1),
    ("instrument", ("flute", "cello"), "(A)", 0),
    ("instrument", ("flute", "cello"), "Not the first one, the second.", 1),
    ("instrument", ("violin", "cello"), "Played by a cellist.", 1),
    ("instrument", ("violin", "cello"), "A violinist, clearly.", 0),
    ("instrument", ("oboe", "clarinet"), "Definitely the clarinnet.", 1),
    ("instrument", ("oboe", "clarinet"), "It's not the clarinet.", 0),
    ("instrument", ("oboe", "clarinet"), "Neither the oboe nor the clarinet.", None),
    ("instrument", ("oboe", "clarinet"), "Both the oboe and the clarinet.", None),
    ("instrument", ("oboe", "clarinet"), "A guitar.", None),
    ("composer", ("Haydn", "Brahms"), "Haydn or Brahms? I think Brahms.", 1),
    ("composer", ("Bach", "Ravel"), "Choosing between Bach and Ravel, Bach.", 0),
    ("composer", ("Mozart", "Schubert"), "Probably Shubert.", 1),
    ("composer", ("Mozart", "Schubert"), "Mozart rather than Schubert.", 0),
    ("mood", ("sad", "happy"), "Sad or happy? Definitely happy.", 1),
    ("mood", ("sad", "happy"), "It's more melancholic.", 0),
    ("regional", ("Celtic", "Japanese"), "Between Celtic and Japanese, the Celtic one.", 0),
    ("regional", ("Middle Eastern", "Slavic"), "It's Egyptian-sounding.", 0),
]


@pytest.mark.parametrize("task, options, answer, expected", BINARY)
def test_binary_choice_reads_the_choice_after_an_echo(task, options, answer, expected):
    assert read_choice(answer, options, lexicon_for(task)).value == expected


def test_names_outside_the_vocabulary_are_counted_as_such():
    labels = read("instrument", "A pianist, a theremin and an electric guitar.")
    assert labels == ("piano", "theremin", "electric guitar")
    assert out_of_vocabulary("instrument", labels) == ["theremin", "electric guitar"]
    assert out_of_vocabulary("genre", ("Rock", "Synthwave"), TREE.all_titles) == ["Synthwave"]
    assert out_of_vocabulary("mood", ("sad",)) == []


def test_the_llm_parser_prompt_has_the_closed_list_and_the_label_matching_instruction():
    from lm_eval_rul.factual.prompts import parser_prompt

    mood = parser_prompt("mood", "An uplifting tune.")
    assert "Choose only from these moods" in mood and "Energetic" in mood
    assert "onto the label of this list that fits it best" in mood
    assert "only when a mood word is used" in mood
    regional = parser_prompt("regional", "Celtic-inspired.")
    assert "named as an influence counts" in regional
    instrument = parser_prompt("instrument", "A cellist.")
    assert "a cellist" in instrument and "Choose only from" not in instrument
