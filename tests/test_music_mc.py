"""A user's own benchmark through ``music_mc``: a file not in the package (MMAU's *sound*
items, written as plain JSON lines) runs under letters and generation and appears in
``report`` under its ``benchmark_name``."""

from __future__ import annotations

import json

from lm_eval_rul.testing.harness import cli_error_line, read_output, run_cli
from lm_eval_rul.testing.mmau import mmau_rows


def test_mmau_sound_items_run_through_music_mc_and_report_names_them(tiny_lm, tmp_path,
                                                                    capsys):  # fmt: skip
    sound = [r for r in mmau_rows() if r["task"] == "sound"]
    data = tmp_path / "my_sound_bench.jsonl"
    data.write_text("".join(
        json.dumps({"id": r["id"], "question": r["question"], "correct_answer": r["answer"],
                    "distractors": [c for c in r["choices"] if c != r["answer"]]}) + "\n"
        for r in sound
    ))  # fmt: skip
    metadata = {"mc_data_path": str(data), "benchmark_name": "MMAU-sound"}
    model = ["--model", "hf", "--model_args", f"pretrained={tiny_lm},dtype=float32",
             "--device", "cpu"]  # fmt: skip
    out = tmp_path / "run"
    run_cli(["run", *model, "--tasks", "music_mc,music_mc_gen", "--metadata",
             json.dumps(metadata), "--gen_kwargs", "max_gen_toks=8", "--output_path", str(out),
             "--log_samples"])  # fmt: skip
    results, samples = read_output(out)
    assert {"acc,none", "perceptual_index,none"} <= set(results["results"]["music_mc"])
    assert sorted(len(r["doc"]["options"]) for r in samples["music_mc"]) == [2, 4]
    assert {r["doc"]["benchmark_name"] for r in samples["music_mc_gen"]} == {"MMAU-sound"}
    report_dir = tmp_path / "report"
    run_cli(["report", str(out), "--out", str(report_dir), "--n-resamples", "99"])
    report = json.loads((report_dir / "report.json").read_text())
    assert set(report["benchmarks"]) == {"MMAU-sound", "MMAU-sound_gen"}
    section = report["benchmarks"]["MMAU-sound"]
    assert section["name"] == "MMAU-sound" and section["chance"] == (1 / 2 + 1 / 4) / 2
    assert "## MMAU-sound\n" in (report_dir / "report.md").read_text()
    line = cli_error_line(["run", *model, "--tasks", "music_mc", "--metadata",
                           json.dumps({"benchmark_name": "x"})], capsys)  # fmt: skip
    assert "music_mc reads your own multiple-choice file: give --metadata" in line
