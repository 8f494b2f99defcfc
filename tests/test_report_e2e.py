"""End to end: real harness runs of a tiny text LM and a tiny audio LM (`lalm`, under
`audio=original` and `audio=noise`), then `lm-eval-rul report` on their output folders."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from matplotlib.image import imread

from lm_eval_rul.report import ReportSettings, RunReadError, build_report, load_runs, pearson
from lm_eval_rul.testing.audio import make_tiny_audio_lm, write_audio_dir
from lm_eval_rul.testing.fixtures import fixture_rows
from lm_eval_rul.testing.harness import cli_error_line as fail
from lm_eval_rul.testing.harness import run_cli, text_run_args

NOISE_LIMIT = 6  # the noise run covers fewer questions: comparisons use the intersection


def cli(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return run_cli(args, check=check)


def harness(model: str, model_args: str, metadata: dict, out: Path, *extra: str) -> None:
    cli(
        "run",
        "--model",
        model,
        "--model_args",
        model_args,
        "--tasks",
        "rul_muchomusic,muchomusic",
        "--metadata",
        json.dumps(metadata),
        "--device",
        "cpu",
        "--batch_size",
        "8",
        "--output_path",
        str(out),
        "--log_samples",
        *extra,
    )


@pytest.fixture(scope="module")
def runs(tiny_lm, data_dir, tmp_path_factory) -> dict[str, Path]:
    """Output folders of three harness runs (made in parallel) and one report."""
    root = tmp_path_factory.mktemp("report_e2e")
    audio_lm = make_tiny_audio_lm(root / "tiny_qwen2_audio", "qwen2_audio")
    write_audio_dir(root / "audio", list(fixture_rows(8)))
    metadata = {
        "rul_data_path": str(data_dir / "rul.json"),
        "muchomusic_data_path": str(data_dir / "muchomusic.csv"),
    }
    audio_metadata = {**metadata, "audio_dir": str(root / "audio")}
    jobs = {
        "text": ("hf", f"pretrained={tiny_lm},dtype=float32", metadata, ()),
        "original": ("lalm", f"pretrained={audio_lm},audio=original", audio_metadata, ()),
        "noise": (
            "lalm",
            f"pretrained={audio_lm},audio=noise,noise_seconds=2",
            audio_metadata,
            ("--limit", str(NOISE_LIMIT)),
        ),
    }
    folders = {name: root / name for name in jobs}
    with ThreadPoolExecutor(len(jobs)) as pool:
        futures = [
            pool.submit(harness, model, args, meta, folders[name], *extra)
            for name, (model, args, meta, extra) in jobs.items()
        ]
        for future in futures:
            future.result()
    folders["report"] = root / "report"
    done = cli(
        "report",
        *(str(folders[n]) for n in jobs),
        "--out",
        str(folders["report"]),
        "--n-resamples",
        "999",
        "--seed",
        "7",
    )
    assert "wrote" in done.stdout
    folders["audio_lm"] = audio_lm
    return folders


def report_json(runs) -> dict:
    return json.loads((runs["report"] / "report.json").read_text())


def printed(folder: Path) -> dict:
    (path,) = folder.rglob("results_*.json")
    return json.loads(path.read_text())


def test_one_row_per_run_and_condition(runs, tiny_lm):
    report = report_json(runs)
    assert [(r["model"], r["condition"]) for r in report["runs"]] == [
        (tiny_lm.name, "text"),
        (runs["audio_lm"].name, "original"),
        (runs["audio_lm"].name, "noise"),
    ]
    for benchmark in ("rul_muchomusic", "muchomusic"):
        data = report["benchmarks"][benchmark]
        assert [r["condition"] for r in data["rows"]] == ["text", "original", "noise"]
        assert data["chance"] == 0.25


def test_tables_hold_the_accuracies_the_harness_printed(runs):
    report = report_json(runs)
    markdown = (runs["report"] / "report.md").read_text()
    for row in report["benchmarks"]["rul_muchomusic"]["rows"]:
        harness_out = printed(runs[row["condition"]])
        for fold, cell in row["folds"].items():
            assert cell["acc"] == harness_out["results"][f"rul_muchomusic_fold{fold}"]["acc,none"]
        group = harness_out["groups"]["rul_muchomusic"]
        assert row["accuracy"]["estimate"] == pytest.approx(group["acc,none"], abs=1e-12)
        assert row["majority_vote"] == pytest.approx(group["majority_acc,none"], abs=1e-12)
        assert row["plurality_vote_release"] == pytest.approx(
            group["plurality_acc_release,none"], abs=1e-12
        )
        assert row["mean_pi"] == pytest.approx(group["perceptual_index,none"], abs=1e-12)
        low, high = row["accuracy"]["low"], row["accuracy"]["high"]
        assert 0 <= low <= row["accuracy"]["estimate"] <= high <= 1
        assert f"{row['accuracy']['estimate']:.3f} [{low:.3f}, {high:.3f}]" in markdown
    for row in report["benchmarks"]["muchomusic"]["rows"]:
        harness_out = printed(runs[row["condition"]])["results"]["muchomusic"]
        assert row["accuracy"]["estimate"] == pytest.approx(harness_out["acc,none"], abs=1e-12)
        assert row["n_questions"] == (NOISE_LIMIT if row["condition"] == "noise" else 8)
        assert row["majority_vote"] is None


def test_accuracy_by_muchomusic_category(runs, data_dir):
    from lm_eval_rul.questions import read_muchomusic_categories

    report = report_json(runs)
    csv_path = data_dir / "muchomusic.csv"
    assert report["settings"]["muchomusic_csv"] == str(csv_path)  # from the runs' metadata
    categories = read_muchomusic_categories(csv_path)
    loaded = load_runs([runs[name] for name in ("text", "original", "noise")])
    markdown = (runs["report"] / "report.md").read_text()
    for benchmark in ("rul_muchomusic", "muchomusic"):  # RUL rows join the CSV by id
        breakdowns = report["benchmarks"][benchmark]["breakdowns"]
        assert list(breakdowns) == ["music_knowledge", "music_reasoning", "genre", "source"]
        for run in loaded:
            samples = run.samples_of(benchmark)
            checks = {
                ("genre", "Folk, World, & Country"): lambda c: c.genre == "Folk, World, & Country",
                ("source", "MusicCaps"): lambda c: c.source == "MusicCaps",
                ("music_knowledge", "Instrumentation"): lambda c: "Instrumentation"
                in c.music_knowledge,
                ("music_knowledge", "any"): lambda c: bool(c.music_knowledge),
                ("music_reasoning", "Mood and expression"): lambda c: "Mood and expression"
                in c.music_reasoning,
            }
            for (dimension, label), member in checks.items():
                chosen = [s for s in samples if member(categories[s.id])]
                cell = breakdowns[dimension][label][run.label]
                assert cell["acc"] == pytest.approx(np.mean([s.correct for s in chosen]))
                assert cell["n_samples"] == len(chosen)
                assert cell["n_questions"] == len({s.id for s in chosen})
        # a question in two knowledge categories counts in both
        per_label = breakdowns["music_knowledge"]
        text = next(run.label for run in loaded if run.is_text)  # all 8 questions
        counted = sum(cells[text]["n_questions"] for label, cells in per_label.items()
                      if label != "any")  # fmt: skip
        assert counted > per_label["any"][text]["n_questions"] == 6
    assert "| knowledge category |" in markdown and "| source dataset |" in markdown
    assert "| Song Describer (sdd) |" in markdown


def test_category_csv_given_explicitly_or_missing(runs, data_dir, tmp_path):
    loaded = load_runs([runs["text"]])
    settings = ReportSettings(n_resamples=99, muchomusic_csv=str(data_dir / "muchomusic.csv"))
    report = build_report(loaded, settings)
    assert report["benchmarks"]["muchomusic"]["breakdowns"]["genre"]
    with pytest.raises(RunReadError, match="--muchomusic-csv .*no such file"):
        build_report(loaded, ReportSettings(muchomusic_csv=str(tmp_path / "nope.csv")))


def test_figures_exist_and_open_as_png(runs):
    report = report_json(runs)
    markdown = (runs["report"] / "report.md").read_text()
    paths = [f for b in report["benchmarks"].values() for f in b["figures"].values()]
    paths.append(report["pi_distributions"]["figure"])
    expected = {
        "figures/accuracy_rul_muchomusic.png",
        "figures/perception_gain_rul_muchomusic.png",  # original − noise, with its interval
        "figures/pi_vs_accuracy_rul_muchomusic.png",
        "figures/accuracy_muchomusic.png",
        "figures/perception_gain_muchomusic.png",
        "figures/pi_histogram.png",
    }
    assert expected <= set(paths)
    # one audio model: its conditions are the accuracy figure's bars, not a second figure
    assert not any(p.startswith("figures/conditions_") for p in paths)
    for relative in paths:
        image = imread(runs["report"] / relative)
        assert image.ndim == 3 and image.shape[0] > 200 and image.shape[1] > 300
        assert image.std() > 0.01  # not a blank canvas
        assert f"]({relative})" in markdown


def shared_scores(folder_a: Path, folder_b: Path, benchmark: str) -> tuple[list, list]:
    def by_key(folder):
        (run,) = load_runs([folder])
        return {s.key: s.correct for s in run.samples_of(benchmark)}

    a, b = by_key(folder_a), by_key(folder_b)
    keys = sorted(a.keys() & b.keys())
    return [a[k] for k in keys], [b[k] for k in keys]


def test_perception_gain_is_paired_on_the_shared_questions(runs):
    report = report_json(runs)
    (gain,) = report["benchmarks"]["rul_muchomusic"]["perception_gain"]
    assert (gain["condition_a"], gain["condition_b"]) == ("original", "noise")
    coverage = gain["coverage"]
    assert coverage == {
        **coverage,
        "n_shared": 4 * NOISE_LIMIT,
        "only_in_a": 4 * (8 - NOISE_LIMIT),
        "only_in_b": 0,
    }
    a, b = shared_scores(runs["original"], runs["noise"], "rul_muchomusic")
    assert gain["difference"]["estimate"] == pytest.approx(np.mean(a) - np.mean(b))
    assert gain["flagged"] == (gain["difference"]["low"] <= 0 <= gain["difference"]["high"])
    assert 0 <= gain["wilcoxon_p"] <= 1 and gain["n_questions"] == NOISE_LIMIT
    notes = "\n".join(report["notes"])
    assert f"compared on the {4 * NOISE_LIMIT} (question, fold) pairs both have" in notes
    assert f"left out: {4 * (8 - NOISE_LIMIT)} only in" in notes
    assert "[[" not in notes and "['" not in notes  # written for people, no Python reprs


def test_leakage_against_the_named_text_backbone(runs, tiny_lm):
    loaded = load_runs([runs["text"], runs["noise"]])
    (noise,) = [r for r in loaded if r.condition == "noise"]
    noise.condition = "none"  # the noise run stands in for a no-audio run here
    settings = ReportSettings(text_backbone=tiny_lm.name, n_resamples=500)
    report = build_report(loaded, settings)
    (leak,) = report["benchmarks"]["rul_muchomusic"]["leakage"]
    none, text = shared_scores(runs["noise"], runs["text"], "rul_muchomusic")
    assert leak["leakage"]["estimate"] == pytest.approx(max(0.0, np.mean(none) - np.mean(text)))
    assert leak["difference"]["estimate"] == pytest.approx(np.mean(none) - np.mean(text))
    assert leak["flagged"] == (leak["leakage"]["low"] <= 0)
    with pytest.raises(RunReadError, match=rf"matches no text-only run.*{tiny_lm.name}"):
        build_report(loaded, ReportSettings(text_backbone="no-such-model", n_resamples=99))


def test_same_seed_same_numbers(runs):
    loaded = load_runs([runs["text"], runs["original"], runs["noise"]])

    def intervals(seed):
        report = build_report(loaded, ReportSettings(seed=seed, n_resamples=300))
        rows = report["benchmarks"]["rul_muchomusic"]["rows"]
        gains = report["benchmarks"]["rul_muchomusic"]["perception_gain"]
        return [r["accuracy"] for r in rows] + [g["difference"] for g in gains]

    assert intervals(1) == intervals(1)
    assert intervals(1) != intervals(2)


def test_pi_files_drive_the_correlation_and_histograms(runs, tmp_path):
    rows = fixture_rows(8)
    pi_rul = tmp_path / "pi_rul.jsonl"
    pi_mm = tmp_path / "pi_mm.jsonl"
    pi_rul.write_text("".join(json.dumps({"id": q, "pi": r["PI"]}) + "\n" for q, r in rows.items()))
    pi_mm.write_text(
        "".join(json.dumps({"id": q, "pi": 0.05 * i}) + "\n" for i, q in enumerate(rows))
    )
    out = tmp_path / "report"
    cli(
        "report",
        str(runs["text"]),
        str(runs["original"]),
        "--out",
        str(out),
        "--pi",
        f"rul_muchomusic={pi_rul}",
        "--pi",
        f"muchomusic={pi_mm}",
        "--n-resamples",
        "200",
    )
    report = json.loads((out / "report.json").read_text())
    correlations = report["benchmarks"]["muchomusic"]["correlations"]
    assert [c["group"] for c in correlations] == ["text-only", "audio (original)"]
    (text_run,) = load_runs([runs["text"]])
    per_question = {s.id: s.correct for s in text_run.samples_of("muchomusic")}
    ids = sorted(per_question, key=int)
    expected = pearson([0.05 * list(rows).index(q) for q in ids], [per_question[q] for q in ids])
    text = correlations[0]
    assert text["pi_source"] == f"--pi muchomusic={pi_mm}" and text["n"] == 8
    if math.isnan(expected.r):
        assert text["r"] is None
    else:
        assert (text["r"], text["low"], text["high"], text["pvalue"]) == pytest.approx(
            (expected.r, expected.low, expected.high, expected.pvalue)
        )
    summary = report["pi_distributions"]["summary"]
    assert summary["rul_muchomusic"]["mean"] == pytest.approx(
        np.mean([r["PI"] for r in rows.values()])
    )
    assert summary["muchomusic"]["n"] == 8
    # each question against its own chance level: 4 options in the logged documents
    assert summary["rul_muchomusic"]["n_without_chance"] == 0
    assert summary["rul_muchomusic"]["share_above_chance"] == pytest.approx(
        np.mean([r["PI"] > 0.75 for r in rows.values()])
    )
    assert imread(out / report["pi_distributions"]["figure"]).shape[0] > 200


def test_by_track_without_tracks_is_a_clear_error(runs, tmp_path):
    done = cli(
        "report", str(runs["text"]), "--out", str(tmp_path / "r"), "--by", "track", check=False
    )
    assert done.returncode == 2
    assert "--by track" in done.stderr and "muchomusic_csv" in done.stderr


def test_a_folder_without_results_is_a_clear_error(tmp_path):
    done = cli("report", str(tmp_path), "--out", str(tmp_path / "r"), check=False)
    assert done.returncode == 2 and "no results_*.json under" in done.stderr


def test_bad_settings_exit_2_with_the_option_named(tmp_path):
    done = cli(
        "report", str(tmp_path), "--out", str(tmp_path / "r"), "--confidence", "1.5", check=False
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "ReportSettingsError: --confidence 1.5 is not a level in (0, 1)" in done.stderr


@pytest.fixture(scope="module")
def same_named_runs(tiny_lm, data_dir, tmp_path_factory) -> dict[str, Path]:
    """Text runs of three checkpoints all named ``checkpoint-1000``: ``/…/a/checkpoint-1000``,
    ``/…/b/checkpoint-1000`` and ``../a/checkpoint-1000`` (a relative path)."""
    from lm_eval_rul.cli import main

    root = tmp_path_factory.mktemp("same_named")
    checkpoint = root / "a" / "checkpoint-1000"
    shutil.copytree(tiny_lm, checkpoint)
    main([*text_run_args(checkpoint, data_dir, root / "runs_a", "muchomusic"), "--log_samples"])
    folders = {"a": root / "runs_a"}
    for name, given in (
        ("b", str(root / "b" / "checkpoint-1000")),
        ("rel", "../a/checkpoint-1000"),
    ):
        folders[name] = root / f"runs_{name}"
        shutil.copytree(folders["a"], folders[name])
        for results in folders[name].rglob("results_*.json"):
            results.write_text(results.read_text().replace(str(checkpoint), given))
    return folders


def test_report_names_same_named_checkpoints_apart(same_named_runs, tmp_path):
    from lm_eval_rul.report.runs import load_runs

    runs = load_runs(list(same_named_runs.values()))
    names = {run.model for run in runs}
    root = same_named_runs["a"].parent
    assert names == {"../a/checkpoint-1000", f"{root.name}/a/checkpoint-1000", "b/checkpoint-1000"}


def test_ambiguous_text_backbone_is_one_line_listing_the_candidates(same_named_runs, capsys):
    folders = [str(f) for f in same_named_runs.values()]
    out = same_named_runs["a"].parent / "report"
    line = fail(["report", *folders, "--out", out, "--text-backbone", "checkpoint-1000"], capsys)
    assert "AmbiguousModelError: --text-backbone 'checkpoint-1000' matches 3 models: " in line
    assert "b/checkpoint-1000 (" in line and "../a/checkpoint-1000 (../a/checkpoint-1000)" in line
    from lm_eval_rul.cli import main

    main(["report", *folders, "--out", str(out), "--text-backbone", "b/checkpoint-1000"])
    report = json.loads((out / "report.json").read_text())
    assert report["settings"]["text_backbone"].startswith("b/checkpoint-1000")
