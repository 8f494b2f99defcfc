"""Hostile inputs, fourth pass (issue 36, items 5-17): numeric model arguments, impossible
log-probabilities, bad dtypes and world sizes, credentials in data locations, lone
surrogates, HTTP-date ``Retry-After`` (tiny real models, loopback servers, temp folders).
The bridge, MMAU and clip items are in ``test_hostile_inputs_4b.py``."""

from __future__ import annotations

import json
import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")


# ----------------------------------------------------------------- numeric model arguments


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


# ------------------------------------------------------------ impossible log-probabilities


def _stored(cache) -> list[str]:
    import sqlite3

    if not cache.exists():
        return []
    with sqlite3.connect(str(cache)) as db:
        return [row[0] for row in db.execute("SELECT value FROM results")]


@pytest.mark.parametrize(
    ("path", "rewrite", "why"),
    [
        ("top", "top_duplicate_token", "above 1 (listed more than once: ' A'"),
        ("prompt", "prompt_logprob_positive", "'logprob' is above 0, a probability above 1"),
    ],
)
def test_a_log_probability_above_zero_is_a_bad_reply_never_scored_or_stored(
    tiny_audio_lm, audio_data, tmp_path, capsys, path, rewrite, why
):
    """The same letter listed twice in ``top_logprobs`` (-0.1 and -0.2) once scored
    log p = +0.544; a prompt log-probability above 0 was summed as it came."""
    from doubles.openai_server import OpenAIAudioServer

    from lm_eval_rul.testing.harness import cli_error_line

    cache = tmp_path / "api.sqlite"
    with OpenAIAudioServer(tiny_audio_lm, served_model="tiny-audio") as server:
        server.script.append(rewrite)
        line = cli_error_line(
            ["run", "--model", "lalm-api", "--model_args",
             f"base_url={server.url},model=tiny-audio,logprobs={path},results_cache={cache}",
             "--tasks", "rul_muchomusic_fold0", "--metadata", json.dumps(audio_data),
             "--limit", "2", "--output_path", tmp_path / "out"],  # fmt: skip
            capsys,
        )
    assert why in line and "Nothing of this reply was stored" in line
    assert _stored(cache) == [] and not list((tmp_path / "out").rglob("results_*.json"))


def test_scoring_refuses_a_log_likelihood_above_zero_from_any_path():
    from lm_eval_rul.mcqa.scoring import perceptual_index
    from lm_eval_rul.models.api_payload import MalformedLogprobsError, top_path_scores

    with pytest.raises(ValueError, match="a probability above 1"):
        perceptual_index([0.544, -1.0, -2.0, -3.0], 0)
    assert perceptual_index([5e-7, -1.0], 0) < 0.5  # float rounding at 0 is not refused
    with pytest.raises(MalformedLogprobsError, match="add up to 1.724"):  # a stored list
        top_path_scores([(" A", -0.1), ("A", -0.2)], [" A"])
    ((score, greedy),) = top_path_scores([(" A", -0.0001), ("A", -9.0)], [" A"])
    assert score == 0.0 and greedy  # within the rounding allowed, never above 0


# ------------------------------------------------------------------------------ dtypes


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


# ---------------------------------------------------------------------- launch variables


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


# ------------------------------------------------------------- credentials in data locations

_PASSWORD = "S3cretPassw0rd"


@pytest.mark.parametrize("key", ["audio_dir", "audio_hf_dataset"])
@pytest.mark.parametrize("userinfo", [f"user:{_PASSWORD}", _PASSWORD])
def test_url_credentials_in_a_data_location_are_masked_whatever_the_key_or_library(
    key, userinfo, tiny_audio_lm, data_dir, tmp_path, capsys, monkeypatch
):
    """``audio_dir`` came back normalised (``https:/user:PASSWORD@...``) and unmasked;
    ``audio_hf_dataset``'s password was inside the datasets library's error text."""
    from lm_eval_rul.testing.harness import cli_error_line

    monkeypatch.chdir(tmp_path)
    metadata = {"rul_data_path": str(data_dir / "rul.json"),
                key: f"https://{userinfo}@example.com/private/audio"}  # fmt: skip
    line = cli_error_line(
        ["run", "--model", "lalm", "--model_args", f"pretrained={tiny_audio_lm}",
         "--tasks", "rul_muchomusic_fold0", "--metadata", json.dumps(metadata)],  # fmt: skip
        capsys,
    )
    assert _PASSWORD not in line and "***@example.com" in line, line


def test_a_url_password_is_masked_wherever_a_message_quotes_it():
    from lm_eval_rul.masking import mask, url_secrets

    given = json.dumps({"audio_dir": f"https://user:{_PASSWORD}@h/x", "seed": 3})
    secrets = url_secrets(["run", given, None, 4])
    assert secrets == [_PASSWORD]
    quoted = f"401: credentials user/{_PASSWORD} refused at https:/user:{_PASSWORD}@h/x"
    assert mask(quoted, secrets) == "401: credentials user/*** refused at https:/user:***@h/x"


# ------------------------------------------------------------------------ lone surrogates


def test_a_chat_reply_with_a_lone_surrogate_is_stored_safely_and_scored(
    tiny_audio_lm, audio_data, tmp_path
):
    """``"\\ud83d"`` (half an emoji) in a reply's content: ``UnicodeEncodeError`` from the
    resume-cache write. Read as U+FFFD, the answer is parsed, stored and written."""
    from doubles.openai_server import OpenAIAudioServer

    from lm_eval_rul.cli import main

    cache = tmp_path / "api.sqlite"
    with OpenAIAudioServer(tiny_audio_lm, served_model="tiny-audio") as server:
        server.script.extend(["content_lone_surrogate"] * 8)
        main(["run", "--model", "lalm-api", "--model_args",
              f"base_url={server.url},model=tiny-audio,results_cache={cache}",
              "--tasks", "rul_muchomusic_gen_fold0", "--metadata", json.dumps(audio_data),
              "--limit", "2", "--output_path", str(tmp_path / "out"), "--log_samples"])  # fmt: skip
    (results,) = (tmp_path / "out").rglob("results_*.json")
    assert json.loads(results.read_text())["results"]["rul_muchomusic_gen_fold0"]
    stored = [json.loads(v)["content"] for v in _stored(cache)]
    assert stored == ["The answer is [[A]] \ufffd"] * 2
    (samples,) = (tmp_path / "out").rglob("samples_*.jsonl")
    rows = [json.loads(line) for line in samples.read_text().splitlines()]
    assert [row["resps"][0][0] for row in rows] == ["The answer is [[A]] \ufffd"] * 2


# ------------------------------------------------------------------ Retry-After as a date


def test_a_retry_after_http_date_is_honoured_with_a_cap(audio_data):
    """RFC 9110 allows ``Retry-After: <HTTP date>``: it was ignored, every retry spent
    within half a second, then "kept failing"."""
    import time
    from email.utils import formatdate

    from doubles.scripted_http import COMPLETION, Answer, ScriptedServer
    from lm_eval.api.instance import Instance

    from lm_eval_rul.mcqa.tasks import doc_to_text_gen, load_rul_muchomusic
    from lm_eval_rul.models.api import LALMAPI

    posted: list[float] = []
    limited = b'{"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}}'

    def answer(request) -> Answer:
        if request.method == "GET":
            return Answer(200, b'{"data": []}')
        posted.append(time.monotonic())
        if len(posted) > 1:
            return Answer(200, COMPLETION)
        return Answer(429, limited, {"Retry-After": formatdate(time.time() + 3, usegmt=True)})

    doc = next(iter(load_rul_muchomusic(0, **audio_data)["test"]))
    request = Instance("generate_until", doc, (doc_to_text_gen(doc), {"until": []}), 0)
    with ScriptedServer(answer) as server:
        model = LALMAPI(base_url=server.url, model="tiny-audio", results_cache="none",
                        retry_backoff=0, max_retries=1)  # fmt: skip
        assert model.generate_until([request], disable_tqdm=True) == ["A"]
    assert len(posted) == 2 and 1.5 < posted[1] - posted[0] < 10


def test_retry_after_reads_seconds_and_dates_capped_in_every_retry_policy():
    from email.utils import formatdate

    from lm_eval_rul.retries import MAX_RETRY_AFTER, retry_after_seconds, with_retries

    assert retry_after_seconds(formatdate(1000.0 + 7, usegmt=True), now=1000.0) == 7.0
    assert retry_after_seconds(formatdate(1000.0 + 86400, usegmt=True), now=1000.0) == 60.0
    assert retry_after_seconds(formatdate(1000.0 - 30, usegmt=True), now=1000.0) == 0.0
    assert retry_after_seconds("Someday, 99 Foo 2015") is None

    class RateLimited(Exception):  # as requests / httpx raise it: the answer attached
        class response:  # noqa: N801
            status_code = 429
            headers = {"Retry-After": formatdate(__import__("time").time() + 3600, usegmt=True)}

    waits: list[float] = []
    calls = iter([RateLimited(), "ok"])

    def call():
        outcome = next(calls)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    assert with_retries(call, retries=1, backoff=0.01, what="judge", sleep=waits.append) == "ok"
    assert waits == [MAX_RETRY_AFTER]  # the hour asked for, capped
