"""Logged samples say what the model heard (``audio_heard``) and which clip that replaced
(``audio_replaced``): ``audio_ref`` alone names the item's clip whatever was played."""

from __future__ import annotations

import json

import pytest


@pytest.mark.parametrize(
    ("audio", "heard", "replaced"),
    [("original", "clip", False), ("silence", "silence (1 s)", True), ("none", "none", True)],
)
def test_samples_name_what_was_heard_and_what_it_replaced(
    tiny_audio_lm, audio_data, audio, heard, replaced
):
    import lm_eval

    import lm_eval_rul

    results = lm_eval.simple_evaluate(
        model="lalm",
        model_args=f"pretrained={tiny_audio_lm},dtype=float32,audio={audio},noise_seconds=1,"
        "results_cache=none",
        tasks=["rul_muchomusic_fold2"],
        task_manager=lm_eval_rul.task_manager(include_defaults=False, **audio_data),
        device="cpu",
        limit=3,
        log_samples=True,
    )
    samples = results["samples"]["rul_muchomusic_fold2"]
    assert len(samples) == 3
    for sample in samples:
        doc = sample["doc"]
        own_clip = json.loads(doc["audio_ref"])["path"]
        assert doc["audio_heard"] == (own_clip if heard == "clip" else heard)
        assert doc["audio_replaced"] == (own_clip if replaced else None)
