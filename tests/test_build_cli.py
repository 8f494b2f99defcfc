"""``python -m lm_eval_rul build --pools`` end to end with a tiny local model."""

from __future__ import annotations

import json
import subprocess
import sys

from lm_eval_rul.data import normalize_answer, read_pools


def test_build_cli_from_pools(tmp_path, tiny_lm, data_dir):
    output = tmp_path / "rul_new.json"
    args = [
        "build",
        "--pools", str(data_dir / "pools.json"),
        "--reference", str(data_dir / "rul.json"),
        "--model", "hf",
        "--model_args", f"pretrained={tiny_lm},dtype=float32",
        "--device", "cpu",
        "--batch_size", "8",
        "--strategy", "paper",
        "--seed", "3",
        "--output", str(output),
    ]  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "lm_eval_rul", *args], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "wrote 8 of 8 questions" in done.stdout
    out = json.loads(output.read_text())
    pools = {q.id: q for q in read_pools(data_dir / "pools.json")[0]}
    assert list(out) == sorted(out, key=lambda k: -out[k]["PI"])
    for qid, row in out.items():
        distractors = row["distractors"]
        assert len(distractors) == 4 and len({normalize_answer(d) for d in distractors}) == 4
        assert set(distractors) <= set(pools[qid].distractors)
        assert row["correct_answer"] == pools[qid].correct_answer
    report = json.loads((tmp_path / "rul_new.report.json").read_text())
    assert report["settings"]["strategy"] == "paper" and report["settings"]["seed"] == 3
    assert report["pi_before"]["n"] == 8 and report["pi_after"]["n"] == 8
    assert (tmp_path / "rul_new.report.md").is_file()
    assert (tmp_path / "rul_new.json.filter.ckpt.jsonl").is_file()
