"""Figures that read at a glance: coinciding series stay visible and are named, bars are
centred on their model, no label is repeated."""

from __future__ import annotations

import doctest
import json
from pathlib import Path

import numpy as np
import pytest
from matplotlib.image import imread

from lm_eval_rul.report import plots
from lm_eval_rul.testing.harness import text_run_args


def test_doctests():
    assert doctest.testmod(plots).failed == 0


def test_identical_series_are_drawn_once_and_named_together():
    x, y = [0.5, 0.6, 0.9], [0.25, 0.5, 0.0]
    merged = plots.merge_identical(
        {"text-only": ([0.5, 0.6, 0.9], [0.0, 0.5, 0.0]), "audio (original)": (x, y),
         "audio (noise)": (list(x), list(y)), "audio (none)": (x, [0.25, 0.5, 0.25])},
        {"audio (original)": "(r = -0.68)"},
    )  # fmt: skip
    assert [names for names, *_ in merged] == [
        ["text-only"],
        ["audio (original)", "audio (noise)"],
        ["audio (none)"],
    ]
    assert merged[1][3] == "(r = -0.68)"


def test_bars_are_centred_on_their_model_whatever_conditions_it_has():
    values = {("a", "original"): 0, ("a", "noise"): 0, ("a", "none"): 0, ("b", "noise"): 0,
              ("c", "original"): 0, ("c", "none"): 0}  # fmt: skip
    positions = plots.centred_positions(["a", "b", "c"], ["original", "noise", "none"], values, 0.3)
    for index, model in enumerate("abc"):
        mine = [x for (m, _), x in positions.items() if m == model]
        assert np.mean(mine) == pytest.approx(index)
    assert positions[("b", "noise")] == 1.0
    assert plots.group_positions(["m", "m", "n"]).tolist() == [0.0, 1.0, 2.6]


def test_figures_are_written(tmp_path):
    rng = np.random.default_rng(0)
    same = (rng.random(20).tolist(), rng.random(20).tolist())
    for path in (
        plots.pi_accuracy_scatter(tmp_path / "s.png", {"text-only": same, "audio (noise)": same}),
        plots.accuracy_bars(tmp_path / "a.png", ["text", "original", "noise"], [0.3, 0.5, 0.4],
                            [0.2, 0.4, 0.3], [0.4, 0.6, 0.5], groups=["t", "m", "m"]),
        plots.pi_histograms(tmp_path / "h.png", {"A": [0.7, 0.8], "B": [0.7, 0.8]}),
    ):  # fmt: skip
        assert imread(path).shape[0] > 100
    with pytest.raises(ValueError, match="one group per label"):
        plots.accuracy_bars(tmp_path / "x.png", ["a"], [0.1], [0.0], [0.2], groups=["m", "n"])


def test_the_perception_gain_forest_has_one_row_per_comparison_and_a_zero_line(
    tmp_path, monkeypatch
):
    from lm_eval_rul.report import forest

    seen: dict = {}
    real = forest.save_figure

    def keep(fig, path):
        ax = fig.axes[0]
        seen["labels"] = sorted(t.get_text() for t in ax.get_yticklabels())
        seen["zero"] = [list(line.get_xdata()) for line in ax.get_lines()
                        if list(line.get_xdata()) == [0.0, 0.0]]  # fmt: skip
        return real(fig, path)

    monkeypatch.setattr(forest, "save_figure", keep)
    rows = [("m", "noise", 0.2, 0.1, 0.3), ("m", "silence", 0.1, -0.05, 0.25),
            ("m", "reversed", 0.0, -0.1, 0.1), ("m", "none", 0.3, 0.2, 0.4)]  # fmt: skip
    path = forest.perception_gain_forest(tmp_path / "gain.png", rows, title="Bench")
    assert seen["labels"] == sorted(f"original − {c}" for _, c, *_ in rows)
    assert len(seen["zero"]) == 1
    image = imread(path)
    assert image.shape[0] > 200 and image.std() > 0.01
    with pytest.raises(ValueError):
        forest.perception_gain_forest(tmp_path / "none.png", [])


def _crossed_count_labels(fig) -> list[str]:
    """Each ``n=`` label that a line (whisker, cap, chance line) or a bar crosses."""
    from matplotlib.collections import LineCollection
    from matplotlib.lines import Line2D
    from matplotlib.patches import Rectangle

    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    crossed = []
    for text in fig.findobj(lambda a: hasattr(a, "get_text") and "n=" in a.get_text()):
        box = text.get_window_extent(renderer)
        for ax in fig.axes:
            paths = [line.get_transform().transform_path(line.get_path())
                     for line in ax.findobj(Line2D) if line.get_visible()]  # fmt: skip
            for lines in ax.findobj(LineCollection):
                paths += [lines.get_transform().transform_path(p) for p in lines.get_paths()]
            hit = any(p.intersects_bbox(box, filled=False) for p in paths if len(p.vertices))
            hit = hit or any(
                bar.get_window_extent(renderer).overlaps(box) for bar in ax.findobj(Rectangle)
                if bar is not ax.patch and bar.get_visible()
            )  # fmt: skip
            if hit:
                crossed.append(text.get_text())
    return crossed


def test_partial_run_counts_are_written_where_nothing_crosses_them(tmp_path, monkeypatch):
    from matplotlib.figure import Figure

    from lm_eval_rul.report import plots

    saved = []
    original = Figure.savefig

    def savefig(self, *args, **kwargs):
        saved.append(_crossed_count_labels(self))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", savefig)
    for groups in (["Qwen2-Audio-7B"] * 3, None):  # the report's grouped bars, and plain ones
        plots.accuracy_bars(
            tmp_path / "accuracy_rul_muchomusic.png",
            ["text", "original", "noise"],
            [0.375, 0.5, 0.25],
            [0.1, 0.2, 0.05],
            [0.7, 0.8, 0.6],
            groups=groups,
            chance=0.25,
            counts=["8 of 1,187", "8 of 1,187", "8 of 1,187"],
        )
    assert saved == [[], []]


def _kept(monkeypatch, module) -> list:
    """Figures ``module`` draws, kept open instead of written (their parts are read)."""
    drawn = []

    def keep(fig, path):
        drawn.append(fig)
        return Path(path)

    monkeypatch.setattr(module, "save_figure", keep)
    return drawn


def test_pi_accuracy_fits_no_line_through_zeros_and_ones_and_says_what_is_averaged(
    monkeypatch, tmp_path
):
    from lm_eval_rul.report import plots

    drawn = _kept(monkeypatch, plots)
    pi = [0.1, 0.4, 0.6, 0.9]
    one_run = "accuracy per question\n(0 or 1: one run, one prompt)"
    plots.pi_accuracy_scatter(tmp_path / "a.png", {"audio (original)": (pi, [1, 0, 1, 0])},
                              ylabel=one_run)  # fmt: skip
    plots.pi_accuracy_scatter(tmp_path / "b.png", {"audio (original)": (pi, [1, 0.5, 0.75, 0])})
    binary, averaged = (fig.axes[0] for fig in drawn)
    assert binary.get_lines() == [] and len(averaged.get_lines()) == 1
    assert binary.get_ylabel() == one_run
    assert "mean over" in averaged.get_ylabel()


def test_a_text_only_runs_pi_is_never_set_against_its_own_accuracy(
    tiny_lm, data_dir, tmp_path, capsys
):
    from lm_eval_rul.cli import main

    out = tmp_path / "text"
    main(text_run_args(tiny_lm, data_dir, out, "muchomusic", "--log_samples"))
    capsys.readouterr()
    main(["report", str(out), "--out", str(tmp_path / "report"), "--n-resamples", "50"])
    printed = capsys.readouterr().out
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    assert report["benchmarks"]["muchomusic"]["correlations"] == []
    assert "PI-accuracy of text-only: not reported, as its PI comes from the same run" in printed
    assert not (tmp_path / "report" / "figures" / "pi_vs_accuracy_muchomusic.png").exists()


def test_per_tag_figure_names_its_tags_and_side_and_keeps_edge_points_whole(
    monkeypatch, tmp_path
):
    from lm_eval_rul.report.tagging import plots as tagging_plots

    drawn = _kept(monkeypatch, tagging_plots)
    data = {"model": "m", "tags": ["rock", "jazz", "piano"], "original": [1.0, 0.0, 0.5],
            "noise": [0.5, 1.0, 0.0]}  # fmt: skip
    tagging_plots.per_tag_auc_scatter(tmp_path / "t.png", data, "m: MTG top-50, per-tag ROC-AUC")
    ax = drawn[0].axes[0]
    texts = [t.get_text() for t in ax.texts]
    assert ax.get_title().endswith("(3 tags)")
    assert {"rock", "jazz", "piano"} <= set(texts)
    assert any("the audio helps" in t for t in texts)
    (points,) = ax.collections
    assert not points.get_clip_on()
    for low, high in (ax.get_xlim(), ax.get_ylim()):
        assert low < 0 and high > 1


def test_perception_gain_figure_marks_an_interval_that_contains_zero(monkeypatch, tmp_path):
    from lm_eval_rul.report import forest

    drawn = _kept(monkeypatch, forest)
    forest.perception_gain_forest(
        tmp_path / "f.png",
        [("m", "noise", 0.20, 0.10, 0.30), ("m", "none", 0.05, -0.02, 0.12)],
    )
    ax = drawn[0].axes[0]
    notes = sorted(t.get_text() for t in ax.texts)
    assert notes == ["+0.050 (interval contains 0)", "+0.200"]
    faces = [line.get_markerfacecolor() for line in ax.get_lines() if line.get_marker() == "o"]
    assert faces.count("white") == 1
    assert "hollow: the interval contains 0" in ax.get_xlabel()
