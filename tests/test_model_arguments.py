"""Model arguments are read as meant, or refused in one line before the model loads:
numbers out of range, dtype spellings, misspelt ``hf`` arguments, device and batch size
named in ``--model_args`` and as flags, launch variables (tiny real models, offline)."""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path

import pytest

from lm_eval_rul.testing.harness import cli_error_line as fail
from lm_eval_rul.testing.harness import text_run_args

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _run_lalm(model: Path, data: dict, out: Path, model_args: str, *more: str) -> None:
    from lm_eval_rul.cli import main

    main(
        [
            "run", "--model", "lalm", "--model_args",
            f"pretrained={model},dtype=float32,results_cache=none,{model_args}",
            "--tasks", "rul_muchomusic_fold0", "--metadata", json.dumps(data), "--limit", "2",
            "--output_path", str(out), *more,
        ]
    )  # fmt: skip


def _one_line_exit_2(capsys, action) -> str:
    with pytest.raises(SystemExit) as stopped:
        action()
    assert stopped.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in err[0], err
    return err[0]


def test_device_and_batch_size_in_model_args_are_taken_as_meant(
    tiny_audio_lm, audio_data, tmp_path, monkeypatch
):
    """docs/models.md documents ``device=`` and ``batch_size=`` in --model_args: the
    harness passing its own flags too must not make them ``multiple values``."""
    from lm_eval_rul.models.lalm import LALM

    built: list = []
    original = LALM.__init__

    @functools.wraps(original)  # keeps the signature lalm's argument check reads
    def recording(self, *args, **kwargs):
        original(self, *args, **kwargs)
        built.append(self)

    monkeypatch.setattr(LALM, "__init__", recording)
    _run_lalm(tiny_audio_lm, audio_data, tmp_path / "out", "device=cpu,batch_size=3")
    (model,) = built
    assert str(model.device) == "cpu" and model.batch_size == 3
    (results,) = (tmp_path / "out").rglob("results_*.json")
    assert json.loads(results.read_text())["results"]  # the run scored its questions


def test_device_in_model_args_clashing_with_the_flag_is_one_line(
    tiny_audio_lm, audio_data, tmp_path, capsys
):
    line = _one_line_exit_2(
        capsys,
        lambda: _run_lalm(
            tiny_audio_lm, audio_data, tmp_path / "out", "batch_size=4", "--batch_size", "2"
        ),
    )
    assert "batch_size=4 and --batch_size 2 disagree" in line
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "bad, words",
    [
        ("noise_std=nan", "must be a finite number, at least 0"),
        ("noise_std=inf", "noise_std=inf must be a finite number, at least 0"),
        ("noise_seconds=nan", "must be a finite number of seconds, above 0"),
        ("noise_seconds=1e12", "at most 3600"),
        ("max_audio_seconds=inf", "Leave it out (or none) for the model's own limit"),
        ("max_gen_toks=0", "max_gen_toks=0 must be at least 1"),
    ],
)
def test_every_numeric_lalm_argument_is_finite_and_in_range_before_the_model(
    bad, words, tiny_audio_lm, audio_data, tmp_path, capsys, constructions
):
    from lm_eval_rul.testing.harness import cli_error_line

    line = cli_error_line(
        ["run", "--model", "lalm", "--model_args",
         f"pretrained={tiny_audio_lm},audio=noise,results_cache=none,{bad}",
         "--tasks", "rul_muchomusic_fold0", "--metadata", json.dumps(audio_data),
         "--output_path", tmp_path / "out"],  # fmt: skip
        capsys,
    )
    assert words in line and constructions == []


@pytest.mark.parametrize(
    "bad, words",
    [
        ({"noise_std": "nan"}, "noise_std='nan' must be a finite number"),
        ({"sampling_rate": "0"}, "sampling_rate='0' must be at least 1000"),
        ({"max_audio_seconds": "inf"}, "max_audio_seconds='inf' must be a finite number"),
        ({"max_gen_toks": "0"}, "max_gen_toks='0' must be at least 1"),
    ],
)
def test_every_numeric_lalm_api_argument_is_finite_and_in_range(bad, words):
    from lm_eval_rul.models.api import check_model_args
    from lm_eval_rul.models.args import LALMArgumentError

    args = {"base_url": "http://127.0.0.1:9/v1", "model": "m", **bad}
    with pytest.raises(LALMArgumentError, match="^lalm-api: ") as caught:
        check_model_args(args)
    assert words in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize("model", ["hf", "lalm"])
def test_common_dtype_spellings_are_taken_for_hf_and_lalm(
    model, tiny_lm, tiny_audio_lm, audio_data, tmp_path, monkeypatch
):
    import torch
    from lm_eval.models.huggingface import HFLM

    from lm_eval_rul.cli import main

    dtypes: list = []
    original = HFLM._create_model

    def recording(self, *args, **kwargs):
        original(self, *args, **kwargs)
        dtypes.append(self._model.dtype)

    monkeypatch.setattr(HFLM, "_create_model", recording)
    pretrained = tiny_lm if model == "hf" else tiny_audio_lm
    extra = ",results_cache=none" if model == "lalm" else ""
    main(["run", "--model", model, "--model_args", f"pretrained={pretrained},dtype=bf16{extra}",
          "--device", "cpu", "--tasks", "rul_muchomusic_fold0", "--limit", "1",
          "--metadata", json.dumps(audio_data),
          "--output_path", str(tmp_path / "out")])  # fmt: skip
    assert dtypes == [torch.bfloat16]
    assert list((tmp_path / "out").rglob("results_*.json"))


@pytest.mark.parametrize("model", ["hf", "lalm"])
def test_a_dtype_no_torch_has_is_one_line_listing_the_spellings_before_the_model(
    model, tiny_lm, tiny_audio_lm, audio_data, tmp_path, capsys, constructions
):
    from lm_eval_rul.testing.harness import cli_error_line

    pretrained = tiny_lm if model == "hf" else tiny_audio_lm
    line = cli_error_line(
        ["run", "--model", model, "--model_args", f"pretrained={pretrained},dtype=bf17",
         "--device", "cpu", "--tasks", "rul_muchomusic_fold0",
         "--metadata", json.dumps(audio_data), "--output_path", tmp_path / "out"],  # fmt: skip
        capsys,
    )
    assert "dtype='bf17' is not a dtype; use one of: auto; bfloat16, bf16; float16" in line
    assert constructions == []


@pytest.mark.parametrize(
    "variable, value", [("WORLD_SIZE", ""), ("WORLD_SIZE", "abc"), ("LOCAL_RANK", "x1")]
)
def test_a_launch_variable_that_is_not_a_count_is_one_line_before_the_model(
    variable, value, tiny_lm, data_dir, tmp_path, capsys, constructions, monkeypatch
):
    """An unset variable exported empty on a cluster: accelerate's ``invalid literal for
    int()`` while the model was built."""
    from lm_eval_rul.testing.harness import cli_error_line, text_run_args

    monkeypatch.setenv(variable, value)  # pi and build run the same check (check_processes)
    line = cli_error_line(text_run_args(tiny_lm, data_dir, tmp_path, "rul_muchomusic"), capsys)
    assert f"LaunchVariableError: the environment variable {variable}={value!r}" in line
    assert f"unset {variable}" in line and constructions == []


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        ("dtpye=float32", "model_args dtpye= (did you mean dtype?)"),
        ("atn_implementation=eager", "model_args atn_implementation= (did you mean attn_impl"),
        ("colour=red", "model_args colour=: neither the harness's HFLM"),
    ],
)
def test_a_misspelt_hf_argument_stops_before_the_model(
    extra, says, tiny_lm, data_dir, tmp_path, capsys, constructions
):
    args = text_run_args(tiny_lm, data_dir, tmp_path, "rul_muchomusic")
    args[args.index("--model_args") + 1] += f",{extra}"
    line = fail(args, capsys)
    assert f"HFModelArgsError: --model hf does not take {says}" in line
    assert constructions == []


def test_hf_arguments_of_the_harness_transformers_and_the_config_pass(tiny_lm):
    from lm_eval_rul.cli.hf_args import check_hf_model_args

    given = {"pretrained": str(tiny_lm), "dtype": "float32", "max_length": 64,
             "attn_implementation": "eager", "low_cpu_mem_usage": True,
             "torch_dtype": "float32", "tie_word_embeddings": False}  # fmt: skip
    check_hf_model_args("hf", given)


def test_a_misspelt_hf_argument_of_pi_stops_before_the_model(
    tiny_lm, data_dir, tmp_path, capsys, constructions
):
    args = ["pi", "--data", data_dir / "rul.json", "--model", "hf",
            "--model_args", f"pretrained={tiny_lm},dtpye=float32",
            "--output", tmp_path / "pi.jsonl"]  # fmt: skip
    assert "(did you mean dtype?)" in fail(args, capsys)
    assert constructions == []


def test_lalm_refuses_use_cache_before_loading(data_dir, tmp_path, capsys, constructions):
    model = tmp_path / "never_loaded"
    model.mkdir()
    (model / "config.json").write_text("{}")
    line = fail(
        ["run", "--model", "lalm", "--model_args", f"pretrained={model}", "--tasks",
         "rul_muchomusic", "--use_cache", tmp_path / "lm_cache",
         "--metadata", json.dumps({"data_path": str(data_dir / "rul.json")})],
        capsys,
    )  # fmt: skip
    assert "lalm does not support --use_cache" in line and "results_cache=PATH|none" in line
    assert constructions == []


@pytest.mark.parametrize(
    ("model", "key"), [("lalm", "pretrained"), ("lalm-vllm", "pretrained"),
                       ("lalm-api", "base_url")],
)  # fmt: skip
def test_a_model_without_its_checkpoint_is_one_line_before_anything_loads(
    model, key, data_dir, tmp_path, capsys, constructions
):
    line = fail(["run", "--model", model, "--model_args", "dtype=float32", "--tasks",
                 "muchomusic", "--metadata", f"muchomusic_data_path={data_dir / 'muchomusic.csv'}",
                 "--output_path", str(tmp_path / "out")], capsys)  # fmt: skip
    assert f"MissingModelArgError: --model {model} needs --model_args {key}=" in line
    assert "Nothing was loaded" in line
    assert constructions == []
