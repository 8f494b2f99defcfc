"""The factual protocol end to end: what a model hears of a long recording, and ``rul``
(ours, the default) beside ``paper``, in the results' config and in ``lm-eval-rul report``.

* Audio Flamingo 3 (tiny, random weights, its real transformers classes, a 600 s limit as
  the released processor) hears a 70 s recording whole, in one document;
* the tiny Qwen2-Audio hears 2 s: under ``paper`` a 9 s recording is cut to its first 2 s
  (recorded in the documents, logged, shown by the report), under ``rul`` it is heard in
  windows; the binary generation task reports the paper's F1 beside accuracy.
"""

from __future__ import annotations

import json
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from lm_eval_rul.testing.audio import make_tiny_audio_lm, synth_clip, write_clip
from lm_eval_rul.testing.factual import FIXTURE_SR, LONG_SECONDS
from lm_eval_rul.testing.harness import read_output, run_cli

AF3_LIMIT = 600.0  # seconds: Audio Flamingo 3's released max_audio_len
LONG_ID = "2186"  # the MusicNet fixture's long solo-cello recording


def run_args(model: Path, metadata: dict, out: Path, tasks: str, batch: int = 8) -> list[str]:
    return [
        "run", "--model", "lalm", "--model_args", f"pretrained={model}", "--tasks", tasks,
        "--metadata", json.dumps(metadata), "--device", "cpu", "--batch_size", str(batch),
        "--gen_kwargs", "max_gen_toks=4", "--output_path", str(out), "--log_samples",
    ]  # fmt: skip


def test_audio_flamingo_3_hears_a_70_s_recording_whole_in_one_document(factual_metadata, tmp_path):
    model = make_tiny_audio_lm(tmp_path / "af3", "audioflamingo3")
    config = model / "processor_config.json"
    settings = json.loads(config.read_text())
    settings["max_audio_len"] = AF3_LIMIT  # the tiny one keeps 8 s; the released one 600 s
    config.write_text(json.dumps(settings))
    musicnet = tmp_path / "musicnet"
    shutil.copytree(factual_metadata["musicnet_dir"], musicnet)
    wave = synth_clip("chord", seconds=70.0, sr=FIXTURE_SR, seed=3)
    write_clip(musicnet / "train_data" / f"{LONG_ID}.wav", wave, FIXTURE_SR)
    metadata = {**factual_metadata, "musicnet_dir": str(musicnet)}
    done = run_cli(run_args(model, metadata, tmp_path / "out", "factual_instrument_open", 4))
    results, samples = read_output(tmp_path / "out")
    (doc,) = [s["doc"] for s in samples["factual_instrument_open"] if s["doc"]["id"] == LONG_ID]
    assert doc["n_chunks"] == 1 and doc["audio_window"] is None  # not two 35 s windows
    assert doc["recording_seconds"] == doc["heard_seconds"] == pytest.approx(70.0)
    assert doc["cut"] is False and doc["protocol"] == "rul"
    metadata = results["configs"]["factual_instrument_open"]["metadata"]
    assert metadata["max_audio_seconds"] == AF3_LIMIT and "chunk_seconds" not in metadata
    assert "each recording whole up to the model's 600 s" in done.stderr


@pytest.fixture(scope="module")
def protocol_runs(tiny_audio_lm, factual_metadata, tmp_path_factory) -> dict[str, Path]:
    """The tiny Qwen2-Audio (2 s) under the default protocol and under ``paper``, and the
    report of both."""
    root = tmp_path_factory.mktemp("factual_protocol")
    tasks = "factual_instrument_open,factual_instrument_binary_gen"
    folders: dict[str, Path] = {}
    protocols = {"default": {}, "paper": {"protocol": "paper"}}
    with ThreadPoolExecutor(2) as pool:  # the two runs in parallel
        done = {
            name: pool.submit(
                run_cli, run_args(tiny_audio_lm, {**factual_metadata, **extra}, root / name, tasks)
            )
            for name, extra in protocols.items()
        }
        for name, future in done.items():
            folders[name] = root / name
            (root / f"{name}.log").write_text(future.result().stderr)
    folders["report"] = root / "report"
    run_cli(["report", str(folders["default"]), str(folders["paper"]), "--out",
             str(folders["report"]), "--n-resamples", "99"])  # fmt: skip
    return folders


def test_both_protocols_cut_at_the_limit_and_say_so(protocol_runs):
    long_docs = {}
    for name, protocol in (("default", "rul"), ("paper", "paper")):
        results, samples = read_output(protocol_runs[name])
        for task in ("factual_instrument_open", "factual_instrument_binary_gen"):
            assert results["configs"][task]["metadata"]["factual_protocol"] == protocol
        docs = [s["doc"] for s in samples["factual_instrument_open"]]
        long_docs[protocol] = [d for d in docs if d["id"] == LONG_ID]
        assert {d["protocol"] for d in docs} == {protocol}
    for protocol in ("rul", "paper"):  # one document: the first 2 s, as the model cuts it
        (cut,) = long_docs[protocol]
        assert cut["audio_window"] == [0.0, 2.0] and cut["cut"] is True
        heard = (cut["recording_seconds"], cut["heard_seconds"])
        assert heard == (pytest.approx(LONG_SECONDS), 2.0)
    for name in ("default", "paper"):
        log = (protocol_runs[name].parent / f"{name}.log").read_text()
        assert "are longer than the model's 2 s and are cut to their first 2 s" in log


def test_binary_generation_reports_the_papers_f1_beside_accuracy(protocol_runs):
    results, samples = read_output(protocol_runs["default"])
    row = results["results"]["factual_instrument_binary_gen"]
    for name in ("acc", "f1", "precision", "recall"):
        assert 0.0 <= row[f"{name},none"] <= 1.0, name
    assert row["f1,none"] >= row["acc,none"]  # an answer naming both can only add to F1
    record = samples["factual_instrument_binary_gen"][0]["f1"]
    assert "labels" in record and record["options"]


def test_the_report_shows_each_runs_protocol_and_what_was_cut(protocol_runs):
    report = json.loads((protocol_runs["report"] / "report.json").read_text())
    rows = report["factual"]["tasks"]["factual_instrument_open"]["rows"]
    assert sorted(row["protocol"] for row in rows) == ["paper", "rul"]
    assert sorted(row["setting"] for row in rows) == [
        "original, protocol=paper",
        "original, protocol=rul",
    ]
    paper = next(row for row in rows if row["protocol"] == "paper")
    assert paper["cut"]["items"] >= 1 and paper["cut"]["heard_seconds"] == 2.0
    text = (protocol_runs["report"] / "report.md").read_text()
    assert "| original, protocol=paper | paper |" in text
    assert "recordings cut at the model's limit (2 s heard" in text
    (binary,) = report["factual"]["studies"]["binary"]["instrument"]["rows"][:1]
    assert 0.0 <= binary["f1"] <= 1.0


def test_lalm_api_paper_protocol_sends_the_providers_default_settings(tiny_audio_lm, audio_data):
    """The paper kept the provider's default inference settings: under ``protocol=paper``
    ``lalm-api`` sends no temperature and no max_tokens; ours sends temperature 0 and the
    task's cap."""
    from doubles.openai_server import OpenAIAudioServer
    from lm_eval.api.instance import Instance

    from lm_eval_rul.mcqa.tasks import doc_to_text_gen, load_rul_muchomusic
    from lm_eval_rul.models.api import LALMAPI

    doc = list(load_rul_muchomusic(0, **audio_data)["test"])[0]
    request = Instance("generate_until", doc, (doc_to_text_gen(doc), {"max_gen_toks": 8}), 0)
    with OpenAIAudioServer(tiny_audio_lm, served_model="tiny") as server:
        for protocol in ("rul", "paper"):
            model = LALMAPI(
                base_url=server.url, model="tiny", results_cache="none", protocol=protocol
            )
            model.generate_until([request], True)
            assert model.get_model_info()["api_protocol"] == protocol
        ours, paper = server.answered
    assert (ours["temperature"], ours["max_tokens"]) == (0, 8)
    assert "temperature" not in paper and "max_tokens" not in paper
    assert paper["messages"] == ours["messages"]


@pytest.mark.parametrize(
    ("model", "model_args", "metadata", "expected"),
    [
        ("lalm", "pretrained={lm}", {"protocol": "papr"}, "protocol='papr' is not a factual"),
        (
            "lalm-api",
            "base_url=http://127.0.0.1:9/v1,model=m,max_audio_seconds=30,protocol=paper",
            {"protocol": "rul"},
            "--metadata protocol='rul' and --model_args protocol='paper' differ",
        ),
        ("lalm-api", "base_url=http://127.0.0.1:9/v1,model=m,protocol=strict", {}, "protocol="),
    ],
)
def test_a_wrong_protocol_is_one_clear_error_line(
    tiny_audio_lm, factual_metadata, capsys, tmp_path, model, model_args, metadata, expected
):
    from lm_eval_rul.testing.harness import cli_error_line

    argv = [
        "run", "--model", model, "--model_args", model_args.format(lm=tiny_audio_lm),
        "--tasks", "factual_mood_open", "--metadata", json.dumps({**factual_metadata, **metadata}),
        "--output_path", str(tmp_path),
    ]  # fmt: skip
    line = cli_error_line(argv, capsys)
    assert expected in line and ("rul" in line and "paper" in line)


def test_metadata_protocol_reaches_lalm_api_and_its_requests(
    tiny_audio_lm, factual_metadata, tmp_path, monkeypatch
):
    """``--metadata protocol=paper`` alone sets both sides of a served run: the tasks
    (recorded in the results' configs) and ``lalm-api``'s requests (no temperature, no
    max_tokens)."""
    from doubles.openai_server import OpenAIAudioServer

    from lm_eval_rul.cli import main

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    metadata = {**factual_metadata, "sample_size": 2, "protocol": "paper"}
    with OpenAIAudioServer(tiny_audio_lm, served_model="tiny") as server:
        main([
            "run", "--model", "lalm-api", "--model_args",
            f"base_url={server.url},model=tiny,max_audio_seconds=2,results_cache=none",
            "--tasks", "factual_mood_open", "--metadata", json.dumps(metadata),
            "--output_path", str(tmp_path / "out"), "--log_samples",
        ])  # fmt: skip
        bodies = list(server.answered)
    assert bodies and not any("temperature" in b or "max_tokens" in b for b in bodies)
    results, samples = read_output(tmp_path / "out")
    assert results["configs"]["factual_mood_open"]["metadata"]["protocol"] == "paper"
    assert results["config"]["model_args"]["protocol"] == "paper"  # handed to lalm-api
    assert {s["doc"]["protocol"] for s in samples["factual_mood_open"]} == {"paper"}


def test_the_factual_run_hooks_follow_the_factual_folder_not_a_name_prefix():
    """``run`` gives a task the factual run's hooks (audio limit, windows, audio check) when
    its YAML is in the factual benchmark's folder (its catalogue descriptor), not when its
    name starts with ``factual``; a glob counts when the harness would expand it to one."""
    from lm_eval_rul.cli._factual_run import uses_factual_tasks

    assert uses_factual_tasks("factual_mood_open")
    assert uses_factual_tasks("rul_muchomusic, factual")  # a group of the folder
    assert uses_factual_tasks("factual_genre_*")  # the harness expands it to factual tasks
    assert not uses_factual_tasks("factual_mine")  # looks factual, is no task of the folder
    assert not uses_factual_tasks("rul_muchomusic,mmau_music")
    assert not uses_factual_tasks("")
