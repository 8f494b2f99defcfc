"""End to end: every factual task through ``lm-eval-rul run`` with a tiny audio LM under
``audio=original`` and ``audio=random``, windows of the model's 2 s asked for
(``chunk_seconds``: longer recordings asked about window by window), then
``lm-eval-rul report`` on both output folders."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from matplotlib.image import imread

from lm_eval_rul.factual.baselines import frequency_baseline, majority_baseline
from lm_eval_rul.factual.chunks import chunk_windows
from lm_eval_rul.factual.reading.lexicon import lexicon_for
from lm_eval_rul.factual.reading.parser import parse_labels
from lm_eval_rul.factual.records import figure_names
from lm_eval_rul.factual.tasks import load_factual
from lm_eval_rul.models.families import audio_limit_seconds
from lm_eval_rul.testing.audio import make_tiny_audio_lm
from lm_eval_rul.testing.factual import LONG_SECONDS
from lm_eval_rul.testing.harness import read_output, run_cli

TASKS = [
    f"factual_{task}_{variant}"
    for task in ("instrument", "composer", "genre", "regional", "mood", "timesig")
    for variant in ("open", "list")
]
TINY_LIMIT = 2.0  # seconds of audio the tiny Qwen2-Audio hears (its feature window)


def run_args(model: Path, condition: str, metadata: dict, out: Path, *extra: str) -> list[str]:
    return [
        "run", "--model", "lalm", "--model_args", f"pretrained={model},audio={condition}",
        "--tasks", "factual", "--metadata", json.dumps(metadata), "--device", "cpu",
        "--batch_size", "8", "--gen_kwargs", "max_gen_toks=6", "--output_path", str(out),
        "--log_samples", *extra,
    ]  # fmt: skip


@pytest.fixture(scope="module")
def audio_lm(tmp_path_factory) -> Path:
    return make_tiny_audio_lm(tmp_path_factory.mktemp("factual_lm") / "qwen2_audio", "qwen2_audio")


@pytest.fixture(scope="module")
def runs(audio_lm, factual_metadata, tmp_path_factory) -> dict[str, Path]:
    """Output folders of the original and random runs (in parallel), and the report."""
    root = tmp_path_factory.mktemp("factual_e2e")
    folders = {c: root / c for c in ("original", "random")}
    windows = {**factual_metadata, "chunk_seconds": TINY_LIMIT}  # windows only when asked
    with ThreadPoolExecutor(2) as pool:
        done = {
            c: pool.submit(run_cli, run_args(audio_lm, c, windows, folder))
            for c, folder in folders.items()
        }
        outputs = {c: future.result() for c, future in done.items()}
    folders["report"] = root / "report"
    run_cli(["report", str(folders["original"]), str(folders["random"]), "--out",
             str(folders["report"]), "--n-resamples", "999"])  # fmt: skip
    folders["stdout"] = outputs["original"].stdout  # type: ignore[assignment]
    return folders


def test_every_task_runs_and_prints_its_item_level_metrics(runs):
    results, samples = read_output(runs["original"])
    assert sorted(samples) == sorted(TASKS)
    for task in TASKS:
        row = results["results"][task]
        for name in figure_names(task.split("_")[1]):
            assert 0.0 <= row[f"{name},none"] <= max(1.0, row["pred_size,none"]), (task, name)
        assert results["n-samples"][task]["effective"] == len(samples[task])
    assert "tree_f1" in "".join(results["results"]["factual_genre_open"])
    assert re.search(r"\|\s+- instruments \(MusicNet\), open prompt\s+\|", runs["stdout"])
    # lm-eval-rul run told the tasks the model's limit beside the windows asked for, and
    # recorded the protocol
    metadata = results["configs"]["factual_instrument_open"]["metadata"]
    assert metadata["max_audio_seconds"] == TINY_LIMIT and metadata["chunk_seconds"] == TINY_LIMIT
    assert metadata["factual_protocol"] == "rul"


def test_long_recordings_are_heard_window_by_window(runs):
    _, samples = read_output(runs["original"])
    windows = [s for s in samples["factual_instrument_open"] if s["doc"]["id"] == "2186"]
    expected = chunk_windows(LONG_SECONDS, TINY_LIMIT)
    assert [tuple(s["doc"]["audio_window"]) for s in windows] == expected
    lexicon = lexicon_for("instrument")
    for sample in samples["factual_instrument_open"]:
        record = sample["f1"]
        answer = sample["filtered_resps"][0]
        assert record["labels"] == list(parse_labels(answer, lexicon).labels)
        assert sample["doc"]["parsed"]["labels"] == record["labels"]
        prediction = sample["item_prediction"]
        assert prediction["n_chunks"] == prediction["windows_answered"] == record["n_chunks"]
    union = [label for s in windows for label in s["f1"]["labels"]]
    assert windows[0]["item_prediction"]["labels"] == list(dict.fromkeys(union))


def test_random_run_plays_the_partner_recording(runs, factual_metadata):
    _, samples = read_output(runs["random"])
    original = {
        d["id"]: d
        for d in load_factual("composer", "open", **factual_metadata, chunk_seconds=2)["test"]
    }
    for sample in samples["factual_composer_open"]:
        doc = sample["doc"]
        partner = original[doc["random_partner"]]
        assert doc["condition"] == "random" and doc["audio_random_ref"] == partner["audio_ref"]
        assert doc["n_chunks"] == partner["n_chunks"]


def test_report_shows_correct_vs_random_with_baselines(runs):
    report = json.loads((runs["report"] / "report.json").read_text())
    tasks = report["factual"]["tasks"]
    assert list(tasks) == TASKS
    _, samples = read_output(runs["original"])
    for name, data in tasks.items():
        assert {row["condition"] for row in data["rows"]} == {"original", "random"}
        (comparison,) = data["comparisons"]
        assert comparison["setting_b"] == "random" and comparison["n"] == data["n_items"]
        golds = list({s["doc"]["id"]: s["doc"]["gold"] for s in samples[name]}.values())
        baselines = data["baselines"]["node"]
        assert baselines["majority"]["f1"] == pytest.approx(majority_baseline(golds).f1)
        assert baselines["frequency"]["f1"] == pytest.approx(frequency_baseline(golds).f1)
    text = (runs["report"] / "report.md").read_text()
    assert (
        "## Factual music comprehension" in text and "| qwen2_audio | original − random |" in text
    )
    figure = report["factual"]["figures"]["qwen2_audio"]
    assert imread(runs["report"] / figure).shape[1] > 400


def test_missing_audio_stops_the_run_before_the_model_loads(audio_lm, factual_metadata, tmp_path):
    audio = tmp_path / "ocremix"
    shutil.copytree(factual_metadata["ocremix_audio_dir"], audio)
    (audio / "Chrono_Trigger_Tango_OC_ReMix.mp3").unlink()
    metadata = {**factual_metadata, "ocremix_audio_dir": str(audio)}
    done = run_cli(
        run_args(audio_lm, "original", metadata, tmp_path / "out")[:-1] + ["--limit", "1"],
        check=False,
    )
    assert done.returncode == 2, done.stderr[-2000:]
    # one error for every task the file belongs to, each with its count
    assert "the audio of 3 factual tasks cannot be used" in done.stderr
    for task, total in (("regional", 4), ("mood", 7), ("timesig", 7)):
        assert (
            f"ocremix ({task}): 1 of {total} audio files cannot be used (1 missing)" in done.stderr
        )
    assert "missing: item OCR00030" in done.stderr and "Chrono_Trigger_Tango" in done.stderr
    assert "lalm: Qwen2-Audio from" not in done.stderr  # the model never loaded


def test_chunk_seconds_longer_than_the_model_hears_is_refused(audio_lm, factual_metadata, tmp_path):
    metadata = {**factual_metadata, "chunk_seconds": 5}
    done: subprocess.CompletedProcess = run_cli(
        run_args(audio_lm, "original", metadata, tmp_path / "out"), check=False
    )
    assert done.returncode == 2
    assert "chunk_seconds=5 is longer than the 2 s of audio the model hears" in done.stderr


def test_audio_limit_is_read_without_loading_weights(audio_lm, tmp_path):
    assert audio_limit_seconds({"pretrained": str(audio_lm)}) == TINY_LIMIT
    assert audio_limit_seconds({"pretrained": str(audio_lm), "max_audio_seconds": 1.5}) == 1.5
    flamingo = make_tiny_audio_lm(tmp_path / "af3", "audioflamingo3")
    assert audio_limit_seconds({"pretrained": str(flamingo)}) == 8.0  # max_audio_len


def test_items_dropped_by_the_audio_check_are_reported(audio_lm, factual_metadata, tmp_path):
    """``on_audio_problem=skip`` drops the items whose file is missing; the run's documents
    carry the count and the reason, and the report says how many items were left out."""
    audio = tmp_path / "ocremix"
    shutil.copytree(factual_metadata["ocremix_audio_dir"], audio)
    (audio / "Chrono_Trigger_Tango_OC_ReMix.mp3").unlink()  # OCR00030
    metadata = {**factual_metadata, "ocremix_audio_dir": str(audio), "on_audio_problem": "skip"}
    args = run_args(audio_lm, "original", metadata, tmp_path / "out")
    args[args.index("--tasks") + 1] = "factual_regional_open,factual_regional_truefalse"
    run_cli(args)
    _, samples = read_output(tmp_path / "out")
    for task in ("factual_regional_open", "factual_regional_truefalse"):
        assert {s["doc"]["id"] for s in samples[task]} == {"OCR00001", "OCR00010", "OCR00020"}
        assert {json.dumps(s["doc"]["items_dropped"]) for s in samples[task]} == {
            '{"audio_missing": 1}'
        }
    run_cli(["report", str(tmp_path / "out"), "--out", str(tmp_path / "report"),
             "--n-resamples", "99"])  # fmt: skip
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    (row,) = report["factual"]["tasks"]["factual_regional_open"]["rows"]
    assert row["items_dropped"] == {"audio_missing": 1} and row["n_items"] == 3
    (study_row,) = report["factual"]["studies"]["truefalse"]["regional"]["rows"]
    assert study_row["items_dropped"] == {"audio_missing": 1}
    text = (tmp_path / "report" / "report.md").read_text()
    dropped = "1 item dropped by the audio check (on_audio_problem=skip): 1 audio missing"
    assert f"- qwen2_audio (original): {dropped}" in text
    assert f"- factual_regional_truefalse, qwen2_audio (original): {dropped}" in text


def test_a_text_only_factual_run_is_logged_as_hearing_nothing(tiny_lm, factual_metadata, tmp_path):
    import json

    from lm_eval_rul.testing.harness import read_output, run_cli

    out = tmp_path / "out"
    run_cli(["run", "--model", "hf", "--model_args", f"pretrained={tiny_lm},dtype=float32",
             "--tasks", "factual_instrument_binary", "--metadata", json.dumps(factual_metadata),
             "--device", "cpu", "--limit", "2", "--output_path", out, "--log_samples",
             "--gen_kwargs", "max_gen_toks=2"])  # fmt: skip
    _, samples = read_output(out)
    docs = [s["doc"] for rows in samples.values() for s in rows]
    assert docs and {d["condition"] for d in docs} == {"none"}
