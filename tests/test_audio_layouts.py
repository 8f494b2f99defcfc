"""The three audio layouts, read through the task loaders with ``--metadata`` keys, and the
missing-audio error raised by ``lm-eval-rul run`` before any model is loaded."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from lm_eval_rul import audio
from lm_eval_rul.audio import AudioSpec, MissingAudioError, check_audio_available, condition_audio
from lm_eval_rul.mcqa.tasks import load_muchomusic, load_rul_muchomusic, muchomusic_questions
from lm_eval_rul.questions import DEFAULT_SEED, sample_order
from lm_eval_rul.testing.harness import run_cli

SR = 16_000
IDS = ["2", "5", "8", "11", "14", "17", "20", "23"]
#: The documents' order: the seeded sample order ``--limit`` takes from (tasks.md).
ORDER = sample_order(IDS, seed=DEFAULT_SEED, item_id=str)


def _tone(index: int, seconds: float = 0.3) -> np.ndarray:
    t = np.arange(int(seconds * SR)) / SR
    return (0.3 * np.sin(2 * np.pi * (200 + 50 * index) * t)).astype(np.float32)


def _docs(dataset, *, file_order: bool = True) -> list[dict]:
    """The documents, put back in the fixture files' order (ascending ids) so tests can
    name neighbours; the tasks list them in the seeded sample order (``ORDER``)."""
    docs = [dict(row) for row in dataset["test"]]
    return sorted(docs, key=lambda d: int(d["id"])) if file_order else docs


@pytest.fixture(scope="module")
def tracks(data_dir) -> dict[str, str]:
    """Question id -> MuChoMusic track stem of the fixture CSV (pairs share a track)."""
    return {q.id: q.track for q in muchomusic_questions(data_path=data_dir / "muchomusic.csv")}


@pytest.fixture(scope="module")
def id_dir(tmp_path_factory) -> Path:
    """One file per question id, in the three formats soundfile writes."""
    root = tmp_path_factory.mktemp("audio_by_id")
    for i, qid in enumerate(IDS):
        sf.write(root / f"{qid}.{('wav', 'flac', 'mp3')[i % 3]}", _tone(i), SR)
    return root


@pytest.fixture(scope="module")
def track_dir(tmp_path_factory, tracks) -> Path:
    root = tmp_path_factory.mktemp("audio_by_track")
    for i, track in enumerate(sorted(set(tracks.values()))):
        sf.write(root / f"{track}.flac", _tone(i), SR)
    return root


def test_one_file_per_question_id(data_dir, id_dir):
    docs = _docs(
        load_rul_muchomusic(1, rul_data_path=str(data_dir / "rul.json"), audio_dir=str(id_dir)),
        file_order=False,
    )
    assert [d["id"] for d in docs] == ORDER
    for doc in docs:
        assert Path(json.loads(doc["audio_ref"])["path"]).stem == doc["id"]
    check_audio_available(docs)
    spec = AudioSpec(SR, 30.0)
    _, first = condition_audio(docs[0], spec)
    _, second = condition_audio(docs[1], spec)
    assert first.shape == second.shape and not np.allclose(first, second)


def test_one_file_per_track_needs_the_muchomusic_csv_for_rul_rows(data_dir, track_dir, tracks):
    meta = {"rul_data_path": str(data_dir / "rul.json"), "audio_dir": str(track_dir)}
    docs = _docs(load_rul_muchomusic(0, **meta))
    with pytest.raises(MissingAudioError) as info:
        check_audio_available(docs)
    assert "No audio for 8 of 8 items" in str(info.value)
    assert f"{track_dir}/2.wav" in str(info.value) and "muchomusic_csv" in str(info.value)

    docs = _docs(load_rul_muchomusic(0, **meta, muchomusic_csv=str(data_dir / "muchomusic.csv")))
    check_audio_available(docs)
    for doc in docs:
        assert Path(json.loads(doc["audio_ref"])["path"]).name == f"{tracks[doc['id']]}.flac"
    # the MuChoMusic task's own rows carry their track
    mm = _docs(
        load_muchomusic(data_path=str(data_dir / "muchomusic.csv"), audio_dir=str(track_dir))
    )
    check_audio_available(mm)
    # two questions of one track share one clip key
    spec = AudioSpec(SR, 30.0)
    assert condition_audio(mm[0], spec)[0] == condition_audio(mm[1], spec)[0]
    assert condition_audio(mm[0], spec)[0] != condition_audio(mm[2], spec)[0]


def test_random_never_plays_the_own_track_and_ignores_limit_and_fold(data_dir, id_dir, tracks):
    meta = {
        "rul_data_path": str(data_dir / "rul.json"),
        "audio_dir": str(id_dir),
        "muchomusic_csv": str(data_dir / "muchomusic.csv"),
    }
    fold0, fold3 = _docs(load_rul_muchomusic(0, **meta)), _docs(load_rul_muchomusic(3, **meta))
    spec = AudioSpec(SR, 30.0, condition="random", seed=11)
    by_path = {json.loads(d["audio_ref"])["path"]: d["id"] for d in fold0}
    for doc, same in zip(fold0, fold3, strict=True):
        key = condition_audio(doc, spec)[0]
        other_id = by_path[json.loads(key[1])["path"]]
        # never the item's own file, nor the file of the other question of its track
        assert tracks[other_id] != tracks[doc["id"]]
        assert condition_audio(same, spec)[0] == key
    # a run limited to 2 items (the harness slices the documents) draws the same clips
    assert [condition_audio(d, spec)[0] for d in fold0[:2]] == [
        condition_audio(d, spec)[0] for d in _docs(load_rul_muchomusic(2, **meta))[:2]
    ]


def _hf_rows(data_dir: Path, files: dict[str, Path]) -> dict[str, list]:
    """An ``lmms-lab/muchomusic``-like table: question text, choices, letter answer, audio."""
    rows = json.loads((data_dir / "rul.json").read_text())
    table: dict[str, list] = {"instruction": [], "choices": [], "answer": [], "context": []}
    for qid in reversed(IDS):  # another order than the questions: the join must not care
        row = rows[qid]
        table["instruction"].append(row["question"].upper() + "  ")  # normalised join
        table["choices"].append([row["correct_answer"], *row["distractors"][:3]])
        table["answer"].append("A")
        table["context"].append({"bytes": files[qid].read_bytes(), "path": files[qid].name})
    return table


@pytest.fixture(scope="module")
def hf_sources(tmp_path_factory, data_dir, id_dir) -> dict[str, Path]:
    import datasets

    files = {p.stem: p for p in id_dir.iterdir()}
    features = datasets.Features(
        {
            "instruction": datasets.Value("string"),
            "choices": datasets.Sequence(datasets.Value("string")),
            "answer": datasets.Value("string"),
            "context": {"bytes": datasets.Value("binary"), "path": datasets.Value("string")},
        }
    )
    # stored as the Audio feature, as on the hub (encoding through Audio needs torchcodec)
    dataset = datasets.Dataset.from_dict(_hf_rows(data_dir, files), features=features)
    dataset = dataset.cast_column("context", datasets.Audio(decode=False))
    assert isinstance(dataset.features["context"], datasets.Audio)
    root = tmp_path_factory.mktemp("hf_audio")
    datasets.DatasetDict({"test": dataset}).save_to_disk(str(root / "disk"))
    (root / "parquet").mkdir()
    dataset.to_parquet(str(root / "parquet" / "test-00000.parquet"))
    return {"disk": root / "disk", "parquet": root / "parquet"}


@pytest.mark.parametrize("kind", ["disk", "parquet"])
def test_hugging_face_dataset_with_an_audio_column(data_dir, id_dir, hf_sources, kind):
    meta = {"rul_data_path": str(data_dir / "rul.json"), "audio_hf_dataset": str(hf_sources[kind])}
    docs = _docs(load_rul_muchomusic(2, **meta))
    check_audio_available(docs)
    spec = AudioSpec(SR, 30.0)
    for doc in docs:  # joined on the question text, ties broken by the correct answer
        _, wave = condition_audio(doc, spec)
        on_disk = next(id_dir.glob(f"{doc['id']}.*"))
        expected = audio.decode_audio(on_disk, sampling_rate=SR)
        assert wave.shape == expected.shape and np.allclose(wave, expected, atol=1e-6)


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("audio_id_column", "qid", "no id column 'qid'"),
        ("audio_question_column", "text", "no question column 'text'"),
        ("audio_column", "wav", "no audio column 'wav'"),
        ("audio_skip_ambiguous", "maybe", "audio_skip_ambiguous='maybe': use true or false"),
        ("audio_skip_ambiguous", 2, "audio_skip_ambiguous=2: use true or false"),
        ("audio_skip_ambiguous", [True], "audio_skip_ambiguous=\\[True\\]: use true or false"),
    ],
)
def test_bad_audio_metadata_values_are_user_errors(data_dir, hf_sources, key, value, message):
    from lm_eval_rul.errors import UserInputError

    meta = {
        "rul_data_path": str(data_dir / "rul.json"),
        "audio_hf_dataset": str(hf_sources["disk"]),
    }
    with pytest.raises(UserInputError, match=message):
        load_rul_muchomusic(0, **meta, **{key: value})


def test_audio_layout_and_skip_flag_accept_their_spellings(data_dir, id_dir):
    meta = {"rul_data_path": str(data_dir / "rul.json"), "audio_dir": str(id_dir)}
    for flag in (True, False, 0, 1, "true", "no", None):
        assert len(_docs(load_rul_muchomusic(0, **meta, audio_skip_ambiguous=flag))) == 8
    with pytest.raises(audio.AudioError, match="audio_layout='sideways': use auto, id or track"):
        load_rul_muchomusic(0, **meta, audio_layout="sideways")


def test_cli_reports_all_missing_audio_before_loading_the_model(data_dir, id_dir, tmp_path):
    partial = tmp_path / "partial"
    partial.mkdir()
    for qid in IDS[:3]:
        (partial / f"{qid}.wav").write_bytes(next(id_dir.glob(f"{qid}.*")).read_bytes())
    meta = {"rul_data_path": str(data_dir / "rul.json"), "audio_dir": str(partial)}
    never_loaded = tmp_path / "no_such_model"  # a folder with a config.json, no weights
    never_loaded.mkdir()
    (never_loaded / "config.json").write_text("{}")
    args = [
        "run",
        "--model",
        "lalm",
        "--model_args",
        f"pretrained={never_loaded},audio=original",
        "--tasks",
        "rul_muchomusic",
        "--metadata",
        json.dumps(meta),
        "--device",
        "cpu",
    ]
    done = run_cli(args, check=False, timeout=300)
    assert "MissingAudioError: No audio for 5 of 8 items: ids 11, 14, 17, 20, 23." in done.stderr
    assert f"id 11: tried {partial}/11.wav, {partial}/11.flac" in done.stderr
    # raised before the model: its (missing) path was never opened
    assert "no_such_model" not in done.stderr.replace(f"pretrained={tmp_path}", "")
    assert done.returncode == 2 and "lm-eval-rul run: error: MissingAudioError" in done.stderr
    assert "Traceback" not in done.stderr


def _run_args(argv: list[str], monkeypatch) -> object:
    from lm_eval_rul import registration
    from lm_eval_rul.cli import PluginCLI

    monkeypatch.setattr(sys, "argv", ["lm-eval-rul", *argv])
    args = PluginCLI().parse_args()
    args.include_path = str(registration.tasks_dir())
    return args


def test_pre_model_check_covers_only_the_limited_documents(data_dir, id_dir, tmp_path, monkeypatch):
    from lm_eval_rul.cli.run import check_audio_before_model

    partial = tmp_path / "first3"
    partial.mkdir()
    for qid in ORDER[:3]:
        (partial / f"{qid}.wav").write_bytes(next(id_dir.glob(f"{qid}.*")).read_bytes())
    meta = json.dumps({"rul_data_path": str(data_dir / "rul.json"), "audio_dir": str(partial)})
    base = ["run", "--model", "lalm", "--tasks", "rul_muchomusic_gen", "--metadata", meta]
    check_audio_before_model(_run_args([*base, "--limit", "3"], monkeypatch))
    with pytest.raises(MissingAudioError, match=rf"No audio for 1 of 4 items: ids {ORDER[3]}\."):
        check_audio_before_model(_run_args([*base, "--limit", "4"], monkeypatch))
    # conditions that need no files pass with no audio at all
    check_audio_before_model(_run_args([*base, "--model_args", "audio=noise"], monkeypatch))
    with pytest.raises(audio.UnknownConditionError, match="audio='loud' is not a condition"):
        check_audio_before_model(_run_args([*base, "--model_args", "audio=loud"], monkeypatch))


def _rul_with_captions(path: Path, captions: list[str | None]) -> Path:
    """The fixture RUL JSON with the given captions (``None``: no caption)."""
    from lm_eval_rul.testing.fixtures import fixture_rows, write_rul_json

    rows = fixture_rows(len(captions))
    for row, caption in zip(rows.values(), captions, strict=True):
        if caption is None:
            row.pop("caption")
        else:
            row["caption"] = caption
    return write_rul_json(path, rows=rows)


def test_random_knows_the_track_from_the_caption_without_the_csv(id_dir, tmp_path, recwarn):
    # pairs of questions share a caption (= a track), each question has its own file and no
    # muchomusic_csv says the track: the caption must keep the pair apart in random
    captions = [f"A {'calm' if i % 4 < 2 else 'loud'} piece, clip {i // 2}." for i in range(8)]
    captions = [c.upper() + " " if i % 2 else c for i, c in enumerate(captions)]  # normalised
    rul = _rul_with_captions(tmp_path / "rul.json", captions)
    docs = _docs(load_rul_muchomusic(0, rul_data_path=str(rul), audio_dir=str(id_dir)))
    pair = {d["id"]: i // 2 for i, d in enumerate(docs)}
    by_path = {json.loads(d["audio_ref"])["path"]: d["id"] for d in docs}
    assert docs[0]["audio_track"] == docs[1]["audio_track"] != docs[2]["audio_track"]
    for seed in range(12):  # 96 draws: the old per-file identity hits the pair ~1 in 7
        spec = AudioSpec(SR, 30.0, condition="random", seed=seed)
        for doc in docs:
            played = by_path[json.loads(audio.condition_key(doc, spec)[1])["path"]]
            assert pair[played] != pair[doc["id"]], (seed, doc["id"], played)
    assert not [w for w in recwarn if "neither a known track" in str(w.message)]


def test_caption_inherits_the_track_and_unknown_tracks_warn(id_dir, tmp_path):
    from lm_eval_rul.questions import Question

    questions = [
        Question("1", "Q?", "a", (), caption="Soft piano.", track="t1"),
        Question("2", "Q?", "a", (), caption="  soft PIANO "),  # same caption: track t1
        Question("3", "Q?", "a", (), caption="Loud drums."),
        Question("4", "Q?", "a", ()),
        Question("5", "Q?", "a", ()),
    ]
    ids = audio.track_identities(questions, ["r1", "r2", "r3", "r4", None])
    assert ids[:2] == ["t1", "t1"]
    assert ids[2].startswith("caption:") and ids[3] == "clip:r4" and ids[4] == "id:5"

    # no caption and no track: each file is its own track, and random says so once
    rul = _rul_with_captions(tmp_path / "rul.json", [None] * 8)
    docs = _docs(load_rul_muchomusic(1, rul_data_path=str(rul), audio_dir=str(id_dir)))
    spec = AudioSpec(SR, 30.0, condition="random")
    with pytest.warns(UserWarning, match="8 of 8 clips have neither a known track nor a caption"):
        audio.condition_key(docs[0], spec)


def test_missing_audio_is_counted_per_benchmark_and_id(data_dir, track_dir):
    # MuChoMusic rows know their track; RUL rows (same ids) do not without the CSV
    mm = _docs(
        load_muchomusic(data_path=str(data_dir / "muchomusic.csv"), audio_dir=str(track_dir))
    )
    meta = {"rul_data_path": str(data_dir / "rul.json"), "audio_dir": str(track_dir)}
    rul = _docs(load_rul_muchomusic(0, **meta))
    assert {d["id"] for d in mm} == {d["id"] for d in rul}
    check_audio_available(mm)
    with pytest.raises(MissingAudioError) as info:
        check_audio_available(mm + rul + rul)
    assert "No audio for 8 of 16 items: ids rul_muchomusic:2, rul_muchomusic:5" in str(info.value)
    assert set(info.value.missing) == {f"rul_muchomusic:{i}" for i in IDS}


def test_condition_key_reads_no_audio(tmp_path):
    corrupt = tmp_path / "7.wav"
    corrupt.write_bytes(b"not audio at all")
    doc = {"id": "7", "audio_ref": audio.sources.file_ref(corrupt), "audio_track": "t"}
    audio.clear_audio_cache()
    for condition in ("original", "noise", "silence", "none"):
        spec = AudioSpec(SR, 30.0, condition=condition)
        key = audio.condition_key(doc, spec)  # the file is never opened
        assert audio.decode_count() == 0
        if condition != "original":
            assert condition_audio(doc, spec)[0] == key
    with pytest.raises(audio.AudioDecodeError, match="7.wav"):
        condition_audio(doc, AudioSpec(SR, 30.0))


@pytest.mark.parametrize(
    ("model_args", "message"),
    [
        ("audio=loud", "UnknownConditionError: audio='loud' is not a condition; use one of"),
        ("noise_seconds=abc", "LALMArgumentError: lalm: noise_seconds='abc' is not a number"),
        ("chat_template=maybe", "LALMArgumentError: lalm: chat_template='maybe' is not a boolean"),
    ],
)
def test_cli_reports_bad_model_args_cleanly(data_dir, id_dir, tmp_path, model_args, message):
    meta = {"rul_data_path": str(data_dir / "rul.json"), "audio_dir": str(id_dir)}
    args = [
        "run",
        "--model",
        "lalm",
        "--model_args",
        f"pretrained={tmp_path / 'no_such_model'},{model_args}",
        "--tasks",
        "rul_muchomusic",
        "--metadata",
        json.dumps(meta),
    ]
    done = run_cli(args, check=False, timeout=300)
    assert done.returncode == 2, done.stderr[-3000:]
    assert f"lm-eval-rul run: error: {message}" in done.stderr
    assert "Traceback" not in done.stderr


def test_cli_reports_an_unloadable_hf_dataset_cleanly(data_dir, tmp_path):
    meta = {"rul_data_path": str(data_dir / "rul.json"), "audio_hf_dataset": "nobody/nothing"}
    never_loaded = tmp_path / "no_such_model"  # a config.json, no weights
    never_loaded.mkdir()
    (never_loaded / "config.json").write_text("{}")
    model_args = f"pretrained={never_loaded}"
    args = ["run", "--model", "lalm", "--model_args", model_args, "--tasks", "rul_muchomusic"]
    done = run_cli([*args, "--metadata", json.dumps(meta)], check=False, timeout=300)
    assert done.returncode == 2, done.stderr[-3000:]
    assert "error: AudioError: --metadata audio_hf_dataset='nobody/nothing': not a" in done.stderr
    assert "Traceback" not in done.stderr
