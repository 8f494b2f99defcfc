"""Secrets never printed, logged or written (issue 23, defect 6).

* ``build``'s generator goes through the harness's API models: a 401 whose body echoes
  the key is asked once (no harness retries) and the key is in no output line;
* a password in ``base_url`` is warned about and masked in logs and the results JSON;
* ``--model hf --model_args token=...``: masked in ``run``'s results config and in the
  summary line the harness prints.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3

import pytest
from doubles.openai_server import OpenAIAudioServer

from lm_eval_rul.masking import mask_logs
from lm_eval_rul.testing.fixtures import fixture_rows
from lm_eval_rul.testing.harness import read_output, text_run_args

os.environ.setdefault("HF_HUB_OFFLINE", "1")

#: A key without a known prefix (``sk-``...): only masking by value can hide it.
WRONG_KEY = "wrong-KEY-0a1b2c3d4e5f6a7b8c9d"
PASSWORD = "pa55-W0RD-f00ba4"


def test_the_harness_logs_no_key_of_the_environment_or_the_model_args(caplog, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", WRONG_KEY)
    harness = logging.getLogger("lm_eval.models.api_models")
    monkeypatch.setattr(harness, "propagate", True)
    monkeypatch.setattr(logging.getLogger("lm_eval"), "propagate", True)
    with caplog.at_level(logging.WARNING), mask_logs("model=m,api_key=s3cr3t-value"):
        harness.warning("API request failed with error message: Incorrect key %s", WRONG_KEY)
        harness.warning("sent s3cr3t-value to http://me:%s@host/v1", PASSWORD)
        try:
            raise RuntimeError(f"Bearer {WRONG_KEY}")
        except RuntimeError:
            harness.exception("failed")
    text = caplog.text
    assert "Incorrect key ***" in text and "http://me:***@host" in text
    assert WRONG_KEY not in text and "s3cr3t-value" not in text and PASSWORD not in text
    record = logging.getLogger("x").makeRecord("x", logging.INFO, "f", 1, WRONG_KEY, (), None)
    assert record.getMessage() == WRONG_KEY  # the factory is restored after the block


def _listening(caplog):
    """The CLI's loggers do not propagate: attach pytest's handler to them directly."""
    loggers = [logging.getLogger("lm_eval_rul"), logging.getLogger("lm_eval")]
    for logger in loggers:
        logger.addHandler(caplog.handler)
    return loggers


def test_build_against_a_401_echoing_the_key_asks_once_and_prints_no_key(
    tiny_audio_lm, tmp_path, monkeypatch, caplog, capsys
):
    from lm_eval_rul.cli import main

    monkeypatch.setenv("OPENAI_API_KEY", WRONG_KEY)
    data = tmp_path / "questions.json"
    data.write_text(json.dumps(fixture_rows(2)))
    loggers = _listening(caplog)
    try:
        with OpenAIAudioServer(tiny_audio_lm, served_model="m", api_key="the-right-key") as server:
            with pytest.raises(SystemExit) as exited:
                main(
                    ["build", "--data", str(data), "--stage", "generate", "--generator",
                     "local-chat-completions", "--generator_args",
                     f"base_url={server.url}/chat/completions,model=m",
                     "--output", str(tmp_path / "p.json")]
                )  # fmt: skip
            assert server.posts == 1 and server.statuses == [401]  # no retry of a 401
    finally:
        for logger in loggers:
            logger.removeHandler(caplog.handler)
    printed = capsys.readouterr()
    output = caplog.text + printed.out + printed.err
    assert exited.value.code == 2 and "HTTP 401, authentication failed" in printed.err
    assert "Incorrect API key provided: ***" in caplog.text  # the harness's warning, masked
    assert WRONG_KEY not in output


def test_a_password_in_base_url_is_warned_about_and_masked_everywhere(
    tiny_audio_lm, audio_data, tmp_path, caplog, capsys
):
    from lm_eval_rul.cli import main

    out = tmp_path / "out"
    loggers = _listening(caplog)
    try:
        with OpenAIAudioServer(tiny_audio_lm, served_model="tiny-audio") as server:
            url = server.url.replace("http://", f"http://me:{PASSWORD}@")
            main(
                ["run", "--model", "lalm-api", "--model_args",
                 f"base_url={url},model=tiny-audio,results_cache=none",
                 "--tasks", "rul_muchomusic_gen_fold0", "--metadata", json.dumps(audio_data),
                 "--limit", "1", "--gen_kwargs", "max_gen_toks=2", "--output_path", str(out),
                 "--log_samples"]
            )  # fmt: skip
            assert server.posts == 1
    finally:
        for logger in loggers:
            logger.removeHandler(caplog.handler)
    printed = capsys.readouterr()
    output = caplog.text + printed.out + printed.err
    assert "holds a password" in caplog.text and "me:***@127.0.0.1" in caplog.text
    files = [p.read_text() for p in out.rglob("*") if p.is_file()]
    assert files and not any(PASSWORD in text for text in [output, *files])
    results, _ = read_output(out)
    assert results["config"]["api_host"] == server.url.split("/")[2]


def test_run_masks_an_hf_token_in_the_results_config_and_the_summary_line(
    tiny_lm, data_dir, tmp_path, capsys
):
    from lm_eval_rul.cli import main

    args = text_run_args(tiny_lm, data_dir, tmp_path / "out", "muchomusic", "--limit", "1")
    at = args.index("--model_args") + 1
    args[at] += f",token={WRONG_KEY}"
    main(args)
    printed = capsys.readouterr()
    results, _ = read_output(tmp_path / "out")
    assert results["config"]["model_args"]["token"] == "***"
    assert WRONG_KEY not in json.dumps(results) and WRONG_KEY not in printed.out
    assert "'token': '***'" in printed.out


TOKEN = "tok3n-VALUE-9a8b7c6d5e4f"


#: A password holding ``@`` and ``:`` (the authority ends at its last ``@``).
ODD = f"{TOKEN[:8]}@:{TOKEN[8:]}"


@pytest.mark.parametrize(
    ("url", "shown", "secret"),
    [
        (f"http://{TOKEN}@h:8000/v1", "http://***@h:8000/v1", TOKEN),
        (f"https://{TOKEN}:@h/v1", "https://***@h/v1", TOKEN),
        (f"http://me:{TOKEN}@h/v1", "http://me:***@h/v1", TOKEN),
        (f"http://:{TOKEN}@h/v1", "http://:***@h/v1", TOKEN),
        (f"http://me:{ODD}@h/v1", "http://me:***@h/v1", ODD),
    ],
)
def test_url_credentials_of_every_shape_are_masked(url, shown, secret):
    from lm_eval_rul.masking import mask, mask_model_args, redact_args, url_has_credentials

    assert url_has_credentials(url)
    assert mask(f"POST {url}/chat/completions failed") == f"POST {shown}/chat/completions failed"
    assert redact_args(f"base_url={url},model=m") == f"base_url={shown},model=m"
    assert mask_model_args({"base_url": url}) == {"base_url": shown}
    with mask_logs(f"base_url={url}"):  # the value is masked wherever it appears alone
        record = logging.getLogger("x").makeRecord(
            "x", logging.INFO, "f", 1, "sent %s", (secret,), None
        )
    assert record.getMessage() == "sent ***"


@pytest.mark.parametrize("text", ["http://h:8000/v1?to=a@b", "http://h/v1 (mail me@h.org)"])
def test_an_at_sign_outside_a_url_authority_is_not_a_credential(text):
    from lm_eval_rul.masking import mask_url, url_has_credentials

    assert not url_has_credentials(text) and mask_url(text) == text


def test_a_token_as_the_url_user_part_is_masked_in_the_results_and_the_console(
    tiny_audio_lm, audio_data, tmp_path, caplog, capsys
):
    from lm_eval_rul.cli import main

    out = tmp_path / "out"
    loggers = _listening(caplog)
    try:
        with OpenAIAudioServer(tiny_audio_lm, served_model="tiny-audio") as server:
            url = server.url.replace("http://", f"http://{TOKEN}@")
            main(
                ["run", "--model", "lalm-api", "--model_args",
                 f"base_url={url},model=tiny-audio,results_cache=none,api_key_env=LALM_UNSET",
                 "--tasks", "rul_muchomusic_gen_fold0", "--metadata", json.dumps(audio_data),
                 "--limit", "1", "--gen_kwargs", "max_gen_toks=2", "--output_path", str(out),
                 "--log_samples"]
            )  # fmt: skip
            assert server.posts == 1
    finally:
        for logger in loggers:
            logger.removeHandler(caplog.handler)
    printed = capsys.readouterr()
    output = caplog.text + printed.out + printed.err
    files = [p.read_text() for p in out.rglob("*") if p.is_file()]
    assert files and not any(TOKEN in text for text in [output, *files])
    results, _ = read_output(out)
    assert results["config"]["model_args"]["base_url"].startswith("http://***@127.0.0.1")
    assert "holds a password or token" in caplog.text and "http://***@127.0.0.1" in caplog.text


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


def test_a_served_answer_echoing_the_key_is_masked_in_every_file(tmp_path, monkeypatch):
    """53.7: the key a served model echoes in its completion is in no file ``run`` writes:
    the samples, the results and the resume cache hold ``***`` instead."""
    from doubles.chat import ChatServer

    from lm_eval_rul.cli import main
    from lm_eval_rul.testing.tagging import write_gtzan

    key = "sk-echoedKEY0123456789abc"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    gtzan = write_gtzan(tmp_path / "gtzan", per_genre=1)
    metadata = {"gtzan_split_file": str(gtzan["split"]), "gtzan_audio_dir": str(gtzan["audio"])}
    cache = tmp_path / "cache.sqlite"
    with ChatServer(lambda body: f"rock (my key is {key})") as server:
        main(["run", "--model", "lalm-api", "--model_args",
              f"base_url={server.url},model=stand-in,results_cache={cache}",
              "--tasks", "gtzan_gen", "--metadata", json.dumps(metadata), "--limit", "2",
              "--output_path", str(tmp_path / "out"), "--log_samples"])  # fmt: skip
    (samples,) = (tmp_path / "out").rglob("samples_gtzan_gen_*.jsonl")
    answers = [json.loads(line)["resps"][0][0] for line in samples.read_text().splitlines()]
    assert answers == ["rock (my key is ***)"] * 2
    written = [p.read_bytes() for p in [*tmp_path.rglob("*.json*"), cache] if p.is_file()]
    assert written and not any(key.encode() in data for data in written)
    with sqlite3.connect(cache) as db:
        assert db.execute("SELECT COUNT(*) FROM results").fetchone()[0] >= 2


def test_mask_reply_masks_every_text_and_keeps_the_rest():
    from lm_eval_rul.masking import mask_reply

    body = {"choices": [{"message": {"content": "key abcd1234 and sk-proj-0123456789"},
                         "logprobs": {"content": [{"token": "A", "logprob": -0.5}]}}]}  # fmt: skip
    masked = mask_reply(body, ["abcd1234"])
    assert masked["choices"][0]["message"]["content"] == "key *** and ***"
    assert masked["choices"][0]["logprobs"] == body["choices"][0]["logprobs"]
