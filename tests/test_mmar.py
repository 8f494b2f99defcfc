"""MMAR-music, the second MMAU-layout benchmark: its reader (2 to 6 options, subsets by
modality), ``mmar_protocol=official`` against MMAR's scorer replayed independently on
scripted free text, text-only and ``lalm`` runs, ``report``'s MMAR section read against
each item's own chance, and a file without answers run as predictions only."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import numpy as np
import pytest
from doubles.chat import ChatServer

from lm_eval_rul.distractors.pi import check_pi_questions, release_prompts
from lm_eval_rul.mcqa.mmau.tasks import load_layout, process_results, process_results_gen
from lm_eval_rul.questions import DataValidationError, load_questions
from lm_eval_rul.questions.mmar import MMAR
from lm_eval_rul.testing.harness import read_output, run_cli
from lm_eval_rul.testing.mmar import (
    mmar_official_accuracy,
    mmar_rows,
    write_mmar_audio,
    write_mmar_jsonl,
)

os.environ.setdefault("HF_HUB_OFFLINE", "1")

MUSIC = [r for r in mmar_rows() if r["modality"] == "music"]
#: Free-text answers by question: right, right among other words, a bare letter, another
#: choice's word too, empty, the wrong choice, a number word shared by choices.
SCRIPTED = {
    "Is the piece in a major key?": "No.",
    "Which instrument enters second?": "After the violin, the HARP enters",
    "Which era does the style suggest?": "A",
    "How many beats are in each bar?": "Four, or maybe five",
    "What is the singer's vocal range?": "",
    "Does the tempo speed up?": "It speeds up",
}


@pytest.fixture(scope="module")
def mmar_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("mmar")
    write_mmar_jsonl(root / "MMAR-meta.jsonl")
    write_mmar_audio(root / "release")  # the release's audio/{id}.wav
    return root


def test_reader_subsets_by_modality_with_two_to_six_options(mmar_dir, caplog):
    data = str(mmar_dir / "MMAR-meta.jsonl")
    with caplog.at_level(logging.WARNING):
        docs = load_layout(MMAR, mmar_data_path=data)["test"]
    blank = MUSIC[4]["id"]  # its trailing "" choice is never shown
    assert f"1 item(s) list an empty choice, left out of their options: {blank}" in caplog.text
    by_id = {d["id"]: d for d in docs}
    assert set(by_id) == {r["id"] for r in MUSIC}
    assert [len(by_id[r["id"]]["options"]) for r in MUSIC] == [2, 4, 5, 6, 4, 2]
    assert [by_id[r["id"]]["letters"][-1] for r in MUSIC] == ["B", "D", "E", "F", "D", "B"]
    assert {d["mmar_modality"] for d in docs} == {"music"}
    assert by_id[MUSIC[1]["id"]]["breakdown_fields"] == ["category", "sub_category"]
    # chance differs per item: PI of a uniform guess is 1 - 1/n for each
    for row in MUSIC:
        doc = dict(by_id[row["id"]])
        n = len(doc["options"])
        scores = process_results(doc, [(0.0, False)] * n)
        assert scores["perceptual_index"] == pytest.approx(1 - 1 / n)
    assert len(load_layout(MMAR, mmar_data_path=data, mmar_subset="music_any")["test"]) == 7
    assert len(load_layout(MMAR, mmar_data_path=data, mmar_subset="all")["test"]) == 8
    # pi and build read MMAR's file: its music items, each with its own options
    questions = load_questions(data)
    assert [len(q.distractors) + 1 for q in questions] == [2, 4, 5, 6, 4, 2]
    assert [q.track for q in questions][:1] == [f"audio/{MUSIC[0]['id']}"]
    check_pi_questions(questions)  # 2 to 6 options: each has a PI (16 shuffles of all)
    assert {len(p.options) for p in release_prompts(questions[3])} == {6}


def _scripted(body: dict) -> str:
    text = body["messages"][-1]["content"]
    return next(reply for question, reply in SCRIPTED.items() if question in text)


def test_official_protocol_is_mmars_scorer_and_report_reads_item_chance(mmar_dir, tmp_path):
    out = tmp_path / "official"
    metadata = {"mmar_data_path": str(mmar_dir / "MMAR-meta.jsonl"), "mmar_protocol": "official"}
    with ChatServer(_scripted) as server:
        run_cli(["run", "--model", "local-chat-completions", "--model_args",
                 f"base_url={server.url},model=stand-in,max_retries=1", "--apply_chat_template",
                 "--tasks", "mmar_music_gen", "--metadata", json.dumps(metadata),
                 "--output_path", str(out), "--log_samples"])  # fmt: skip
    results, samples = read_output(out)
    acc = results["results"]["mmar_music_gen"]["acc,none"]
    # the authors' rule replayed on the release's own rows and the scripted answers
    replayed = [{**r, "answer_prediction": SCRIPTED[r["question"]]} for r in MUSIC]
    assert acc == mmar_official_accuracy(replayed) == 2 / 6
    # ... and on the predictions file the run wrote, in the release's fields
    (predictions,) = out.glob("*/mmar_predictions_mmar_music_gen_*.json")  # beside results
    items = json.loads(predictions.read_text())
    assert [i["id"] for i in items] == [r["id"] for r in MUSIC]
    assert [i["answer_prediction"] for i in items] == [SCRIPTED[r["question"]] for r in MUSIC]
    assert set(items[0]) == set(MUSIC[0]) - {"thinking", "cue", "rubric"} | {"answer_prediction"}
    assert mmar_official_accuracy(items) == acc
    assert all(r["doc"]["options"] == r["doc"]["choices"] for r in samples["mmar_music_gen"])
    report_dir = tmp_path / "report"
    run_cli(["report", str(out), "--out", str(report_dir), "--n-resamples", "99"])
    report = json.loads((report_dir / "report.json").read_text())
    section = report["benchmarks"]["mmar_music_gen"]
    assert section["name"] == "MMAR-music (generation)"
    assert section["chance"] == pytest.approx(np.mean([1 / 2, 1 / 4, 1 / 5, 1 / 6, 1 / 4, 1 / 2]))
    official = section["always_letter"]["official"]
    assert official["chance"] == pytest.approx(section["chance"])
    assert official["letters"]["F"] == 0.0 and official["letters"]["A"] == pytest.approx(2 / 6)
    assert set(section["label_breakdowns"]) == {"category", "sub_category"}
    assert "## MMAR-music (generation)" in (report_dir / "report.md").read_text()


def test_text_only_and_lalm_original_and_noise(tiny_lm, tiny_audio_lm, mmar_dir, tmp_path):
    data = str(mmar_dir / "MMAR-meta.jsonl")
    out = tmp_path / "text"
    run_cli(["run", "--model", "hf", "--model_args", f"pretrained={tiny_lm},dtype=float32",
             "--tasks", "mmar_music", "--metadata", json.dumps({"mmar_data_path": data}),
             "--device", "cpu", "--output_path", str(out), "--log_samples"])  # fmt: skip
    results, samples = read_output(out)
    rows = samples["mmar_music"]
    assert len(rows) == 6 and sorted(len(r["filtered_resps"]) for r in rows) == [2, 2, 4, 4, 5, 6]
    assert results["results"]["mmar_music"]["perceptual_index,none"] == pytest.approx(
        np.mean([r["perceptual_index"] for r in rows])
    )
    metadata = json.dumps({"mmar_data_path": data, "audio_dir": str(mmar_dir / "release")})
    logliks = {}
    for condition in ("original", "noise"):
        out = tmp_path / condition
        run_cli(["run", "--model", "lalm", "--model_args",
                 f"pretrained={tiny_audio_lm},audio={condition},noise_seconds=1",
                 "--tasks", "mmar_music", "--metadata", metadata, "--device", "cpu",
                 "--limit", "3", "--output_path", str(out), "--log_samples"])  # fmt: skip
        _, samples = read_output(out)
        assert all("audio/" in r["doc"]["audio_ref"] for r in samples["mmar_music"])
        logliks[condition] = [float(r[0]) for row in samples["mmar_music"]
                              for r in row["filtered_resps"]]  # fmt: skip
    assert not np.allclose(logliks["original"], logliks["noise"])


def test_a_file_without_answers_runs_predictions_only(mmar_dir, tmp_path, caplog):
    rows = [{k: v for k, v in r.items() if k != "answer"} for r in mmar_rows()]
    data = write_mmar_jsonl(tmp_path / "unanswered.jsonl", rows)
    with caplog.at_level(logging.WARNING):
        docs = load_layout(MMAR, mmar_data_path=str(data), mmar_protocol="official")["test"]
    assert (f"{data} has no answers (MMAR's test split, or a file without 'answer'): this run "
            "writes predictions only (6 items, the MMAR predictions file with "
            "'answer_prediction'); no acc, perceptual_index or baseline is computed"
            ) in caplog.text  # fmt: skip
    doc = dict(docs[0])
    assert doc["gold"] == -1
    assert process_results(dict(doc), [(0.0, False)] * len(doc["options"])) == {}  # no NaN
    assert process_results_gen(dict(doc), ["It speeds up"]) == {"parse_failure": 0.0}
    with pytest.raises(DataValidationError, match="no answers"):
        load_questions(data)  # pi / build: nothing to compute


def test_unknown_protocol_and_disagreeing_keys_are_one_line(mmar_dir):
    from lm_eval_rul.mcqa.tasks import TaskMetadataError

    data = str(mmar_dir / "MMAR-meta.jsonl")
    with pytest.raises(TaskMetadataError, match="mmar_protocol='mmau'.*rul, official, lmms"):
        load_layout(MMAR, mmar_data_path=data, mmar_protocol="mmau")
    with pytest.raises(TaskMetadataError, match="differ; keep mmar_protocol"):
        load_layout(MMAR, mmar_data_path=data, mmar_protocol="rul", protocol="official")
    with pytest.raises(TaskMetadataError, match="mmar_subset='musik'.*music_any"):
        load_layout(MMAR, mmar_data_path=data, mmar_subset="musik")


def test_mmau_and_mmar_files_swapped_name_the_other_benchmark(tmp_path, capsys):
    from lm_eval_rul.mcqa.mmau.tasks import check_mmau_data
    from lm_eval_rul.questions import DataValidationError
    from lm_eval_rul.questions.file_kinds import sniff_data_file
    from lm_eval_rul.tasks.mmar.utils import check_mmar_data
    from lm_eval_rul.testing.harness import cli_error_line
    from lm_eval_rul.testing.mmar import write_mmar_jsonl
    from lm_eval_rul.testing.mmau import write_mmau_json

    mmar = write_mmar_jsonl(tmp_path / "MMAR-meta.jsonl")
    mmau = write_mmau_json(tmp_path / "m.json")
    with pytest.raises(DataValidationError, match="MMAR's released layout.*mmar_data_path"):
        check_mmau_data({"mmau_data_path": str(mmar)})
    with pytest.raises(DataValidationError, match="MMAU's released layout.*mmau_data_path"):
        check_mmar_data({"mmar_data_path": str(mmau)})
    assert sniff_data_file(mmar).description.startswith("MMAR's released layout")
    line = cli_error_line(["build", "--pools", mmar, "--model", "hf", "--model_args",
                           "pretrained=/nonexistent", "--stage", "clean",
                           "--output", tmp_path / "out.json"], capsys)  # fmt: skip
    assert "MMAR's released layout" in line and f"give it as --data {mmar}" in line
    assert "without distractors" not in line
