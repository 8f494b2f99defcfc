"""The generation tasks end to end through ``lm-eval-rul run`` with a tiny real text model,
and ``majority_acc`` added to the fold groups' results."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from lm_eval_rul.mcqa import muchomusic_official_answer, parse_answer, parse_answer_release
from lm_eval_rul.mcqa.prompts import TEXTONLY_GEN_PREAMBLE
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
    votes = majority_from_samples([samples[t] for t in GEN_FOLDS])
    assert gen["majority_acc,none"] == votes["majority_acc"]
    assert gen["plurality_acc_release,none"] == votes["plurality_acc_release"]
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


def test_gen_task_with_the_lalm_model_hearing_noise(data_dir, tmp_path_factory, tiny_audio_lm):
    model = tiny_audio_lm
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


TEXTONLY_FOLDS = [f"rul_muchomusic_textonly_gen_fold{k}" for k in range(4)]


def test_reference_protocol_tasks_end_to_end(tiny_lm, data_dir, tmp_path):
    """One-shot, text-only generation and MuChoMusic's official protocol through
    ``lm-eval-rul run``, with the authors' parser chosen by name."""
    out = tmp_path / "out"
    tasks = ("rul_muchomusic_oneshot,rul_muchomusic_oneshot_gen,rul_muchomusic_textonly_gen,"
             "muchomusic_textonly_gen,muchomusic_official,rul_muchomusic")  # fmt: skip
    args = text_run_args(tiny_lm, data_dir, out, tasks, "--log_samples", "--gen_kwargs",
                         "max_gen_toks=12")  # fmt: skip
    metadata = json.loads(args[args.index("--metadata") + 1])
    args[args.index("--metadata") + 1] = json.dumps({**metadata, "parser": "release"})
    done = run_cli(args)
    for name in ("plurality_acc_release", "majority_acc", "unanswered_rate", "parse_failure"):
        assert name in done.stdout
    results, samples = read_output(out)
    # one-shot: five options, chance 0.2, letters A-E scored / asked for
    oneshot = samples["rul_muchomusic_oneshot"]
    assert len(oneshot) == 8 and all(len(r["doc"]["options"]) == 5 for r in oneshot)
    assert all(len(r["filtered_resps"]) == 5 for r in oneshot)
    assert {"acc,none", "perceptual_index,none"} <= set(
        results["results"]["rul_muchomusic_oneshot"]
    )
    prompt = samples["rul_muchomusic_oneshot_gen"][0]["arguments"]["gen_args_0"]["arg_0"]
    assert prompt.endswith("[[C]], [[D]] or [[E]].") and "(E) " in prompt
    # the authors' parser, named in every generation doc, gives acc and parse_failure
    for task in ["rul_muchomusic_oneshot_gen", "muchomusic_textonly_gen", *TEXTONLY_FOLDS]:
        rows = samples[task]
        assert {r["doc"]["parser"] for r in rows} == {"release"}
        chosen = []
        for r in rows:
            letter = parse_answer_release(r["filtered_resps"][0], r["doc"]["options"]).letter
            chosen.append(letter if letter in r["doc"]["letters"] else None)
        acc = np.mean([c == r["doc"]["gold_letter"] for c, r in zip(chosen, rows, strict=True)])
        assert results["results"][task]["acc,none"] == acc
        failures = np.mean([c is None for c in chosen])
        assert results["results"][task]["parse_failure,none"] == failures
    textonly = samples["rul_muchomusic_textonly_gen_fold2"][0]["arguments"]["gen_args_0"]["arg_0"]
    assert textonly.startswith(TEXTONLY_GEN_PREAMBLE + "\n\nQuestion: ")
    group = results["groups"]["rul_muchomusic_textonly_gen"]
    votes = majority_from_samples([samples[t] for t in TEXTONLY_FOLDS])
    assert group["majority_acc,none"] == votes["majority_acc"]
    assert group["plurality_acc_release,none"] == votes["plurality_acc_release"]
    # letter scoring: the authors' vote over folds from the argmax letters
    mc = results["groups"]["rul_muchomusic"]
    votes = majority_from_samples([samples[t] for t in MC_FOLDS])
    assert mc["plurality_acc_release,none"] == votes["plurality_acc_release"]
    assert mc["plurality_acc_release,none"] >= mc["majority_acc,none"]  # ties count for theirs
    # MuChoMusic's official protocol: its prompt and its scorer
    official = samples["muchomusic_official"]
    assert results["configs"]["muchomusic_official"]["generation_kwargs"]["until"] == ["\n"]
    first = official[0]["arguments"]["gen_args_0"]["arg_0"]
    assert first.startswith("Question: What rhythm pattern do the digital drums")
    assert first.endswith(" \n The correct answer is: ")
    parsed = [muchomusic_official_answer(r["filtered_resps"][0], r["doc"]["options"])
              for r in official]  # fmt: skip
    metrics = results["results"]["muchomusic_official"]
    assert metrics["acc,none"] == np.mean(
        [p.letter == r["doc"]["gold_letter"] for p, r in zip(parsed, official, strict=True)]
    )
    assert metrics["unanswered_rate,none"] == np.mean([p.letter is None for p in parsed])


@pytest.mark.parametrize(
    ("tasks", "expected"),
    [
        ("rul_muchomusic", True),
        (["rul_muchomusic_gen"], True),
        ("muchomusic, rul_muchomusic_textonly_gen", True),
        (["muchomusic", "rul_muchomusic_gen,factual_mood_open"], True),
        ("rul_muchomusic_oneshot", False),  # a prefix of no group, not a fold group
        (["rul_muchomusic_oneshot_gen", "rul_muchomusic_fold0"], False),
        ("factual_instrument_binary,factual_mood_open", False),
        ([{"task": "rul_muchomusic"}], False),  # a task config, not a group name
        (None, False),
    ],
)
def test_fold_groups_are_matched_by_whole_name(tasks, expected):
    """Only the fold groups get the fold votes (and the sample logging they need)."""
    from lm_eval_rul.cli.run import _wants_majority

    assert _wants_majority(tasks) is expected
