"""``lm-eval-rul run --model lalm-api`` end to end against the loopback server, beside ``lalm``.

The multiple-choice (``rul_muchomusic``, four folds) and generation (``muchomusic_gen``)
tasks run under ``original`` and ``noise``; letter log-likelihoods and generations must
equal ``lalm``'s on the same tiny model and clips, and no file the run writes may hold
the API key.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

MODEL = "tiny-audio"
SECRET = "sk-cli-SECRET-77aa88bb99cc00dd"
TASKS = "rul_muchomusic,muchomusic_gen"


def _run(model: str, model_args: str, data: dict[str, str], out: Path) -> dict:
    from lm_eval_rul.cli import main

    main(
        [
            "run", "--model", model, "--model_args", model_args, "--tasks", TASKS,
            "--metadata", json.dumps(data), "--gen_kwargs", "max_gen_toks=16",
            "--log_samples", "--output_path", str(out), "--device", "cpu", "--batch_size", "4",
        ]
    )  # fmt: skip
    (results_file,) = out.rglob("results_*.json")
    letters, answers = {}, {}
    for path in out.rglob("samples_*.jsonl"):
        for line in path.read_text().splitlines():
            row = json.loads(line)
            key = (path.name.split("_2")[0], row["doc"]["id"])
            if isinstance(row["resps"][0][0], str):
                answers[key] = row["resps"][0][0]
            else:
                letters[key] = [float(r[0][0]) for r in row["resps"]]
    return {"results": json.loads(results_file.read_text()), "letters": letters, "answers": answers}


@pytest.mark.parametrize("audio", ["original", "noise"])
def test_cli_run_equals_lalm_and_keeps_the_key_out_of_every_file(
    tiny_audio_lm, audio_data, tmp_path, monkeypatch, capfd, audio
):
    from doubles.openai_server import OpenAIAudioServer

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("LALM_CLI_KEY", SECRET)
    settings = f"audio={audio},noise_seconds=1"
    lalm_args = f"pretrained={tiny_audio_lm},dtype=float32,{settings}"
    lalm = _run("lalm", lalm_args, audio_data, tmp_path / "lalm")
    cache = tmp_path / "cache" / "api.sqlite"
    with OpenAIAudioServer(tiny_audio_lm, served_model=MODEL, api_key=SECRET) as server:
        api_args = (
            f"base_url={server.url},model={MODEL},{settings},wav_subtype=FLOAT,"
            f"api_key_env=LALM_CLI_KEY,num_concurrent=4,results_cache={cache}"
        )
        api = _run("lalm-api", api_args, audio_data, tmp_path / "api")
        sent = server.posts
        again = _run("lalm-api", api_args, audio_data, tmp_path / "again")
        assert server.posts == sent  # the rerun is answered by the resume cache
    assert sent == 32 * 4 + 8  # 8 questions x 4 folds x 4 letters, 8 generations
    logged = capfd.readouterr().err
    assert "HTTP requests" in logged and "rul_muchomusic_fold3" in logged
    assert "muchomusic_gen" in logged

    assert len(api["letters"]) == len(lalm["letters"]) == 32
    for key, expected in lalm["letters"].items():
        assert api["letters"][key] == pytest.approx(expected, abs=1e-4)
    assert api["answers"] == lalm["answers"] and len(api["answers"]) == 8
    assert again["letters"] == api["letters"] and again["answers"] == api["answers"]
    config = api["results"]["config"]
    assert config["audio_condition"] == audio and config["api_logprob_path"] == "prompt"
    assert config["api_http_requests"] == sent
    for group in ("rul_muchomusic", "muchomusic_gen"):
        assert api["results"]["results"][group]["acc,none"] == pytest.approx(
            lalm["results"]["results"][group]["acc,none"]
        )
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert cache in written and len(written) > 6
    for path in written:
        assert SECRET.encode() not in path.read_bytes(), path
    assert SECRET not in logged


def test_factual_tasks_need_the_served_models_audio_limit(
    tiny_audio_lm, factual_metadata, tmp_path, monkeypatch, capsys
):
    """``lalm-api`` cannot read a served model's limit: without ``max_audio_seconds`` or
    ``chunk_seconds`` a factual run stops before any request (a 30 s server would silently
    drop the second half of 60 s windows); told the limit, no window exceeds it."""
    from doubles.openai_server import OpenAIAudioServer

    from lm_eval_rul.cli import main

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    metadata = {**factual_metadata, "sample_size": 2}

    def run(model_args: str, out: str, **extra: object) -> None:
        main(
            [
                "run", "--model", "lalm-api", "--model_args", model_args,
                "--tasks", "factual_instrument_open", "--metadata",
                json.dumps({**metadata, **extra}), "--gen_kwargs", "max_gen_toks=4",
                "--log_samples", "--output_path", str(tmp_path / out),
            ]
        )  # fmt: skip

    with OpenAIAudioServer(tiny_audio_lm, served_model=MODEL) as server:
        base = f"base_url={server.url},model={MODEL}"  # resume cache: this test's own folder
        with pytest.raises(SystemExit) as stopped:
            run(base, "refused")
        assert stopped.value.code == 2
        message = capsys.readouterr().err
        assert "max_audio_seconds" in message and "chunk_seconds" in message
        assert "Nothing was sent" in message and server.posts == 0
        run(f"{base},max_audio_seconds=2", "limit")  # longer recordings: cut at 2 s
        heard = [
            part["seconds"]
            for body in server.answered
            for part in body["messages"][-1]["content"]
            if part["type"] == "audio"
        ]
        # one request per recording (2 items), each cut to the model's 2 s, none split
        assert len(heard) == server.posts == 2 and max(heard) <= 2.0 and 2.0 in heard
        posts = server.posts
        run(base, "window", chunk_seconds=3)  # or the window itself
        heard = [
            part["seconds"]
            for body in server.answered[posts:]
            for part in body["messages"][-1]["content"]
            if part["type"] == "audio"
        ]
        assert 2.0 < max(heard) <= 3.0
    (samples,) = (tmp_path / "limit").rglob("samples_factual_instrument_open_*.jsonl")
    windows = [json.loads(line)["doc"]["audio_window"] for line in samples.read_text().splitlines()]
    assert any(windows)  # a short recording is heard whole (None), a long one in windows
    assert all(end - start <= 2.0 + 1e-9 for start, end in filter(None, windows))
