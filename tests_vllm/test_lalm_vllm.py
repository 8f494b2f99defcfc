"""``lalm-vllm`` (vLLM's in-process engine) against ``lalm`` on the same tiny Qwen2-Audio.

Same prompts, same waveforms, same letters within 1e-4; noise is heard (its letters
differ from the original's); greedy generations equal; one engine request per question;
the clip's prefix read from vLLM's prefix cache; the results cache resumes.
"""

from __future__ import annotations

import gc

import pytest

from lm_eval_rul.testing.requests import generation_requests, letter_docs, letter_requests

CONDITIONS = {"original": {}, "noise": {"noise_seconds": 1.0}}


def _lalm(path, **kwargs):
    from lm_eval_rul.models.lalm import LALM

    return LALM(pretrained=str(path), dtype="float32", device="cpu", **kwargs)


@pytest.fixture(scope="module", params=list(CONDITIONS))
def engine(request, whisper_qwen2_audio, tmp_path_factory):
    """(condition, a lalm-vllm model under it, its results file): one engine per condition."""
    from lm_eval_rul.models.lalm_vllm import LALMVLLM

    condition = request.param
    results = tmp_path_factory.mktemp(f"vllm_{condition}") / "results.sqlite"
    model = LALMVLLM(
        pretrained=str(whisper_qwen2_audio),
        audio=condition,
        dtype="float32",
        enforce_eager=True,
        max_model_len=2048,
        block_size=32,
        results_cache=str(results),
        **CONDITIONS[condition],
    )
    yield condition, model, results
    model.llm.llm_engine.engine_core.shutdown()
    del model
    gc.collect()


@pytest.fixture(scope="module")
def lalm_letters(whisper_qwen2_audio, audio_data):
    """``lalm``'s letters on 8 questions x 2 folds, per condition (and original's greedy)."""
    requests = letter_requests(letter_docs(audio_data, folds=(0, 1)))
    return {
        condition: _lalm(whisper_qwen2_audio, audio=condition, **extra).loglikelihood(
            requests, disable_tqdm=True
        )
        for condition, extra in CONDITIONS.items()
    }


def test_letters_equal_lalm_with_one_request_per_question(engine, lalm_letters, audio_data):
    condition, model, _ = engine
    docs = letter_docs(audio_data, folds=(0, 1))
    requests = letter_requests(docs)
    before = dict(model.engine_counts)
    got = model.loglikelihood(requests, disable_tqdm=True)
    expected = lalm_letters[condition]
    assert len(got) == len(expected) == 4 * len(docs) == 64
    for (ll, greedy), (want, want_greedy) in zip(got, expected, strict=True):
        assert ll == pytest.approx(want, abs=1e-4)
        assert greedy == want_greedy
    assert len({round(ll, 6) for ll, _ in got}) > len(docs)  # letters are told apart
    sent = model.engine_counts["requests"] - before["requests"]
    assert sent == len(docs)  # a question's 4 letters in one request
    # each clip's system + audio prefix is read from the prefix cache after its first use
    heard = {d["audio_ref"] if condition == "original" else d["id"] for d in docs}
    cached = model.engine_counts["cached_tokens"] - before["cached_tokens"]
    assert cached >= 32 * (len(docs) - len(heard)) > 0
    info = model.get_model_info()
    assert info["audio_condition"] == condition and info["engine"].startswith("vllm 0.32")


def test_noise_is_heard(lalm_letters):
    original = [ll for ll, _ in lalm_letters["original"]]
    noise = [ll for ll, _ in lalm_letters["noise"]]
    assert max(abs(a - b) for a, b in zip(original, noise, strict=True)) > 1e-3


def test_greedy_generations_equal_lalm(engine, whisper_qwen2_audio, audio_data):
    condition, model, _ = engine
    lalm = _lalm(whisper_qwen2_audio, audio=condition, **CONDITIONS[condition])
    docs = letter_docs(audio_data, folds=(0,), n=3)
    for gen_kwargs in ({"until": [], "max_gen_toks": 12}, {"until": ["e"], "max_gen_toks": 12}):
        requests = generation_requests(docs, gen_kwargs)
        expected = lalm.generate_until(requests, disable_tqdm=True)
        assert model.generate_until(requests, disable_tqdm=True) == expected
        assert all(expected)  # the tiny model writes something
    assert not any("e" in text for text in expected)


def test_results_cache_resumes_without_the_engine(engine, audio_data, caplog):
    _, model, results = engine
    requests = letter_requests(letter_docs(audio_data, folds=(0,)))
    first = model.loglikelihood(requests, disable_tqdm=True)  # stored by the earlier test
    sent = model.engine_counts["requests"]
    with caplog.at_level("INFO"):
        again = model.loglikelihood(requests, disable_tqdm=True)
    assert again == first and model.engine_counts["requests"] == sent
    assert f"32 of 32 requests read from {results}" in caplog.text


def test_served_families_of_the_installed_vllm():
    """The families docs/models.md lists as served by vLLM 0.32.0, read from its registry."""
    from vllm import ModelRegistry

    from lm_eval_rul.models.families import FAMILIES

    served = set(ModelRegistry.get_supported_archs())
    # a full Qwen Omni checkpoint's architecture is its thinker class without "Thinker"
    names = {
        f.name
        for f in FAMILIES
        if f.model_class in served or f.model_class.replace("Thinker", "") in served
    }
    assert names == {
        "Qwen2-Audio", "Qwen2.5-Omni (thinker)", "Qwen3-Omni (thinker)", "Audio Flamingo 3",
        "Gemma 3n", "Voxtral", "Granite Speech",
    }  # fmt: skip


def test_a_family_vllm_does_not_serve_is_one_line(tmp_path, audio_data, capsys):
    import json

    from lm_eval_rul.testing.audio import make_tiny_audio_lm
    from lm_eval_rul.testing.harness import cli_error_line

    path = make_tiny_audio_lm(tmp_path / "mf", "musicflamingo")
    line = cli_error_line(
        ["run", "--model", "lalm-vllm", "--model_args", f"pretrained={path}",
         "--tasks", "rul_muchomusic_fold0", "--metadata", json.dumps(audio_data)],
        capsys,
    )  # fmt: skip
    assert "lalm-vllm: vLLM 0.32.0" in line and "does not serve Music Flamingo" in line
    assert "--model lalm" in line
