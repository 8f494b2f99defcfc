"""The ``_native_gen`` tasks: our generation tasks with the audio declared the harness's
way (``doc_to_audio``), run by ``lalm`` through the harness's audio argument."""

from __future__ import annotations

import json

import pytest

GEN_KWARGS = "max_gen_toks=6"


def _evaluate(model: str, pretrained, audio_data, tasks: list[str]) -> dict:
    import lm_eval

    import lm_eval_rul

    extra = ",results_cache=none" if model == "lalm" else ""
    return lm_eval.simple_evaluate(
        model=model,
        model_args=f"pretrained={pretrained},dtype=float32{extra}",
        tasks=tasks,
        task_manager=lm_eval_rul.task_manager(include_defaults=False, **audio_data),
        device="cpu",
        gen_kwargs=GEN_KWARGS,
        log_samples=True,
    )


def test_native_variant_has_our_prompts_and_scores_under_lalm(tiny_audio_lm, audio_data):
    plain, native = "rul_muchomusic_gen_fold1", "rul_muchomusic_native_gen_fold1"
    results = _evaluate("lalm", tiny_audio_lm, audio_data, [plain, native])
    ours = {s["doc_id"]: s for s in results["samples"][plain]}
    theirs = {s["doc_id"]: s for s in results["samples"][native]}
    assert len(ours) == len(theirs) == 8
    for doc_id, sample in theirs.items():
        (context, _, extra), = sample["arguments"]  # the harness's audio argument
        assert extra["audio"][0]["sampling_rate"] == 16_000
        assert context == ours[doc_id]["arguments"][0][0]  # same prompt
        assert sample["resps"] == ours[doc_id]["resps"]  # same answer: same audio heard
        assert sample["acc"] == ours[doc_id]["acc"]
        assert sample["doc"]["audio_heard"].startswith("harness audio sha1:")
        assert sample["doc"]["audio_from"] == "doc_to_audio"
        assert ours[doc_id]["doc"]["audio_heard"] == json.loads(sample["doc"]["audio_ref"])["path"]
    for metric in ("acc,none", "parse_failure,none"):
        assert results["results"][native][metric] == results["results"][plain][metric]
    by_task = results["config"]["audio_condition_by_task"]
    assert by_task == {plain: "original", native: "original"}


def test_text_models_are_refused_the_native_tasks_but_run_the_plain_ones(tiny_lm, audio_data):
    with pytest.raises(ValueError, match="require multimodal input"):
        _evaluate("hf", tiny_lm, audio_data, ["muchomusic_native_gen"])
    plain = _evaluate("hf", tiny_lm, audio_data, ["muchomusic_gen"])
    assert len(plain["samples"]["muchomusic_gen"]) == 8


def test_cli_refuses_native_tasks_for_a_text_model_in_one_line(
    tiny_lm, audio_data, capsys, constructions
):
    from lm_eval_rul.testing.harness import cli_error_line

    line = cli_error_line(
        [
            "run", "--model", "hf", "--model_args", f"pretrained={tiny_lm}",
            "--tasks", "muchomusic_native_gen", "--metadata", json.dumps(audio_data),
            "--device", "cpu",
        ],
        capsys,
    )  # fmt: skip
    assert "AudioTaskForTextModelError" in line and "muchomusic_native_gen" in line
    assert "--model lalm" in line
    assert constructions == []  # refused before the model was built


def test_native_tasks_under_lalm_run_or_stop_in_one_line_on_this_harness(
    tiny_audio_lm, audio_data, capsys, constructions
):
    """lm-eval 0.5.0.dev1 cannot hand doc_to_audio to any model: one line, before the model."""
    from lm_eval_rul.harness_compat import doc_to_audio_blocked, harness_version
    from lm_eval_rul.testing.harness import cli_error_line

    assert doc_to_audio_blocked() == harness_version().startswith("0.5.0.dev")
    if not doc_to_audio_blocked():  # 0.4.13: they run (the test above compares the answers)
        results = _evaluate("lalm", tiny_audio_lm, audio_data, ["rul_muchomusic_native_gen_fold0"])
        assert len(results["samples"]["rul_muchomusic_native_gen_fold0"]) == 8
        return
    line = cli_error_line(
        [
            "run", "--model", "lalm", "--model_args", f"pretrained={tiny_audio_lm}",
            "--tasks", "rul_muchomusic_native_gen_fold0", "--metadata", json.dumps(audio_data),
            "--device", "cpu",
        ],
        capsys,
    )  # fmt: skip
    assert "HarnessAudioUnsupportedError" in line and "rul_muchomusic_native_gen_fold0" in line
    assert "_build_multimodal_kwargs" in line and "docs/harness_audio.md" in line
    assert constructions == []  # refused before the model was built
