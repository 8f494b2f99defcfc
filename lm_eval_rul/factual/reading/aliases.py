"""Alias tables: every surface form the lexicon parser reads, mapped to its canonical label.

One table per vocabulary, ``{canonical label: (alias, ...)}``. Aliases are written in
lower case without accents; the parser normalises the text the same way, matches a
space or hyphen in an alias against any run of spaces and hyphens, and takes the
longest alias at each position ("english horn" before "horn", "c.p.e. bach" before
"bach"). Each table lists every alias explicitly, the canonical form included, so a
canonical word that is too ambiguous to read alone (regional ``world``) is simply left
out.

Our decisions (documented in ``docs/factual.md``):

* Open tasks (instrument, composer, genre, time signature) read terms *outside* the
  gold vocabulary too (guitar, Chopin, 12/8...), so that a wrong term lowers precision
  instead of vanishing.
* Aliases are names of the same thing, never associations (rule 2): "fiddle" is a
  violin, but "string quartet" is not violin + viola + cello, "baroque" is not Bach and
  "waltz" is not 3/4.
* Plain "bass" stays its own label: it is not credited as MusicNet's contrabass; "voice"
  is not read as vocals (a "four-voice fugue" has none).
* Closed-list tasks (mood, regional style) map near-synonyms onto the list
  ("Egyptian" -> middle-eastern, "melancholic" -> sad): the label matching of the paper.
"""

from __future__ import annotations

__all__ = [
    "INSTRUMENT_ALIASES",
    "COMPOSER_ALIASES",
    "TIMESIG_ALIASES",
    "MOOD_ALIASES",
    "REGIONAL_ALIASES",
    "GENRE_EXTRA_ALIASES",
    "GENRE_NEEDS_CONTEXT",
    "GENRE_CONTEXT_NOUNS",
]

INSTRUMENT_ALIASES: dict[str, tuple[str, ...]] = {
    # MusicNet's eleven
    "piano": (
        "piano",
        "acoustic grand piano",
        "grand piano",
        "acoustic piano",
        "upright piano",
        "pianoforte",
        "fortepiano",
        "steinway",  # the makers' names say piano
        "bosendorfer",
        "bechstein",
        "fazioli",
    ),
    "harpsichord": ("harpsichord", "cembalo", "clavecin"),
    "violin": ("violin", "fiddle"),
    "viola": ("viola",),
    "cello": ("cello", "violoncello", "celli"),
    "contrabass": (
        "contrabass",
        "double bass",
        "string bass",
        "upright bass",
        "acoustic bass",
        "bass viol",
    ),
    "horn": ("horn", "french horn"),
    "oboe": ("oboe",),
    "bassoon": ("bassoon",),
    "clarinet": ("clarinet", "bass clarinet"),
    "flute": ("flute", "transverse flute"),
    # other instruments a model may name (wrong for MusicNet, so they cost precision)
    "english horn": ("english horn", "cor anglais"),
    "contrabassoon": ("contrabassoon", "double bassoon"),
    "piccolo": ("piccolo",),
    "recorder": ("recorder",),
    "saxophone": ("saxophone", "sax"),
    "trumpet": ("trumpet", "cornet"),
    "trombone": ("trombone",),
    "tuba": ("tuba",),
    "brass": ("brass", "brass section"),
    "woodwinds": ("woodwinds", "woodwind section"),
    "strings": ("strings", "string section", "string orchestra", "string ensemble"),
    "harp": ("harp",),
    "guitar": ("guitar", "classical guitar", "nylon guitar"),
    "acoustic guitar": ("acoustic guitar",),
    "electric guitar": ("electric guitar",),
    "bass guitar": ("bass guitar", "electric bass"),
    "bass": ("bass",),
    "lute": ("lute",),
    "mandolin": ("mandolin",),
    "banjo": ("banjo",),
    "ukulele": ("ukulele",),
    "sitar": ("sitar",),
    "organ": ("organ", "pipe organ", "church organ", "hammond organ"),
    "electric piano": ("electric piano", "rhodes"),
    "keyboard": ("keyboard",),
    "synthesizer": ("synthesizer", "synthesiser", "synth"),
    "celesta": ("celesta", "celeste"),
    "accordion": ("accordion",),
    "harmonica": ("harmonica",),
    "drums": ("drums", "drum", "drum kit", "drum set", "drumkit", "bass drum", "snare drum"),
    "percussion": ("percussion",),
    "timpani": ("timpani", "kettle drum", "kettledrum"),
    "cymbals": ("cymbal",),
    "glockenspiel": ("glockenspiel",),
    "xylophone": ("xylophone",),
    "marimba": ("marimba",),
    "vibraphone": ("vibraphone",),
    "bells": ("bells", "tubular bells", "chimes"),
    "vocals": ("vocals", "vocal", "singer", "singing", "vocalist"),
    "choir": ("choir",),
}

COMPOSER_ALIASES: dict[str, tuple[str, ...]] = {
    # MusicNet's ten (Bach = Johann Sebastian; his sons are other labels)
    "Bach": ("bach", "j.s. bach", "js bach", "johann sebastian bach", "sebastian bach"),
    "Beethoven": ("beethoven",),
    "Brahms": ("brahms",),
    "Cambini": ("cambini",),
    "Dvorak": ("dvorak",),
    "Faure": ("faure",),
    "Haydn": ("haydn", "joseph haydn", "franz joseph haydn"),
    "Mozart": ("mozart", "wolfgang amadeus mozart", "w.a. mozart", "wa mozart"),
    "Ravel": ("ravel",),
    "Schubert": ("schubert",),
    # family members who share a surname
    "C.P.E. Bach": ("c.p.e. bach", "cpe bach", "carl philipp emanuel bach"),
    "J.C. Bach": ("j.c. bach", "jc bach", "johann christian bach"),
    "W.F. Bach": ("w.f. bach", "wf bach", "wilhelm friedemann bach"),
    "Michael Haydn": ("michael haydn",),
    "Leopold Mozart": ("leopold mozart",),
    "Clara Schumann": ("clara schumann",),
    "Fanny Mendelssohn": ("fanny mendelssohn", "fanny hensel"),
    # other composers a model may name
    "Albinoni": ("albinoni",),
    "Bartok": ("bartok",),
    "Berlioz": ("berlioz",),
    "Bizet": ("bizet",),
    "Boccherini": ("boccherini",),
    "Borodin": ("borodin",),
    "Britten": ("britten",),
    "Bruckner": ("bruckner",),
    "Buxtehude": ("buxtehude",),
    "Chopin": ("chopin",),
    "Clementi": ("clementi",),
    "Copland": ("copland",),
    "Corelli": ("corelli",),
    "Couperin": ("couperin",),
    "Czerny": ("czerny",),
    "Debussy": ("debussy",),
    "Einaudi": ("einaudi",),
    "Elgar": ("elgar",),
    "Franck": ("cesar franck",),
    "Gershwin": ("gershwin",),
    "Glass": ("philip glass",),
    "Glazunov": ("glazunov",),
    "Grieg": ("grieg",),
    "Handel": ("handel", "haendel"),
    "Hindemith": ("hindemith",),
    "Holst": ("holst",),
    "Hummel": ("hummel",),
    "Janacek": ("janacek",),
    "Liszt": ("liszt",),
    "Mahler": ("mahler",),
    "Mendelssohn": ("mendelssohn",),
    "Monteverdi": ("monteverdi",),
    "Mussorgsky": ("mussorgsky", "moussorgsky"),
    "Pachelbel": ("pachelbel",),
    "Paganini": ("paganini",),
    "Poulenc": ("poulenc",),
    "Prokofiev": ("prokofiev", "prokofieff"),
    "Puccini": ("puccini",),
    "Purcell": ("purcell",),
    "Rachmaninoff": ("rachmaninoff", "rachmaninov"),
    "Rameau": ("rameau",),
    "Reich": ("steve reich",),
    "Rimsky-Korsakov": ("rimsky-korsakov", "rimsky korsakov"),
    "Rossini": ("rossini",),
    "Saint-Saens": ("saint-saens", "saint saens"),
    "Satie": ("satie",),
    "Scarlatti": ("scarlatti",),
    "Schoenberg": ("schoenberg", "schonberg"),
    "Schumann": ("schumann", "robert schumann"),
    "Shostakovich": ("shostakovich",),
    "Sibelius": ("sibelius",),
    "Smetana": ("smetana",),
    "Strauss": ("strauss",),
    "Stravinsky": ("stravinsky",),
    "Tchaikovsky": ("tchaikovsky", "tchaikovski"),
    "Telemann": ("telemann",),
    "Vaughan Williams": ("vaughan williams",),
    "Verdi": ("verdi",),
    "Vivaldi": ("vivaldi",),
    "Viotti": ("viotti", "giovanni battista viotti"),
    "Locatelli": ("locatelli",),
    "Geminiani": ("geminiani",),
    "Wagner": ("wagner",),
    "Weber": ("carl maria von weber",),
}

#: Word forms of time signatures. Numeric forms (``7/8``, ``7 / 8``) are read by a
#: pattern of the parser, spelled-out forms (``four-four``, ``six eight time``) too.
TIMESIG_ALIASES: dict[str, tuple[str, ...]] = {
    "4/4": ("common time",),
    "2/2": ("cut time", "alla breve"),
    "irregular": (
        "irregular meter",
        "irregular metre",
        "irregular time signature",
        "irregular time",
        "odd meter",
        "odd metre",
        "odd time signature",
        "odd time",
        "asymmetric meter",
        "asymmetrical meter",
        "asymmetric time signature",
    ),
    "variable": (
        "variable meter",
        "variable metre",
        "variable time signature",
        "changing meter",
        "changing metre",
        "changing time signature",
        "changing time signatures",
        "changes of meter",
        "mixed meter",
        "mixed metre",
        "shifting meter",
        "shifting time signatures",
        "multiple time signatures",
        "time signature changes",
        "meter changes",
    ),
}

MOOD_ALIASES: dict[str, tuple[str, ...]] = {
    "aggressive": ("aggressive", "fierce", "hard-hitting", "ferocious"),
    "angry": ("angry", "furious", "rage", "enraged", "wrathful"),
    "chill": ("chill", "chilled", "relaxed", "relaxing", "laid-back", "laid back"),
    "dark": ("dark", "ominous", "gloomy", "brooding", "sinister", "menacing"),
    "energetic": ("energetic", "high-energy", "lively", "upbeat", "full of energy"),
    "epic": ("epic", "grandiose", "heroic", "majestic"),
    "funky": ("funky",),
    "funny": ("funny", "humorous", "comedic", "comical"),
    "goofy": ("goofy", "silly", "zany"),
    "happy": ("happy", "joyful", "joyous", "cheerful", "cheery", "jubilant", "joy"),
    "jazzy": ("jazzy",),
    "mellow": ("mellow", "gentle", "soothing"),
    "mystical": ("mystical", "mysterious", "magical", "otherworldly"),
    "peaceful": ("peaceful", "calm", "serene", "tranquil"),
    "quirky": ("quirky", "whimsical", "eccentric"),
    "romantic": ("romantic", "tender", "amorous"),
    "sad": ("sad", "melancholic", "melancholy", "sorrowful", "mournful", "somber", "sombre",
            "lonely", "desolate", "lonesome"),
    "sexy": ("sexy", "sensual", "seductive", "sultry"),
    "solemn": ("solemn", "reverent", "stately", "dignified"),
    "spooky": ("spooky", "scary", "creepy", "eerie"),
    "suspenseful": ("suspenseful", "tense", "suspense", "tension"),
    "trippy": ("trippy", "psychedelic", "hallucinatory"),
}

REGIONAL_ALIASES: dict[str, tuple[str, ...]] = {
    "african": ("african", "africa", "west african", "east african"),
    "appalachian": ("appalachian", "appalachia"),
    "cajun": ("cajun",),
    "carribean": ("caribbean", "carribean", "jamaican", "cuban", "trinidadian"),
    "celtic": ("celtic", "irish", "scottish", "gaelic", "breton"),
    "chinese": ("chinese", "china"),
    "indian": ("indian", "india", "hindustani", "carnatic", "bollywood"),
    "japanese": ("japanese", "japan"),
    "latin-american": ("latin american", "latin", "mexican", "latino"),
    "mediterranean": ("mediterranean", "greek"),
    "middle-eastern": (
        "middle eastern",
        "middle east",
        "arabic",
        "arabian",
        "egyptian",
        "persian",
        "turkish",
        "levantine",
    ),
    "native-american": (
        "native american",
        "american indian",
        "first nations",
        "indigenous american",
    ),
    "slavic": (
        "slavic",
        "russian",
        "polish",
        "ukrainian",
        "czech",
        "slovak",
        "serbian",
        "croatian",
        "bulgarian",
    ),
    "south-american": (
        "south american",
        "brazilian",
        "argentinian",
        "argentine",
        "andean",
        "peruvian",
        "colombian",
    ),
    "world": ("world music", "world fusion", "worldbeat", "world beat"),
}

#: Aliases of FMA genre titles beyond the forms derived from the title itself (lower
#: case, and for ``A/B`` or ``A - B`` titles none: every alias is listed here). Keys are
#: titles of FMA's ``genres.csv``; a key the tree does not have is ignored.
GENRE_EXTRA_ALIASES: dict[str, tuple[str, ...]] = {
    "Hip-Hop": ("hiphop", "hip hop"),
    "Punk": ("punk rock", "punk-rock"),  # the compound names the genre, not Punk + Rock
    "Be-Bop": ("bebop",),
    "Soul-RnB": ("soul", "r&b", "rnb", "r and b", "rhythm and blues"),
    "Old-Time / Historic": ("old-time", "old time music", "historic recording"),
    "Big Band/Swing": ("big band", "swing"),
    "Reggae - Dub": ("reggae", "dub"),
    "Reggae - Dancehall": ("dancehall",),
    "Breakcore - Hard": ("breakcore",),
    "Jazz: Vocal": ("vocal jazz",),
    "Jazz: Out": ("out jazz",),
    "Easy Listening: Vocal": ("vocal easy listening",),
    "Drum & Bass": ("drum and bass", "drum n bass", "drum'n'bass", "dnb", "d&b"),
    "Electronic": ("electronica", "edm", "electronic dance music"),
    "Lo-Fi": ("lofi",),
    "Chill-out": ("chillout",),
    "Bigbeat": ("big beat",),
    "IDM": ("intelligent dance music",),
    "Progressive": ("progressive rock", "prog rock", "prog-rock"),
    "Psych-Rock": ("psychedelic rock",),
    "Psych-Folk": ("psychedelic folk",),
    "Space-Rock": ("space rock",),
    "Romany (Gypsy)": ("romany", "gypsy"),
    "20th Century Classical": ("20th-century classical", "twentieth century classical"),
    "Chamber Music": ("chamber",),
    "Choral Music": ("choral",),
    "Classical": ("classical music",),
    "Field Recordings": ("field recording",),
    "Musical Theater": ("musical theatre",),
    "Asia-Far East": ("far east", "far eastern"),
    "N. Indian Traditional": ("north indian traditional", "hindustani"),
    "South Indian Traditional": ("carnatic",),
    "Latin America": ("latin american",),
    "Middle East": ("middle eastern",),
    "Country & Western": ("country and western",),
    "Musique Concrete": ("musique concrete",),
    "Chip Music": ("chip music",),
    "Chiptune": ("chiptune", "8-bit"),
}

#: FMA titles that are also everyday words: they count as a genre only when a genre
#: noun follows ("noise music", "a dance track"; but not "background noise").
GENRE_NEEDS_CONTEXT: frozenset[str] = frozenset({
    "Noise", "Radio", "Interview", "Holiday", "Christmas", "Compilation", "Drone", "Banter",
    "Europe", "Instrumental", "Novelty", "Sound Effects", "Dance", "Progressive", "Comedy",
    "Poetry", "Wonky", "Sludge", "Glitch", "Surf", "French", "Spanish", "Indian", "Latin",
    "African", "Improv", "Minimalism",
})  # fmt: skip

#: Nouns after which a :data:`GENRE_NEEDS_CONTEXT` title counts as a genre.
GENRE_CONTEXT_NOUNS: tuple[str, ...] = (
    "music", "genre", "genres", "track", "tracks", "song", "songs", "piece", "style", "tune",
    "record", "album", "scene", "number",
)  # fmt: skip
