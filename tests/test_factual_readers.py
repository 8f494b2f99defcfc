"""Readers of the three public layouts and the audio check, on fixtures shaped like them."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from lm_eval_rul.errors import UserInputError
from lm_eval_rul.factual.datasets.audio_files import check_audio_files
from lm_eval_rul.factual.datasets.fma import (
    fma_audio_path,
    read_checksums,
    read_fma,
    read_fma_tracks,
)
from lm_eval_rul.factual.datasets.musicnet import read_musicnet
from lm_eval_rul.factual.datasets.ocremix import read_ocremix
from lm_eval_rul.factual.errors import AudioFilesError, FactualInputError
from lm_eval_rul.factual.reading.genres import GenreTableError, read_genre_tree
from lm_eval_rul.testing.factual import LONG_SECONDS, write_fma, write_musicnet, write_ocremix


@pytest.fixture(scope="module")
def datasets(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("factual")
    return {
        "musicnet": write_musicnet(root),
        "fma": write_fma(root),
        "ocremix": write_ocremix(root),
    }


def _copy(src: Path, tmp_path: Path) -> Path:
    dst = tmp_path / src.name
    shutil.copytree(src, dst) if src.is_dir() else shutil.copy(src, dst)
    return dst


# --- MusicNet ---------------------------------------------------------------------------


def test_musicnet_items_and_counts(datasets):
    found = read_musicnet(datasets["musicnet"].root)
    instruments, composers = found["instrument"], found["composer"]
    gold = {it.id: it.gold for it in instruments.items}
    assert gold["1727"] == ("piano", "violin", "viola", "cello", "contrabass")
    assert gold["2313"] == ("horn", "oboe", "bassoon", "clarinet", "flute")
    assert gold["2104"] == ("harpsichord", "violin")
    assert "2382" not in gold  # no label file
    assert "1759" not in gold  # empty label file
    assert {it.id: it.gold for it in composers.items}["2104"] == ("Bach",)
    assert "2628" not in {it.id for it in composers.items}  # not in the metadata
    counts = instruments.counts
    shared = {k: v for k, v in counts.items() if k != "items" and not k.startswith("skipped_")}
    assert shared.items() <= composers.counts.items()
    assert composers.counts["skipped_no_composer"] == 1  # 2628
    assert composers.counts["items"] == len(composers.items) == 9
    assert counts["skipped_no_labels"] == 1 and counts["items"] == len(instruments.items) == 8
    assert "skipped_no_notes" not in composers.counts  # an empty label file has a composer
    assert counts["recordings_found"] == 10 and counts["metadata_rows"] == 10
    assert counts["in_metadata"] == 9
    assert counts["metadata_without_recording"] == 1
    assert counts["recordings_without_metadata"] == 1
    assert counts["skipped_no_notes"] == 1 and counts["study_recordings"] == 330
    assert instruments.items[0].audio.name == "1727.wav"
    assert [it.id for it in instruments.items] == sorted(it.id for it in instruments.items)


def test_musicnet_rejects_unknown_program_and_missing_parts(datasets, tmp_path):
    root = _copy(datasets["musicnet"].root, tmp_path)
    with pytest.raises(FactualInputError, match="musicnet_metadata.csv not found"):
        read_musicnet(root)
    with pytest.raises(FactualInputError, match="no MusicNet recordings"):
        read_musicnet(tmp_path / "nothing", metadata_csv=datasets["musicnet"].metadata)
    label = root / "train_labels" / "1727.csv"
    with label.open("a", newline="") as handle:
        csv.writer(handle).writerow([0, 10, 25, 60, 0, 1, "Quarter"])  # a guitar program
    with pytest.raises(FactualInputError, match=r"program\(s\) \[25\]"):
        read_musicnet(root, metadata_csv=datasets["musicnet"].metadata)


# --- FMA ---------------------------------------------------------------------------------


def test_fma_tracks_csv_two_header_rows(datasets):
    tracks = {t.id: t for t in read_fma_tracks(datasets["fma"].metadata_dir / "tracks.csv")}
    assert tracks["000140"].genres == (12, 25) and tracks["000140"].subset == "small"
    assert tracks["007000"].genres == ()
    assert len(tracks) == 12


def test_fma_items_skip_known_empty_and_untagged(datasets):
    genre = read_fma(datasets["fma"].metadata_dir, datasets["fma"].audio_dir)
    ids = [it.id for it in genre.items]
    assert "099134" not in ids and "007000" not in ids and "005000" not in ids
    assert genre.counts == {
        "tracks_in_metadata": 12,
        "tracks_in_subset": 10,
        "skipped_no_genre": 1,
        "skipped_known_empty": 1,
        "checksums_listed": 10,
        "items": 8,
    }
    by_id = {it.id: it for it in genre.items}
    assert by_id["000140"].gold == ("Rock", "Punk")
    assert by_id["000002"].audio == datasets["fma"].audio_dir / "000" / "000002.mp3"
    assert len(by_id["000002"].checksum) == 40


def test_fma_subset_is_inferred_or_required(datasets, tmp_path):
    medium = read_fma(datasets["fma"].metadata_dir, tmp_path / "x", subset="medium")
    assert "005000" in {it.id for it in medium.items}
    with pytest.raises(FactualInputError, match="fma_subset"):
        read_fma(datasets["fma"].metadata_dir, tmp_path / "my_audio")


def test_fma_path_and_checksums(datasets):
    assert fma_audio_path("/a", 2) == Path("/a/000/000002.mp3")
    assert fma_audio_path("/a", "133297") == Path("/a/133/133297.mp3")
    listed = read_checksums(datasets["fma"].audio_dir / "checksums")
    assert "000/000002.mp3" in listed and len(listed) == 10


def test_genre_tree(datasets, tmp_path):
    tree = read_genre_tree(datasets["fma"].metadata_dir / "genres.csv")
    assert tree.root("Post-Punk") == "Rock" and tree.root("Tango") == "International"
    assert tree.root("Shoegaze") is None
    assert "Rock" in tree.roots and "Punk" not in tree.roots
    bad = tmp_path / "genres.csv"
    bad.write_text("genre_id,#tracks,parent,title,top_level\n1,1,0,Rock,1\n2,1,1,Punk,2\n")
    with pytest.raises(GenreTableError, match="top_level disagrees"):
        read_genre_tree(bad)
    with pytest.raises(GenreTableError, match="not found"):
        read_genre_tree(tmp_path / "missing.csv")


# --- OverClocked ReMix ----------------------------------------------------------------------


def test_ocremix_items_per_task(datasets):
    found = read_ocremix(datasets["ocremix"].tags, datasets["ocremix"].audio_dir)
    mood, regional, timesig = found["mood"], found["regional"], found["timesig"]
    assert [it.id for it in regional.items] == ["OCR00001", "OCR00010", "OCR00020", "OCR00030"]
    assert {it.id: it.gold for it in regional.items}["OCR00020"] == ("middle-eastern", "world")
    assert {it.id: it.gold for it in timesig.items}["OCR00020"] == ("variable",)
    assert {it.id: it.gold for it in mood.items}["OCR00004"] == ("dark", "spooky")
    assert mood.counts == {"remixes": 8, "items": 7, "unknown_tags": 0}
    assert "OCR00040" not in {it.id for it in mood.items}  # untagged
    # the file name is the URL's last part, URL-decoded when only that exists on disk
    journey = {it.id: it for it in timesig.items}["OCR00010"]
    assert journey.audio.name == "Dark_Souls_3_Journey's End_OC_ReMix.mp3"
    assert all(it.audio.is_file() for it in timesig.items)


def test_ocremix_missing_column(tmp_path):
    table = tmp_path / "tags.csv"
    table.write_text("ocr_id,download_url,mood_tags\nOCR00001,x.mp3,happy\n")
    with pytest.raises(FactualInputError, match="regional_tags, timesig_tags"):
        read_ocremix(table, tmp_path)


# --- the audio check -------------------------------------------------------------------------


def test_audio_check_fills_durations(datasets):
    items = read_ocremix(datasets["ocremix"].tags, datasets["ocremix"].audio_dir)["mood"].items
    checked = check_audio_files(items, dataset="OCReMix")
    durations = {it.id: it.duration for it in checked.items}
    assert durations["OCR00003"] == pytest.approx(LONG_SECONDS, abs=0.1)
    assert durations["OCR00001"] == pytest.approx(1.0, abs=0.1)
    assert checked.problems == {}


def test_audio_check_names_every_problem_at_once(datasets, tmp_path):
    audio = _copy(datasets["fma"].audio_dir, tmp_path)
    (audio / "000" / "000005.mp3").unlink()  # missing
    (audio / "000" / "000010.mp3").write_bytes(b"not audio at all" * 50)  # unreadable
    with (audio / "000" / "000140.mp3").open("ab") as handle:  # checksum mismatch
        handle.write(b"\0")
    items = read_fma(datasets["fma"].metadata_dir, audio, subset="small").items
    with pytest.raises(AudioFilesError) as caught:
        check_audio_files(items, dataset="FMA (fma_small)")
    error = caught.value
    assert isinstance(error, UserInputError)
    message = str(error)
    # a corrupt file fails its checksum before its header is read
    assert "3 of 8 audio files cannot be used (1 missing, 2 checksum mismatch)" in message
    assert "item 000005" in message and "item 000010" in message and "item 000140" in message
    assert set(error.problems) == {"missing", "checksum mismatch"}
    # without checksums the appended byte goes unnoticed and the garbage is unreadable
    with pytest.raises(AudioFilesError, match=r"\(1 missing, 1 unreadable\)"):
        check_audio_files(items, dataset="FMA", verify_checksums=False)
    kept = check_audio_files(items, dataset="FMA", verify_checksums=False, on_problem="skip")
    assert len(kept.items) == 6 and kept.n_problems == 2
    assert "000140" in {it.id for it in kept.items}


def test_audio_check_empty_file_is_unreadable(tmp_path, datasets):
    items = read_fma(datasets["fma"].metadata_dir, datasets["fma"].audio_dir).items[:1]
    empty = tmp_path / "empty.mp3"
    empty.write_bytes(b"")
    item = items[0].__class__(**{**items[0].__dict__, "audio": empty, "checksum": None})
    with pytest.raises(AudioFilesError, match="empty file"):
        check_audio_files([item], dataset="FMA")
