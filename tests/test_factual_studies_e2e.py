"""End to end: the robustness studies (``factual_robustness``: phrasings, binary choice and
true/false, both scorings) through ``lm-eval-rul run`` with a tiny audio LM under
``audio=original`` and ``audio=random``; ``lm-eval-rul reparse`` of both runs with an LLM
parser on a loopback server (twice: the second pass is served by the cache); then
``lm-eval-rul report`` with ``--parsed``."""

from __future__ import annotations

import json
import math
import re
from concurrent.futures import ThreadPoolExecutor

import pytest
from doubles.chat import ChatServer
from matplotlib.image import imread

from lm_eval_rul.factual.prompts import BINARY_TASKS, PHRASINGS
from lm_eval_rul.factual.reading.binary import binary_figures, binary_items
from lm_eval_rul.factual.reading.truefalse import (
    TRUEFALSE_FIGURES,
    label_answers,
    truefalse_figures,
)
from lm_eval_rul.testing.audio import make_tiny_audio_lm
from lm_eval_rul.testing.harness import read_output, run_cli

LABEL_OF = {"instruments": "piano", "composers": "Bach", "genres": "Rock"}


def llm_reply(body) -> str:
    """A stand-in LLM parser: names one label for some answers, none for others; its first
    reply to every third answer is prose (re-asked once)."""
    prompt = body["messages"][0]["content"]
    noun = prompt.split("Extract the ", 1)[1].split(" mentioned", 1)[0]
    answer = prompt.split("Response: ", 1)[1].rsplit("\n\n", 1)[0]
    if len(answer) % 3 == 0 and len(body["messages"]) == 1:
        return "The response mentions one of them, as far as I can tell."
    return LABEL_OF[noun] if len(answer) % 2 else ""


@pytest.fixture(scope="module")
def studies(factual_metadata, tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("studies_e2e")
    model = make_tiny_audio_lm(root / "qwen2_audio", "qwen2_audio")
    runs = {c: root / c for c in ("original", "random")}
    windows = {**factual_metadata, "chunk_seconds": 2}  # long recordings asked window by window

    def run(condition):
        return run_cli([
            "run", "--model", "lalm", "--model_args", f"pretrained={model},audio={condition}",
            "--tasks", "factual_robustness", "--metadata", json.dumps(windows),
            "--device", "cpu", "--batch_size", "8", "--gen_kwargs", "max_gen_toks=6",
            "--output_path", str(runs[condition]), "--log_samples",
        ])  # fmt: skip

    with ThreadPoolExecutor(2) as pool:
        stdout = {c: f.result().stdout for c, f in {c: pool.submit(run, c) for c in runs}.items()}
    parsed, cache = root / "parsed", root / "parser.sqlite"
    with ChatServer(llm_reply) as server:
        reparse = [
            "reparse", str(runs["original"]), str(runs["random"]), "--out", str(parsed),
            "--parser_model", "local-chat-completions", "--no_progress", "--cache", str(cache),
            "--parser_args", f"base_url={server.url},model=stand-in,max_retries=1",
        ]  # fmt: skip
        first = run_cli(reparse).stdout
        requests_first = len(server.requests)
        second = run_cli(reparse).stdout
        requests_second = len(server.requests) - requests_first
    report = root / "report"
    run_cli(["report", str(runs["original"]), str(runs["random"]), "--parsed",
             f"stand-in={parsed}", "--out", str(report), "--n-resamples", "999"])  # fmt: skip
    return {
        **runs, "stdout": stdout["original"], "parsed": parsed, "report": report,
        "reparse": (first, second), "requests": (requests_first, requests_second),
    }  # fmt: skip


def test_every_study_task_runs_and_prints_its_metrics(studies):
    results, samples = read_output(studies["original"])
    for task in BINARY_TASKS:
        rows = samples[f"factual_{task}_binary"]
        items = binary_items(row["acc"] for row in rows)
        assert results["results"][f"factual_{task}_binary"]["acc,none"] == pytest.approx(
            binary_figures(items)["acc"]
        )
        # exactly half gold-first (up to one item), and the log-likelihood choice is the
        # likelier letter
        assert abs(2 * sum(it.gold_index == 0 for it in items) - len(items)) <= 1
        for row in rows:
            (a,), (b,) = row["resps"]
            assert row["acc"]["choice"] == (0 if float(a[0]) >= float(b[0]) else 1)
        assert "parse_failure,none" in results["results"][f"factual_{task}_binary_gen"]
    for name, rows in samples.items():
        if "truefalse" not in name:
            continue
        figures = truefalse_figures(label_answers(row["base_rate"] for row in rows))
        printed = results["results"][name]
        for metric in TRUEFALSE_FIGURES:
            if f"{metric},none" in printed and not math.isnan(figures[metric]):
                assert printed[f"{metric},none"] == pytest.approx(figures[metric]), (name, metric)
    # a long recording's labels are asked window by window
    long = [r for r in samples["factual_instrument_truefalse"] if r["doc"]["id"] == "2186"]
    assert len(long) == 5 * 11 and {r["doc"]["n_chunks"] for r in long} == {5}
    assert "true/false per label (generated)" in studies["stdout"]
    assert {f"factual_{t}_{p}" for t in PHRASINGS for p in PHRASINGS[t]} <= set(samples)


def test_reparse_writes_a_harness_shaped_copy_and_reuses_the_cache(studies):
    first, second = studies["reparse"]
    assert "0 from the cache" in first
    assert int(re.search(r"(\d+) re-asked", first).group(1)) > 0  # prose replies were re-asked
    assert studies["requests"][0] > 0 and studies["requests"][1] == 0
    assert " 0 requests" in second and "0 still malformed" in second
    copies = sorted(studies["parsed"].rglob("results_*.json"))
    assert len(copies) == 2
    results = json.loads(copies[0].read_text())
    assert results["config"]["factual_parser"]["model"] == "stand-in"
    assert set(results["results"]) == {
        f"factual_{t}_{v}" for t in PHRASINGS for v in PHRASINGS[t]
    }  # label-set tasks only; the studies and groups are left out
    sample_file = next(copies[0].parent.glob("samples_factual_composer_open_*.jsonl"))
    row = json.loads(sample_file.read_text().splitlines()[0])
    assert row["doc"]["parsed"]["parser"] == "stand-in"
    assert row["f1"]["labels"] in ([], ["Bach"]) and row["f1"]["parse_status"] == "ok"


def test_report_renders_the_four_study_tables_with_figures(studies):
    report = json.loads((studies["report"] / "report.json").read_text())
    found = report["factual"]["studies"]
    assert set(found["phrasings"]) == {"instrument", "composer", "genre"}
    for data in found["phrasings"].values():
        assert data["phrasings"] == ["open_casual", "open", "open_formal", "list"]
        assert {m["setting"] for m in data["models"]} == {"original", "random"}
        for entry in data["models"]:
            f1 = [f["f1"] for f in entry["figures"].values()]
            assert entry["spread"] == pytest.approx(max(f1) - min(f1))
    assert set(found["binary"]) == set(BINARY_TASKS)
    for data in found["binary"].values():
        assert {(r["setting"], r["scoring"]) for r in data["rows"]} == {
            (c, s) for c in ("original", "random") for s in ("generate", "loglikelihood")
        }
        for r in data["rows"]:  # exactly half gold-first, up to one item
            assert abs(2 * r["gold_first_share"] * r["n_items"] - r["n_items"]) <= 1 + 1e-9
    assert len(found["truefalse"]) == 6
    (pair,) = found["parsers"]
    assert (pair["a"], pair["b"]) == ("lexicon", "stand-in")
    assert len(pair["rows"]) == 12 * 2  # 12 label-set tasks x 2 conditions
    assert all(0 <= r["mean_jaccard"] <= 1 for r in pair["rows"])
    text = (studies["report"] / "report.md").read_text()
    for heading in (
        "### Wording sensitivity (four phrasings)",
        '### Binary choice ("Between A and B, ...',
        "### True/false per label (whole vocabulary)",
        "**lexicon (a) vs stand-in (b)**",
    ):
        assert heading in text
    assert len(found["figures"]) == 4
    for path in found["figures"].values():
        assert path in text and imread(studies["report"] / path).shape[1] >= 500
