"""The harness's own ``run`` flags pass through ``lm-eval-rul run`` untouched.

Each case runs the wrapper in-process up to the point it hands the run to lm-eval
(``lm_eval.simple_evaluate``, and the W&B / Hub loggers the harness builds before it),
records what lm-eval receives there, and stops (nothing is scored, nothing is sent:
W&B and the Hub are replaced by recorders).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

FLAG_CASES = {
    "log_samples": (["--log_samples"], lambda kw, _: kw["log_samples"] is True),
    "write_out": (["--write_out"], lambda kw, _: kw["write_out"] is True),
    "seed": (
        ["--seed", "7"],
        lambda kw, _: (
            kw["random_seed"],
            kw["numpy_random_seed"],
            kw["torch_random_seed"],
            kw["fewshot_random_seed"],
        )
        == (7, 7, 7, 7),
    ),
    "apply_chat_template": (
        ["--apply_chat_template"],
        lambda kw, _: kw["apply_chat_template"] is True,
    ),
    "fewshot_as_multiturn": (
        ["--apply_chat_template", "--fewshot_as_multiturn", "true"],
        lambda kw, _: kw["fewshot_as_multiturn"] is True,
    ),
    "wandb_args": (
        ["--wandb_args", "project=rul,mode=offline"],
        lambda _, seen: seen["wandb"] == {"project": "rul", "mode": "offline"},
    ),
    "hf_hub_log_args": (
        ["--hf_hub_log_args", "hub_results_org=me,push_results_to_hub=False"],
        lambda kw, seen: seen["hub"]["hub_results_org"] == "me"
        and seen["hub"]["push_results_to_hub"] is False
        and kw["evaluation_tracker"] is not None,
    ),
}


@pytest.mark.parametrize("flag", list(FLAG_CASES))
def test_harness_flag_reaches_lm_eval(flag, tiny_lm, data_dir, monkeypatch, tmp_path):
    import lm_eval
    import lm_eval.loggers as loggers

    from lm_eval_rul.cli import main

    argv, received_ok = FLAG_CASES[flag]
    seen: dict[str, Any] = {}

    def simple_evaluate(*args: Any, **kwargs: Any) -> None:
        seen["kwargs"] = kwargs
        return None  # as a non-zero rank: the harness writes nothing

    class Wandb:
        def __init__(self, init_args: dict, config_args: dict | None = None) -> None:
            seen["wandb"] = dict(init_args)

    class Tracker(loggers.EvaluationTracker):
        def __init__(self, **kwargs: Any) -> None:
            seen["hub"] = dict(kwargs)
            super().__init__(**kwargs)

    monkeypatch.setattr(lm_eval, "simple_evaluate", simple_evaluate)
    monkeypatch.setattr(loggers, "WandbLogger", Wandb)
    monkeypatch.setattr(loggers, "EvaluationTracker", Tracker)
    metadata = {"rul_data_path": str(data_dir / "rul.json")}
    main(
        [
            "run", "--model", "hf", "--model_args", f"pretrained={tiny_lm}",
            "--tasks", "rul_muchomusic_fold0", "--metadata", json.dumps(metadata),
            "--device", "cpu", "--limit", "2", "--output_path", str(tmp_path), *argv,
        ]
    )  # fmt: skip
    assert "kwargs" in seen, "lm_eval.simple_evaluate was not called"
    assert received_ok(seen["kwargs"], seen), (flag, seen)
