"""``--model lalm-vllm`` where vLLM is not installed (this suite's environment): one line
before anything loads. Its runs against a real vLLM are in tests_vllm/ (.ci/run)."""

from __future__ import annotations

import importlib.util
import json

import pytest

from lm_eval_rul.testing.harness import cli_error_line


def test_this_suite_runs_without_vllm():
    assert importlib.util.find_spec("vllm") is None  # tests_vllm/ has its own environment


def test_missing_vllm_is_one_line_before_the_model(tiny_audio_lm, audio_data, capsys):
    line = cli_error_line(
        ["run", "--model", "lalm-vllm", "--model_args", f"pretrained={tiny_audio_lm}",
         "--tasks", "rul_muchomusic_fold0", "--metadata", json.dumps(audio_data)],
        capsys,
    )  # fmt: skip
    assert "lalm-vllm: vLLM is not installed" in line and "lm-eval-rul[vllm]" in line


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ({"data_parallel_size": 2}, "data_parallel_size>1: vLLM's in-process engine"),
        ({"tensor_parallel_size": 0}, "tensor_parallel_size=0 must be at least 1"),
        ({"gpu_memory_utilization": 1.5}, "gpu_memory_utilization=1.5 must be a finite number"),
        ({"gpu_memory_utilization": "nan"}, "gpu_memory_utilization='nan' must be a finite number"),
        ({"enforce_eager": "maybe"}, "enforce_eager='maybe' is not a boolean"),
        ({"prefix_cahce": False}, "unknown model_args prefix_cahce. Did you mean prefix_cache"),
    ],
)
def test_bad_model_args_are_refused_before_vllm_is_looked_for(args, match):
    from lm_eval_rul.errors import UserInputError
    from lm_eval_rul.models.lalm_vllm import check_model_args

    with pytest.raises(UserInputError, match=match):
        check_model_args({"pretrained": "/nowhere", **args})


def test_mistyped_checkpoint_is_one_line_before_anything_loads(
    audio_data, tmp_path, capsys, monkeypatch
):
    """lalm-vllm reads a checkpoint (its adapter row), so the hub checks apply to it as to
    lalm: a path that is not there is one line, before vLLM or any weight loads."""
    from lm_eval_rul.hub import HUB_MODELS
    from lm_eval_rul.models import lalm_vllm

    assert "lalm-vllm" in HUB_MODELS
    monkeypatch.setattr(lalm_vllm, "vllm_version", lambda: "0.0 (stand-in)")  # "installed"
    typo = tmp_path / "no_such_model"
    line = cli_error_line(
        ["run", "--model", "lalm-vllm", "--model_args", f"pretrained={typo}",
         "--tasks", "rul_muchomusic_fold0", "--metadata", json.dumps(audio_data)],
        capsys,
    )  # fmt: skip
    assert "ModelUnavailableError" in line and str(typo) in line and "no such folder" in line


def test_default_dtype_is_the_checkpoints_own(tiny_audio_lm):
    """44.16: dtype=auto gives vLLM the dtype lalm loads (the config's, float32 where it
    names none), not vLLM's own auto (bfloat16 on CPUs)."""
    import json as json_module

    from lm_eval_rul.models.lalm_vllm import _config_and_family

    config = json_module.loads((tiny_audio_lm / "config.json").read_text())
    saved = config.get("dtype") or config.get("torch_dtype") or "float32"
    assert _config_and_family(str(tiny_audio_lm), "main", {"trust_remote_code": False})[2] == saved
