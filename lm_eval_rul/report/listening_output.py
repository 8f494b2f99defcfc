"""The files of "Which items need the audio": ``items.csv``, the figure and the section.

``items.csv`` (one row per benchmark, model and item; its columns in ``docs/report.md``)
is written beside ``report.json``; the figure draws accuracy against the seconds heard
(0 = no audio, each excerpt length, the whole clip) with intervals, one line per model.
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path
from typing import Any

import numpy as np

from ..files import write_text_atomic
from ..paths import safe_name
from . import plots
from .listening import CLASSES

__all__ = ["ITEM_COLUMNS", "write_items_csv", "draw_listening_figures", "listening_lines"]

#: The columns every ``items.csv`` starts with; then ``correct[SETTING]`` and
#: ``p_correct[SETTING]`` for each run of the model (``original`` first).
ITEM_COLUMNS: tuple[str, ...] = (
    "benchmark",
    "model",
    "id",
    "class",
    "needs_whole_clip",
    "shortest_excerpt_seconds",
    "audio_reliance",
    "text_pi",
)


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def write_items_csv(listening: dict[str, Any], out: Path) -> Path | None:
    """``out/items.csv`` from the report's ``listening`` section (its ``_items`` are
    removed from the section); None when no benchmark has a listening class."""
    rows = [row for data in listening.values() for row in data.pop("_items", [])]
    if not rows:
        return None
    columns = list(ITEM_COLUMNS)
    for row in rows:
        columns += [key for key in row if key not in columns]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_cell(row.get(column)) for column in columns])
    path = out / "items.csv"
    write_text_atomic(path, buffer.getvalue())
    return path


def _draw(path: Path, models: list[dict[str, Any]], title: str, level: float) -> Path:
    plt = plots.pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.2))
    lengths = sorted({p["seconds"] for m in models for p in m["curve"] if p["seconds"]})
    whole_x = max(lengths) * 1.5 if lengths else 1.0
    for index, model in enumerate(models):
        xs, est, low, high = [], [], [], []
        for point in model["curve"]:
            ci = point["accuracy"]
            xs.append(whole_x if point["seconds"] is None else point["seconds"])
            est.append(ci["estimate"])
            low.append(ci["low"])
            high.append(ci["high"])
        colour = f"C{index % 10}"
        ax.errorbar(
            xs, est, yerr=plots._errors(est, low, high), fmt="o", color=colour, capsize=3, alpha=0.8
        )
        line: dict[float, list[float]] = {}
        for x, y in zip(xs, est, strict=True):
            line.setdefault(x, []).append(y)
        ordered = sorted(line)
        ax.plot(
            ordered,
            [float(np.mean(line[x])) for x in ordered],
            "-",
            color=colour,
            label=model["model"],
        )
    ticks = [0.0, *lengths, whole_x]
    ax.set_xticks(ticks, ["no audio", *(f"{s:g} s" for s in lengths), "whole clip"])
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("seconds heard")
    ax.set_ylabel(f"accuracy ({level:.0%} CI)")
    ax.set_title(title)
    ax.legend(loc="lower right", fontsize="small")
    return plots.save_figure(fig, path)


def draw_listening_figures(listening: dict[str, Any], out: Path, level: float) -> None:
    """One figure per benchmark; its path (relative to ``out``) as the section's
    ``figure``."""
    for benchmark, data in listening.items():
        path = _draw(
            out / "figures" / f"listening_{safe_name(benchmark)}.png",
            data["models"],
            f"{data['name']}: accuracy against the seconds heard",
            level,
        )
        data["figure"] = str(path.relative_to(out))


def _pct_ci(interval: dict[str, Any] | None) -> str:
    if not interval:
        return "–"
    return f"{interval['estimate']:.1%} [{interval['low']:.1%}, {interval['high']:.1%}]"


def listening_lines(listening: dict[str, Any], level: float) -> list[str]:
    """The markdown section "Which items need the audio" (empty without one)."""
    if not listening:
        return []
    lines = [
        "## Which items need the audio",
        "",
        "Per item, over each model's runs: `needs_audio` = right with the whole clip, wrong "
        "in every no-audio run (none, noise, silence) of the same model; "
        "`answered_without_audio` = right with the clip and in at least one no-audio run; "
        "`missed` = wrong with the clip. The first two add up to the original accuracy. "
        "Every item is in `items.csv`.",
        "",
    ]
    for data in listening.values():
        lines += [f"### {data['name']}", ""]
        header = [
            "model",
            "n items",
            *(f"{name} [{level:.0%} CI]" for name in CLASSES),
            "needs whole clip (of needs_audio)",
            "mean audio reliance",
            "text-only PI (mean)",
        ]
        lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        for model in data["models"]:
            whole = model["needs_whole_clip"]
            cells = [model["model"].replace("|", "\\|"), str(model["n_items"])]
            cells += [
                f"{model['counts'][name]} ({_pct_ci(model['shares'].get(name))})"
                for name in CLASSES
            ]
            cells.append(f"{model['n_needs_whole_clip']} ({_pct_ci(whole)})" if whole else "–")
            reliance, pi = model["mean_audio_reliance"], model["text_mean_pi"]
            cells.append("–" if reliance is None else f"{reliance:+.3f}")
            cells.append("–" if pi is None else f"{pi:.3f}")
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
        if data.get("pi_source"):
            lines += [f"Text-only PI from {data['pi_source']}.", ""]
        for model in data["models"]:
            counts = model["shortest_excerpt_counts"]
            if counts:
                shown = ", ".join(f"{n} with {s} s" for s, n in counts.items())
                lines += [
                    f"{model['model']}: shortest excerpt with which a needs_audio item is "
                    f"right: {shown}; {model['n_needs_whole_clip']} only with the whole "
                    "clip.",
                    "",
                ]
        if "figure" in data:
            lines += [
                f"![{data['name']}: accuracy against the seconds heard]({data['figure']})",
                "",
            ]
    return lines
