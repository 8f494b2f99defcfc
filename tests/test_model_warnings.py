"""Warnings of the audio models only when they apply, and before the results table (43.4)."""

from __future__ import annotations

import logging

from lm_eval_rul.audio import AudioSpec

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
