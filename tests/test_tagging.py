"""Music tagging's pure parts: the free-text parser against each vocabulary, the metrics
(known values, scikit-learn parity, ties), the popularity baseline, the readers of the
releases' metadata (fixtures in their schemas) and their one-line errors."""

from __future__ import annotations

import math
import os
from pathlib import Path

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
from lm_eval_rul.tagging.tasks import process_results_gen
from lm_eval_rul.testing.tagging import (
    MTG_TRACKS,
    MTT_CLIPS,
    write_gtzan,
    write_mtg,
    write_mtt,
)

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


_HEADER = "TRACK_ID\tARTIST_ID\tALBUM_ID\tPATH\tDURATION\tTAGS"


def _tsv(folder, rows: list[str], task: str = "genre"):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"autotagging_{task}-test.tsv"
    path.write_text("\n".join([_HEADER, *rows]) + "\n", encoding="utf-8")
    return path


def test_every_tagging_reader_refuses_a_clip_listed_twice_naming_file_line_and_clip(tmp_path):
    mtt = write_mtt(tmp_path / "mtt")
    lines = mtt["split"].read_text().splitlines()
    mtt["split"].write_text("\n".join([*lines, lines[2]]) + "\n")  # 53.1: line 7 repeats 3
    stem = lines[2].split("\t")[1].rsplit("/", 1)[1][: -len(".mp3")]
    with pytest.raises(TaggingDataError) as error:
        read_mtt(mtt["annotations"], mtt["split"])
    message = str(error.value)
    assert "\n" not in message
    assert f"mtt_split_file {mtt['split']}, line 7: clip {stem} is listed twice" in message
    assert "first on line 3" in message
    gtzan = write_gtzan(tmp_path / "gtzan", per_genre=1)
    gtzan["split"].write_text("blues/blues.00012.wav\njazz/jazz.00012.wav\nblues/blues.00012.wav\n")
    with pytest.raises(TaggingDataError, match=r"line 3: clip blues.00012 is listed twice"):
        read_gtzan_split(gtzan["split"])
    tsv = _tsv(tmp_path / "mtg", ["t1\ta\tb\t1/1.mp3\t30\tgenre---pop"] * 2)
    with pytest.raises(TaggingDataError, match=r"row 3: track t1 is listed twice"):
        read_mtg_tsv(tsv, "genre")


def test_mtg_tags_differing_only_in_case_are_one_tag_in_vocabulary_and_answers(tmp_path):
    tsv = _tsv(tmp_path / "mtg", [
        "t1\ta\tb\t1/1.mp3\t30\tgenre---Rock\tgenre---rock",
        "t2\ta\tb\t1/2.mp3\t30\tgenre---rock",
        "t3\ta\tb\t1/3.mp3\t30\tgenre---POP",
    ])  # fmt: skip
    clips = read_mtg_tsv(tsv, "genre")  # 53.2
    assert [c.tags for c in clips] == [("genre---rock",), ("genre---rock",), ("genre---pop",)]
    docs = make_documents("mtg_genre", "gen", {"mtg_data_dir": str(tsv.parent)})
    assert docs[0]["tags"] == ["genre---rock", "genre---pop"]
    records = [process_results_gen(doc, [answer])["micro_f1"]
               for doc, answer in zip(docs, ["Rock.", "rock", "Pop"], strict=True)]  # fmt: skip
    assert [r["labels"] for r in records] == [["genre---rock"], ["genre---rock"], ["genre---pop"]]
    assert gen_figures(records)["micro_f1"] == 1.0


@pytest.mark.parametrize(
    ("answer", "tag"),
    [("Rock 'n' Roll", "rocknroll"), ("rock n' roll", "rocknroll"), ("rock 'n roll", "rocknroll"),
     ("rock and roll", "rocknroll"), ("Rock’n’Roll", "rocknroll"), ("Drum 'n' Bass", "drumnbass"),
     ("drum n bass", "drumnbass"), ("drum and bass", "drumnbass"), ("drum & bass", "drumnbass")],
)  # fmt: skip
def test_free_text_joined_with_n_in_any_spelling_reads_one_tag(answer, tag):
    tags = ("genre---rock", "genre---rocknroll", "genre---drumnbass", "genre---pop")
    assert read_tags(answer, "mtg_genre", tags).tags == (f"genre---{tag}",)  # 53.3


@pytest.mark.parametrize("duration", ["inf", "nan", "-30", "0"])
def test_an_mtg_duration_that_is_no_length_is_one_line_naming_the_row(tmp_path, duration):
    tsv = _tsv(tmp_path / "mtg", ["t1\ta\tb\t1/1.mp3\t30\tgenre---pop",
                                  f"t2\ta\tb\t1/2.mp3\t{duration}\tgenre---rock"])  # fmt: skip
    with pytest.raises(TaggingDataError) as error:  # 53.12: the descriptor check, before the model
        check_tagging_data({"mtg_data_dir": str(tsv.parent), "tagging_offset": "middle"})
    message = str(error.value)
    assert "\n" not in message
    assert f"{tsv}, row 3: DURATION {duration!r} is not a number of seconds above 0" in message


def test_genre_folders_the_user_linked_into_the_audio_folder_are_followed(tmp_path):
    gtzan = write_gtzan(tmp_path / "gtzan", per_genre=1)
    linked = tmp_path / "linked"
    linked.mkdir()
    for genre in gtzan["audio"].iterdir():  # 53.14: each genre folder a link to the release's
        os.symlink(genre, linked / genre.name)
    metadata = {"gtzan_split_file": str(gtzan["split"]), "gtzan_audio_dir": str(linked)}
    check_tagging_data(metadata)
    docs = make_documents("gtzan", "letters", metadata)
    assert all(doc["audio_ref"] for doc in docs) and len(docs) == 10
    # a path in the metadata that leaves the folder is still refused, naming the clip
    tsv = _tsv(tmp_path / "mtg", ["t1\ta\tb\t../../outside.mp3\t30\tgenre---pop"])
    with pytest.raises(UserInputError, match=r"clip t1: the file name '../../outside.mp3' points"):
        check_tagging_data({"mtg_data_dir": str(tsv.parent), "mtg_audio_dir": str(linked)})


def test_tagging_files_with_a_byte_order_mark_are_read(tmp_path):
    gtzan = write_gtzan(tmp_path / "gtzan", per_genre=1)
    gtzan["split"].write_bytes(b"\xef\xbb\xbf" + gtzan["split"].read_bytes())  # 53.15
    assert len(read_gtzan_split(gtzan["split"])) == 10
    mtg = write_mtg(tmp_path / "mtg")
    tsv = mtg["data"] / "autotagging_genre-test.tsv"
    tsv.write_bytes(b"\xef\xbb\xbf" + tsv.read_bytes())
    assert len(read_mtg_tsv(tsv, "genre")) == 8


def test_a_file_shorter_than_its_duration_logs_the_stretch_heard_and_warns_once(tmp_path, caplog):
    import logging

    from lm_eval_rul.testing.audio import synth_clip, write_clip

    write_clip(tmp_path / "audio" / "1" / "1.mp3", synth_clip("tone", seconds=3.0))
    write_clip(tmp_path / "audio" / "1" / "2.mp3", synth_clip("chord", seconds=3.0))
    tsv = _tsv(tmp_path / "mtg", ["t1\ta\tb\t1/1.mp3\t200\tgenre---pop",
                                  "t2\ta\tb\t1/2.mp3\t3\tgenre---rock"])  # fmt: skip
    metadata = {"mtg_data_dir": str(tsv.parent), "mtg_audio_dir": str(tmp_path / "audio"),
                "tagging_seconds": 2, "tagging_offset": "middle"}  # fmt: skip
    with caplog.at_level(logging.WARNING, logger="lm_eval_rul"):
        docs = make_documents("mtg_genre", "gen", metadata)  # 53.11
        make_documents("mtg_genre", "likelihood", metadata)
    # the middle 2 s of the 3 s file, as heard (not [99, 101] of the 200 s DURATION)
    assert [d["audio_window"] for d in docs] == [[0.5, 2.5], [0.5, 2.5]]
    warned = [r.getMessage() for r in caplog.records if "shorter than" in r.getMessage()]
    assert len(warned) == 1
    assert warned[0].startswith("mtg_genre: 1 of 2 clips are shorter than the length their "
                                "metadata gives (first: t1, 3.0 s of 200.0 s)")  # fmt: skip


@pytest.fixture(scope="module")
def gtzan_layouts(tmp_path_factory) -> dict[str, str]:
    """One GTZAN fixture as the release's folders, Kaggle's ``Data`` folder and the hub's
    ``marsyas/gtzan`` saved with ``save_to_disk`` (rows in another order than the split)."""
    import shutil

    root = tmp_path_factory.mktemp("gtzan_layouts")
    release = write_gtzan(root / "release", per_genre=1)
    kaggle = root / "kaggle" / "Data"
    shutil.copytree(release["audio"], kaggle / "genres_original")
    files = sorted(p for p in release["audio"].rglob("*") if p.is_file())[::-1]
    hub = _hub_gtzan(root / "marsyas_gtzan", files, [p.parent.name for p in files])
    wrong = _hub_gtzan(root / "mislabelled", files, ["rock" for _ in files])
    return {"split": str(release["split"]), "release": str(release["audio"]),
            "kaggle": str(kaggle), "hub": str(hub), "mislabelled": str(wrong)}  # fmt: skip


def _hub_gtzan(path: Path, files: list[Path], genres: list[str]) -> Path:
    """``marsyas/gtzan``'s columns (``file``, ``audio``, ``genre`` a ClassLabel), saved
    with ``save_to_disk`` as its one ``train`` split."""
    import datasets

    from lm_eval_rul.tagging.vocab import GTZAN_GENRES

    rows = {
        "file": [f"/home/u/.cache/extracted/genres/{p.parent.name}/{p.name}" for p in files],
        "audio": [{"bytes": p.read_bytes(), "path": p.name} for p in files],
        "genre": [GTZAN_GENRES.index(g) for g in genres],
    }
    cell = {"bytes": datasets.Value("binary"), "path": datasets.Value("string")}
    features = datasets.Features({
        "file": datasets.Value("string"), "audio": cell,
        "genre": datasets.ClassLabel(names=list(GTZAN_GENRES)),
    })  # fmt: skip
    table = datasets.Dataset.from_dict(rows, features=features).cast_column(
        "audio", datasets.Audio(decode=False)
    )  # the hub's features (encoding needs torchcodec; the cells are already bytes)
    datasets.DatasetDict({"train": table}).save_to_disk(str(path))
    return path


def test_gtzan_as_the_hub_or_kaggle_hold_it_reads_the_releases_letters_and_clips(
    gtzan_layouts,
):
    import numpy as np

    from lm_eval_rul.audio.decoding import load_window
    from lm_eval_rul.audio.sources import clip_identity
    from lm_eval_rul.tagging.data import check_tagging_data
    from lm_eval_rul.tagging.documents import make_documents

    read = {}
    for layout in ("release", "kaggle", "hub"):
        metadata = {"gtzan_split_file": gtzan_layouts["split"],
                    "gtzan_audio_dir": gtzan_layouts[layout]}  # fmt: skip
        check_tagging_data(metadata)  # every clip found, before any model
        docs = make_documents("gtzan", "letters", metadata)
        read[layout] = [(d["id"], d["prompt"], d["gold"],
                         clip_identity(d["audio_ref"])["sha256"]) for d in docs]  # fmt: skip
    assert len(read["release"]) == 10
    assert read["kaggle"] == read["release"] and read["hub"] == read["release"]
    heard = []
    for layout in ("release", "hub"):
        doc = make_documents("gtzan", "letters", {"gtzan_split_file": gtzan_layouts["split"],
                                                  "gtzan_audio_dir": gtzan_layouts[layout]})[3]
        heard.append(load_window(doc["audio_ref"], sampling_rate=16000,
                                 window=tuple(doc["audio_window"])))  # fmt: skip
    assert '"kind": "hf"' in doc["audio_ref"]  # the hub's row, decoded from its bytes
    assert heard[0].size > 16000 and np.array_equal(heard[0], heard[1])


def test_a_hub_dataset_whose_genres_contradict_the_split_is_one_line(gtzan_layouts):
    from lm_eval_rul.tagging.data import check_tagging_data
    from lm_eval_rul.tagging.readers import TaggingDataError

    with pytest.raises(TaggingDataError, match=r"is labelled 'rock', the split file says 'blues'"):
        check_tagging_data({"gtzan_split_file": gtzan_layouts["split"],
                            "gtzan_audio_dir": gtzan_layouts["mislabelled"]})  # fmt: skip


def test_gtzan_without_its_clips_advises_its_own_key(gtzan_layouts):
    from lm_eval_rul.audio.conditions.availability import check_audio_available
    from lm_eval_rul.audio.errors import MissingAudioError
    from lm_eval_rul.tagging.documents import make_documents

    docs = make_documents("gtzan", "letters", {"gtzan_split_file": gtzan_layouts["split"]})
    with pytest.raises(MissingAudioError) as caught:
        check_audio_available(docs, "original")
    advice = str(caught.value).splitlines()[-1]
    assert "gtzan_audio_dir" in advice and "marsyas/gtzan" in advice
    assert "audio_dir /" not in advice and "audio_hf_dataset" not in advice


def test_a_window_a_task_asks_about_is_still_never_cut(tmp_path):
    from lm_eval_rul.audio.conditions.basic import clip_key
    from lm_eval_rul.audio.conditions.spec import AudioSpec
    from lm_eval_rul.audio.errors import AudioError

    doc = {"id": "piece-3", "audio_window": [0.0, 40.0], "audio_window_key": "chunk_seconds"}
    with pytest.raises(AudioError, match="Set --metadata chunk_seconds to at most 30"):
        clip_key(doc, '{"kind": "file", "path": "/x.wav"}', AudioSpec(16000, 30.0))
