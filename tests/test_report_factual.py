"""The factual section of the report on runs built by hand: figures, baselines, and the
correct-vs-random comparison that separates listening from the label prior."""

from __future__ import annotations

from pathlib import Path

import pytest
from matplotlib.image import imread

from lm_eval_rul.factual.baselines import frequency_baseline, majority_baseline
from lm_eval_rul.report import ReportSettings, build_report, write_report
from lm_eval_rul.report.factual.runs import FactualWindow
from lm_eval_rul.report.runs import Run, TaskResult

TIMESIGS = ["4/4"] * 24 + ["3/4"] * 4 + ["6/8"] * 4  # the prior: 4/4


def run(condition: str, answers: dict[str, list[list[str]]], golds: dict[str, str]) -> Run:
    """One model's run of factual_timesig_open: item -> labels of each of its windows."""
    windows = []
    for item, chunks in answers.items():
        for index, labels in enumerate(chunks):
            record = {
                "id": item,
                "task": "timesig",
                "chunk": index,
                "n_chunks": len(chunks),
                "rule": "union",
                "labels": labels,
                "gold": [golds[item]],
            }
            windows.append(
                FactualWindow(item, "timesig", "open", index, record, "", condition, True)
            )
    result = TaskResult(
        "factual_timesig_open", "factual_timesig_open", None, "generate_until", {},
        len(windows), [], Path("s.jsonl"), Path("r.json"), windows,
    )  # fmt: skip
    model = Run("alm", "alm", "lalm", condition, {}, tasks={result.task: result})
    return model


@pytest.fixture(scope="module")
def golds() -> dict[str, str]:
    return {f"OCR{i:05d}": label for i, label in enumerate(TIMESIGS)}


def settings() -> ReportSettings:
    return ReportSettings(n_resamples=999)


def test_a_model_that_listens_beats_its_random_run(golds, tmp_path):
    # with the real clip the model names the right meter (two windows, the second says
    # nothing); with a random clip it answers the prior
    listening = run("original", {k: [[g], []] for k, g in golds.items()}, golds)
    prior = run("random", {k: [["4/4"]] for k in golds}, golds)
    report = build_report([listening, prior], settings())
    data = report["factual"]["tasks"]["factual_timesig_open"]
    assert data["title"] == "Time signature (OverClocked ReMix), open prompt"
    rows = {row["condition"]: row for row in data["rows"]}
    assert rows["original"]["node"]["f1"] == 1.0 and rows["original"]["n_windows"] == 64
    assert rows["random"]["node"]["f1"] == pytest.approx(24 / 32)
    # per label: 4/4 has 24 hits and 8 false alarms, 3/4 and 6/8 score 0
    assert rows["random"]["node"]["macro_f1"] == pytest.approx((48 / 56 + 0 + 0) / 3)
    (comparison,) = data["comparisons"]
    assert comparison["difference"]["estimate"] == pytest.approx(8 / 32)
    assert not comparison["flagged"] and comparison["pvalue"] < 0.01
    # baselines from the gold sets alone
    gold_sets = [[g] for g in golds.values()]
    assert data["baselines"]["node"]["majority_label"] == "4/4"
    assert data["baselines"]["node"]["majority"]["f1"] == majority_baseline(gold_sets).f1
    assert data["baselines"]["node"]["frequency"]["f1"] == pytest.approx(
        frequency_baseline(gold_sets).f1
    )
    # the prior-only run scores exactly the majority baseline
    assert rows["random"]["node"]["f1"] == data["baselines"]["node"]["majority"]["f1"]
    paths = write_report(report, tmp_path)
    text = paths["markdown"].read_text()
    assert "### Time signature (OverClocked ReMix), open prompt" in text
    assert "| alm | original − random | 1.000 | 0.750 | +0.250 [" in text
    assert "*majority label (4/4)*" in text and "not distinguishable" not in text
    figure = report["factual"]["figures"]["alm"]
    assert imread(tmp_path / figure).shape[0] > 100 and f"]({figure})" in text


def test_a_model_answering_the_prior_is_flagged(golds):
    prior = {k: [["4/4"]] for k in golds}
    report = build_report([run("original", prior, golds), run("random", prior, golds)], settings())
    (comparison,) = report["factual"]["tasks"]["factual_timesig_open"]["comparisons"]
    assert comparison["flagged"] and comparison["difference"]["estimate"] == 0.0
    assert comparison["pvalue"] == 1.0


def test_runs_on_different_items_are_compared_on_the_shared_ones(golds):
    listening = run("original", {k: [[g]] for k, g in golds.items()}, golds)
    some = dict(list(golds.items())[:10])
    report = build_report([listening, run("random", {k: [["4/4"]] for k in some}, golds)])
    (comparison,) = report["factual"]["tasks"]["factual_timesig_open"]["comparisons"]
    assert comparison["n"] == 10
    assert any("compared on the 10 shared items; 22 items" in n for n in report["notes"])


def test_a_factual_only_report_has_no_category_note_and_counts_one_run(golds, tmp_path):
    report = build_report([run("original", {k: [["4/4"]] for k in golds}, golds)], settings())
    assert not any("category breakdowns" in note for note in report["notes"])
    text = write_report(report, tmp_path)["markdown"].read_text()
    assert "\n1 run; " in text and "categor" not in text
