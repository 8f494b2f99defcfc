"""``report.md``: the report's tables as markdown, written for people."""

from __future__ import annotations

import math
import re
from typing import Any

from .factual.markdown import render_factual
from .listening_output import listening_lines
from .settings import BENCHMARK_NAMES, covered_share
from .tagging.markdown import render_tagging

__all__ = ["render_markdown", "plural", "md"]

_MARKDOWN_SPECIAL = re.compile(r"([\\|\[\]`*<>])")


def md(text: object) -> str:
    """``text`` as literal markdown (a benchmark or model name in a table cell, heading or
    image caption): ``|``, ``[``, ``]`` and the other characters that would end a cell or
    start a link, emphasis or tag are escaped; line breaks become spaces.

    >>> print(md("A|B [v2]"))
    A\\|B \\[v2\\]
    """
    return _MARKDOWN_SPECIAL.sub(r"\\\1", " ".join(str(text).splitlines()))


def plural(count: int, noun: str) -> str:
    """``1 run``, ``3 runs``."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _pct(value: float | None) -> str:
    return (
        "–" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.3f}"
    )


def _ci(interval: dict[str, Any]) -> str:
    return f"{interval['estimate']:.3f} [{interval['low']:.3f}, {interval['high']:.3f}]"


def _signed_ci(interval: dict[str, Any]) -> str:
    return f"{interval['estimate']:+.3f} [{interval['low']:+.3f}, {interval['high']:+.3f}]"


def _p(value: float) -> str:
    if value is None or math.isnan(value):
        return "–"
    return f"{value:.2g}" if value >= 1e-4 else "<1e-4"


_DIMENSION_TITLES = {
    "music_knowledge": "knowledge category",
    "music_reasoning": "reasoning category",
    "genre": "genre",
    "source": "source dataset",
    "sub_category": "sub-category",
    "difficulty": "difficulty",
    "category": "category",
}


def _always_letter_lines(baselines: dict[str, Any] | None) -> list[str]:
    """The always-the-same-letter table: one row per option order the runs showed."""
    if not baselines:
        return []
    letters = sorted({x for b in baselines.values() for x in b["letters"]})
    lines = [
        "Always the same letter (accuracy of answering that letter to every question, in the "
        "order the runs showed; a letter beyond an item's options is wrong for it; chance = "
        "the mean of each item's 1/n options):",
        "",
        "| option order | " + " | ".join(letters) + " | chance | n |",
        "|---|" + "---|" * (len(letters) + 2),
    ]
    for order, b in baselines.items():
        cells = [_pct(b["letters"].get(x)) for x in letters] + [_pct(b.get("chance"))]
        lines.append(f"| {md(order)} | " + " | ".join(cells) + f" | {b['n_samples']} |")
    return [*lines, ""]


_MUCHOMUSIC_BREAKDOWNS = (
    "Accuracy by MuChoMusic category (acc (n questions); a question counts in each of its "
    "categories, `any` = questions with at least one):"
)


_LABEL_BREAKDOWNS = "Accuracy by the release's labels (acc (n questions)):"


def _breakdown_lines(
    breakdowns: dict[str, Any] | None, title: str = _MUCHOMUSIC_BREAKDOWNS
) -> list[str]:
    """One table per category dimension: a row per label, a column per run."""
    if not breakdowns:
        return []
    lines = [title, ""]
    for dimension, rows in breakdowns.items():
        if not rows:
            continue
        runs = list(dict.fromkeys(run for per_run in rows.values() for run in per_run))
        lines += [
            f"| {md(_DIMENSION_TITLES.get(dimension, dimension))} | "
            + " | ".join(md(r) for r in runs) + " |",
            "|---|" + "---|" * len(runs),
        ]
        for label, per_run in rows.items():
            cells = [
                f"{per_run[run]['acc']:.3f} ({per_run[run]['n_questions']})"
                if run in per_run
                else "–"
                for run in runs
            ]
            lines.append(f"| {md(label)} | " + " | ".join(cells) + " |")
        lines.append("")
    return lines


def render_markdown(report: dict[str, Any]) -> str:
    """``report.md``: settings, one section per benchmark (tables + figures), notes."""
    settings = report["settings"]
    level = f"{settings['confidence_level']:.0%}"
    lines = [
        "# lm-eval-rul report",
        "",
        f"{plural(len(report['runs']), 'run')}; {level} bootstrap intervals resampled by "
        f"{settings['resampled_by']} ({settings['n_resamples']} resamples, "
        f"{settings['bootstrap_method']}, seed {settings['seed']}). Every number is in "
        "`report.json`.",
        "",
    ]
    for data in report["benchmarks"].values():
        folds = [f for f in data["folds"] if f != "-1"]
        fold_cols = [f"fold {f}" for f in folds]
        lines += [f"## {md(data['name'])}", "", f"Chance: {data['chance']:.3f}.", ""]
        header = ["model", "audio", *fold_cols, f"mean acc [{level} CI]", "n q"]
        header += ["majority (strict)", "plurality (release)"] if folds else []
        header += ["mean PI (run's prompt)", "parse fail"]
        lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        for row in data["rows"]:
            cells = [md(row["model"]), md(row["setting"])]
            cells += [_pct(row["folds"].get(f, {}).get("acc")) for f in folds]
            cells += [_ci(row["accuracy"]), covered_share(row)]
            if folds:
                cells += [_pct(row["majority_vote"]), _pct(row.get("plurality_vote_release"))]
            cells += [_pct(row["mean_pi"]), _pct(row["parse_failure_rate"])]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
        if data["perception_gain"]:
            lines += [
                "Perception gain (paired on shared questions; ⚠ = interval contains 0):",
                "",
                "| model | comparison | acc a | acc b | difference [CI] | Wilcoxon p | n q "
                "| flag |",
                "|---|---|---|---|---|---|---|---|",
            ]
            for e in data["perception_gain"]:
                lines.append(
                    f"| {md(e['model'])} | {md(e['setting_a'])} − {md(e['setting_b'])} | "
                    f"{e['acc_a']:.3f} | {e['acc_b']:.3f} | {_signed_ci(e['difference'])} | "
                    f"{_p(e['wilcoxon_p'])} | {e['n_questions']} | "
                    f"{'⚠ not distinguishable from 0' if e['flagged'] else ''} |"
                )
            lines.append("")
            if "perception_gain" in data.get("figures", {}):
                figure = data["figures"]["perception_gain"]
                lines += [f"![{data['name']}: perception gain]({figure})", ""]
        if data["leakage"]:
            lines += [
                "Text leakage `max(0, no-audio − text backbone)`:",
                "",
                "| model | text backbone | no-audio | backbone | leakage [CI] | "
                "difference [CI] | Wilcoxon p | flag |",
                "|---|---|---|---|---|---|---|---|",
            ]
            for e in data["leakage"]:
                lines.append(
                    f"| {md(e['model'])} | {md(e['b'])} | {e['acc_a']:.3f} | {e['acc_b']:.3f} | "
                    f"{_ci(e['leakage'])} | {_signed_ci(e['difference'])} | "
                    f"{_p(e['wilcoxon_p'])} | {'⚠ interval contains 0' if e['flagged'] else ''} |"
                )
            lines.append("")
        if data["correlations"]:
            lines += [
                "Per-question PI vs accuracy (Pearson):",
                "",
                f"| runs | r [{level} CI] | p | n q | PI from |",
                "|---|---|---|---|---|",
            ]
            for c in data["correlations"]:
                interval = (
                    "–" if math.isnan(c["r"]) else f"{c['r']:.3f} [{c['low']:.3f}, {c['high']:.3f}]"
                )
                lines.append(
                    f"| {md(c['group'])} | {interval} | {_p(c['pvalue'])} | {c['n']} | "
                    f"{c['pi_source']}{f' ({kind})' if (kind := c.get('pi_kind')) else ''} |"
                )
            lines.append("")
        lines += _breakdown_lines(data.get("breakdowns"))
        lines += _always_letter_lines(data.get("always_letter"))
        lines += _breakdown_lines(data.get("label_breakdowns"), _LABEL_BREAKDOWNS)
        for key, caption in (
            ("accuracy", "accuracy"),
            ("conditions", "audio conditions"),
            ("pi_vs_accuracy", "PI vs accuracy"),
        ):
            if key in data.get("figures", {}):
                lines.append(f"![{md(data['name'])}: {caption}]({data['figures'][key]})")
        lines.append("")
    if report.get("predictions_only"):
        lines += [
            "## Predictions only (question files without answers: no acc, no PI)",
            "",
            "| run | task | n items | predictions file (score it with the authors' scorer) |",
            "|---|---|---|---|",
        ]
        lines += [
            f"| {md(p['run'])} | {md(p['task'])} | {p['n']} | `{p['predictions_file']}` |"
            for p in report["predictions_only"]
        ]
        lines.append("")
    lines += render_factual(report.get("factual") or {}, settings["confidence_level"])
    lines += render_tagging(report.get("tagging") or {}, settings["confidence_level"])
    lines += listening_lines(report.get("listening") or {}, settings["confidence_level"])
    distributions = report["pi_distributions"]
    if distributions["summary"]:
        lines += [
            "## Perceptual Index distributions",
            "",
            f"PI values {distributions['source']}. {distributions.get('kind', '')}".rstrip(),
            "",
            "| benchmark | n q | mean PI | median | chance PI (1 − 1/n options) | "
            "share above chance |",
            "|---|---|---|---|---|---|",
        ]
        for label, s in distributions["summary"].items():
            lines.append(
                f"| {md(BENCHMARK_NAMES.get(label, label))} | {s['n']} | {s['mean']:.3f} | "
                f"{s['median']:.3f} | {_pct(s['mean_chance'])} | "
                f"{_pct(s['share_above_chance'])} |"
            )
        lines.append("")
        if "figure" in distributions:
            lines += [f"![PI histograms]({distributions['figure']})", ""]
    if report["notes"]:
        lines += ["## Notes", ""] + [f"- {note}" for note in report["notes"]] + [""]
    lines += ["## Runs", "", "| run | harness model | results files |", "|---|---|---|"]
    for run in report["runs"]:
        files = ", ".join(f"`{p}`" for p in run["results_files"])
        lines.append(
            f"| {md(run['label'])} | {md(run['model_type'])} `{run['pretrained']}` | {files} |"
        )
    return "\n".join(lines) + "\n"
