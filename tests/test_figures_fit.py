"""No text in any figure the report or diagnose writes leaves the canvas.

Every figure is saved through :func:`lm_eval_rul.report.plots.save_figure`; here
``Figure.savefig`` is wrapped so that each figure, as saved, has every visible text
artist (titles, labels, tick labels, legend entries, annotations) inside the figure's
box. The figures are drawn with the labels a real report gives them (model names,
settings, several groups), and every function that saves a figure is drawn at least once.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from matplotlib.figure import Figure
from matplotlib.text import Text

from lm_eval_rul.diagnose import figures as diagnose_figures
from lm_eval_rul.report import plots
from lm_eval_rul.report.factual import plots as factual_plots
from lm_eval_rul.report.factual import studies_plots as factual_studies_plots

MODULES = {
    "plots": plots,
    "factual_plots": factual_plots,
    "factual_studies_plots": factual_studies_plots,
    "figures": diagnose_figures,
}


def _undrawn_tick_labels(fig: Figure) -> set[int]:
    """Tick labels matplotlib keeps for ticks beyond the axis limits (never drawn)."""
    undrawn = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            low, high = sorted(axis.get_view_interval())
            tolerance = 1e-9 * max(1.0, abs(high - low))
            for tick in [*axis.get_major_ticks(), *axis.get_minor_ticks()]:
                if not low - tolerance <= tick.get_loc() <= high + tolerance:
                    undrawn |= {id(tick.label1), id(tick.label2)}
    return undrawn


def _texts_outside(fig: Figure) -> list[str]:
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    box = fig.bbox
    undrawn = _undrawn_tick_labels(fig)
    outside = []
    for text in fig.findobj(Text):
        if not text.get_visible() or not text.get_text().strip() or id(text) in undrawn:
            continue
        extent = text.get_window_extent(renderer)
        if (
            extent.x0 < box.x0 - 1
            or extent.y0 < box.y0 - 1
            or extent.x1 > box.x1 + 1
            or extent.y1 > box.y1 + 1
        ):
            outside.append(f"{text.get_text()!r} at {extent.bounds} (figure {box.bounds})")
    return outside


@pytest.fixture
def checked(monkeypatch):
    """Each saved figure's texts outside its canvas, keyed by file name."""
    found: dict[str, list[str]] = {}
    original = Figure.savefig

    def savefig(self, fname, *args, **kwargs):
        found[str(getattr(fname, "name", fname)).rsplit("/", 1)[-1]] = _texts_outside(self)
        return original(self, fname, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", savefig)
    return found


def _saving_functions() -> set[str]:
    return {
        f"{alias}.{name}"
        for alias, module in MODULES.items()
        for name, function in inspect.getmembers(module, inspect.isfunction)
        if function.__module__ == module.__name__
        and "return save_figure(fig" in inspect.getsource(function)
    }


def test_no_text_leaves_any_figure(tmp_path, checked):
    rng = np.random.default_rng(0)
    pis, accs = rng.random(60).tolist(), rng.random(60).tolist()
    other = rng.random(60).tolist()
    models = ["Qwen2-Audio-7B-Instruct", "Kimi-Audio-7B-Instruct", "Qwen2.5-7B-Instruct"]
    drawn = {
        "plots.pi_accuracy_scatter": plots.pi_accuracy_scatter(
            tmp_path / "scatter.png",
            {
                "text-only": (pis, accs),
                "audio (original)": (pis, other),
                "audio (noise)": (pis, other),
                "audio (none)": (pis, accs[::-1]),
            },
            title="RUL-MuChoMusic: per-question PI vs accuracy",
            annotations={"text-only": "(r = -0.71)", "audio (none)": "(r = 0.05)"},
        ),
        "plots.accuracy_bars": plots.accuracy_bars(
            tmp_path / "accuracy.png",
            ["text", "original", "noise, seed=1", "silence", "none", "original"],
            [0.3, 0.5, 0.4, 0.35, 0.3, 0.45],
            [0.2] * 6,
            [0.6] * 6,
            groups=[models[2], models[0], models[0], models[0], models[0], models[1]],
            chance=0.25,
            title="RUL-MuChoMusic: accuracy",
        ),
        "plots.condition_bars": plots.condition_bars(
            tmp_path / "conditions.png",
            models[:2],
            ["original", "noise", "silence", "none"],
            {
                (m, c): (0.4, 0.3, 0.5)
                for m in models[:2]
                for c in ("original", "noise", "silence", "none")
            },
            chance=0.25,
            title="RUL-MuChoMusic: audio conditions per model",
        ),
        "plots.pi_histograms": plots.pi_histograms(
            tmp_path / "histogram.png",
            {"MuChoMusic": pis, "RUL-MuChoMusic": other},
            title="Perceptual Index (Qwen2.5-7B-Instruct, released distractors)",
        ),
        "factual_plots.factual_f1_bars": factual_plots.factual_f1_bars(
            tmp_path / "factual.png",
            ["instrument (open)", "genre (open)", "key (open)", "time signature (open)"],
            ["original", "random", "noise", "none"],
            {
                (t, c): (0.3, 0.2, 0.4)
                for t in ("instrument (open)", "genre (open)")
                for c in ("original", "random", "noise", "none")
            },
            {"instrument (open)": (0.2, 0.1), "genre (open)": (0.15, 0.1)},
            title=f"{models[0]}: factual tasks, mean F1 per audio condition",
        ),
        "factual_studies_plots.binary_bars": factual_studies_plots.binary_bars(
            tmp_path / "binary.png",
            [f"instrument:\n{m} [original]" for m in models[:2]],
            [(0.6, 0.5, 0.7), (0.0, 0.0, 0.1)],
            [0.5, float("nan")],
            title="Binary choice: accuracy and position bias",
        ),
        "factual_studies_plots.phrasing_bars": factual_studies_plots.phrasing_bars(
            tmp_path / "phrasings.png",
            {"Instrument": ["open", "list", "describe"], "Genre": ["open", "list", "describe"]},
            [f"{m} [original]" for m in models[:2]],
            {("Instrument", "open", f"{models[0]} [original]"): 0.4},
            title="Factual tasks: mean F1 per phrasing",
        ),
        "factual_studies_plots.truefalse_bars": factual_studies_plots.truefalse_bars(
            tmp_path / "truefalse.png",
            [f"genre:\n{m} [original],\ninclusive" for m in models[:2]],
            [0.7, 0.0],
            [0.2, 0.2],
            [0.4, 0.8],
            title='True/false per label: share answered "true" vs base rate',
        ),
        "factual_studies_plots.agreement_scatter": factual_studies_plots.agreement_scatter(
            tmp_path / "agreement.png",
            {"lexicon vs llm:Qwen2.5-7B-Instruct": [(0.3, 0.35), (0.5, 0.45)]},
            title="F1 under two parsers",
        ),
        "figures.similarity_histograms": diagnose_figures.similarity_histograms(
            tmp_path / "similarity.png",
            {s: {"MuChoMusic": other, "RUL-MuChoMusic": pis} for s in ("t5", "clap")},
            labels={"t5": "T5 (text)", "clap": "CLAP (text-audio)"},
            thresholds={"t5": 0.9, "clap": 0.9},
        ),
        "figures.similarity_scatter": diagnose_figures.similarity_scatter(
            tmp_path / "similarity_scatter.png",
            {"MuChoMusic": (pis, other), "RUL-MuChoMusic": (other, pis)},
            axis_labels=("T5 (text) cosine", "CLAP (text-audio) cosine"),
            thresholds=(0.9, 0.9),
        ),
        "figures.audit_bars": diagnose_figures.audit_bars(
            tmp_path / "audit.png",
            {"MuChoMusic": {"near_identical_distractor": 3}, "RUL-MuChoMusic": {}},
            rules=["near_identical_distractor", "answer_longest", "answer_in_question"],
        ),
    }
    every = _saving_functions()
    assert every == set(drawn), "draw every figure function here"
    assert len(checked) == len(drawn)
    outside = {name: texts for name, texts in checked.items() if texts}
    assert not outside, f"texts outside their figure: {outside}"
