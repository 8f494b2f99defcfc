"""Seeded sample, seeded random clip, and prepare_task from --metadata to checked items."""

from __future__ import annotations

from pathlib import Path

import pytest

from lm_eval_rul.factual.datasets.sources import prepare_task
from lm_eval_rul.factual.errors import AudioFilesError, FactualInputError
from lm_eval_rul.factual.items import Item, assign_random_clips, id_order, sample_items
from lm_eval_rul.testing.factual import LONG_SECONDS, write_fma, write_musicnet, write_ocremix


def _items(golds: list[tuple[str, ...]], task: str = "mood") -> list[Item]:
    return [Item(f"r{i}", task, "ocremix", Path(f"r{i}.mp3"), g) for i, g in enumerate(golds)]


# --- sample_size ---------------------------------------------------------------------------


def test_sample_is_independent_of_order_and_nested():
    items = _items([("sad",)] * 50)
    small = sample_items(items, 5, seed=3)
    assert [it.id for it in small] == [it.id for it in sample_items(items[::-1], 5, seed=3)]
    assert {it.id for it in small} <= {it.id for it in sample_items(items, 20, seed=3)}
    assert [it.id for it in small] != [it.id for it in sample_items(items, 5, seed=4)]
    assert [it.id for it in small] == sorted((it.id for it in small), key=id_order)
    assert len(sample_items(items, 500, seed=3)) == 50
    assert len(sample_items(items, None)) == 50


@pytest.mark.parametrize("bad", [0, -1, 2.5, "3", True])
def test_sample_size_must_be_a_positive_integer(bad):
    with pytest.raises(FactualInputError, match="sample_size"):
        sample_items(_items([("sad",)]), bad)


def test_id_order_is_natural():
    assert sorted(["10", "9", "OCR00002", "OCR00010"], key=id_order) == [
        "9",
        "10",
        "OCR00002",
        "OCR00010",
    ]


# --- the random clip ---------------------------------------------------------------------------


def test_random_clip_prefers_no_overlap_and_is_never_the_item():
    golds = [("4/4",)] * 6 + [("3/4",), ("6/8",), ("4/4", "3/4")]
    items = _items(golds, task="timesig")
    clips = assign_random_clips(items, seed=0)
    gold = {it.id: set(it.gold) for it in items}
    for item_id, partner in clips.partner.items():
        assert partner != item_id
        if item_id not in clips.no_disjoint:
            assert not gold[item_id] & gold[partner]
    # r8 (4/4 and 3/4) has a disjoint clip: 6/8
    assert clips.partner["r8"] == "r7"
    assert clips.no_disjoint == frozenset()
    # order and sampling do not change the choice
    again = assign_random_clips(items[::-1], seed=0)
    assert again.partner == clips.partner
    assert assign_random_clips(items, seed=1).partner != clips.partner


def test_random_clip_counts_items_without_a_disjoint_clip():
    items = _items([("4/4",), ("4/4",), ("4/4",), ("4/4", "3/4")], task="timesig")
    clips = assign_random_clips(items, seed=0)
    assert clips.no_disjoint == frozenset({"r0", "r1", "r2", "r3"})
    assert clips.no_disjoint_share == 1.0
    # fallback: the least overlapping clips (every other shares exactly 4/4 with r3)
    assert clips.partner["r3"] in {"r0", "r1", "r2"}


def test_random_clip_never_plays_the_same_file():
    items = [
        Item("a", "mood", "ocremix", Path("same.mp3"), ("sad",)),
        Item("b", "mood", "ocremix", Path("same.mp3"), ("happy",)),
        Item("c", "mood", "ocremix", Path("other.mp3"), ("sad",)),
    ]
    clips = assign_random_clips(items, seed=0)
    assert clips.partner["a"] == "c" and clips.partner["b"] == "c"
    assert clips.no_disjoint == frozenset({"a"})
    with pytest.raises(FactualInputError, match="two different clips"):
        assign_random_clips(items[:2], seed=0)


def test_random_clip_uses_the_overlap_labels_given():
    items = _items([("Punk",), ("Post-Punk",), ("Techno",)], task="genre")
    roots = {"Punk": "Rock", "Post-Punk": "Rock", "Techno": "Electronic"}
    clips = assign_random_clips(items, overlap_labels=lambda it: [roots[g] for g in it.gold])
    assert clips.partner["r0"] == "r2" and clips.partner["r1"] == "r2"


def test_random_clip_is_uniform_over_disjoint_clips():
    items = _items([("sad",)] + [("happy",)] * 4)
    partners = {assign_random_clips(items, seed=s).partner["r0"] for s in range(40)}
    assert partners == {"r1", "r2", "r3", "r4"}


# --- prepare_task ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def metadata(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("factual_sources")
    musicnet, fma, ocremix = write_musicnet(root), write_fma(root), write_ocremix(root)
    return {
        "musicnet_dir": str(musicnet.root),
        "fma_metadata_dir": str(fma.metadata_dir),
        "fma_audio_dir": str(fma.audio_dir),
        "ocremix_tags": str(ocremix.tags),
        "ocremix_audio_dir": str(ocremix.audio_dir),
        "unrelated_harness_key": 1,
    }


@pytest.mark.parametrize(
    "task, n_items", [("instrument", 8), ("composer", 9), ("genre", 8), ("mood", 7)]
)
def test_prepare_task_reads_every_dataset(metadata, task, n_items):
    prepared = prepare_task(task, metadata)
    assert len(prepared.items) == n_items == prepared.counts["sampled"]
    assert all(it.duration and it.duration > 0 for it in prepared.items)
    assert set(prepared.partners) == {it.id for it in prepared.items}
    assert (prepared.genre_tree is not None) == (task == "genre")


def test_prepare_task_long_recordings_have_their_duration(metadata):
    prepared = prepare_task("instrument", metadata)
    durations = {it.id: it.duration for it in prepared.items}
    assert durations["2186"] == pytest.approx(LONG_SECONDS, abs=0.01)


def test_prepare_task_sample_and_random(metadata):
    options = {**metadata, "sample_seed": 5}
    prepared = prepare_task("mood", {**options, "sample_size": 3}, condition="random")
    assert len(prepared.items) == 3 and prepared.sample_seed == 5
    full = prepare_task("mood", options)
    assert prepared.random.partner == full.random.partner  # drawn over the whole task
    for item in prepared.items:
        assert prepared.partners[item.id].id == full.random.partner[item.id]
        assert prepared.partners[item.id].duration is not None  # checked too


def test_prepare_task_genre_random_clip_is_from_another_root(metadata):
    prepared = prepare_task("genre", metadata)
    tree = prepared.genre_tree
    for item in prepared.items:
        partner = prepared.partners[item.id]
        assert not set(tree.to_roots(item.gold)) & set(tree.to_roots(partner.gold))


def test_prepare_task_names_missing_files_before_any_model(metadata, tmp_path):
    import shutil

    audio = tmp_path / "ocremix"
    shutil.copytree(metadata["ocremix_audio_dir"], audio)
    for name in ("Shinobi_Shin_Shuriken_Jam_OC_ReMix.mp3", "Mega_Man_2_Egypt_OC_ReMix.mp3"):
        (audio / name).unlink()
    broken = {**metadata, "ocremix_audio_dir": str(audio)}
    with pytest.raises(AudioFilesError, match="2 of 4 audio files cannot be used") as caught:
        prepare_task("regional", broken)
    assert "OCR00001" in str(caught.value) and "OCR00020" in str(caught.value)
    # conditions that read no file do not check them
    assert len(prepare_task("regional", broken, condition="noise").items) == 4
    skipped = prepare_task("regional", {**broken, "on_audio_problem": "skip"})
    assert [it.id for it in skipped.items] == ["OCR00010", "OCR00030"]
    assert skipped.counts["audio_problems"] == 2
    assert skipped.dropped == {"audio_missing": 2}  # counted per item, with the reason
    # under random an item whose partner's file is missing is dropped too, and said so
    random = prepare_task("regional", {**broken, "on_audio_problem": "skip"}, condition="random")
    partner_of = random.random.partner
    lost = {"OCR00001", "OCR00020"}
    via_partner = sum(partner_of[i] in lost for i in ("OCR00010", "OCR00030"))
    assert random.dropped == {
        "audio_missing": 2, **({"random_clip_missing": via_partner} if via_partner else {})
    }
    assert len(random.items) == 2 - via_partner


def test_prepare_task_counts_what_the_readers_left_out(metadata):
    assert prepare_task("instrument", metadata).dropped == {
        "skipped_no_notes": 1, "skipped_no_labels": 1
    }  # fmt: skip
    assert prepare_task("composer", metadata).dropped == {"skipped_no_composer": 1}
    assert prepare_task("genre", metadata).dropped == {
        "skipped_no_genre": 1, "skipped_known_empty": 1
    }  # fmt: skip
    assert prepare_task("mood", metadata).dropped == {}


@pytest.mark.parametrize(
    "change, message",
    [
        ({"ocremix_tags": None}, '"ocremix_tags": PATH'),
        ({"sample_size": "ten"}, "sample_size must be an integer"),
        ({"verify_checksums": "maybe"}, "verify_checksums must be true or false"),
        ({"on_audio_problem": "ignore"}, "on_audio_problem must be raise or skip"),
    ],
)
def test_prepare_task_bad_metadata(metadata, change, message):
    with pytest.raises(FactualInputError, match=message):
        prepare_task("mood", {**metadata, **change})


def test_item_to_doc_is_plain_json():
    import json

    item = Item("1727", "instrument", "musicnet", Path("/m/1727.wav"), ("piano", "cello"), 447.0)
    doc = json.loads(json.dumps(item.to_doc()))
    assert doc["audio"] == "/m/1727.wav" and doc["gold"] == ["piano", "cello"]
    assert doc["duration"] == 447.0 and doc["checksum"] is None
