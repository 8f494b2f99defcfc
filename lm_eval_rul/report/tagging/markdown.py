"""The lines of the "Music tagging" section of ``report.md``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["render_tagging"]

_FIGURES = {
    "likelihood": ("roc_auc", "pr_auc", "micro_f1"),
    "gen": ("micro_f1", "micro_precision", "micro_recall", "samples_f1", "parse_failure"),
    "letters": ("acc",),
    "genre": ("acc", "parse_failure"),
}


def _number(value: Any) -> str:
    return "-" if value is None or value != value else f"{float(value):.4f}"


def render_tagging(tagging: Mapping[str, Any], confidence_level: float) -> list[str]:
    """The section's lines (none when no run has a tagging task)."""
    tasks = tagging.get("tasks") or {}
    if not tasks:
        return []
    level = f"{confidence_level:.0%}"
    lines = [
        "## Music tagging",
        "",
        "Likelihood tasks: a score per (clip, tag), log p(yes) − log p(no); ROC-AUC and PR-AUC "
        "are macro means over the tags with a positive and a negative clip, micro-F1 predicts "
        "a tag when yes is likelier. A text-only run gives every clip the same prompt, so its "
        "ROC-AUC is 0.5 exactly. Popularity baseline: always the k most frequent tags of the "
        "evaluated labels (k = their mean count per clip).",
        "",
    ]
    for data in tasks.values():
        figures = _FIGURES[data["form"]]
        header = "| model | condition | clips | " + " | ".join(figures) + " |"
        lines += [f"### {data['name']}", "", header, "|---|---|---:|" + "---:|" * len(figures)]
        for row in data["rows"]:
            values = " | ".join(_number(row.get(f)) for f in figures)
            lines.append(f"| {row['model']} | {row['condition']} | {row['n']} | {values} |")
        base = data["baseline"]
        metric = "acc" if "acc" in base else "micro_f1"
        lines += [
            "",
            f"Popularity baseline ({', '.join(base['tags'])}): {metric} {_number(base[metric])}.",
            "",
        ]
        if data["gains"]:
            lines += [
                f"| model | original − | {data['metric']} gain | {level} interval | clips |",
                "|---|---|---:|---|---:|",
            ]
            for gain in data["gains"]:
                flag = " (contains 0)" if gain["contains_zero"] else ""
                lines.append(
                    f"| {gain['model']} | {gain['versus']} | {gain['estimate']:+.4f} | "
                    f"[{gain['low']:+.4f}, {gain['high']:+.4f}]{flag} | {gain['n']} |"
                )
            lines.append("")
        figure = (tagging.get("figures") or {}).get(next(k for k, v in tasks.items() if v is data))
        if figure:
            lines += [f"![per-tag ROC-AUC, original vs noise]({figure})", ""]
    understanding = tagging.get("understanding") or {}
    if understanding.get("rows"):
        columns = understanding["columns"]
        lines += [
            "### Music understanding (the model reports' table, %)",
            "",
            "| model | condition | " + " | ".join(columns) + " |",
            "|---|---|" + "---:|" * len(columns),
        ]
        for row in understanding["rows"]:
            cells = " | ".join("-" if row[c] is None else f"{100 * row[c]:.1f}" for c in columns)
            lines.append(f"| {row['model']} | {row['condition']} | {cells} |")
        lines.append("")
    return lines
