"""What the report and diagnose outputs say: counts, sources, figure labels, zero bars."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from lm_eval_rul.diagnose import figures as diagnose_figures
from lm_eval_rul.report import (
    ReportSettings,
    build_report,
    load_runs,
    plots,
    read_pi_file,
    write_report,
)
from lm_eval_rul.report.factual import plots as factual_plots
from lm_eval_rul.report.factual import studies_plots as factual_studies_plots
from lm_eval_rul.report.factual.studies import PHRASING_TITLES
from lm_eval_rul.testing.harness import run_cli, text_run_args


def keep_figures(monkeypatch, module) -> list:
    """Figures ``module`` draws, kept open instead of written (their labels are read)."""
    drawn = []

    def keep(fig, path):
        drawn.append(fig)
        return Path(path)

    monkeypatch.setattr(module, "save_figure", keep)
    return drawn


@pytest.fixture(scope="module")
def logged(tiny_lm, data_dir, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wording") / "run"
    run_cli(text_run_args(tiny_lm, data_dir, out, "rul_muchomusic", "--log_samples"))
    return out


def test_one_run_is_one_run_and_the_pi_source_reads(logged, tmp_path):
    (run,) = load_runs([logged])
    ids = sorted({s.id for s in run.samples_of("rul_muchomusic")})
    pi_path = tmp_path / "pi.jsonl"
    pi_path.write_text(
        "".join(json.dumps({"id": q, "pi": 0.5, "chance": 0.75}) + "\n" for q in ids)
    )
    settings = ReportSettings(n_resamples=50, pi_files={"rul_muchomusic": read_pi_file(pi_path)})
    text = write_report(build_report([run], settings), tmp_path / "r")["markdown"].read_text()
    assert "\n1 run; 95% bootstrap" in text and "1 runs" not in text
    assert "PI values from the --pi files." in text and "From from" not in text
    text = write_report(build_report([run], ReportSettings(n_resamples=50)), tmp_path / "s")[
        "markdown"
    ].read_text()
    assert "PI values logged by the text-only run of" in text


def test_close_series_are_dodged_under_a_plain_title(monkeypatch, tmp_path):
    # issue 43: the title is plain (it said "shifted sideways by 3.6e-05 PI ..."); the
    # series are still dodged, by a tiny but non-zero shift
    drawn = keep_figures(monkeypatch, plots)
    pi = [0.50, 0.501, 0.502, 0.503]  # a narrow PI range: the shift is tiny but not 0
    plots.pi_accuracy_scatter(
        tmp_path / "s.png",
        {"text-only": (pi, [0, 1, 0, 1]), "audio (original)": (pi, [1, 0, 1, 0])},
    )
    ax = drawn[0].axes[0]
    assert ax.get_title() == "PI vs accuracy"
    first, second = (c.get_offsets()[:, 0] for c in ax.collections[:2])
    shift = second - first
    assert np.allclose(shift, shift[0]) and 0 < shift[0] < 1e-4


def test_the_diagnose_scatter_says_what_its_axes_measure(monkeypatch, tmp_path):
    drawn = keep_figures(monkeypatch, diagnose_figures)
    diagnose_figures.similarity_scatter(
        tmp_path / "s.png",
        {"rul": ([0.1, 0.9, 0.97], [0.9, 0.99, 0.995])},
        axis_labels=("T5 (text) cosine", "CLAP text (music) cosine"),
        thresholds=(0.95, 0.99),
    )
    (ax,) = drawn[0].axes
    assert ax.get_xlabel() == "T5 (text) cosine similarity to the correct answer"
    assert ax.get_ylabel() == "CLAP text (music) cosine\nsimilarity to the correct answer"
    assert ax.get_title() == "rul (3 distractors)"
    assert "one distractor" in drawn[0]._suptitle.get_text()


def test_zero_bars_are_marked_in_every_factual_figure(monkeypatch, tmp_path):
    drawn = keep_figures(monkeypatch, factual_plots)
    factual_plots.factual_f1_bars(
        tmp_path / "f.png",
        ["instrument (open)", "instrument (list)"],
        ["original", "random"],
        {
            ("instrument (open)", "original"): (0.0, 0.0, 0.0),
            ("instrument (open)", "random"): (0.4, 0.2, 0.6),
            ("instrument (list)", "original"): (0.0, 0.0, 0.1),
        },
        {"instrument (open)": (0.3, 0.2)},
    )
    (ax,) = drawn[0].axes
    assert [t.get_text() for t in ax.texts] == ["0", "0"]  # two zero bars, the 0.4 one not
    drawn = keep_figures(monkeypatch, factual_studies_plots)
    phrasings = list(PHRASING_TITLES.values())
    factual_studies_plots.phrasing_bars(
        tmp_path / "p.png",
        {"Instruments": phrasings},
        ["m [original]"],
        {
            ("Instruments", p, "m [original]"): f
            for p, f in zip(phrasings, [0.0, 0.5, 0.0, 0.2], strict=True)
        },
    )
    (ax,) = drawn[0].axes
    assert len(ax.texts) == 2
    assert [t.get_text() for t in ax.get_xticklabels()] == [
        "open_casual",
        "open",
        "open_formal",
        "list",
    ]
    factual_studies_plots.truefalse_bars(
        tmp_path / "t.png", ["a", "b"], [0.0, 0.5], [0.3, 0.3], [0.7, 0.0]
    )
    assert len(drawn[1].axes[0].texts) == 2
    factual_studies_plots.binary_bars(
        tmp_path / "b.png",
        ["a"],
        [(0.0, 0.0, 0.2)],
        [np.nan],  # no readable answer: no mark
    )
    assert len(drawn[2].axes[0].texts) == 1


def test_a_limit_run_is_marked_as_part_of_its_benchmark(
    tiny_lm, data_dir, tmp_path, monkeypatch
):
    out = tmp_path / "limited"
    run_cli(
        text_run_args(tiny_lm, data_dir, out, "rul_muchomusic", "--log_samples", "--limit", "3")
    )
    (run,) = load_runs([out])
    report = build_report([run], ReportSettings(n_resamples=50))
    assert report["benchmarks"]["rul_muchomusic"]["rows"][0]["n_questions_total"] == 8
    drawn = keep_figures(monkeypatch, plots)
    text = write_report(report, tmp_path / "r")["markdown"].read_text()
    assert "| 3 of 8 |" in text
    bars = next(f for f in drawn if "accuracy" in f.axes[0].get_title())
    labels = [t.get_text() for t in bars.axes[0].get_xticklabels()]
    assert any(label.endswith("n=3 of 8") for label in labels), labels


def test_the_pi_histogram_title_names_the_text_only_model(logged, tmp_path, monkeypatch):
    (run,) = load_runs([logged])
    drawn = keep_figures(monkeypatch, plots)
    write_report(build_report([run], ReportSettings(n_resamples=50)), tmp_path / "r")
    titles = [f.axes[0].get_title() for f in drawn]
    wanted = f"Perceptual Index per question, as the text-only model {run.model} scored it"
    assert wanted in titles, titles
    assert not any("run of" in t for t in titles)


def test_a_baseline_at_f1_one_stays_inside_the_axes(monkeypatch, tmp_path):
    drawn = keep_figures(monkeypatch, factual_plots)
    factual_plots.factual_f1_bars(
        tmp_path / "f.png", ["factual_genre_open"], ["original"],
        {("factual_genre_open", "original"): (0.4, 0.3, 0.5)},
        {"factual_genre_open": (1.0, 1.0)},
    )  # fmt: skip
    ax = drawn[0].axes[0]
    top = ax.get_ylim()[1]
    assert all(max(line.get_ydata(), default=0) < top for line in ax.lines)
