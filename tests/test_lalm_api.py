"""``lalm-api`` against a loopback OpenAI-compatible server running a tiny real audio LM.

The server (:mod:`doubles.openai_server`) decodes the WAV it receives and
runs the transformers model itself; ``lalm`` runs the same checkpoint in-process. Both
must give the same letter log-probabilities and the same generations.
"""

from __future__ import annotations

import math
import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

MODEL = "tiny-audio"


def _docs(metadata: dict[str, str], fold: int = 0, n: int = 4) -> list[dict]:
    from lm_eval_rul.mcqa.tasks import load_rul_muchomusic

    return list(load_rul_muchomusic(fold, **metadata)["test"])[:n]


def _letter_requests(docs: list[dict], task: str = "rul_muchomusic_fold0") -> list:
    from lm_eval.api.instance import Instance

    from lm_eval_rul.mcqa.tasks import doc_to_choice, doc_to_text

    return [
        Instance("loglikelihood", doc, (doc_to_text(doc), f" {letter}"), i, (task, n, 1))
        for n, doc in enumerate(docs)
        for i, letter in enumerate(doc_to_choice(doc))
    ]


def _lalm(path, **kwargs):
    from lm_eval_rul.models.lalm import LALM

    return LALM(pretrained=str(path), dtype="float32", device="cpu", **kwargs)


def _api(server, **kwargs):
    from lm_eval_rul.models.api import LALMAPI

    kwargs = {"results_cache": "none", "wav_subtype": "FLOAT", "retry_backoff": 0, **kwargs}
    return LALMAPI(base_url=server.url, model=MODEL, **kwargs)


def _server(path, **kwargs):
    from doubles.openai_server import OpenAIAudioServer

    return OpenAIAudioServer(path, served_model=MODEL, **kwargs)


@pytest.mark.parametrize(
    ("audio", "extra"), [("original", {}), ("noise", {"noise_seconds": 1.0}), ("none", {})]
)
def test_prompt_path_letter_logprobs_equal_lalm(tiny_audio_lm, audio_data, audio, extra):
    docs = _docs(audio_data, 0) + _docs(audio_data, 1)
    requests = _letter_requests(docs)
    expected = _lalm(tiny_audio_lm, audio=audio, **extra).loglikelihood(requests, True)
    with _server(tiny_audio_lm) as server:
        model = _api(server, audio=audio, num_concurrent=4, **extra)
        got = model.loglikelihood(requests, disable_tqdm=True)
        assert server.posts == len(requests) == 32  # one per letter, nothing retried
    assert model.get_model_info()["api_logprob_path"] == "prompt"
    for (ll, greedy), (want, want_greedy) in zip(got, expected, strict=True):
        assert ll == pytest.approx(want, abs=1e-4)
        assert greedy == want_greedy
    parts = [part for body in server.answered for part in body["messages"][0]["content"]]
    heard = {part["sha256"] for part in parts if part["type"] == "audio"}
    clips, ids = {d["audio_ref"] for d in docs}, {d["id"] for d in docs}
    assert len(heard) == {"original": len(clips), "noise": len(ids), "none": 0}[audio]


def test_pcm16_audio_is_close_to_lalm(tiny_audio_lm, audio_data):
    requests = _letter_requests(_docs(audio_data, 0, n=2))
    expected = [ll for ll, _ in _lalm(tiny_audio_lm).loglikelihood(requests, True)]
    with _server(tiny_audio_lm) as server:
        pcm16 = [ll for ll, _ in _api(server, wav_subtype="PCM_16").loglikelihood(requests, True)]
    assert pcm16 == pytest.approx(expected, abs=1e-2)


def test_generations_equal_lalm(tiny_audio_lm, audio_data):
    from lm_eval.api.instance import Instance

    from lm_eval_rul.mcqa.tasks import doc_to_text_gen

    docs = _docs(audio_data, 0, n=3)
    lalm = _lalm(tiny_audio_lm)
    for gen_kwargs in ({"until": [], "max_gen_toks": 12}, {"until": ["e"], "max_gen_toks": 12}):
        requests = [
            Instance("generate_until", d, (doc_to_text_gen(d), gen_kwargs), 0) for d in docs
        ]
        expected = lalm.generate_until(requests, disable_tqdm=True)
        with _server(tiny_audio_lm) as server:
            assert _api(server, num_concurrent=2).generate_until(requests, True) == expected
            assert [body["max_tokens"] for body in server.answered] == [12] * 3
        assert all(expected)  # the tiny model writes something
    assert not any("e" in text for text in expected)


def test_top_path_sums_the_spellings_of_each_letter(tiny_audio_lm, audio_data):
    """With every token in the top-k, letter "A" = log(p(" A") + p("A")) after the prompt."""
    docs = _docs(audio_data, 0, n=3)
    requests = _letter_requests(docs)
    lalm = _lalm(tiny_audio_lm)
    spaced = [ll for ll, _ in lalm.loglikelihood(requests, True)]
    for request in requests:  # the same letters without their leading space
        request.arguments = (request.arguments[0], request.arguments[1].strip())
    bare = [ll for ll, _ in lalm.loglikelihood(requests, True)]
    vocab = len(lalm.tokenizer)
    with _server(tiny_audio_lm, top_k_cap=vocab) as server:
        model = _api(server, logprobs="top", top_logprobs=vocab)
        got = model.loglikelihood(_letter_requests(docs), disable_tqdm=True)
        assert server.posts == len(docs)  # one request per question, not per letter
    for (ll, _), a, b in zip(got, spaced, bare, strict=True):
        assert ll == pytest.approx(math.log(math.exp(a) + math.exp(b)), abs=1e-4)
    assert model.get_model_info()["api_letters_missing_from_top"] == 0
    assert sum(greedy for _, greedy in got) <= len(docs)


def test_top_path_counts_and_reports_missing_letters(tiny_audio_lm, audio_data, caplog):
    from lm_eval_rul.mcqa.tasks import process_results
    from lm_eval_rul.testing.requests import check_top_path_counts

    docs = _docs(audio_data, 0, n=4)
    vocab = 600
    with _server(tiny_audio_lm, top_k_cap=vocab) as server:
        full = _api(server, logprobs="top", top_logprobs=vocab).loglikelihood(
            _letter_requests(docs), True
        )
        model = _api(server, logprobs="top", top_logprobs=5)
        got = model.loglikelihood(_letter_requests(docs), disable_tqdm=True)
    info = model.get_model_info()
    missing = check_top_path_counts(info, got, 5)
    assert len(info["api_missing_letter_examples"]) == info["api_questions_missing_letters"]
    assert all(" fold 0 (" in e for e in info["api_missing_letter_examples"])  # which fold
    for (ll, _), (full_ll, _) in zip(got, full, strict=True):  # found letters: a lower bound
        assert ll == float("-inf") or ll <= full_ll + 1e-6
    assert "were not among the top 5" in caplog.text
    for doc, start in zip(docs, range(0, len(got), 4), strict=True):
        scores = process_results(doc, got[start : start + 4])
        if all(missing[start : start + 4]):  # no letter: wrong, no probability on gold
            assert scores == {"acc": 0.0, "perceptual_index": 1.0}


def test_auto_falls_back_to_top_on_an_openai_like_server(tiny_audio_lm, audio_data, caplog):
    requests = _letter_requests(_docs(audio_data, 0, n=2))
    with _server(tiny_audio_lm, logprobs="top", top_k_cap=600) as server:
        model = _api(server, top_logprobs=600)
        got = model.loglikelihood(requests, disable_tqdm=True)
        assert server.statuses == [400, 200, 200]  # the probe, then one per question
        assert "prompt_logprobs" not in str(server.answered)
    assert model.get_model_info()["api_logprob_path"] == "top-600"
    assert "no prompt log-probabilities" in caplog.text
    assert all(math.isfinite(ll) for ll, _ in got)


@pytest.mark.parametrize("silent", [False, True])
def test_no_logprobs_is_one_clear_error_before_any_fan_out(tiny_audio_lm, audio_data, silent):
    from lm_eval_rul.errors import UserInputError
    from lm_eval_rul.models.api_payload import NoLogprobsError

    requests = _letter_requests(_docs(audio_data, 0, n=4))
    with _server(tiny_audio_lm, logprobs="none", silent_no_logprobs=silent) as server:
        with pytest.raises(NoLogprobsError) as caught:
            _api(server, num_concurrent=4).loglikelihood(requests, disable_tqdm=True)
        assert server.posts == 2  # the prompt-path probe, then the top-path probe
        with pytest.raises(NoLogprobsError):
            _api(server, logprobs="none").loglikelihood(requests, disable_tqdm=True)
        assert server.posts == 2
    assert isinstance(caught.value, UserInputError)
    message = str(caught.value)
    assert "rul_muchomusic_gen" in message and "muchomusic_gen" in message
    assert "vLLM" in message


def test_interrupted_run_resumes_without_repeating_a_request(tiny_audio_lm, audio_data, tmp_path):
    from lm_eval_rul.models.api_http import APIUnavailableError

    requests = _letter_requests(_docs(audio_data, 0, n=4) + _docs(audio_data, 2, n=4))
    cache = str(tmp_path / "resume.sqlite")
    with _server(tiny_audio_lm) as server:
        server.fail_after = 9  # then 503 for ever: the run stops part-way
        with pytest.raises(APIUnavailableError, match="resume cache"):
            model = _api(server, results_cache=cache, num_concurrent=4, max_retries=1)
            model.loglikelihood(requests, True)
        first = len(server.answered)
        assert first == 9
        server.fail_after = None
        resumed = _api(server, results_cache=cache, num_concurrent=4)
        got = resumed.loglikelihood(requests, disable_tqdm=True)
        fingerprints = server.fingerprints()
        assert len(fingerprints) == len(set(fingerprints)) == len(requests)  # zero repeats
        assert resumed.get_model_info()["api_cache_hits"] >= first
        posts = server.posts
        again = _api(server, results_cache=cache).loglikelihood(requests, disable_tqdm=True)
        assert server.posts == posts  # everything answered: nothing sent
        fresh = _api(server).loglikelihood(requests, disable_tqdm=True)
    assert got == again == fresh


def test_two_conditions_never_share_an_entry(tiny_audio_lm, audio_data, tmp_path):
    requests = _letter_requests(_docs(audio_data, 0, n=2))
    cache = str(tmp_path / "c.sqlite")
    with _server(tiny_audio_lm) as server:
        runs = {}
        for audio in ("original", "silence", "noise"):
            before = server.posts
            model = _api(server, results_cache=cache, audio=audio, noise_seconds=1.0)
            runs[audio] = model.loglikelihood(requests, disable_tqdm=True)
            assert server.posts - before == len(requests)  # nothing read from another condition
            assert model.get_model_info()["audio_condition"] == audio
        before = server.posts
        _api(server, results_cache=cache, audio="noise", noise_seconds=1.0, seed=3).loglikelihood(
            requests, True
        )
        assert server.posts - before == len(requests)  # another noise draw: another entry
    assert runs["original"] != runs["silence"] != runs["noise"]


def test_model_args_are_checked_and_secrets_refused():
    from lm_eval_rul.models.api import check_model_args
    from lm_eval_rul.models.args import LALMArgumentError, UnknownModelArgsError

    base = {"base_url": "http://localhost:8000/v1", "model": "m"}
    with pytest.raises(LALMArgumentError, match="do not pass api_key") as caught:
        check_model_args({**base, "api_key": "sk-never-echo-this"})
    assert "sk-never-echo-this" not in str(caught.value)
    for bad, match in (
        ({"num_concurent": 8}, "lalm-api: unknown model_args num_concurent"),
        ({"logprobs": "maybe"}, "logprobs='maybe' is not one of auto, prompt, top, none"),
        ({"num_concurrent": "x"}, "lalm-api: num_concurrent='x' is not an integer"),
        ({"num_concurrent": 0}, "num_concurrent=0 must be at least 1"),
        ({"wav_subtype": "mp3"}, "wav_subtype='mp3' is not one of"),
    ):
        with pytest.raises((LALMArgumentError, UnknownModelArgsError), match=match):
            check_model_args({**base, **bad})
    with pytest.raises(LALMArgumentError, match="base_url= is required"):
        check_model_args({"model": "m"})
    given = {**base, "num_concurrent": "8", "audio": "noise", "wav_subtype": "float"}
    args = check_model_args(given)
    assert (args["num_concurrent"], args["audio"], args["wav_subtype"]) == (8, "noise", "FLOAT")


def test_results_cache_has_lalms_name_values_and_folder(tmp_path, monkeypatch):
    """``results_cache=auto|PATH|none`` as for ``lalm``, the default file beside lalm's in
    ``$LM_EVAL_RUL_CACHE``; the old name ``cache=`` is refused, saying the new one."""
    from lm_eval_rul.adapters import adapter_named
    from lm_eval_rul.models.api import LALMAPI, check_model_args
    from lm_eval_rul.models.args import LALMArgumentError
    from lm_eval_rul.models.core import results_path
    from lm_eval_rul.models.lalm import LALM

    monkeypatch.setenv("LM_EVAL_RUL_CACHE", str(tmp_path / "home"))
    base = {"base_url": "http://127.0.0.1:9/v1", "model": "m"}
    auto = LALMAPI(**base)
    assert auto._stored.path == tmp_path / "home" / "lalm_api.sqlite"
    lalm_file = adapter_named("lalm").results_file
    assert results_path("auto", lalm_file).parent == auto._stored.path.parent  # lalm's folder
    assert LALMAPI(**base, results_cache="none")._stored.cache is None
    assert LALMAPI(**base, results_cache="off")._stored.cache is None
    mine = tmp_path / "mine.sqlite"
    assert LALMAPI(**base, results_cache=str(mine))._stored.path == mine
    with pytest.raises(LALMArgumentError, match="cache= is now results_cache="):
        check_model_args({**base, "cache": "none"})
    import inspect

    for model in (LALM, LALMAPI):
        parameter = inspect.signature(model.__init__).parameters["results_cache"]
        assert parameter.default == "auto"


def test_ctrl_c_waits_for_the_answers_in_flight_so_a_rerun_repeats_none(
    tiny_audio_lm, audio_data, tmp_path
):
    import signal
    import threading
    import time

    requests = _letter_requests(_docs(audio_data, 0, n=4))
    cache = str(tmp_path / "ctrl_c.sqlite")
    with _server(tiny_audio_lm, latency=0.05) as server:

        def interrupt_after_six_answers() -> None:
            while len(server.answered) < 6:
                time.sleep(0.005)
            os.kill(os.getpid(), signal.SIGINT)

        threading.Thread(target=interrupt_after_six_answers, daemon=True).start()
        with pytest.raises(KeyboardInterrupt):
            _api(server, results_cache=cache, num_concurrent=4).loglikelihood(requests, True)
        interrupted = len(server.answered)
        assert 6 <= interrupted < len(requests)
        model = _api(server, results_cache=cache, num_concurrent=4)
        model.loglikelihood(requests, disable_tqdm=True)
        fingerprints = server.fingerprints()
    assert len(fingerprints) == len(set(fingerprints)) == len(requests)


def test_study_windows_without_a_probable_word_are_no_answer(
    tiny_audio_lm, factual_metadata, caplog
):
    """True/false over ``lalm-api``'s top-k path: a window whose ` true` and ` false` are both
    missing from the top tokens answers nothing (a parse failure), never "true"."""
    from lm_eval.api.instance import Instance

    from lm_eval_rul.factual.reading.truefalse import label_answers, truefalse_figures
    from lm_eval_rul.factual.study_tasks import (
        load_factual_truefalse,
        process_results_truefalse,
        truefalse_choices,
    )

    options = {**factual_metadata, "sample_size": 2, "chunk_seconds": 2}
    docs = list(load_factual_truefalse("timesig", "loglikelihood", **options)["test"])
    requests = [
        Instance("loglikelihood", doc, (doc["prompt"], f" {word}"), i, ("tf", n, 1))
        for n, doc in enumerate(docs)
        for i, word in enumerate(truefalse_choices(doc))
    ]
    with _server(tiny_audio_lm, top_k_cap=600) as server:
        model = _api(server, logprobs="top", top_logprobs=5, max_audio_seconds=2)
        got = model.loglikelihood(requests, disable_tqdm=True)
    info = model.get_model_info()
    records = [
        process_results_truefalse(dict(doc), got[2 * n : 2 * n + 2])["base_rate"]
        for n, doc in enumerate(docs)
    ]
    unanswered = [
        all(ll == float("-inf") for ll, _ in got[2 * n : 2 * n + 2]) for n in range(len(docs))
    ]
    assert info["api_questions_without_letters"] == sum(unanswered) > 0
    for record, none in zip(records, unanswered, strict=True):
        assert (record["answer"] is None) == none
        assert record["p_true"] is None if none else 0.0 <= record["p_true"] <= 1.0
    figures = truefalse_figures(label_answers(records))
    pairs = label_answers(records)
    assert (
        figures["parse_failure"]
        == sum(p.answer("inclusive") is None for p in pairs) / len(pairs)
        > 0
    )
    assert figures["true_share_inclusive"] == sum(
        p.answer("inclusive") is True for p in pairs
    ) / len(pairs)
    assert figures["true_share_inclusive"] < 1.0
