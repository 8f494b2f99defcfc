"""How answers are read, kind by kind: new hand-written answers worded as audio LMs word them.

Each row is (task, answer, what a careful annotator reads under the paper's eight rules).
The kinds: rejection and negation scopes, misspellings, agent nouns, word senses,
time-signature phrases, names outside the vocabulary, regional phrasing, mood words,
true/false answers and binary choices.
"""

from __future__ import annotations

import pytest

from lm_eval_rul.factual.reading.answers import read_choice, read_truefalse
from lm_eval_rul.factual.reading.genres import GenreTree
from lm_eval_rul.factual.reading.labels import out_of_vocabulary
from lm_eval_rul.factual.reading.lexicon import lexicon_for
from lm_eval_rul.factual.reading.parser import parse_labels
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
    ("instrument", "Nothing but strings.", ()),  # a family of instruments is no label
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
    ("instrument", "Piano and celo", ("piano", "cello")),  # 4 letters, no English word
    ("instrument", "I hear a clarient and a basoon.", ("clarinet", "bassoon")),
    ("instrument", "A pianoo with strings", ("piano",)),
    ("instrument", "The harpsicord dominates.", ("harpsichord",)),
    ("instrument", "A flutte and an obo", ("flute", "oboe")),  # "obo": a listed slip
    ("instrument", "Violas and a contrabas", ("viola", "contrabass")),
    ("instrument", "A saxaphone solo", ("saxophone",)),
    ("instrument", "This is played according to the score.", ()),  # not an accordion
    ("composer", "Likely Mozzart.", ("Mozart",)),
    ("composer", "Possibly Dvorjak or Brahams.", ("Dvorak", "Brahms")),
    ("composer", "Sounds like Rachmaninov or Shostakovitch.", ("Rachmaninoff", "Shostakovich")),
    ("composer", "Schuberth, I think.", ("Schubert",)),
    ("composer", "Perhaps Hayden.", ("Haydn",)),
    (
        "composer",
        "I'd guess Beethoven's handle on form; a Handel piece, not Chopan",
        ("Beethoven", "Handel"),
    ),
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
    ("mood", "A bleak, foreboding atmosphere.", ("dark", "suspenseful")),
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


# --- answers as audio LMs word them, all kinds mixed (label sets compared as sets) -----

MIXED = [
    (
        "instrument",
        "The piece is performed by a string quartet: two violins, a viola and a cello.",
        ("violin", "viola", "cello"),
    ),
    ("instrument", "I can hear a solo piano with some light orchestral accompaniment.", ("piano",)),
    (
        "instrument",
        "This sounds like a harpsichord, although it might also be a fortepiano.",
        ("harpsichord", "piano"),
    ),
    (
        "instrument",
        "The main instrument is a flute, backed by a guitar; there are no vocals.",
        ("flute", "guitar"),
    ),
    ("instrument", "Is that a bassoon? No - I think it's a contrabassoon.", ("contrabassoon",)),
    (
        "instrument",
        "A brass ensemble with a prominent French horn and trumpets.",
        ("horn", "trumpet"),
    ),
    ("instrument", "The recording features a pianist accompanying a cellist.", ("piano", "cello")),
    ("instrument", "Mainly violin; the cello appears only briefly.", ("violin", "cello")),
    (
        "instrument",
        "No percussion, no brass - just woodwinds: an oboe and a clarinet.",
        ("oboe", "clarinet"),
    ),
    ("instrument", "There's a violinn and maybe a viola.", ("violin", "viola")),
    ("instrument", "I don't hear any piano in this track, only strings.", ()),
    (
        "instrument",
        "The clarinet is the main voice, with a piano in the background.",
        ("clarinet", "piano"),
    ),
    ("instrument", "An upright bass and a drum kit with brushes.", ("contrabass", "drums")),
    ("instrument", "It sounds like an organ, not a piano.", ("organ",)),
    (
        "instrument",
        "A wind quintet: flute, oboe, clarinet, horn and bassoon.",
        ("flute", "oboe", "clarinet", "horn", "bassoon"),
    ),
    ("instrument", "Mostly piano, played softly.", ("piano",)),
    ("instrument", "Solo violin without accompaniment.", ("violin",)),
    (
        "instrument",
        "The melody is on the oboe while the strings provide harmony.",
        ("oboe",),
    ),
    ("instrument", "Acoustic guitar and a female singer.", ("acoustic guitar", "vocals")),
    ("instrument", "A pianist plays a slow piece; I don't hear any other instruments.", ("piano",)),
    (
        "composer",
        "This sounds like a piece by Johann Sebastian Bach, possibly one of his cello suites.",
        ("Bach",),
    ),
    ("composer", "The style suggests Mozart, or perhaps Haydn.", ("Mozart", "Haydn")),
    ("composer", "I would guess Beethoven, from his late period.", ("Beethoven",)),
    ("composer", "It's reminiscent of Chopin, but I think it's actually Schubert.", ("Schubert",)),
    ("composer", "Could be Dvořák.", ("Dvorak",)),
    ("composer", "Probably Ravel or Debussy - French impressionism.", ("Ravel", "Debussy")),
    ("composer", "I'm not sure who composed this; it sounds Baroque.", ()),
    ("composer", "Brahms, I think.", ("Brahms",)),
    ("composer", "It might be Gabriel Fauré's Élégie.", ("Faure",)),
    ("composer", "A Vivaldi concerto.", ("Vivaldi",)),
    ("genre", "This is an upbeat pop song with electronic elements.", ("Pop",)),
    ("genre", "It sounds like experimental noise music.", ("Experimental", "Noise")),
    ("genre", "A rock track with punk energy.", ("Rock", "Punk")),
    ("genre", "Hip-hop with a jazzy sample.", ("Hip-Hop",)),
    ("genre", "It's techno, maybe minimal.", ("Techno",)),
    ("genre", "This is not jazz, it's more like post-punk.", ("Post-Punk",)),
    ("genre", "Instrumental electronic music.", ("Electronic",)),
    ("genre", "Tango.", ("Tango",)),
    ("mood", "The mood is sad and reflective.", ("sad",)),
    ("mood", "It feels energetic and joyful.", ("energetic", "happy")),
    ("mood", "A calm, peaceful piece.", ("peaceful",)),
    ("mood", "Dark and brooding with an ominous bass.", ("dark",)),
    ("mood", "It's quite funky and groovy.", ("funky",)),
    ("mood", "The music is epic and heroic, like a battle theme.", ("epic",)),
    ("mood", "A mellow, relaxing tune.", ("mellow", "chill")),
    ("mood", "Spooky, like a haunted house.", ("spooky",)),
    ("mood", "I would describe the mood as mysterious.", ("mystical",)),
    ("mood", "Not happy at all - it's melancholic.", ("sad",)),
    ("mood", "It is a fast-paced track with driving drums.", ()),
    ("regional", "This has a Japanese feel, with koto-like sounds.", ("japanese",)),
    ("regional", "Sounds Indian, with sitar and tabla.", ("indian",)),
    ("regional", "Chinese-style pentatonic melody.", ("chinese",)),
    ("regional", "African rhythms and call-and-response vocals.", ("african",)),
    ("regional", "The melody has a Celtic lilt, maybe Scottish.", ("celtic",)),
    ("regional", "It's not Middle Eastern; it sounds Latin.", ("latin-american",)),
    ("regional", "A Slavic folk dance.", ("slavic",)),
    ("regional", "Flamenco guitar, very Spanish.", ()),
    ("regional", "A reggae groove with Jamaican influence.", ("carribean",)),
    ("timesig", "The time signature is 4/4.", ("4/4",)),
    ("timesig", "It seems to be in 3/4, like a waltz.", ("3/4",)),
    ("timesig", "This piece is in 6/8 time.", ("6/8",)),
    ("timesig", "It's in five-four.", ("5/4",)),
    ("timesig", "I believe it's in 7/8, an odd meter.", ("7/8", "irregular")),
    ("timesig", "Four-four time with a steady beat.", ("4/4",)),
    ("timesig", "It's in triple time.", ("3/4",)),
    ("timesig", "There are three beats to each bar.", ("3/4",)),
    (
        "instrument",
        "The audio features a piano, which plays both melody and harmony. "
        "There are no other instruments.",
        ("piano",),
    ),
    (
        "instrument",
        "Based on the timbre, this is likely a violoncello, though it could be a viola da gamba.",
        ("cello", "viola da gamba"),
    ),
    ("instrument", "Instruments: Piano, Violin.", ("piano", "violin")),
    ("instrument", "- piano\n- violin\n- cello", ("piano", "violin", "cello")),
    (
        "instrument",
        "I hear what sounds like a keyboard instrument, possibly a harpsichord or a clavichord.",
        ("harpsichord", "clavichord"),
    ),
    ("instrument", "Orchestra with strings, winds, and timpani.", ("timpani",)),
    ("instrument", "The music is played by a symphony orchestra.", ()),
    ("instrument", "A pianist and a singer perform a lied.", ("piano", "vocals")),
    ("instrument", "Is that a horn? Yes, a French horn.", ("horn",)),
    ("instrument", "It's definitely not a guitar; it's a lute.", ("lute",)),
    ("instrument", "Clarinet (possibly bass clarinet) and piano.", ("clarinet", "piano")),
    ("instrument", "The bass clarinet is absent; only flute.", ("flute",)),
    ("instrument", "Piano trio: piano, violin and cello.", ("piano", "violin", "cello")),
    (
        "instrument",
        "There seems to be a violin solo over a piano accompaniment.",
        ("violin", "piano"),
    ),
    ("instrument", "This is a solo for the bassoon.", ("bassoon",)),
    ("composer", "The piece is by Ludwig van Beethoven.", ("Beethoven",)),
    ("composer", "Composer: W. A. Mozart", ("Mozart",)),
    ("composer", "I think this is by Franz Schubert, not by Robert Schumann.", ("Schubert",)),
    ("composer", "Sounds Mozartian, but it's actually Haydn.", ("Haydn",)),
    ("composer", "Maybe Maurice Ravel.", ("Ravel",)),
    ("composer", "I cannot identify the composer.", ()),
    ("composer", "Johannes Brahms or Antonin Dvorak.", ("Brahms", "Dvorak")),
    ("composer", "A Bach-like fugue by Mendelssohn.", ("Mendelssohn",)),
    (
        "mood",
        "The overall mood is peaceful and serene, with a touch of melancholy.",
        ("peaceful", "sad"),
    ),
    ("mood", "Aggressive and angry.", ("aggressive", "angry")),
    ("mood", "It's romantic and tender.", ("romantic",)),
    ("mood", "The track is quirky and playful.", ("quirky",)),
    ("mood", "Solemn, almost funereal.", ("solemn",)),
    ("mood", "It sounds suspenseful, like a thriller soundtrack.", ("suspenseful",)),
    ("mood", "Trippy and psychedelic.", ("trippy",)),
    ("mood", "Sexy and smooth.", ("sexy",)),
    ("mood", "Chill vibes.", ("chill",)),
    ("mood", "Happy? Yes, very happy and bright.", ("happy",)),
    ("regional", "This sounds like it has Middle-Eastern influences.", ("middle-eastern",)),
    ("regional", "The scales are Arabic.", ("middle-eastern",)),
    ("regional", "It has a South American flavor, maybe Argentinian tango.", ("south-american",)),
    ("regional", "Irish jig.", ("celtic",)),
    ("regional", "No obvious regional style.", ()),
    ("regional", "It sounds like world music.", ("world",)),
    ("regional", "A gamelan-like Indonesian texture.", ()),
    ("timesig", "The song is in a standard 4/4 time signature.", ("4/4",)),
    ("timesig", "3/4 time.", ("3/4",)),
    ("timesig", "The piece is in a compound meter, 6/8.", ("6/8",)),
    ("timesig", "Time signature: 9/8.", ("9/8",)),
    ("timesig", "It alternates between 7/8 and 4/4.", ("7/8", "4/4")),
    ("timesig", "The meter changes frequently.", ("variable",)),
    ("timesig", "Probably 4/4, though it could be 2/4.", ("4/4", "2/4")),
    ("genre", "The genre is electronic, specifically techno.", ("Electronic", "Techno")),
    ("genre", "It's a jazz piece, possibly free jazz.", ("Jazz", "Free-Jazz")),
    ("genre", "Not rock; more like pop.", ("Pop",)),
    ("genre", "This could be classified as experimental or avant-garde.", ("Experimental",)),
    ("genre", "Hip hop beat with rap vocals.", ("Hip-Hop",)),
    ("instrument", "I initially assumed it was a viola, but it's a violin.", ("violin",)),
    ("instrument", "It isn't a cello; it's a double bass.", ("contrabass",)),
    ("instrument", "Not a clarinet. An oboe.", ("oboe",)),
    (
        "instrument",
        "The sound resembles a harp but it's really a harpsichord.",
        ("harp", "harpsichord"),
    ),
    ("instrument", "Two pianos.", ("piano",)),
    ("instrument", "There's no violin, viola, or cello here - only a piano.", ("piano",)),
    ("instrument", "Piano? Yes. Violin? No.", ("piano",)),
    ("instrument", "The texture lacks any percussion.", ()),
    ("instrument", "A violinist with no accompaniment.", ("violin",)),
    (
        "instrument",
        "I'd say bassoon, although a contrabassoon is also possible.",
        ("bassoon", "contrabassoon"),
    ),
    ("instrument", "Clarinets and flutes in unison.", ("clarinet", "flute")),
    ("instrument", "The pianist's left hand carries the bass line.", ("piano",)),
    ("instrument", "This is a cello sonata with piano.", ("cello", "piano")),
    ("instrument", "A flutist? No, a recorder player.", ("recorder",)),
    ("instrument", "Sounds like a vioin.", ("violin",)),
    ("instrument", "An obeo and a clarinette.", ("oboe", "clarinet")),
    ("instrument", "A guittar.", ("guitar",)),
    ("instrument", "A piano with violins, rather than a harpsichord.", ("piano", "violin")),
    ("composer", "Definitely not Bach; maybe Handel.", ("Handel",)),
    ("composer", "Is this Beethoven? I don't think so - probably Schubert.", ("Schubert",)),
    ("composer", "Mozart? No, Haydn.", ("Haydn",)),
    ("composer", "Sounds like Tchaikovski.", ("Tchaikovsky",)),
    ("composer", "Brhams.", ("Brahms",)),
    ("composer", "Could be Mendellsohn.", ("Mendelssohn",)),
    ("composer", "A composer like Debussey or Ravell.", ("Debussy", "Ravel")),
    ("mood", "Not sad but rather hopeful and happy.", ("happy",)),
    ("mood", "The mood is melancholic rather than angry.", ("sad",)),
    ("mood", "Peaceful? Not really, it's tense.", ("suspenseful",)),
    ("mood", "Sombre and majestic.", ("sad", "epic")),
    ("mood", "It's not particularly energetic; it's relaxed.", ("chill",)),
    ("mood", "Cheerfull and playfull.", ("happy",)),
    ("mood", "A heart-wrenching, depressing melody.", ("sad",)),
    ("mood", "Funny and a bit silly.", ("funny", "goofy")),
    ("regional", "It has a Caribean vibe.", ("carribean",)),
    ("regional", "Not African, more Indian.", ("indian",)),
    ("regional", "Middle Eastern? No, it's Indian.", ("indian",)),
    ("regional", "Japanese-influenced melody.", ("japanese",)),
    ("regional", "A Latin feel with Cuban rhythms.", ("latin-american", "carribean")),
    ("regional", "There's nothing regional about it.", ()),
    ("regional", "Scottish bagpipes.", ("celtic",)),
    ("regional", "Its Slavic, Russian-sounding harmonies.", ("slavic",)),
    ("timesig", "It's in 3/4, not 4/4.", ("3/4",)),
    ("timesig", "Four-four? No, six-eight.", ("6/8",)),
    ("timesig", "The song is in cut time.", ("2/2",)),
    ("timesig", "Seven-eight time.", ("7/8",)),
    ("timesig", "It has an irregular meter.", ("irregular",)),
    ("timesig", "Two beats per bar.", ("2/4",)),
    ("genre", "It's jazz rather than rock.", ("Jazz",)),
    ("genre", "Electronic music with a techno beat.", ("Electronic", "Techno")),
    ("genre", "Post punk? No, just punk.", ("Punk",)),
    ("genre", "Pop-influenced rock.", ("Rock",)),
]


@pytest.mark.parametrize("task, answer, expected", MIXED)
def test_mixed_answers(task, answer, expected):
    assert set(read(task, answer)) == set(expected)


MIXED_TRUEFALSE = [
    ("True.", True),
    ("False, I don't hear a piano.", False),
    ("Yes, there is a violin.", True),
    ("No, it's not jazz.", False),
    ("The statement is true: there is a cello.", True),
    ("I believe this is false.", False),
    ("Absolutely, that's a violin.", True),
    ("No problem - false.", False),
    ("Nah.", False),
    ("Yup!", True),
    ("Definitely true.", True),
    ("That is false.", False),
    ("Hmm, no.", False),
    ("True - the mood is sad.", True),
    ("Not true.", False),
    ("I'd say yes.", True),
    ("No way.", False),
    ("Indeed.", True),
    ("It is correct.", True),
    ("Wrong.", False),
    ("True, there is a piano in the recording.", True),
    ("False. The instrument is a harpsichord.", False),
    ("Yes.", True),
    ("No.", False),
    ("The answer is false.", False),
    ("Answer: True", True),
    ("I would say false.", False),
    ("That's right.", True),
    ("This statement is incorrect.", False),
    ("No, there is no cello.", False),
    ("Yes, definitely.", True),
    ("It's true.", True),
    ("Certainly not.", False),
    ("False - there are no drums.", False),
    ("True; the mood is happy.", True),
    ("False! There's no piano.", False),
    ("Yes - definitely a violin.", True),
    ("No, not at all.", False),
    ("Hmm, I'd say true.", True),
    ("I think it's false.", False),
    ("The answer: no.", False),
    ("TRUE", True),
    ("It is not.", False),
    ("It is.", None),
    ("Sure, there is a cello.", True),
    ("Nope, that's a harpsichord.", False),
    ("Not true at all.", False),
    ("Yes, that's correct.", True),
    ("No, that's incorrect.", False),
    ("Definitely!", True),
]


@pytest.mark.parametrize("answer, expected", MIXED_TRUEFALSE)
def test_mixed_true_false_answers(answer, expected):
    assert read_truefalse(answer).value == expected


MIXED_BINARY = [
    ("instrument", ("oboe", "clarinet"), "The clarinet.", 1),
    ("instrument", ("oboe", "clarinet"), "Between the oboe and the clarinet, I'd say oboe.", 0),
    ("composer", ("Bach", "Mozart"), "Mozart.", 1),
    ("composer", ("Bach", "Mozart"), "Bach or Mozart? Bach, definitely.", 0),
    ("instrument", ("violin", "cello"), "It's the cello, not the violin.", 1),
    ("instrument", ("violin", "cello"), "The first option.", 0),
    ("mood", ("sad", "happy"), "Happy.", 1),
    ("mood", ("sad", "happy"), "The music is sad.", 0),
    ("instrument", ("piano", "harpsichord"), "I hear a harpsichord.", 1),
    ("composer", ("Haydn", "Brahms"), "Between Haydn and Brahms, the composer is Brahms.", 1),
    ("instrument", ("flute", "violin"), "The latter.", 1),
    ("regional", ("Celtic", "Japanese"), "Japanese.", 1),
    ("instrument", ("oboe", "clarinet"), "Oboe or clarinet - it's the oboe.", 0),
    ("composer", ("Schubert", "Ravel"), "Schubert rather than Ravel.", 0),
    ("instrument", ("oboe", "violin"), "Violin.", 1),
    ("instrument", ("oboe", "violin"), "The instrument is the oboe.", 0),
    ("composer", ("Ravel", "Bach"), "This is Bach.", 1),
    ("composer", ("Ravel", "Bach"), "It sounds like Ravel rather than Bach.", 0),
    ("mood", ("sad", "epic"), "Epic.", 1),
    ("instrument", ("piano", "flute"), "The answer is piano.", 0),
    ("instrument", ("piano", "flute"), "I think it's the second option, the flute.", 1),
    ("composer", ("Mozart", "Faure"), "Fauré.", 1),
    ("regional", ("Indian", "Slavic"), "It's Indian.", 0),
    (
        "instrument",
        ("cello", "bassoon"),
        "Cello and bassoon both sound similar, but I'd say bassoon.",
        1,
    ),
    ("instrument", ("violin", "viola"), "Viola, not violin.", 1),
    ("instrument", ("violin", "viola"), "It's more violin than viola.", 0),
    ("composer", ("Bach", "Mozart"), "Between Bach and Mozart: Mozart.", 1),
    ("composer", ("Bach", "Mozart"), "I'm not sure, maybe Mozart.", 1),
    ("instrument", ("piano", "harpsichord"), "The first.", 0),
    ("instrument", ("piano", "harpsichord"), "Probably the second option.", 1),
    ("mood", ("sad", "happy"), "Neither really, but closer to happy.", 1),
    ("regional", ("Celtic", "Japanese"), "Either Celtic or Japanese... I'd go with Japanese.", 1),
    ("instrument", ("flute", "oboe"), "A flautist.", 0),
    ("instrument", ("flute", "oboe"), "Oboe? Yes, oboe.", 1),
    ("composer", ("Haydn", "Ravel"), "Definitely Ravell.", 1),
    ("composer", ("Haydn", "Ravel"), "I can't tell.", None),
]


@pytest.mark.parametrize("task, options, answer, expected", MIXED_BINARY)
def test_mixed_binary_answers(task, options, answer, expected):
    assert read_choice(answer, options, lexicon_for(task)).value == expected


@pytest.mark.parametrize(
    "task, answer",
    [
        ("genre", "A noisy, bluesy guitar."),  # everyday words near Noise and Blues
        ("instrument", "A brassy, stringy tone, recorded according to plan."),
        ("regional", "A glossy polsh finish."),  # a capital-only form is not guessed
        ("composer", "Gabriel and Antonio played it."),  # first names near Gabrieli, Antonio
    ],
)
def test_words_near_a_form_with_another_meaning_are_not_guessed(task, answer):
    assert read(task, answer) == ()


# --- families, periods, epistemic phrases ----------------------------------------------

MORE = [
    ("instrument", "I hear string instruments and a piano.", ("piano",)),
    ("instrument", "Brass instruments dominate, with a tuba at the bottom.", ("tuba",)),
    (
        "instrument",
        "The instrumentation: oboe, bassoon, and French horn.",
        ("oboe", "bassoon", "horn"),
    ),
    (
        "instrument",
        "A keyboard instrument, most likely a harpsichord.",
        ("harpsichord",),
    ),
    ("instrument", "I'm not certain, but it sounds like a flute.", ("flute",)),
    ("instrument", "Neither a piano nor an organ - it is a celesta.", ("celesta",)),
    ("instrument", "The violinist and pianist perform a sonata.", ("violin", "piano")),
    (
        "instrument",
        "The orchestra includes violins, violas, cellos and double basses.",
        ("violin", "viola", "cello", "contrabass"),
    ),
    ("instrument", "It's a solo instrument, probably a cello or a viola.", ("cello", "viola")),
    ("instrument", "A violin is not present; it's a viola.", ("viola",)),
    ("genre", "This is a Baroque piece.", ("Baroque",)),
    ("genre", "It's classical music from the Romantic era.", ("Classical",)),
    ("genre", "A folk song.", ()),
    ("genre", "An experimental jazz piece with noise elements.", ("Experimental", "Jazz")),
    ("genre", "Punk rock.", ("Punk",)),  # the compound names one genre
    ("mood", "Lighthearted and calming.", ("happy", "peaceful")),
    ("mood", "The mood is dark, not happy.", ("dark",)),
    ("mood", "Mysterious and a bit eerie.", ("mystical", "spooky")),
    ("mood", "Sad? Yes, quite sad.", ("sad",)),
    ("mood", "It has a melancholic yet hopeful mood.", ("sad",)),
    ("mood", "Energetic, upbeat and fun.", ("energetic",)),
    ("regional", "It has an Asian feel, possibly Chinese or Japanese.", ("chinese", "japanese")),
    ("regional", "Sounds Irish or maybe Scottish.", ("celtic",)),
    ("regional", "There is no clear regional influence; it's generic pop.", ()),
    ("regional", "The melody uses a Middle-Eastern scale.", ("middle-eastern",)),
    ("timesig", "The piece has a time signature of 4/4.", ("4/4",)),
    ("timesig", "The time signature appears to be three-four.", ("3/4",)),
    ("timesig", "Quadruple meter.", ("4/4",)),
    ("timesig", "It's a waltz in 3/4.", ("3/4",)),
    ("composer", "It could be either Mozart or Haydn; I lean towards Haydn.", ("Mozart", "Haydn")),
    ("composer", "Sounds Romantic, maybe Brahms or Schumann.", ("Brahms", "Schumann")),
    ("composer", "The composer is not identifiable.", ()),
]
MORE_TRUEFALSE = [
    ("I can't tell.", None),
    ("I cannot determine that from the audio.", None),
    ("It isn't.", False),
    ("This is accurate.", True),
    ("Inaccurate.", False),
    ("Hard to say, but probably true.", True),
    ("I don't know.", None),
    ("No - the instrument is a viola.", False),
]
MORE_BINARY = [
    ("instrument", ("oboe", "clarinet"), "B", 1),
    ("instrument", ("oboe", "clarinet"), "I believe the answer is (B) clarinet.", 1),
    ("instrument", ("oboe", "clarinet"), "Both are plausible, but oboe.", 0),
    ("instrument", ("oboe", "clarinet"), "It's definitely the oboe, not the clarinet.", 0),
    ("composer", ("Bach", "Brahms"), "J.S. Bach.", 0),
]


@pytest.mark.parametrize("task, answer, expected", MORE)
def test_more_answers(task, answer, expected):
    assert set(read(task, answer)) == set(expected)


@pytest.mark.parametrize("answer, expected", MORE_TRUEFALSE)
def test_more_true_false_answers(answer, expected):
    assert read_truefalse(answer).value == expected


@pytest.mark.parametrize("task, options, answer, expected", MORE_BINARY)
def test_more_binary_answers(task, options, answer, expected):
    assert read_choice(answer, options, lexicon_for(task)).value == expected
