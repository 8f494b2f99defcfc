"""``python -m lm_eval_rul build --pools`` end to end with a tiny local model."""

from __future__ import annotations

import json
import subprocess
import sys

from lm_eval_rul.questions import DEFAULT_SEED, normalize_answer, read_pools, sample_order
from lm_eval_rul.testing.fixtures import fixture_rows
from lm_eval_rul.testing.harness import cli_error_line as fail


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


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "lm_eval_rul", "build", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_build_cli_bad_input_is_one_message_and_exit_2(tmp_path, data_dir):
    out = str(tmp_path / "out.json")
    pools = str(data_dir / "pools.json")
    reference = tmp_path / "reference.json"  # valid questions, but "2" is a pool of 6
    rows = fixture_rows(2)
    rows["2"]["distractors"] = [*rows["2"]["distractors"], "Zither solo", "Kazoo duet"]
    reference.write_text(json.dumps(rows))
    model = ["--model_args", "pretrained=/nonexistent"]
    cases = [
        (["--output", out], "nothing to build from: give --pools"),
        (["--pools", pools, "--stage", "generate", "--output", out], "--stage generate makes"),
        (
            ["--pools", pools, "--reference", str(reference), *model, "--output", out],
            "do not have 1-4 original distractors, so their PI before is undefined (ids '2')",
        ),
    ]
    # A checkpoint line without "id" (an edited file): --stage write reads it.
    checkpoint = tmp_path / "w.json.filter.ckpt.jsonl"
    header = {"format": "lm-eval-rul build checkpoint v1", "fingerprint": {"stage": "filter"}}
    lines = [header, {"status": "ok", "pi": 0.5}, {"id": "2", "status": "failed"}]
    checkpoint.write_text("".join(json.dumps(line) + "\n" for line in lines))
    cases.append((["--stage", "write", "--output", str(tmp_path / "w.json")], "line 2 is not"))
    for args, message in cases:
        done = _cli(*args)
        assert done.returncode == 2, (args, done.stderr[-2000:])
        assert message in done.stderr and "Traceback" not in done.stderr, done.stderr[-2000:]
        assert not (tmp_path / "out.json").exists()


def test_build_help_documents_the_prompt_style():
    done = _cli("--help")
    assert done.returncode == 0
    assert (
        "--prompt_style {paper,release}" in done.stdout and "default: the --strategy" in done.stdout
    )


def test_pi_and_build_seed_default_is_the_package_default():
    """``--seed`` left out means ``DEFAULT_SEED`` (one source of truth), and ``--help`` says
    the same number."""
    from lm_eval_rul.cli import PluginCLI
    from lm_eval_rul.cli._harness_args import seed_of
    from lm_eval_rul.questions import DEFAULT_SEED

    cli = PluginCLI()
    for command in ("pi", "build"):
        parser = cli._subparsers.choices[command]
        required = ["--output", "x.jsonl"] + (["--data", "q.json"] if command == "pi" else [])
        assert seed_of(parser.parse_args(required)) == DEFAULT_SEED
        assert seed_of(parser.parse_args([*required, "--seed", "7"])) == 7
        assert f"default: {DEFAULT_SEED}," in " ".join(parser.format_help().split())


def test_limit_counts_the_cleaning_of_the_questions_used(tmp_path):
    # --limit 2 takes the seeded sample of the tasks (not the file's first two); the pool
    # left out of it holds the correct answer and a repeat, the sampled two are clean
    rows = fixture_rows(3)
    order = sample_order(list(rows), seed=DEFAULT_SEED, item_id=str)
    assert order[:2] != list(rows)[:2]  # else the test could not tell sample from prefix
    extra = ["Zither solo", "Kazoo duet"]
    pools = {q: {**row, "distractors": [*row["distractors"], *extra]} for q, row in rows.items()}
    dirty = pools[order[2]]
    dirty["distractors"] += [dirty["correct_answer"], dirty["distractors"][0], "Banjo trio"]
    path = tmp_path / "pools.json"
    path.write_text(json.dumps(pools))
    out = tmp_path / "clean.json"
    done = _cli("--pools", str(path), "--stage", "clean", "--limit", "2", "--output", str(out))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Cleaned a sample of 2 distractor pools" in done.stderr
    assert "2 pools, 12 candidates in, 12 kept; dropped 0 equal" in done.stderr
    written = json.loads(out.read_text())
    assert list(written) == [q for q in rows if q in order[:2]]  # the file's order
    cleaning = json.loads((tmp_path / "clean.report.json").read_text())["cleaning"]
    assert (cleaning["n_questions"], cleaning["n_candidates_in"]) == (2, 12)
    assert cleaning["equal_to_correct"] == {} and cleaning["duplicates"] == {}
    # a file cleaned whole, read again with --limit: the first pass's counts of those pools
    whole = tmp_path / "whole.json"
    assert _cli("--pools", str(path), "--stage", "clean", "--output", str(whole)).returncode == 0
    again = tmp_path / "again.json"
    done = _cli("--pools", str(whole), "--stage", "clean", "--limit", "3", "--output", str(again))
    cleaning = json.loads((tmp_path / "again.report.json").read_text())["cleaning"]
    assert (cleaning["n_questions"], cleaning["n_candidates_in"]) == (3, 21)
    assert cleaning["equal_to_correct"] == {order[2]: 1} and cleaning["duplicates"] == {order[2]: 1}
    done = _cli("--pools", str(whole), "--stage", "clean", "--limit", "1", "--output", str(again))
    cleaning = json.loads((tmp_path / "again.report.json").read_text())["cleaning"]
    assert (cleaning["n_questions"], cleaning["n_candidates_in"]) == (1, 6)
    assert cleaning["equal_to_correct"] == {} and cleaning["duplicates"] == {}


def test_a_file_given_to_the_wrong_flag_is_named_for_what_it_is(tmp_path, data_dir):
    questions, pools = str(data_dir / "rul.json"), str(data_dir / "pools.json")
    csv = str(data_dir / "muchomusic.csv")
    model = ["--model", "hf", "--model_args", "pretrained=/nonexistent"]
    out = ["--output", str(tmp_path / "out.json")]
    cases = [
        (
            ["--pools", questions, *model, *out],
            f"--pools '{questions}' is a question file (8 questions, 4 distractors each; the "
            "RUL-MuChoMusic layout), but --pools expects distractor pools",
        ),
        (["--pools", questions, *model, *out], f"for its PI run lm-eval-rul pi --data {questions}"),
        (
            ["--data", pools, "--generator", "hf", *model, *out],
            f"--data '{pools}' is a distractor pools file (8 questions, ",
        ),
        (["--data", pools, "--generator", "hf", *model, *out], "give the file as --pools"),
        (
            ["--pools", pools, "--reference", pools, *model, *out],
            "but --reference expects the questions with their original 1-4 distractors",
        ),
        (["--pools", csv, *model, *out], f"--pools '{csv}' is MuChoMusic's CSV"),
    ]
    for args, message in cases:
        done = _cli(*args)
        assert done.returncode == 2, (args, done.stderr[-2000:])
        assert message in done.stderr and "Traceback" not in done.stderr, done.stderr[-2000:]


def test_build_writing_no_question_fails_in_one_line_and_leaves_no_lock(tiny_lm, tmp_path, capsys):
    from lm_eval_rul.testing.fixtures import fixture_rows

    rows = fixture_rows(5)
    for row in rows.values():  # pools of 5 candidates that clean down to one
        answer = row["correct_answer"]
        row["distractors"] = [answer, answer.upper(), "a", "a.", "A"]
    pools = tmp_path / "pools.json"
    pools.write_text(json.dumps(rows))
    out = tmp_path / "out" / "rul.json"
    line = fail(
        ["build", "--pools", pools, "--model", "hf", "--model_args",
         f"pretrained={tiny_lm},dtype=float32", "--device", "cpu", "--output", out,
         "--no_progress"],
        capsys,
    )  # fmt: skip
    assert f"NothingBuiltError: wrote 0 of 5 questions to {out}: all failed (e.g. question" in line
    assert "1 clean candidate(s), 4 needed" in line and "out/rul.report.md" in line
    assert not list(tmp_path.rglob("*.lock"))
