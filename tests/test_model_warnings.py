"""Warnings of the audio models only when they apply, and before the results table (43.4)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from lm_eval_rul.audio import AudioSpec
from lm_eval_rul.testing.harness import read_output, run_cli, text_run_args

LONGER = "is longer than the model's limit"


def test_the_noise_length_warning_only_when_noise_seconds_is_set(caplog):
    with caplog.at_level(logging.WARNING):
        AudioSpec(16_000, 2.0, "noise")  # the default length, cut to the limit silently
    assert LONGER not in caplog.text
    with caplog.at_level(logging.WARNING):
        AudioSpec(16_000, 2.0, "noise", noise_seconds=10.0)
    assert "noise_seconds=10 is longer than the model's limit of 2 s" in caplog.text


def test_a_model_says_its_trimmed_clips_when_its_requests_are_done(
    tiny_audio_lm, audio_data, caplog
):
    """The trimming note is logged when ``loglikelihood`` returns (the harness prints its
    table afterwards), not when the process exits; a default noise length says nothing."""
    from lm_eval.api.instance import Instance

    from lm_eval_rul.mcqa.tasks import doc_to_choice, doc_to_text, load_rul_muchomusic
    from lm_eval_rul.models.lalm import LALM

    docs = list(load_rul_muchomusic(0, **audio_data)["test"])[:2]
    requests = [
        Instance("loglikelihood", d, (doc_to_text(d), f" {c}"), i)
        for d in docs
        for i, c in enumerate(doc_to_choice(d))
    ]
    with caplog.at_level(logging.WARNING):
        noise = LALM(pretrained=str(tiny_audio_lm), dtype="float32", device="cpu", audio="noise")
        noise.loglikelihood(requests, disable_tqdm=True)
    assert LONGER not in caplog.text
    caplog.clear()
    model = LALM(
        pretrained=str(tiny_audio_lm), dtype="float32", device="cpu", max_audio_seconds=0.5,
        results_cache="none",
    )  # fmt: skip
    with caplog.at_level(logging.WARNING):
        model.loglikelihood(requests, disable_tqdm=True)
    trimmed = [r for r in caplog.records if "were trimmed to their first 0.5 s" in r.getMessage()]
    assert len(trimmed) == 1


def test_plain_lm_eval_prints_no_custom_kwargs_warning_for_our_tasks(data_dir, caplog):
    """The harness's own task loading (what plain ``lm_eval`` does) on the plugin's task
    folder: its per-task "Custom kwargs can be passed to `--metadata`" warning says
    nothing about our tasks and is dropped; another task's would stay."""
    import logging

    from lm_eval.tasks import TaskManager

    from lm_eval_rul.registration import tasks_dir

    manager = TaskManager(
        include_path=[str(tasks_dir())],
        include_defaults=False,
        metadata={"data_path": str(data_dir / "rul.json")},
    )
    with caplog.at_level(logging.WARNING):
        manager.load(["rul_muchomusic_fold0"])
        logging.getLogger("lm_eval.api.task").warning(
            "other_task: Custom kwargs can be passed to `--metadata` in console"
        )
    messages = [r.getMessage() for r in caplog.records]
    assert not any(m.startswith("rul_muchomusic_fold0: Custom kwargs") for m in messages)
    assert any(m.startswith("other_task: Custom kwargs") for m in messages)


def hf_run(model: str | Path, data_dir: Path, tmp_path: Path, tasks: str = "rul_muchomusic"):
    """``run --model hf`` arguments on the fixture files."""
    return text_run_args(model, data_dir, tmp_path / "out", tasks, batch_size=2)


@pytest.fixture(scope="module")
def tiny_audio(tmp_path_factory) -> dict[str, Path]:
    """A tiny Qwen2-Audio and the fixture questions' clips (one per question id)."""
    from lm_eval_rul.testing.audio import make_tiny_audio_lm, write_audio_dir
    from lm_eval_rul.testing.fixtures import fixture_rows

    root = tmp_path_factory.mktemp("quiet_audio")
    write_audio_dir(root / "audio", list(fixture_rows(8)))
    return {"model": make_tiny_audio_lm(root / "model", "qwen2_audio"), "audio": root / "audio"}


@pytest.mark.parametrize("model", ["hf", "lalm"])
def test_logs_are_quiet_and_said_once(model, tiny_lm, tiny_audio, data_dir, tmp_path):
    args = hf_run(tiny_lm, data_dir, tmp_path)
    if model == "lalm":
        args[args.index("hf")] = "lalm"
        args[args.index("--model_args") + 1] = f"pretrained={tiny_audio['model']},dtype=float32"
        metadata = json.loads(args[args.index("--metadata") + 1])
        args[args.index("--metadata") + 1] = json.dumps(
            {**metadata, "audio_dir": str(tiny_audio["audio"])}
        )
    at = args.index("--device")
    del args[at : at + 2]  # no --device: the harness's default is cuda:0
    done = run_cli([*args, "--limit", "2"], cwd=tmp_path)  # tmp_path: not a git clone
    log = done.stdout + done.stderr
    results, _ = read_output(tmp_path / "out")
    assert results["config"]["device"] == "cpu"  # where it ran (no GPU here), not cuda:0
    assert "Custom kwargs" not in log
    assert "not a git repository" not in log
    assert log.count("--limit SHOULD ONLY BE USED FOR TESTING") == 1
    assert log.count("Selected tasks:") == 1
    assert "majority_acc" in done.stdout and "Traceback" not in log


def test_our_tasks_load_without_the_harness_warnings(data_dir, caplog):
    """What plain ``lm_eval`` and ``run`` do on either release: no "Metric 'perceptual_index'
    not found in registry" (0.5 looks every metric up) and no "Custom kwargs" per task."""
    from lm_eval.api.registry import metric_registry
    from lm_eval.tasks import TaskManager

    from lm_eval_rul.registration import tasks_dir

    manager = TaskManager(
        include_path=[str(tasks_dir())],
        include_defaults=False,
        metadata={
            "rul_data_path": str(data_dir / "rul.json"),
            "muchomusic_data_path": str(data_dir / "muchomusic.csv"),
        },
    )
    with caplog.at_level(logging.WARNING):
        loaded = manager.load(["rul_muchomusic_fold0", "muchomusic"])
        assert all(len(task.eval_docs) == 8 for task in loaded["tasks"].values())  # 0.5: lazy
    messages = [r.getMessage() for r in caplog.records]
    assert not [m for m in messages if "not found in registry" in m or "Custom kwargs" in m]
    assert "perceptual_index" in metric_registry  # registered, not a placeholder
