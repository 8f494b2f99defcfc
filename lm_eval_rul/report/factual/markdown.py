"""The factual section of ``report.md``: one table per task, baselines beside the models."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

__all__ = ["render_factual"]

_COLUMNS = (
    ("precision", "P"),
    ("recall", "R"),
    ("micro_precision", "micro P"),
    ("micro_recall", "micro R"),
    ("micro_f1", "micro F1"),
    ("macro_f1", "macro F1"),
    ("empty_share", "empty"),
    ("mean_pred_size", "set size"),
)


def _num(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:.3f}"


def _p(value: float | None) -> str:
    if value is None or math.isnan(value):
        return "–"
    return f"{value:.2g}" if value >= 1e-4 else "<1e-4"


def _table(view: str, data: Mapping[str, Any], level: str) -> list[str]:
    header = ["model", "audio", "protocol", "items", "windows", f"F1 [{level} CI]"]
    header += [c for _, c in _COLUMNS]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in data["rows"]:
        figures = row[view]
        interval = row["f1_interval"]
        f1 = (
            f"{interval['estimate']:.3f} [{interval['low']:.3f}, {interval['high']:.3f}]"
            if view == "node"
            else _num(figures["f1"])
        )
        cells = [row["model"], row["setting"], row.get("protocol", "rul")]
        cells += [str(row["n_items"]), str(row["n_windows"]), f1]
        cells += [_num(figures.get(key)) for key, _ in _COLUMNS]
        lines.append("| " + " | ".join(cells) + " |")
    baselines = data["baselines"][view]
    n = str(data["n_items"])
    for name, figures in (
        (f"*majority label ({baselines['majority_label']})*", baselines["majority"]),
        ("*label frequency (exact expectation)*", baselines["frequency"]),
    ):
        cells = [name, "–", "–", n, "–", _num(figures["f1"])]
        cells += [_num(figures.get(key)) for key, _ in _COLUMNS]
        lines.append("| " + " | ".join(cells) + " |")
    return lines + [""]


def _cut_lines(rows: list[Mapping[str, Any]]) -> list[str]:
    """One line per run whose recordings were cut at the model's limit (never silent)."""
    lines = []
    for row in rows:
        cut = row.get("cut") or {}
        if cut.get("items"):
            lines.append(
                f"- {row['model']} ({row['setting']}): {cut['items']} of {cut['of']} recordings "
                f"cut at the model's limit ({cut['heard_seconds']:g} s heard; "
                f"{cut['unheard_seconds']:.0f} s unheard in all; protocol={row.get('protocol')})"
            )
    return lines + [""] if lines else []


def _comparisons(entries: list[dict[str, Any]], level: str) -> list[str]:
    lines = [
        "Correct vs other audio (per-item F1 paired by item; ⚠ = interval contains 0):",
        "",
        f"| model | comparison | F1 a | F1 b | difference [{level} CI] | Wilcoxon p | items "
        "| random clip shares a gold label | flag |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for e in entries:
        d = e["difference"]
        lines.append(
            f"| {e['model']} | {e['setting_a']} − {e['setting_b']} | {e['mean_original']:.3f} | "
            f"{e['mean_random']:.3f} | {d['estimate']:+.3f} [{d['low']:+.3f}, {d['high']:+.3f}] | "
            f"{_p(e['pvalue'])} | {e['n']} | {_num(e['random_no_disjoint_share'])} | "
            f"{'⚠ not distinguishable from 0' if e['flagged'] else ''} |"
        )
    return lines + [""]


def render_factual(factual: Mapping[str, Any], confidence_level: float) -> list[str]:
    """The lines of the factual section (none when no run has a factual task)."""
    from .studies_markdown import dropped_lines, render_studies

    studies = render_studies(factual.get("studies") or {}, confidence_level)
    if not factual.get("tasks") and not studies:
        return []
    level = f"{confidence_level:.0%}"
    lines = [
        "## Factual music comprehension",
        "",
        "Per item: P, R, F1 of the parsed label set (an empty prediction scores 0), "
        "averaged over items; micro figures pool the counts; macro F1 averages the per-label "
        "F1 over the gold labels. The baselines know only the gold label distribution of the "
        "evaluated items (label frequency: exact expected scores).",
        "",
    ]
    for data in factual["tasks"].values():
        shares = data["baselines"]["node"]["label_shares"]
        top = ", ".join(f"{label} {share:.0%}" for label, share in list(shares.items())[:5])
        lines += [f"### {data['title']}", "", f"{data['n_items']} items; gold labels: {top}.", ""]
        lines += _table("node", data, level)
        lines += dropped_lines(data["rows"])
        lines += _cut_lines(data["rows"])
        if data["baselines"].get("tree"):
            lines += [
                "Same tree (each predicted genre right when it lies in a gold genre's FMA "
                "branch; each gold genre found when a prediction lies in its branch):",
                "",
            ]
            lines += _table("tree", data, level)
        if data["comparisons"]:
            lines += _comparisons(data["comparisons"], level)
    for model, path in factual.get("figures", {}).items():
        lines.append(f"![{model}: F1 per factual task and audio condition]({path})")
    return lines + [""] + studies
