"""The harness glue of the factual tasks, without a model: documents per window, parsing
of each window's answer, and the item-level aggregation the harness calls."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest

from lm_eval_rul.audio import UnknownConditionError, check_audio_available
from lm_eval_rul.factual import set_metrics
from lm_eval_rul.factual.chunks import aggregate_labels, chunk_windows
from lm_eval_rul.factual.errors import AudioFilesError, FactualInputError
from lm_eval_rul.factual.records import figure_names, item_figures, item_predictions
from lm_eval_rul.factual.tasks import (
    AGGREGATIONS_BY_METRIC,
    add_item_predictions,
    check_tasks_audio,
    load_factual,
    process_results,
)
from lm_eval_rul.testing.factual import LONG_SECONDS, write_ocremix

LONG = {"2186", "2106"}  # the MusicNet fixture's 9 s recordings


def docs(metadata, task="instrument", variant="open", **options):
    return list(load_factual(task, variant, **metadata, **options)["test"])


def test_long_recordings_become_windows_that_tile_them(factual_metadata):
    found = docs(factual_metadata, chunk_seconds=2)
    by_item: dict[str, list[dict]] = {}
    for doc in found:
        by_item.setdefault(doc["id"], []).append(doc)
    expected = chunk_windows(LONG_SECONDS, 2.0)
    for item_id, windows in by_item.items():
        assert [d["chunk"] for d in windows] == list(range(len(windows)))
        assert {d["n_chunks"] for d in windows} == {len(windows)}
        if item_id in LONG:
            flat = [edge for d in windows for edge in d["audio_window"]]
            assert flat == pytest.approx([edge for window in expected for edge in window])
        else:
            assert len(windows) == 1 and windows[0]["audio_window"] == pytest.approx([0.0, 1.0])
    assert len(found) == 6 + 2 * len(expected)
    # what the pre-flight check and the report read
    doc = found[0]
    assert doc["benchmark"] == "factual_instrument_open" and doc["condition"] == "original"
    assert doc["prompt"] == "What instruments do you hear in this recording?"
    for field in ("audio_ref", "audio_track", "audio_tried", "audio_pool", "gold"):
        assert field in doc
    check_audio_available(found, "original")
    # a model that hears 60 s hears each fixture recording in one window
    assert len(docs(factual_metadata)) == 8


def test_random_documents_cut_the_partner_recording(factual_metadata):
    found = docs(factual_metadata, "composer", audio="random", chunk_seconds=2)
    original = {d["id"]: d for d in docs(factual_metadata, "composer", chunk_seconds=2)}
    gold = {d["id"]: set(d["gold"]) for d in original.values()}
    for doc in found:
        partner = original[doc["random_partner"]]
        assert doc["audio_random_ref"] == partner["audio_ref"] != doc["audio_ref"]
        assert doc["n_chunks"] == partner["n_chunks"]  # the windows of what is played
        assert doc["played_seconds"] == pytest.approx(partner["played_seconds"])
        if doc["random_disjoint"]:
            assert not gold[doc["id"]] & gold[partner["id"]]
    assert {d["id"] for d in found} == set(original)


@pytest.mark.parametrize("condition", ["none", "noise", None])
def test_conditions_without_a_recording_ask_once_per_item(factual_metadata, condition):
    found = docs(factual_metadata, "mood", audio=condition, chunk_seconds=0.5)
    assert len(found) == len({d["id"] for d in found}) == 7
    assert all(d["audio_window"] is None and d["n_chunks"] == 1 for d in found)
    assert {d["condition"] for d in found} == {condition or "none"}


@pytest.mark.parametrize(
    "options, error, match",
    [
        ({"chunk_seconds": 0}, FactualInputError, "chunk_seconds"),
        ({"chunk_seconds": "long"}, FactualInputError, "chunk_seconds"),
        ({"chunk_rule": "mean"}, FactualInputError, "chunk_rule must be one of union, majority"),
        ({"audio": "loud"}, UnknownConditionError, "loud"),
    ],
)
def test_bad_options_are_named(factual_metadata, options, error, match):
    with pytest.raises(error, match=match):
        docs(factual_metadata, "timesig", **options)


def test_missing_audio_is_named_before_any_model(factual_metadata, tmp_path):
    fixture = write_ocremix(tmp_path)
    (fixture.audio_dir / "Mega_Man_2_Egypt_OC_ReMix.mp3").unlink()
    metadata = {"ocremix_tags": str(fixture.tags), "ocremix_audio_dir": str(fixture.audio_dir)}
    with pytest.raises(AudioFilesError, match=r"1 of 7 audio files .*\n  missing: item OCR00020"):
        docs(metadata, "mood")
    assert len(docs(metadata, "mood", audio="none")) == 7  # no file is played


def test_audio_problems_of_several_tasks_are_named_together(factual_metadata, tmp_path):
    fixture = write_ocremix(tmp_path)
    (fixture.audio_dir / "Mega_Man_2_Egypt_OC_ReMix.mp3").unlink()
    metadata = {**factual_metadata, "ocremix_audio_dir": str(fixture.audio_dir)}
    check_tasks_audio(["instrument", "genre"], metadata)  # their files are fine
    with pytest.raises(AudioFilesError, match="ocremix \\(timesig\\): 1 of 7"):
        check_tasks_audio(["instrument", "timesig", "timesig"], metadata)
    with pytest.raises(FactualInputError, match="the audio of 2 factual tasks") as info:
        check_tasks_audio(["regional", "composer", "mood"], metadata)
    assert str(info.value).count("missing: item OCR00020") == 2
    assert str(info.value).count("Fix:") == 1


def test_sample_size_keeps_whole_items(factual_metadata):
    found = docs(factual_metadata, sample_size=3, chunk_seconds=2)
    assert len({d["id"] for d in found}) == 3
    counts = {d["id"]: d["n_chunks"] for d in found}
    assert sum(counts.values()) == len(found)


@pytest.mark.parametrize("study", ["label-set", "binary"])
def test_the_model_seed_never_changes_which_items_are_evaluated(factual_metadata, study):
    """The harness merges ``--model_args`` (``audio=noise,seed=N``) into ``--metadata``: the
    noise seed must not pick the sample, the random clips or the binary pairs."""
    from lm_eval_rul.factual.study_tasks import load_factual_binary
    from lm_eval_rul.questions import DEFAULT_SEED

    def load(**options):
        options = {**factual_metadata, "sample_size": 3, **options}
        if study == "binary":
            return list(load_factual_binary("instrument", "loglikelihood", **options)["test"])
        return docs(options)

    def asked(found):
        return [(d["id"], d["random_partner"], tuple(d.get("options", ()))) for d in found]

    noise = [asked(load(audio="noise", seed=seed)) for seed in (1, 2, 1234)]
    assert noise[0] == noise[1] == noise[2]
    assert asked(load(audio="original", seed=7)) == asked(load()) == noise[0]
    assert asked(load(sample_seed=DEFAULT_SEED)) == noise[0]  # the project's default seed
    others = [asked(load(sample_seed=s)) for s in range(1, 6)]
    assert any({i for i, *_ in found} != {i for i, *_ in noise[0]} for found in others)


def answers_naming(found, name_of):
    """Each window's answer names ``name_of(doc)``."""
    return [f"I can hear {name_of(doc)} in this part." for doc in found]


@pytest.mark.parametrize("rule", ["union", "majority"])
def test_windows_are_parsed_and_aggregated_per_item(factual_metadata, rule):
    found = docs(factual_metadata, chunk_seconds=2, chunk_rule=rule)
    # window k of an item names its k-th gold instrument (cycling), plus a drum kit on
    # window 0 of long recordings: union keeps the drums, majority drops them
    answers = [
        f"I hear the {d['gold'][d['chunk'] % len(d['gold'])]}"
        + (" and drums" if d["chunk"] == 0 and d["n_chunks"] > 1 else "")
        for d in found
    ]
    results = [process_results(dict(d), [a]) for d, a in zip(found, answers, strict=True)]
    assert set(results[0]) == set(figure_names("instrument"))
    records = [r["f1"] for r in results]
    expected = {}
    for doc, answer in zip(found, answers, strict=True):
        expected.setdefault(doc["id"], (doc["gold"], []))[1].append(
            [doc["gold"][doc["chunk"] % len(doc["gold"])]]
            + (["drums"] if "drums" in answer else [])
        )
    preds = {k: aggregate_labels(chunks, rule=rule) for k, (_, chunks) in expected.items()}
    assert ("drums" in preds["2186"]) == (rule == "union")
    golds = [expected[k][0] for k in sorted(expected)]
    want = set_metrics([preds[k] for k in sorted(expected)], golds)
    figures = item_figures(records)
    assert figures["f1"] == pytest.approx(want.f1)
    assert figures["micro_precision"] == pytest.approx(want.micro_precision)
    assert figures["macro_f1"] == pytest.approx(want.macro_f1)
    assert figures["pred_size"] == pytest.approx(want.mean_pred_size)
    assert AGGREGATIONS_BY_METRIC["recall"](records) == pytest.approx(want.recall)
    assert figures["empty_share"] == 0.0
    assert repr(AGGREGATIONS_BY_METRIC["f1"]) == "lm_eval_rul.factual.tasks.ItemAggregation('f1')"


def test_an_answer_naming_nothing_is_an_empty_prediction(factual_metadata):
    found = docs(factual_metadata, "timesig", variant="list")
    records = [process_results(dict(d), ["It has a nice groove."])["f1"] for d in found]
    figures = item_figures(records)
    assert figures["empty_share"] == 1.0 and figures["f1"] == figures["precision"] == 0.0


def test_genre_same_tree_credits_a_sub_genre_of_the_gold_root(factual_metadata):
    found = {d["id"]: d for d in docs(factual_metadata, "genre")}
    doc = dict(found["000141"])  # gold Post-Punk, under Rock
    record = process_results(doc, ["Sounds like punk to me."])["f1"]
    assert record["labels"] == ["Punk"] and record["roots"] == {"Punk": "Rock", "Post-Punk": "Rock"}
    assert doc["parsed"]["labels"] == ["Punk"] and doc["parsed"]["parser"] == "lexicon-3"
    figures = item_figures([record])
    assert figures["f1"] == 0.0 and figures["tree_f1"] == 1.0
    unknown = process_results(dict(found["000002"]), ["Pure synthwave."])["f1"]
    assert item_figures([unknown])["tree_precision"] == 0.0  # not an FMA title: wrong


def test_partial_items_are_scored_on_the_windows_they_have(factual_metadata, caplog):
    found = [d for d in docs(factual_metadata, chunk_seconds=2) if d["id"] == "2186"][:2]
    records = [process_results(dict(d), ["A cello."])["f1"] for d in found]
    (item,) = item_predictions(records)
    assert not item.complete and item.labels == ("cello",)
    with pytest.raises(ValueError, match="disagree on gold"):
        item_predictions([records[0], {**records[1], "gold": ["piano"]}])


def test_item_predictions_are_written_into_the_logged_samples(factual_metadata):
    found = docs(factual_metadata, chunk_seconds=2)
    rows = []
    for doc in found:
        metrics = process_results(dict(doc), ["Mostly piano, maybe a cello."])
        rows.append({"doc": doc, "filter": "none", **metrics})
    assert add_item_predictions({"factual_instrument_open": rows, "other": [{"doc": {}}]}) == 8
    by_item = {r["doc"]["id"]: r["item_prediction"] for r in rows}
    assert by_item["2186"]["labels"] == ["piano", "cello"]
    assert by_item["2186"] == {
        "labels": ["piano", "cello"],
        "precision": 0.5,
        "recall": 1.0,
        "f1": pytest.approx(2 / 3),
        "windows_answered": 5,
        "windows_unread": 0,
        "n_chunks": 5,
    }
    assert math.isclose(by_item["2302"]["f1"], 2 / 3)  # gold piano


def test_checksum_mismatch_is_named(factual_metadata, tmp_path):
    audio = tmp_path / "fma_small"
    shutil.copytree(factual_metadata["fma_audio_dir"], audio)
    target = audio / "000" / "000010.mp3"
    target.write_bytes(Path(target).read_bytes()[:-10] + b"0123456789")
    metadata = {**factual_metadata, "fma_audio_dir": str(audio)}
    with pytest.raises(AudioFilesError, match=r"checksum mismatch: item 000010"):
        docs(metadata, "genre")


def test_unread_windows_are_left_out_never_scored_as_empty(factual_metadata):
    """A window whose answer has no reading (an LLM parser's malformed reply) is left out
    of its item; an item with no read window is left out of the figures."""
    from lm_eval_rul.factual.records import unread_counts

    found = docs(factual_metadata, chunk_seconds=2)
    records = [process_results(dict(doc), ["A cello and a piano."])["f1"] for doc in found]
    long_item = [r for r in records if r["id"] == "2186"]  # five windows, gold cello
    short = next(r for r in records if r["n_chunks"] == 1)
    for record in long_item[1:]:
        record["labels"], record["parse_status"] = None, "malformed"
    short["labels"], short["parse_status"] = [], "malformed"  # an old copy's empty labels
    by_id = {item.id: item for item in item_predictions(records)}
    assert short["id"] not in by_id  # no read window: no prediction, not an empty one
    assert by_id["2186"].per_chunk == (("cello", "piano"),) and by_id["2186"].unread == 4
    assert by_id["2186"].complete
    assert unread_counts(records) == {"windows": 5, "items": 1}
    figures = item_figures(records)
    read = [r for r in records if r["id"] != short["id"]]
    assert figures == item_figures([{**r, "labels": r["labels"] or []} for r in read if
                                    r.get("parse_status") != "malformed"])  # fmt: skip
    assert figures["empty_share"] == 0.0  # the unread item is not an empty prediction
    rows = [{"doc": doc, "filter": "none", "f1": r} for doc, r in zip(found, records, strict=True)]
    add_item_predictions({"factual_instrument_open": rows})
    left_out = next(r["item_prediction"] for r in rows if r["doc"]["id"] == short["id"])
    assert left_out["labels"] is None and left_out["f1"] is None
    assert left_out["windows_unread"] == 1 and left_out["windows_answered"] == 0
    everything_unread = [{**r, "labels": None} for r in records]
    assert all(math.isnan(v) for v in item_figures(everything_unread).values())
