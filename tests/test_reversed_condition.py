"""``audio=reversed``, the condition added as one class, on every path: ``lalm`` (a tiny real
Qwen2-Audio), ``lalm-api`` (the loopback server decodes the WAV it is sent), the factual
tasks, ``lm-eval-rul run`` end to end, and ``report`` (order, colour, gain vs original)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

MODEL = "tiny-audio"
FACTUAL = "factual_instrument_open"


def _docs(metadata: dict[str, str], fold: int = 0, n: int = 4) -> list[dict]:
    from lm_eval_rul.mcqa.tasks import load_rul_muchomusic

    docs = list(load_rul_muchomusic(fold, **metadata)["test"])
    return sorted(docs, key=lambda d: int(d["id"]))[:n]


def _requests(docs: list[dict], task: str = "rul_muchomusic_fold0") -> list:
    from lm_eval.api.instance import Instance

    from lm_eval_rul.mcqa.tasks import doc_to_choice, doc_to_text

    return [
        Instance("loglikelihood", doc, (doc_to_text(doc), f" {letter}"), i, (task, n, 1))
        for n, doc in enumerate(docs)
        for i, letter in enumerate(doc_to_choice(doc))
    ]


def _lalm(path: Path, **kwargs):
    from lm_eval_rul.models.lalm import LALM

    return LALM(pretrained=str(path), dtype="float32", device="cpu", results_cache="none", **kwargs)


def _logliks(model, requests) -> list[float]:
    return [ll for ll, _ in model.loglikelihood(requests, disable_tqdm=True)]


def test_lalm_hears_the_reversed_clip(tiny_audio_lm, audio_data):
    docs = _docs(audio_data, 0, n=8)  # 4 clips: a tone, a chord, clicks, a sweep
    requests = _requests(docs)
    reversed_ = _logliks(_lalm(tiny_audio_lm, audio="reversed"), requests)
    original = _logliks(_lalm(tiny_audio_lm), requests)
    naive = _logliks(_lalm(tiny_audio_lm, audio="reversed", prefix_cache=False), requests)
    assert reversed_ == pytest.approx(naive, abs=1e-4)  # the per-clip prefix cache holds
    assert len(reversed_) == 32
    moved: dict[str, float] = {}
    for index, (a, b) in enumerate(zip(reversed_, original, strict=True)):
        clip = docs[index // 4]["audio_ref"]
        moved[clip] = max(moved.get(clip, 0.0), abs(a - b))
    # clips with a temporal order move the scores well beyond float rounding (~1e-6); a
    # steady tone, the same forwards and backwards, barely does: what the control measures
    assert len(moved) == 4 and sum(m > 1e-4 for m in moved.values()) >= 2
    assert _lalm(tiny_audio_lm, audio="reversed").get_model_info()["audio_condition"] == "reversed"


def test_lalm_api_sends_the_reversed_waveform(tiny_audio_lm, audio_data):
    from doubles.openai_server import OpenAIAudioServer

    from lm_eval_rul.audio import AudioSpec, condition_audio
    from lm_eval_rul.models.api import LALMAPI
    from lm_eval_rul.models.api_payload import wav_bytes

    docs = _docs(audio_data, 0)
    requests = _requests(docs)
    expected = _logliks(_lalm(tiny_audio_lm, audio="reversed"), requests)
    with OpenAIAudioServer(tiny_audio_lm, served_model=MODEL) as server:
        model = LALMAPI(base_url=server.url, model=MODEL, audio="reversed", wav_subtype="FLOAT",
                        results_cache="none", retry_backoff=0)  # fmt: skip
        got = _logliks(model, requests)
        rate, limit = model.spec.sampling_rate, model.spec.max_seconds
    assert got == pytest.approx(expected, abs=1e-4)
    sent = {
        part["sha256"]
        for body in server.answered
        for part in body["messages"][0]["content"]
        if part["type"] == "audio"
    }
    backwards = set()
    for doc in docs:
        heard = condition_audio(doc, AudioSpec(rate, limit))[1]
        backwards.add(hashlib.sha256(wav_bytes(heard[::-1], rate, "FLOAT")).hexdigest())
    assert sent == backwards and len(sent) == len({d["audio_ref"] for d in docs})


def test_factual_documents_play_each_window_backwards(factual_metadata):
    from lm_eval_rul.audio import AudioSpec, condition_audio
    from lm_eval_rul.factual.tasks import load_factual

    meta = {**factual_metadata, "chunk_seconds": 2, "max_audio_seconds": 2}
    original = list(load_factual("instrument", "open", **meta)["test"])
    backwards = list(load_factual("instrument", "open", **meta, audio="reversed")["test"])
    assert [(d["id"], d["audio_window"]) for d in backwards] == [
        (d["id"], d["audio_window"]) for d in original
    ]
    assert any(d["n_chunks"] > 1 for d in backwards)  # long recordings: several windows
    spec = AudioSpec(16_000, 2.0)
    for doc in backwards[:6]:
        assert doc["condition"] == "reversed" and doc["audio_random_ref"] is None
        heard = condition_audio(doc, spec)[1]
        played = condition_audio(doc, AudioSpec(16_000, 2.0, "reversed"))[1]
        np.testing.assert_array_equal(played, heard[::-1])


def _run(model: Path, audio: str, data: dict, out: Path) -> dict:
    """One ``lm-eval-rul run`` of RUL-MuChoMusic and a factual task (windows of 2 s)."""
    from lm_eval_rul.testing.harness import read_output, run_cli

    run_cli([
        "run", "--model", "lalm", "--model_args",
        f"pretrained={model},audio={audio},dtype=float32,results_cache=none",
        "--tasks", f"rul_muchomusic,{FACTUAL}", "--metadata", json.dumps(data), "--log_samples",
        "--output_path", str(out), "--device", "cpu", "--batch_size", "8",
        "--gen_kwargs", "max_gen_toks=4",
    ])  # fmt: skip
    results, samples = read_output(out)
    rows = [row for name, task in samples.items() if "fold" in name for row in task]
    return {"results": results, "rows": rows, "factual": samples[FACTUAL]}


@pytest.fixture(scope="module")
def runs(tiny_audio_lm, audio_data, factual_metadata, tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("reversed_runs")
    data = {**audio_data, **factual_metadata, "chunk_seconds": 2}
    folders = {c: root / c for c in ("reversed", "original")}
    outputs = {c: _run(tiny_audio_lm, c, data, folder) for c, folder in folders.items()}
    return {"folders": folders, "outputs": outputs, "root": root}


def test_run_end_to_end_under_reversed(runs):
    reversed_, original = runs["outputs"]["reversed"], runs["outputs"]["original"]
    assert reversed_["results"]["config"]["audio_condition"] == "reversed"
    assert len(reversed_["rows"]) == len(original["rows"]) == 32  # 8 questions x 4 folds
    for row in reversed_["rows"]:
        own = json.loads(row["doc"]["audio_ref"])["path"]
        assert row["doc"]["audio_heard"] == f"{own}, reversed"
        assert row["doc"]["audio_replaced"] == own
    scores = {
        c: {
            (r["doc"]["fold"], r["doc"]["id"]): [float(x[0][0]) for x in r["resps"]]
            for r in out["rows"]
        }
        for c, out in runs["outputs"].items()
    }
    assert scores["reversed"].keys() == scores["original"].keys()
    moved = [
        k
        for k, lls in scores["original"].items()
        if np.abs(np.subtract(lls, scores["reversed"][k])).max() > 1e-5
    ]
    assert len(moved) >= 16  # the clips with a temporal order (a steady tone barely moves)


def test_factual_task_runs_under_reversed_in_the_same_run(runs):
    reversed_ = runs["outputs"]["reversed"]
    rows = reversed_["factual"]
    n = reversed_["results"]["n-samples"][FACTUAL]["effective"]
    assert rows and n == len(rows) == len(runs["outputs"]["original"]["factual"])
    assert any(row["doc"]["n_chunks"] > 1 for row in rows)  # long recordings: windows
    for row in rows:
        doc = row["doc"]
        assert doc["condition"] == "reversed" and doc["audio_random_ref"] is None
        start, end = doc["audio_window"]
        assert 0 <= start < end <= doc["recording_seconds"] and end - start <= 2


def test_report_orders_colours_and_compares_reversed_with_original(runs):
    from matplotlib.image import imread

    from lm_eval_rul.audio import condition_named
    from lm_eval_rul.report import ReportSettings, build_report, load_runs
    from lm_eval_rul.report.settings import condition_colour
    from lm_eval_rul.testing.harness import run_cli

    folders = runs["folders"]  # given reversed first: the report orders them
    report = build_report(load_runs(folders.values()), ReportSettings(n_resamples=199))
    data = report["benchmarks"]["rul_muchomusic"]
    assert [r["condition"] for r in data["rows"]] == ["original", "reversed"]
    (gain,) = data["perception_gain"]
    assert (gain["condition_a"], gain["condition_b"]) == ("original", "reversed")
    assert gain["coverage"]["n_shared"] == 32
    (factual,) = report["factual"]["tasks"][FACTUAL]["comparisons"]  # original - reversed
    assert factual["setting_b"] == "reversed"
    assert factual["n"] == report["factual"]["tasks"][FACTUAL]["n_items"]
    assert condition_colour("reversed") == condition_named("reversed").colour
    out = runs["root"] / "report"
    run_cli(["report", *map(str, folders.values()), "--out", str(out), "--n-resamples", "199"])
    markdown = (out / "report.md").read_text()
    assert markdown.index("| original") < markdown.index("| reversed")
    # the accuracy figure draws reversed's bar in the colour its class declares (one audio
    # model: no separate conditions figure, issue 43)
    image = imread(out / "figures" / "accuracy_rul_muchomusic.png")[..., :3]
    for name in ("original", "reversed"):
        rgb = np.array([int(condition_named(name).colour[i : i + 2], 16) for i in (1, 3, 5)])
        assert (np.abs(image * 255 - rgb).max(axis=-1) < 3).sum() > 100, name
