"""The report's figures and JSON as units: PNGs that open, clear errors, strict JSON."""

from __future__ import annotations

import json

import numpy as np
import pytest
from matplotlib.image import imread

from lm_eval_rul import plots
from lm_eval_rul.report import ReportSettings, _finite


def opens(path) -> np.ndarray:
    image = imread(path)
    assert image.ndim == 3 and image.shape[0] > 100 and image.std() > 0.01
    return image


def test_each_figure_writes_a_png(tmp_path):
    opens(plots.accuracy_bars(tmp_path / "a.png", ["m"], [0.5], [0.4], [0.6], chance=0.25))
    opens(
        plots.condition_bars(
            tmp_path / "b" / "c.png",  # folders are created
            ["m1", "m2"],
            ["original", "noise"],
            {("m1", "original"): (0.6, 0.5, 0.7), ("m2", "noise"): (0.3, 0.2, 0.4)},
            chance=0.25,
        )
    )
    rng = np.random.default_rng(0)
    opens(plots.pi_histograms(tmp_path / "h.png", {"A": rng.random(50), "B": rng.random(7)}))
    opens(
        plots.pi_accuracy_scatter(
            tmp_path / "s.png",
            {"text-only": ([0.1, 0.5, 0.9], [1.0, 0.5, 0.0]), "one point": ([0.3], [0.2])},
            annotations={"text-only": "(r = -1.00)"},
        )
    )


def test_figures_refuse_empty_or_ragged_input(tmp_path):
    with pytest.raises(ValueError, match="one estimate, low and high per label"):
        plots.accuracy_bars(tmp_path / "a.png", ["m", "n"], [0.5], [0.4], [0.6])
    with pytest.raises(ValueError, match="non-empty distribution"):
        plots.pi_histograms(tmp_path / "h.png", {"A": []})
    with pytest.raises(ValueError, match="at least one model"):
        plots.condition_bars(tmp_path / "c.png", [], ["noise"], {})


def test_undefined_statistics_become_null_in_json():
    report = {"r": float("nan"), "rows": [{"p": np.float64("inf"), "ok": 0.5}], "n": 3}
    text = json.dumps(_finite(report), allow_nan=False)
    assert json.loads(text) == {"r": None, "rows": [{"p": None, "ok": 0.5}], "n": 3}


def test_settings_reject_an_unknown_resampling_unit():
    with pytest.raises(ValueError, match="by must be 'question' or 'track'"):
        ReportSettings(by="fold")
