"""``lalm-api`` against a real vLLM OpenAI-compatible server (started with ``--api-key``).

The server serves the same tiny Qwen2-Audio that ``lalm`` runs in-process: letters equal
within 1e-4 under every condition on vLLM's prompt-logprobs path, generations equal (but
for a trailing incomplete character, see the test), the
``top`` path's counts, a wrong key refused in one line, and an MMAU generation task run
end to end by the CLI with ``lalm``, ``lalm-api`` and ``lalm-vllm`` giving the same answers.
"""

from __future__ import annotations

import json
import math

import pytest
from doubles.vllm_server import API_KEY_ENV, SERVED_MODEL

from lm_eval_rul.testing.requests import (
    check_top_path_counts,
    generation_requests,
    letter_docs,
    letter_requests,
)

CONDITIONS = {"original": {}, "noise": {"noise_seconds": 1.0}, "silence": {}, "none": {}}


def _lalm(path, **kwargs):
    from lm_eval_rul.models.lalm import LALM

    return LALM(pretrained=str(path), dtype="float32", device="cpu", **kwargs)


def _api(server, **kwargs):
    from lm_eval_rul.models.api import LALMAPI

    settings = {"results_cache": "none", "wav_subtype": "FLOAT", "retry_backoff": 0}
    settings.update({"api_key_env": API_KEY_ENV, "num_concurrent": 4, **kwargs})
    return LALMAPI(base_url=server.url, model=SERVED_MODEL, **settings)


@pytest.mark.parametrize("audio", list(CONDITIONS))
def test_prompt_path_letters_equal_lalm(vllm_server, whisper_qwen2_audio, audio_data, audio):
    requests = letter_requests(letter_docs(audio_data, folds=(0, 1), n=4))
    extra = CONDITIONS[audio]
    expected = _lalm(whisper_qwen2_audio, audio=audio, **extra).loglikelihood(requests, True)
    model = _api(vllm_server, audio=audio, **extra)
    got = model.loglikelihood(requests, disable_tqdm=True)
    assert model.get_model_info()["api_logprob_path"] == "prompt"
    assert len(got) == 32
    for (ll, greedy), (want, want_greedy) in zip(got, expected, strict=True):
        assert ll == pytest.approx(want, abs=1e-4)
        assert greedy == want_greedy


def test_generations_equal_lalm(vllm_server, whisper_qwen2_audio, audio_data):
    """Equal, but for one thing: an answer cut by max_gen_toks inside a UTF-8 character
    ends in U+FFFD in lalm's text (its tokens decoded whole) and without it in vLLM's
    (the server's incremental text holds back an incomplete character)."""
    docs = letter_docs(audio_data, n=3)
    lalm = _lalm(whisper_qwen2_audio)
    cut = 0
    for gen_kwargs in ({"until": [], "max_gen_toks": 12}, {"until": ["e"], "max_gen_toks": 12}):
        requests = generation_requests(docs, gen_kwargs)
        expected = lalm.generate_until(requests, disable_tqdm=True)
        got = _api(vllm_server).generate_until(requests, disable_tqdm=True)
        assert got == [text.removesuffix("\ufffd") for text in expected]
        cut += sum(a != b for a, b in zip(got, expected, strict=True))
        assert all(expected)
    assert not any("e" in text for text in expected)
    assert cut <= 2  # the one answer cut inside a character, under each gen_kwargs


def test_top_path_counts_letters_outside_the_top(vllm_server, whisper_qwen2_audio, audio_data):
    docs = letter_docs(audio_data, n=4)
    spaced = _lalm(whisper_qwen2_audio).loglikelihood(letter_requests(docs), True)
    model = _api(vllm_server, logprobs="top", top_logprobs=5)
    got = model.loglikelihood(letter_requests(docs), disable_tqdm=True)
    check_top_path_counts(model.get_model_info(), got, 5)
    for (ll, _), (one_spelling, _) in zip(got, spaced, strict=True):
        # a letter found in the top 5 sums its spellings (" A", "A"): at least lalm's " A"
        assert ll == float("-inf") or ll >= one_spelling - 1e-4
    assert all(math.isfinite(ll) for ll, _ in spaced)


def test_a_wrong_key_is_refused_in_one_line(vllm_server, audio_data, monkeypatch):
    from lm_eval_rul.errors import UserInputError

    monkeypatch.setenv("WRONG_VLLM_KEY", "not-the-key")
    requests = letter_requests(letter_docs(audio_data, n=1))
    with pytest.raises(UserInputError) as caught:
        _api(vllm_server, api_key_env="WRONG_VLLM_KEY", max_retries=0).loglikelihood(
            requests, disable_tqdm=True
        )
    message = str(caught.value)
    assert "\n" not in message and "401" in message and "not-the-key" not in message


def test_mmau_generation_task_same_answers_from_all_three_models(
    vllm_server, whisper_qwen2_audio, tmp_path
):
    from lm_eval_rul.testing.harness import read_output, run_cli
    from lm_eval_rul.testing.mmau import write_mmau_audio, write_mmau_json

    write_mmau_json(tmp_path / "mmau.json")
    write_mmau_audio(tmp_path / "archive")
    metadata = json.dumps(
        {"mmau_data_path": str(tmp_path / "mmau.json"), "audio_dir": str(tmp_path / "archive")}
    )
    runs = {
        "lalm": f"pretrained={whisper_qwen2_audio},dtype=float32,results_cache=none",
        "lalm-api": f"base_url={vllm_server.url},model={SERVED_MODEL},api_key_env={API_KEY_ENV},"
        "wav_subtype=FLOAT,results_cache=none",
        "lalm-vllm": f"pretrained={whisper_qwen2_audio},dtype=float32,enforce_eager=true,"
        "max_model_len=2048,results_cache=none",
    }
    answers = {}
    for model, model_args in runs.items():
        out = tmp_path / model
        run_cli([
            "run", "--model", model, "--model_args", model_args, "--tasks", "mmau_music_gen",
            "--metadata", metadata, "--gen_kwargs", "max_gen_toks=8", "--limit", "4",
            "--output_path", str(out), "--log_samples",
            *(["--device", "cpu"] if model == "lalm" else []),
        ], timeout=1200)  # fmt: skip
        results, samples = read_output(out)
        rows = sorted(samples["mmau_music_gen"], key=lambda r: r["doc_id"])
        assert len(rows) == 4 and "acc,none" in results["results"]["mmau_music_gen"]
        answers[model] = [r["resps"][0][0] for r in rows]
    assert answers["lalm-api"] == answers["lalm"] == answers["lalm-vllm"]
    assert all(answers["lalm"])
