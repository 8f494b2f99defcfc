"""``lm-eval-rul bridge``: a research-shaped audio LM served from an environment without
lm_eval_rul, evaluated through ``lalm-api`` (letters, generation, factual windows; original
audio and noise), its letter log-probabilities equal to the adapter's in-process ones."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from doubles.bridge import (
    RESEARCH_WINDOW_SECONDS,
    clean_env,
    isolated_python,
    make_research_lm,
    start_bridge,
    write_adapter,
)

MODEL = "tiny-research-lalm"


@pytest.fixture(scope="session")
def research_bridge(tmp_path_factory):
    """The written bridge serving the tiny research model from an env without lm_eval_rul."""
    from lm_eval_rul.cli import main

    root = tmp_path_factory.mktemp("bridge")
    adapter = write_adapter(root / "adapter.py", make_research_lm(root / "model"))
    main(["bridge", "--write", str(root / "bridge.py")])
    python = isolated_python(root / "env")
    process, url = start_bridge(python, root / "bridge.py", adapter, root / "console.log")
    yield {"url": url, "adapter": adapter, "python": python, "root": root}
    process.terminate()
    process.wait(timeout=30)


def _run(url: str, tasks: str, settings: str, data: dict, out: Path, limit: str = "2") -> dict:
    from lm_eval_rul.cli import main

    model_args = f"base_url={url},model={MODEL},wav_subtype=FLOAT,noise_seconds=1,{settings}"
    main(
        [
            "run", "--model", "lalm-api", "--model_args", model_args, "--tasks", tasks,
            "--metadata", json.dumps(data), "--gen_kwargs", "max_gen_toks=3",
            "--log_samples", "--output_path", str(out), *(["--limit", limit] if limit else []),
        ]
    )  # fmt: skip
    (results,) = out.rglob("results_*.json")
    rows = [
        json.loads(line) for path in out.rglob("samples_*.jsonl") for line in path.open()
    ]
    return {"results": json.loads(results.read_text()), "rows": rows}


def test_the_bridge_environment_has_no_lm_eval_rul(research_bridge):
    for module in ("lm_eval_rul", "lm_eval"):
        probe = subprocess.run(
            [research_bridge["python"], "-c", f"import {module}"],
            capture_output=True, text=True, env=clean_env(), cwd=research_bridge["root"],
        )  # fmt: skip
        assert probe.returncode == 1 and f"No module named '{module}'" in probe.stderr


@pytest.mark.parametrize("audio", ["original", "noise"])
def test_letters_and_generation_through_the_bridge_equal_the_adapter_in_process(
    research_bridge, audio_data, tmp_path, audio
):
    import importlib.util

    from lm_eval_rul.audio import AudioSpec, condition_audio

    run = _run(
        research_bridge["url"], "rul_muchomusic,muchomusic_gen", f"audio={audio}",
        audio_data, tmp_path / "out",
    )  # fmt: skip
    config = run["results"]["config"]
    assert config["api_logprob_path"] == "prompt"  # exact: the adapter's loglikelihood
    assert config["api_bridge"]["max_audio_seconds"] == RESEARCH_WINDOW_SECONDS
    assert config["audio_max_seconds"] == RESEARCH_WINDOW_SECONDS  # read, not repeated
    letters = [r for r in run["rows"] if len(r["resps"]) > 1]  # one response per letter
    answers = [r for r in run["rows"] if len(r["resps"]) == 1]
    assert len(letters) == 4 * 2 and len(answers) == 2  # 4 folds x --limit 2; 2 generations

    spec = AudioSpec(
        sampling_rate=16_000, max_seconds=RESEARCH_WINDOW_SECONDS, condition=audio,
        seed=0, noise_seconds=1.0, noise_std=1.0,
    )  # fmt: skip
    loaded = importlib.util.spec_from_file_location("research_adapter", research_bridge["adapter"])
    adapter = importlib.util.module_from_spec(loaded)
    loaded.loader.exec_module(adapter)
    for row in letters[:3]:
        _, wave = condition_audio(row["doc"], spec)
        arguments = [(a["arg_0"], a["arg_1"]) for a in row["arguments"].values()]
        for (context, continuation), resp in zip(arguments, row["resps"], strict=True):
            direct = adapter.loglikelihood(wave, 16_000, context, continuation)
            assert float(resp[0][0]) == pytest.approx(direct, abs=1e-4)
    assert len({float(r["resps"][0][0][0]) for r in letters}) > 1  # the audio and prompt matter


@pytest.mark.parametrize("audio", ["original", "noise"])
def test_factual_recordings_are_cut_at_the_bridges_declared_window(
    research_bridge, factual_metadata, tmp_path, audio
):
    data = {**factual_metadata, "sample_size": 2}
    run = _run(
        research_bridge["url"], "factual_instrument_open", f"audio={audio}", data,
        tmp_path / "out", limit="",
    )  # fmt: skip
    assert run["rows"] and run["results"]["config"]["api_bridge_cuts"] == 0
    docs = [r["doc"] for r in run["rows"]]
    if audio == "noise":  # noise is not cut into windows
        assert [d["audio_window"] for d in docs] == [None] * len(docs)
        return
    # the declared window (no max_audio_seconds given): one document per recording, a
    # longer one cut there as the model would cut it, and recorded as cut
    assert len(docs) == len({d["id"] for d in docs})
    for doc in docs:
        window = doc["audio_window"]
        assert window is None or window[1] - window[0] <= RESEARCH_WINDOW_SECONDS + 1e-9
        assert doc["cut"] == (doc["recording_seconds"] > RESEARCH_WINDOW_SECONDS + 1e-6)
        assert doc["heard_seconds"] == min(doc["recording_seconds"], RESEARCH_WINDOW_SECONDS)
    assert any(doc["cut"] for doc in docs)
