"""Music tagging's pure parts: the free-text parser against each vocabulary, the metrics
(known values, scikit-learn parity, ties), the popularity baseline, the readers of the
releases' metadata (fixtures in their schemas) and their one-line errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, f1_score, roc_auc_score
from sklearn.preprocessing import MultiLabelBinarizer

from lm_eval_rul.errors import UserInputError
from lm_eval_rul.tagging import (
    GTZAN_GENRES,
    MTT_TOP50,
    TaggingDataError,
    gen_figures,
    likelihood_figures,
    macro_auc,
    popularity_baseline,
    popularity_tags,
    read_genre,
    read_gtzan_split,
    read_mtg_tsv,
    read_mtt,
    read_tags,
    set_scores,
    tag_text,
)
from lm_eval_rul.tagging.data import check_tagging_data, clip_window, window_of
from lm_eval_rul.tagging.documents import make_documents
from lm_eval_rul.tagging.prompts import CMI_INSTRUCTIONS, protocol_of
from lm_eval_rul.testing.tagging import MTG_TRACKS, MTT_CLIPS, write_gtzan, write_mtg, write_mtt

MTG_GENRES = [
    "genre---rock", "genre---alternativerock", "genre---electronic", "genre---hiphop",
    "genre---drumnbass", "genre---rnb", "genre---pop",
]  # fmt: skip
INSTRUMENTS = ["instrument---guitar", "instrument---electricguitar", "instrument---drums"]


@pytest.mark.parametrize(
    ("answer", "tags", "expected"),
    [
        ("Alternative rock with a hip-hop beat.", MTG_GENRES,
         ("genre---alternativerock", "genre---hiphop")),
        ("hip hop, R&B and drum and bass", MTG_GENRES,
         ("genre---hiphop", "genre---rnb", "genre---drumnbass")),
        ("Electronic music, not rock or pop.", MTG_GENRES, ("genre---electronic",)),
        ("Electric guitars over drums; no acoustic guitar", INSTRUMENTS,
         ("instrument---electricguitar", "instrument---drums")),
        ("No vocals: a sitar and a male vocal later, without drums", MTT_TOP50,
         ("no vocals", "sitar", "male vocal")),
        ("new age, quiet", MTT_TOP50, ("new age", "quiet")),
        ("Is that rock? No, it is techno.", MTT_TOP50, ("techno",)),
        ("I cannot hear any audio.", MTT_TOP50, ()),
    ],
)  # fmt: skip
def test_free_text_is_read_into_the_vocabulary(answer, tags, expected):
    reading = read_tags(answer, "test", tags)
    assert reading.tags == expected
    assert reading.unparsed == (not expected)


def test_gtzan_reads_exactly_one_genre_else_unparsed():
    assert read_genre("Hip-hop.", GTZAN_GENRES).tags == ("hiphop",)
    assert read_genre("hiphop", GTZAN_GENRES).tags == ("hiphop",)
    assert read_genre("Not country: heavy metal", GTZAN_GENRES).tags == ("metal",)
    for answer in ("pop or rock", "", "It is a song.", "blues, then jazz"):
        reading = read_genre(answer, GTZAN_GENRES)
        assert reading.unparsed and reading.tags == ()


def test_display_forms_and_protocols():
    assert [tag_text(t) for t in ("genre---poprock", "mood/theme---film", "no voice")] == [
        "pop rock", "film", "no voice",
    ]  # fmt: skip
    assert protocol_of({}) == "ours" and protocol_of({"tagging_protocol": "cmi"}) == "cmi"
    with pytest.raises(UserInputError, match="tagging_protocol='qwen'.*ours, cmi"):
        protocol_of({"tagging_protocol": "qwen"})
    assert CMI_INSTRUCTIONS["mtg_genre"] == "Please provide the genre tag(s) of given audio."


def test_macro_auc_matches_scikit_learn_and_leaves_out_one_class_tags():
    rng = np.random.default_rng(0)
    tags = ["a", "b", "c", "d"]
    gold = [[t for t in tags[:3] if rng.random() < 0.4] for _ in range(40)]
    gold[0].append("d")  # d: one positive
    scores = rng.normal(size=(40, 4))
    scores[:, 0] = np.round(scores[:, 0])  # ties
    result = macro_auc(tags, scores, gold)
    y = MultiLabelBinarizer(classes=tags).fit_transform(gold)
    kept = [j for j in range(4) if 0 < y[:, j].sum() < 40]
    assert result.roc_auc == pytest.approx(
        roc_auc_score(y[:, kept], scores[:, kept], average="macro")
    )
    assert result.pr_auc == pytest.approx(
        average_precision_score(y[:, kept], scores[:, kept], average="macro")
    )
    everyone = [["a"]] * 3  # "a" on every clip: no negative, left out
    assert macro_auc(["a"], [[0.1], [0.2], [0.3]], everyone).skipped == ("a",)
    assert math.isnan(macro_auc(["a"], [[0.1], [0.2], [0.3]], everyone).roc_auc)


def test_a_model_that_does_not_listen_ranks_at_chance():
    gold = [["a"], [], ["a", "b"], ["b"], []]
    same = [[0.7, -2.0]] * 5  # each tag the same score on every clip
    result = macro_auc(["a", "b"], same, gold)
    assert result.roc_auc == 0.5
    assert result.pr_auc == pytest.approx(np.mean([2 / 5, 2 / 5]))  # the prevalence


def test_set_scores_known_values_and_scikit_learn_parity():
    predicted = [["a", "b"], [], ["c"], ["a"]]
    gold = [["a"], ["c"], ["c", "b"], ["b"]]
    s = set_scores(predicted, gold)
    assert (s.tp, s.fp, s.fn) == (2, 2, 3)
    assert s.micro_f1 == pytest.approx(4 / 9)
    assert s.micro_precision == 0.5 and s.micro_recall == pytest.approx(2 / 5)
    binarizer = MultiLabelBinarizer(classes=["a", "b", "c"])
    y, p = binarizer.fit_transform(gold), binarizer.transform(predicted)
    assert s.micro_f1 == pytest.approx(f1_score(y, p, average="micro"))
    assert s.samples_f1 == pytest.approx(f1_score(y, p, average="samples", zero_division=0))
    assert set_scores([[]], [[]]).samples_f1 == 1.0


def test_popularity_baseline_predicts_the_k_most_frequent_tags():
    gold = [["rock", "pop"], ["rock"], ["jazz", "rock", "pop"], ["pop", "jazz"]]
    assert popularity_tags(gold) == ("pop", "rock")  # k = round(2.0); ties by name
    assert popularity_tags([["x"], ["y", "z"]], order=["z", "y", "x"]) == ("z", "y")  # k=2
    base = popularity_baseline(gold)
    assert base.micro_f1 == pytest.approx(set_scores([("pop", "rock")] * 4, gold).micro_f1)
    assert base.micro_f1 > 0


def test_records_figures():
    records = [
        {"id": "1", "tags": ["a", "b"], "gold": ["a"], "scores": [2.0, -1.0], "predicted": ["a"]},
        {"id": "2", "tags": ["a", "b"], "gold": ["b"], "scores": [-1.0, 0.5], "predicted": ["b"]},
    ]
    assert likelihood_figures(records) == {"roc_auc": 1.0, "pr_auc": 1.0, "micro_f1": 1.0}
    gen = gen_figures([
        {"id": "1", "gold": ["a"], "labels": ["a", "b"], "unparsed": False},
        {"id": "2", "gold": ["b"], "labels": [], "unparsed": True},
    ])  # fmt: skip
    assert gen["micro_f1"] == pytest.approx(2 / 4) and gen["parse_failure"] == 0.5


def test_readers_on_the_release_schemas(tmp_path):
    gtzan = write_gtzan(tmp_path / "gtzan")
    clips = read_gtzan_split(gtzan["split"])
    assert len(clips) == 20 and clips[0].id == "blues.00012" and clips[0].tags == ("blues",)
    mtg = write_mtg(tmp_path / "mtg")
    top50 = read_mtg_tsv(mtg["data"] / "autotagging_top50tags-test.tsv", "top50tags")
    assert [c.id for c in top50] == [f"track_{t[0]:07d}" for t in MTG_TRACKS]
    assert top50[0].tags == (
        "genre---rock", "genre---alternativerock", "mood/theme---energetic",
        "instrument---electricguitar", "instrument---drums",
    )  # fmt: skip
    assert top50[0].path == "14/214.mp3" and top50[0].duration == 124.6
    mtt = write_mtt(tmp_path / "mtt")
    clips = read_mtt(mtt["annotations"], mtt["split"])
    assert [c.tags for c in clips] == [tuple(t for t in MTT_TOP50 if t in tags)
                                       for _, tags in MTT_CLIPS]  # fmt: skip
    metadata = {"gtzan_split_file": str(gtzan["split"]), "gtzan_audio_dir": str(gtzan["audio"]),
                "mtg_data_dir": str(mtg["data"]), "mtg_audio_dir": str(mtg["audio"]),
                "mtt_annotations": str(mtt["annotations"]), "mtt_split_file": str(mtt["split"]),
                "mtt_audio_dir": str(mtt["audio"]), "tagging_offset": "middle"}  # fmt: skip
    check_tagging_data(metadata)  # every clip found, .au and .low.mp3 copies included
    docs = make_documents("mtg_genre", "likelihood", metadata)
    assert docs[0]["tags"][:4] == [  # by count (2 each), then name
        "genre---ambient", "genre---electronic", "genre---rock", "genre---alternativerock",
    ]  # fmt: skip
    middle = window_of({"tagging_offset": "middle"})  # from DURATION; the files are 1.5 s
    assert clip_window(top50[0], middle) == [47.3, 77.3] and docs[0]["audio_window"] == [0.0, 1.5]
    assert docs[2]["audio_ref"].endswith('301.low.mp3"}')
    assert clip_window(top50[0], window_of({"tagging_seconds": 10})) == [0.0, 10.0]


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("split.txt", "blues/blues.00012.wav\nfolk/folk.00001.wav\n",
         r"split.txt, line 2: 'folk/folk.00001.wav' is not genre/genre.000NN.wav"),
        ("autotagging_genre-test.tsv", "TRACK_ID\tPATH\n",
         r"autotagging_genre-test.tsv, row 1: the header"),
        ("autotagging_genre-test.tsv",
         "TRACK_ID\tARTIST_ID\tALBUM_ID\tPATH\tDURATION\tTAGS\nt1\ta\tb\t1/1.mp3\t3\tmood/theme---sad\n",
         r"row 2: tag 'mood/theme---sad' is not genre---<tag>; is this the genre file\?"),
        ("autotagging_genre-test.tsv",
         "TRACK_ID\tARTIST_ID\tALBUM_ID\tPATH\tDURATION\tTAGS\nt1\ta\tb\t1/1.mp3\tlong\tgenre---pop\n",
         r"row 2: DURATION 'long' is not a number"),
    ],
)  # fmt: skip
def test_a_bad_layout_is_one_line_naming_file_row_and_fix(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(TaggingDataError, match=message) as error:
        if name == "split.txt":
            read_gtzan_split(path)
        else:
            read_mtg_tsv(path, "genre")
    assert "\n" not in str(error.value) and "Give --metadata" in str(error.value)


def test_missing_audio_and_bad_window_are_named_before_any_model(tmp_path):
    gtzan = write_gtzan(tmp_path / "gtzan", per_genre=1)
    (gtzan["audio"] / "rock" / "rock.00012.wav").unlink()
    metadata = {"gtzan_split_file": str(gtzan["split"]), "gtzan_audio_dir": str(gtzan["audio"])}
    with pytest.raises(TaggingDataError, match=r"gtzan: 1 of 10 clips have no audio file.*"
                       r"clip rock.00012, tried .*rock.00012.wav, .*rock.00012.au"):  # fmt: skip
        check_tagging_data(metadata)
    with pytest.raises(TaggingDataError, match="tagging_seconds=-3"):
        check_tagging_data({"tagging_seconds": -3})
    with pytest.raises(TaggingDataError, match="tagging_offset='end'"):
        check_tagging_data({"tagging_offset": "end"})
    with pytest.raises(TaggingDataError, match="magnatagatune needs --metadata mtt_annotations"):
        make_documents("magnatagatune", "gen", {"mtt_split_file": str(gtzan["split"])})
