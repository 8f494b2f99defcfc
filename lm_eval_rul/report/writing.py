"""Write a report: ``report.json`` (every number), ``report.md`` and the PNG figures."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from ..files import write_text_atomic
from ..paths import safe_name
from . import plots
from .factual.plots import factual_f1_bars
from .factual.studies_plots import draw_study_figures
from .forest import perception_gain_forest
from .listening_output import draw_listening_figures, write_items_csv
from .markdown import render_markdown
from .runs import TEXT_CONDITION
from .settings import BENCHMARK_NAMES, condition_rank, covered_share
from .tagging.plots import draw_tagging_figures

__all__ = ["write_report"]


def _averaged(data: dict) -> str:
    """The PI-accuracy figure's y label: what one point's accuracy is the mean of."""
    folds = len(data.get("folds") or [])
    runs = {len(c.get("runs") or []) for c in data.get("correlations") or []}
    over = [f"{folds} folds" if folds > 1 else "", "the group's runs" if runs - {1} else ""]
    over = [o for o in over if o]
    if not over:
        return "accuracy per question\n(0 or 1: one run, one prompt)"
    return f"accuracy per question\n(mean over {' and '.join(over)})"


def draw_figures(report: dict[str, Any], out: Path) -> None:
    level = report["settings"]["confidence_level"]
    figures_dir = out / "figures"
    for benchmark, data in report["benchmarks"].items():
        figures: dict[str, str] = {}
        rows = data["rows"]
        path = plots.accuracy_bars(
            figures_dir / f"accuracy_{safe_name(benchmark)}.png",
            [r["setting"] for r in rows],
            [r["accuracy"]["estimate"] for r in rows],
            [r["accuracy"]["low"] for r in rows],
            [r["accuracy"]["high"] for r in rows],
            groups=[r["model"] for r in rows],
            chance=data["chance"],
            title=f"{data['name']}: accuracy",
            confidence_level=level,
            counts=[covered_share(r) for r in rows],
        )
        figures["accuracy"] = str(path.relative_to(out))
        if data.get("perception_gain"):
            gains = [
                (
                    e["model"],
                    e["setting_b"],
                    e["difference"]["estimate"],
                    e["difference"]["low"],
                    e["difference"]["high"],
                )
                for e in data["perception_gain"]
            ]
            path = perception_gain_forest(
                figures_dir / f"perception_gain_{safe_name(benchmark)}.png",
                gains,
                title=f"{data['name']}: perception gain",
                confidence_level=level,
            )
            figures["perception_gain"] = str(path.relative_to(out))
        audio_rows = [r for r in rows if r["condition"] != TEXT_CONDITION]
        models = list(dict.fromkeys(r["model"] for r in audio_rows))
        if len(models) > 1:  # one audio model: the accuracy figure already shows it all
            ranks = {
                r["setting"]: (condition_rank(r["condition"]), r["setting"]) for r in audio_rows
            }
            conditions = sorted(ranks, key=ranks.__getitem__)
            values = {
                (r["model"], r["setting"]): (
                    r["accuracy"]["estimate"],
                    r["accuracy"]["low"],
                    r["accuracy"]["high"],
                )
                for r in audio_rows
            }
            path = plots.condition_bars(
                figures_dir / f"conditions_{safe_name(benchmark)}.png",
                models,
                conditions,
                values,
                chance=data["chance"],
                title=f"{data['name']}: audio conditions per model",
                confidence_level=level,
            )
            figures["conditions"] = str(path.relative_to(out))
        scatter = data.pop("_scatter")
        if scatter:
            annotations = {c["group"]: f"(r = {c['r']:.2f})" for c in data["correlations"]}
            path = plots.pi_accuracy_scatter(
                figures_dir / f"pi_vs_accuracy_{safe_name(benchmark)}.png",
                scatter,
                title=f"{data['name']}: per-question PI vs accuracy",
                annotations=annotations,
                ylabel=_averaged(data),
            )
            figures["pi_vs_accuracy"] = str(path.relative_to(out))
        data["figures"] = figures
    draw_factual_figures(report.get("factual") or {}, out, level)
    if (report.get("factual") or {}).get("studies"):
        draw_study_figures(report["factual"]["studies"], out, level)
    if (report.get("tagging") or {}).get("tasks"):
        draw_tagging_figures(report["tagging"], out)
    if report.get("listening"):
        draw_listening_figures(report["listening"], out, level)
    distributions = report["pi_distributions"]
    if distributions["values"]:
        path = plots.pi_histograms(
            figures_dir / "pi_histogram.png",
            {BENCHMARK_NAMES.get(k, k): v for k, v in distributions["values"].items()},
            title=distributions["figure_title"],
        )
        distributions["figure"] = str(path.relative_to(out))


def draw_factual_figures(factual: dict[str, Any], out: Path, level: float) -> None:
    """One figure per model: mean F1 per factual task and condition, with the baselines."""
    tasks = factual.get("tasks") or {}
    models = list(dict.fromkeys(row["model"] for data in tasks.values() for row in data["rows"]))
    for model in models:
        labels, values, baselines, ranks = [], {}, {}, {}
        for data in tasks.values():
            rows = [row for row in data["rows"] if row["model"] == model]
            if not rows:
                continue
            label = f"{data['task']} ({data['variant']})"
            labels.append(label)
            node = data["baselines"]["node"]
            baselines[label] = (node["majority"]["f1"], node["frequency"]["f1"])
            for row in rows:
                ranks[row["setting"]] = (condition_rank(row["condition"]), row["setting"])
                ci = row["f1_interval"]
                values[(label, row["setting"])] = (ci["estimate"], ci["low"], ci["high"])
        name = safe_name(model)
        path = factual_f1_bars(
            out / "figures" / f"factual_f1_{name}.png",
            labels,
            sorted(ranks, key=ranks.__getitem__),
            values,
            baselines,
            title=f"{model}: factual tasks, mean F1 per audio condition",
            confidence_level=level,
        )
        factual["figures"][model] = str(path.relative_to(out))


def write_report(report: dict[str, Any], out: str | Path) -> dict[str, Path]:
    """Draw the figures, then write ``report.json`` and ``report.md`` into ``out``.

    Args:
        report: From :func:`build_report` (its figure paths are filled in here).
        out: Report folder (created).

    Returns:
        ``{"json": ..., "markdown": ...}`` paths (and ``items.csv``, one row per item of
        the section "Which items need the audio", when it has one).
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    draw_figures(report, out)
    for data in report["benchmarks"].values():
        data.pop("_scatter", None)
    items = write_items_csv(report.get("listening") or {}, out)
    if items is not None:
        report["items_csv"] = items.name
    json_path = out / "report.json"
    write_text_atomic(
        json_path,
        json.dumps(_finite(report), indent=1, allow_nan=False, default=_json_default) + "\n",
    )
    md_path = out / "report.md"
    write_text_atomic(md_path, render_markdown(report))
    written = {"json": json_path, "markdown": md_path}
    return written if items is None else {**written, "items": items}


def _finite(value: Any) -> Any:
    """The report with NaN/inf (undefined statistics) as None, so ``report.json`` is JSON."""
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    if isinstance(value, float | np.floating) and not math.isfinite(value):
        return None
    return value


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"cannot write {type(value).__name__} to report.json")


