"""Figures that read at a glance: coinciding series stay visible and are named, bars are
centred on their model, no label is repeated."""

from __future__ import annotations

import doctest

import numpy as np
import pytest
from matplotlib.image import imread

from lm_eval_rul.report import plots


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
