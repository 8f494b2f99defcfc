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


def authors_create_prompt(question: str, options: dict[str, str]) -> str:
    """``create_prompt`` of the released ``filter_based_on_PI.py``, as written."""
    options_text = "; ".join([f"{letter}. {option}" for letter, option in options.items()])
    prompt = "Provide your best guess of this question. "
    prompt += f"The question is: {question} "
    prompt += f"The answer candidates are: {options_text}. Answer without the parenthesis."
    return prompt


def test_release_pi_equals_the_authors_per_letter_loop(tmp_path, tiny_lm, data_dir):
    """One forward per prompt (all letters from one distribution) gives the released code's
    number, which runs the model once per letter and reads the last prompt token."""
    import math

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    output = tmp_path / "pi.jsonl"
    done = _run(
        "pi", "--data", str(data_dir / "rul.json"), "--protocol", "release",
        "--model", "hf", "--model_args", f"pretrained={tiny_lm},dtype=float32",
        "--device", "cpu", "--batch_size", "4", "--output", str(output),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [json.loads(line) for line in output.read_text().splitlines()]
    questions = {q.id: q for q in load_questions(data_dir / "rul.json")}
    model = AutoModelForCausalLM.from_pretrained(tiny_lm, dtype=torch.float32).eval()
    tokenizer = AutoTokenizer.from_pretrained(tiny_lm)

    @torch.no_grad()
    def last_token_probability(prompt: str) -> float:  # vLLM prompt_logprobs[-1], exp'd
        ids = tokenizer(prompt, add_special_tokens=False, return_tensors="pt").input_ids
        logprobs = torch.log_softmax(model(ids).logits[0, -2].double(), dim=-1)
        return math.exp(float(logprobs[ids[0, -1]]))

    assert len(rows) == 8
    for row in rows:
        assert row["n_prompts"] == 16 and {len(p["options"]) for p in row["prompts"]} == {4}
        normalized = []
        for prompt in row["prompts"]:  # the orders the command logged
            mapping = dict(zip("ABCD", prompt["options"], strict=True))
            base = authors_create_prompt(questions[row["id"]].question, mapping)
            probs = [last_token_probability(f"{base} The most likely answer is {letter}")
                     for letter in mapping]  # fmt: skip
            normalized.append(probs[prompt["gold"]] / sum(probs))
        assert max(abs(a - b) for a, b in zip(normalized, row["p_correct"], strict=True)) < 1e-6
        assert abs(row["pi"] - (1 - sum(normalized) / len(normalized))) < 1e-6


def test_pi_limit_scores_the_questions_a_limited_run_sees(tmp_path, tiny_lm, data_dir):
    """``pi --limit 2`` on a file sorted by PI, highest first (as released), scores the two
    questions of the tasks' seeded sample, not the file's first two; rows in file order."""
    from lm_eval_rul.mcqa.tasks import load_rul_muchomusic

    data = data_dir / "rul.json"
    in_file = list(json.loads(data.read_text()))
    run_sample = [doc["id"] for doc in load_rul_muchomusic(0, rul_data_path=str(data))["test"]]
    assert set(run_sample[:2]) != set(in_file[:2])  # else the test could not tell them apart
    output = tmp_path / "pi.jsonl"
    done = _run(
        "pi",
        "--data", str(data),
        "--model", "hf",
        "--model_args", f"pretrained={tiny_lm},dtype=float32",
        "--device", "cpu",
        "--limit", "2",
        "--output", str(output),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    ids = [json.loads(line)["id"] for line in output.read_text().splitlines()]
    assert sorted(ids) == sorted(run_sample[:2])
    assert ids == [qid for qid in in_file if qid in ids]
