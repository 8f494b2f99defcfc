"""The generation tasks end to end through ``lm-eval-rul run`` with a tiny real text model,
and ``majority_acc`` added to the fold groups' results."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from lm_eval_rul.mcqa import parse_answer
from lm_eval_rul.report import majority_from_samples
from lm_eval_rul.testing.harness import read_output, run_cli, text_run_args

GEN_FOLDS = [f"rul_muchomusic_gen_fold{k}" for k in range(4)]
MC_FOLDS = [f"rul_muchomusic_fold{k}" for k in range(4)]


def run(model: Path, data_dir: Path, out: Path, tasks: str, *extra: str) -> None:
    done = run_cli(text_run_args(model, data_dir, out, tasks, *extra))
    assert "majority_acc" in done.stdout  # in the printed table


def test_gen_and_mc_groups_report_majority_acc(tiny_lm, data_dir, tmp_path):
    out = tmp_path / "out"
    run(
        tiny_lm,
        data_dir,
        out,
        "rul_muchomusic_gen,muchomusic_gen,rul_muchomusic",
        "--log_samples",
        "--gen_kwargs",
        "max_gen_toks=24",
    )
    results, samples = read_output(out)
    for task in [*GEN_FOLDS, "muchomusic_gen"]:
        config = results["configs"][task]
        assert config["output_type"] == "generate_until"
        assert config["generation_kwargs"]["until"] == []  # nothing cuts the [[X]]
        assert config["generation_kwargs"]["do_sample"] is False
        rows = samples[task]
        assert len(rows) == 8
        # acc and parse_failure are what the parsing rules give for each response
        parsed = [parse_answer(r["filtered_resps"][0], r["doc"]["options"]) for r in rows]
        assert [r["doc"]["parse_rule"] for r in rows] == [p.rule for p in parsed]
        acc = np.mean(
            [p.letter == r["doc"]["gold_letter"] for p, r in zip(parsed, rows, strict=True)]
        )
        failures = np.mean([p.letter is None for p in parsed])
        assert results["results"][task]["acc,none"] == acc
        assert results["results"][task]["parse_failure,none"] == failures
        assert [r["parse_failure"] for r in rows] == [float(p.letter is None) for p in parsed]
    gen = results["groups"]["rul_muchomusic_gen"]
    assert {"acc,none", "parse_failure,none", "majority_acc,none"} <= set(gen)
    assert (
        gen["majority_acc,none"]
        == majority_from_samples([samples[t] for t in GEN_FOLDS])["majority_acc"]
    )
    assert results["results"]["rul_muchomusic_gen"]["majority_acc,none"] == gen["majority_acc,none"]
    # the multiple-choice group gets it too, from the letters' log-likelihoods
    mc = results["groups"]["rul_muchomusic"]
    expected = majority_from_samples([samples[t] for t in MC_FOLDS])
    assert expected["n_items"] == 8 and expected["n_folds"] == 4
    assert mc["majority_acc,none"] == expected["majority_acc"]
    assert results["higher_is_better"]["rul_muchomusic"]["majority_acc"] is True


def test_majority_acc_without_log_samples_keeps_samples_out(tiny_lm, data_dir, tmp_path):
    out = tmp_path / "out"
    run(tiny_lm, data_dir, out, "rul_muchomusic", "--limit", "3")
    results, samples = read_output(out)
    assert samples == {} and "samples" not in results
    value = results["groups"]["rul_muchomusic"]["majority_acc,none"]
    assert value in {0.0, 1 / 3, 2 / 3, 1.0}  # three items


def test_gen_task_with_the_lalm_model_hearing_noise(data_dir, tmp_path_factory):
    from lm_eval_rul.testing.audio import make_tiny_audio_lm

    model = make_tiny_audio_lm(tmp_path_factory.mktemp("gen_qwen2_audio"), "qwen2_audio")
    out = tmp_path_factory.mktemp("gen_lalm_out")
    metadata = json.dumps({"rul_data_path": str(data_dir / "rul.json")})
    args = [
        *("run", "--model", "lalm"),
        *("--model_args", f"pretrained={model},audio=noise,noise_seconds=1,seed=5"),
        *("--tasks", "rul_muchomusic_gen", "--metadata", metadata, "--device", "cpu"),
        *("--gen_kwargs", "max_gen_toks=8", "--limit", "4", "--output_path", str(out)),
        "--log_samples",
    ]
    run_cli(args)
    results, samples = read_output(out)
    assert results["config"]["model_args"]["audio"] == "noise"
    group = results["groups"]["rul_muchomusic_gen"]
    assert (
        group["majority_acc,none"]
        == majority_from_samples([samples[t] for t in GEN_FOLDS])["majority_acc"]
    )
    for task in GEN_FOLDS:
        assert len(samples[task]) == 4
        assert {"acc,none", "parse_failure,none"} <= set(results["results"][task])
