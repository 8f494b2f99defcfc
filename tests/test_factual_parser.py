"""The lexicon parser on hand-written answers: the eight rules, negation, aliases, matching."""

from __future__ import annotations

import pytest

from lm_eval_rul.factual.reading.genres import GenreTree
from lm_eval_rul.factual.reading.lexicon import lexicon_for, normalize_text
from lm_eval_rul.factual.reading.parser import DROP_REASONS, PARSER_VERSION, parse_labels
from lm_eval_rul.factual.reading.senses import FAMILY_LABELS
from lm_eval_rul.testing.factual import FMA_GENRE_ROWS


@pytest.fixture(scope="module")
def tree() -> GenreTree:
    return GenreTree(
        {r[0]: r[3] for r in FMA_GENRE_ROWS},
        {r[0]: r[2] for r in FMA_GENRE_ROWS},
        {r[0]: r[1] for r in FMA_GENRE_ROWS},
    )


def labels(task: str, answer: str, tree: GenreTree | None = None) -> tuple[str, ...]:
    return parse_labels(answer, lexicon_for(task, tree)).labels


# --- rule 1: only terms explicitly in the output (word boundaries) -----------------


@pytest.mark.parametrize(
    "answer, expected",
    [
        ("A solo cello.", ("cello",)),
        ("The bassoon and the oboe.", ("bassoon", "oboe")),  # "bass" inside "bassoon"
        ("Pianist plays a pianissimo passage.", ("piano",)),  # the pianist, not "pianissimo"
        ("I hear a flugelhorn.", ("flugelhorn",)),  # not "horn" inside a word
        ("An orchestra performs.", ()),
        ("", ()),
    ],
)
def test_rule1_explicit_terms_on_word_boundaries(answer, expected):
    assert labels("instrument", answer) == expected


# --- rule 2: no inference from associations ---------------------------------------


def test_rule2_no_inference_from_associations(tree):
    assert labels("genre", "It has a swing rhythm.", tree) == ()
    assert labels("genre", "Punk with a jazz feel.", tree) == ("Punk",)
    assert labels("genre", "Rock, influenced by jazz and techno.", tree) == ("Rock",)
    assert labels("instrument", "A string quartet.", None) == ()  # not violin + viola + cello
    assert labels("composer", "A baroque fugue.") == ()  # not Bach
    assert labels("composer", "In the style of Mozart.") == ()
    assert labels("timesig", "It is a waltz.") == ()  # not 3/4
    assert labels("instrument", "A piano-like synth pad.") == ("synthesizer",)


# --- rule 3: "X more than Y" keeps X -----------------------------------------------


@pytest.mark.parametrize(
    "answer, expected",
    [
        ("The piano is more prominent than the violin.", ("piano",)),
        ("More piano than violin or cello.", ("piano",)),
        ("Piano rather than harpsichord.", ("piano",)),
        ("A harpsichord instead of a piano.", ("harpsichord",)),
        ("There is less piano than violin.", ("violin",)),
        ("There is more than one violin.", ("violin",)),  # a count, not a comparison
        ("Louder than I expected, with a piano.", ("piano",)),
    ],
)
def test_rule3_comparatives(answer, expected):
    assert labels("instrument", answer) == expected


# --- rules 4, 5, 6: de-duplicated, ordered, comma-separated, empty ----------------


def test_rules4_5_6_dedup_order_list_and_empty():
    result = parse_labels(
        "Violin, then piano, then violins again and a fiddle.", lexicon_for("instrument")
    )
    assert result.labels == ("violin", "piano")
    assert result.text == "violin, piano"
    nothing = parse_labels("A beautiful, expressive performance.", lexicon_for("instrument"))
    assert nothing.labels == () and nothing.text == "" and nothing.empty


# --- rule 7: canonical forms --------------------------------------------------------


@pytest.mark.parametrize(
    "task, answer, expected",
    [
        ("composer", "J.S. Bach", ("Bach",)),
        ("composer", "Johann Sebastian Bach", ("Bach",)),
        ("composer", "C.P.E. Bach, not J. S. Bach", ("C.P.E. Bach",)),
        ("composer", "Antonín Dvořák or Gabriel Fauré", ("Dvorak", "Faure")),
        ("composer", "Michael Haydn", ("Michael Haydn",)),
        ("instrument", "Acoustic Grand Piano", ("piano",)),
        ("instrument", "French horn and English horn", ("horn", "english horn")),
        ("instrument", "Double bass, violoncello and celli", ("contrabass", "cello")),
        ("instrument", "A bass guitar", ("bass guitar",)),  # not MusicNet's contrabass
        ("instrument", "The bass plays", ("bass",)),  # plain bass is not the contrabass
        ("timesig", "Common time", ("4/4",)),
        ("timesig", "It is in four-four", ("4/4",)),
        ("timesig", "six eight time", ("6/8",)),
        ("timesig", "7 / 8 and 12/8", ("7/8", "12/8")),
        ("timesig", "About 3/4 of the song is in 5/4", ("5/4",)),
        ("timesig", "It uses an odd meter with time signature changes", ("irregular", "variable")),
    ],
)
def test_rule7_canonical_forms(task, answer, expected):
    assert labels(task, answer) == expected


def test_rule7_genre_aliases(tree):
    assert labels("genre", "Hip hop", tree) == ("Hip-Hop",)
    assert labels("genre", "HIP-HOP and big band", tree) == ("Hip-Hop", "Big Band/Swing")
    assert labels("genre", "free jazz", tree) == ("Free-Jazz",)  # longest alias first
    assert labels("genre", "post punk", tree) == ("Post-Punk",)


# --- rule 8: no mood descriptions without explicit mention ------------------------


def test_rule8_no_mood_without_explicit_mention():
    assert labels("mood", "It has a jazz-like feeling.") == ()
    assert labels("mood", "Fast tempo in a minor key.") == ()
    assert labels("mood", "A jazzy, happy feel.") == ("jazzy", "happy")


# --- negation -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer, expected",
    [
        ("No drums.", ()),
        ("Piano, without drums.", ("piano",)),
        ("I do not hear any piano, just a harpsichord.", ("harpsichord",)),
        ("It doesn't feature violins.", ()),
        ("Neither piano nor violin; a flute.", ("flute",)),
        ("There are no drums, bass or guitar, only strings.", ()),  # a family: no label
        ("No piano and a violin.", ("violin",)),  # negation does not cross "and"
        ("The drums are absent.", ()),
        ("Piano and cello are not present.", ()),
        ("No, it is a piano.", ("piano",)),  # an answer word, not a negation
        ("There is no doubt the cello leads.", ("cello",)),
        ("Not only piano but also violin.", ("piano", "violin")),
        ("A piano. No violin. A cello.", ("piano", "cello")),
        ("Played without pause, the piece features a piano.", ("piano",)),  # comma ends scope
        ("I don't hear a harpsichord.", ()),
    ],
)
def test_negation(answer, expected):
    assert labels("instrument", answer) == expected


# --- label matching (closed lists) -------------------------------------------------


def test_label_matching_regional_and_mood():
    assert labels("regional", "It sounds Egyptian.") == ("middle-eastern",)
    assert labels("regional", "Irish and Scottish tunes") == ("celtic",)
    assert labels("regional", "A fantasy world of sound.") == ()  # "world" alone is not World
    assert labels("regional", "World music from Japan") == ("world", "japanese")
    assert labels("regional", "Rock with a Celtic feel") == ("celtic",)  # an influence counts
    assert labels("mood", "Melancholic and eerie") == ("sad", "spooky")
    assert labels("mood", "It is not sad at all, rather cheerful.") == ("happy",)
    # a closed list ignores every other word
    assert labels("mood", "Piano, Bach, rock, 4/4") == ()


# --- FMA genres read at run time ------------------------------------------------------


def test_genre_words_that_need_a_genre_noun(tree):
    assert labels("genre", "Some background noise over a techno beat", tree) == ("Techno",)
    assert labels("genre", "Noise music", tree) == ("Noise",)
    # a title the tree does not have is not read
    assert labels("genre", "Shoegaze", tree) == ()


def test_genre_lexicon_needs_the_tree():
    with pytest.raises(ValueError, match="genre tree"):
        lexicon_for("genre")


# --- the result object -------------------------------------------------------------------


def test_parse_result_log_names_each_dropped_mention():
    result = parse_labels("Piano, no drums, more violin than cello.", lexicon_for("instrument"))
    log = result.to_log()
    assert log["labels"] == ["piano", "violin"]
    assert log["parser"] == PARSER_VERSION
    assert {(d["label"], d["reason"]) for d in log["dropped"]} == {
        ("drums", "negated"),
        ("cello", "comparative"),
    }
    assert all(m.dropped in ("", *DROP_REASONS) for m in result.mentions)


def test_normalize_text():
    assert normalize_text("  Fauré’s\u00a0“Élégie” —  CELLO ") == 'faure\'s "elegie" - cello'


def test_lexicon_canonical_is_exact():
    composers = lexicon_for("composer")
    assert composers.canonical("  Beethoven. ") == "Beethoven"
    assert composers.canonical("Beethoven and Mozart") is None
    assert composers.canonical("Hildegard") is None


# --- every alias reads as its own label ------------------------------------------------


@pytest.mark.parametrize("task", ["instrument", "composer", "timesig", "mood", "regional", "genre"])
def test_every_alias_reads_as_its_label(task, tree):
    lexicon = lexicon_for(task, tree)
    for alias in lexicon.aliases:
        text = f"{alias.text} music" if alias.needs_context else alias.text
        text = text.capitalize() if alias.capitalized else text
        result = parse_labels(text, lexicon)
        if alias.label in FAMILY_LABELS:  # a family of instruments: read, never predicted
            assert result.labels == () and result.mentions[0].dropped == "other-sense", alias
            continue
        assert result.labels == (alias.label,), alias


def test_an_alias_mapping_to_two_labels_is_refused():
    from lm_eval_rul.factual.reading.lexicon import Alias, Lexicon

    with pytest.raises(ValueError, match="maps to both"):
        Lexicon("mood", (Alias("blue", "sad"), Alias("blue", "mellow")), ("sad", "mellow"))
