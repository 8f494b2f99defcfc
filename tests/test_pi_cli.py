"""``python -m lm_eval_rul pi`` end to end with a tiny local model."""

from __future__ import annotations

import json
import subprocess
import sys

from lm_eval_rul.questions import load_questions


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "lm_eval_rul", *args], capture_output=True, text=True, timeout=300
    )


def test_pi_cli_writes_rows_and_summary(tmp_path, tiny_lm, data_dir):
    output = tmp_path / "pi.jsonl"
    done = _run(
        "pi",
        "--data", str(data_dir / "muchomusic.csv"),
        "--model", "hf",
        "--model_args", f"pretrained={tiny_lm},dtype=float32",
        "--device", "cpu",
        "--batch_size", "4",
        "--output", str(output),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [json.loads(line) for line in output.read_text().splitlines()]
    questions = load_questions(data_dir / "muchomusic.csv")
    assert [r["id"] for r in rows] == [q.id for q in questions]
    for row, q in zip(rows, questions, strict=True):
        assert row["protocol"] == "release" and row["n_prompts"] == 16
        assert len(row["p_correct"]) == 16 and len(row["prompts"]) == 16
        assert abs(row["pi"] - (1 - sum(row["p_correct"]) / 16)) < 1e-9
        first = row["prompts"][0]
        assert first["options"][first["gold"]] == q.correct_answer
    summary = json.loads((tmp_path / "pi.summary.json").read_text())
    assert summary["n"] == 8 and sum(summary["histogram"]) == 8
    assert summary["chance"] == 0.75 and "share above chance" in done.stdout


def test_pi_cli_refuses_pools_before_loading_a_model(tmp_path, data_dir):
    output = tmp_path / "pi.jsonl"
    done = _run(
        "pi",
        "--data", str(data_dir / "pools.json"),
        "--model_args", "pretrained=/nonexistent",
        "--output", str(output),
    )  # fmt: skip
    assert done.returncode == 2, done.stderr[-2000:]
    assert "UndefinedPI" in done.stderr and "PI of a distractor pool is undefined" in done.stderr
    assert "lm-eval-rul build --pools" in done.stderr and "'2' (" in done.stderr
    assert "Traceback" not in done.stderr
    assert not output.exists()
