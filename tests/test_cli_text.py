"""End to end: the `lm-eval-rul` CLI and plain `lm_eval` scoring a tiny real causal LM."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.special import softmax

from lm_eval_rul.testing.harness import read_output, run_cli, text_run_args

FOLDS = [f"rul_muchomusic_fold{k}" for k in range(4)]


def harness_args(model: Path, data_dir: Path, out: Path, *extra: str) -> list[str]:
    return text_run_args(
        model, data_dir, out, "rul_muchomusic,muchomusic", "--log_samples", *extra, batch_size=4
    )


def logged_logliks(sample: dict) -> np.ndarray:
    return np.array([float(resp[0]) for resp in sample["filtered_resps"]])


def recomputed_pi(sample: dict) -> float:
    return float(1.0 - softmax(logged_logliks(sample))[sample["doc"]["gold"]])


@pytest.fixture(scope="module")
def first_run(tiny_lm, data_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("run1")
    done = run_cli(harness_args(tiny_lm, data_dir, out))
    return done, *read_output(out)


def test_results_hold_four_folds_group_and_muchomusic(first_run):
    done, results, _ = first_run
    for task in [*FOLDS, "muchomusic"]:
        metrics = results["results"][task]
        assert 0.0 <= metrics["acc,none"] <= 1.0
        assert 0.0 <= metrics["perceptual_index,none"] <= 1.0
    group = results["groups"]["rul_muchomusic"]
    fold_acc = [results["results"][t]["acc,none"] for t in FOLDS]
    fold_pi = [results["results"][t]["perceptual_index,none"] for t in FOLDS]
    assert group["acc,none"] == pytest.approx(np.mean(fold_acc))
    assert group["perceptual_index,none"] == pytest.approx(np.mean(fold_pi))
    assert "perceptual_index" in done.stdout and "RUL-MuChoMusic" in done.stdout


def test_perceptual_index_equals_softmax_recomputed_from_samples(first_run):
    _, results, samples = first_run
    for task in [*FOLDS, "muchomusic"]:
        rows = samples[task]
        assert len(rows) == 8
        per_doc = [recomputed_pi(s) for s in rows]
        assert [s["perceptual_index"] for s in rows] == pytest.approx(per_doc, abs=1e-9)
        assert results["results"][task]["perceptual_index,none"] == pytest.approx(
            np.mean(per_doc), abs=1e-9
        )
        accs = [float(np.argmax(logged_logliks(s)) == s["doc"]["gold"]) for s in rows]
        assert results["results"][task]["acc,none"] == pytest.approx(np.mean(accs))


def test_samples_log_id_shown_options_and_gold(first_run, data_dir):
    _, _, samples = first_run
    source = json.loads((data_dir / "rul.json").read_text())
    for fold, task in enumerate(FOLDS):
        for sample in samples[task]:
            doc = sample["doc"]
            row = source[doc["id"]]
            assert doc["fold"] == fold
            assert doc["options"][doc["gold"]] == row["correct_answer"]
            assert doc["dropped_distractor"] == row["distractors"][fold]
            assert "(A) " + doc["options"][0] in sample["arguments"]["gen_args_0"]["arg_0"]


def test_rerun_and_limit_see_the_same_items_the_same_way(first_run, tiny_lm, data_dir, tmp_path):
    _, _, samples = first_run
    run_cli(harness_args(tiny_lm, data_dir, tmp_path / "again"))
    _, again = read_output(tmp_path / "again")
    for task in samples:
        key = lambda s: s["doc_id"]  # noqa: E731
        first = [(s["doc"], s["filtered_resps"]) for s in sorted(samples[task], key=key)]
        second = [(s["doc"], s["filtered_resps"]) for s in sorted(again[task], key=key)]
        assert first == second
    run_cli(harness_args(tiny_lm, data_dir, tmp_path / "limited", "--limit", "3"))
    _, limited = read_output(tmp_path / "limited")
    for task in FOLDS:
        full = {s["doc"]["id"]: s["doc"]["options"] for s in samples[task]}
        assert len(limited[task]) == 3
        assert all(full[s["doc"]["id"]] == s["doc"]["options"] for s in limited[task])


def test_chat_template_run(tiny_lm, data_dir, tmp_path):
    done = run_cli(
        harness_args(tiny_lm, data_dir, tmp_path, "--apply_chat_template", "--limit", "2")
    )
    _, samples = read_output(tmp_path)
    prompt = samples["rul_muchomusic_fold0"][0]["arguments"]["gen_args_0"]["arg_0"]
    assert "<|im_start|>user" in prompt and prompt.rstrip().endswith("assistant")
    assert "perceptual_index" in done.stdout


def test_multi_token_letters_warn_and_still_score(tiny_lm_split_letters, data_dir, tmp_path):
    done = run_cli(harness_args(tiny_lm_split_letters, data_dir, tmp_path, "--limit", "3"))
    logged = done.stderr + done.stdout
    # one line for the run, naming every split letter and its tokens
    assert "option letters ' A', ' B', ' C', ' D' are several tokens" in logged
    assert "' B' = ['Ġ', 'B']" in logged and logged.count("are several tokens") == 1
    results, samples = read_output(tmp_path)
    for task in FOLDS:
        expected = np.mean([recomputed_pi(s) for s in samples[task]])
        assert results["results"][task]["perceptual_index,none"] == pytest.approx(expected)


def test_plain_lm_eval_with_include_path(tiny_lm, data_dir, tmp_path):
    tasks_dir = run_cli(["tasks-dir"]).stdout.strip()
    assert (Path(tasks_dir) / "rul_muchomusic" / "_rul_muchomusic.yaml").is_file()
    lm_eval = shutil.which("lm_eval", path=str(Path(sys.executable).parent))
    assert lm_eval, "the harness's lm_eval console script must be installed"
    args = harness_args(tiny_lm, data_dir, tmp_path, "--limit", "2")
    args[args.index("run") + 1 : args.index("run") + 1] = ["--include_path", tasks_dir]
    run_cli(args, program=[lm_eval])
    results, _ = read_output(tmp_path)
    assert set(FOLDS) <= set(results["results"]) and "rul_muchomusic" in results["groups"]
