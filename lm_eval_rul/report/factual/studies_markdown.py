"""The robustness studies and the parser agreement in ``report.md`` (tables, then figures)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ...factual.datasets.sources import describe_dropped
from .sections import TASK_TITLES
from .studies import PHRASING_TITLES

__all__ = ["render_studies", "dropped_lines"]

_SCORING = {"generate": "generated", "loglikelihood": "log-likelihood"}


def _num(value: Any, signed: bool = False) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def _ci(interval: Mapping[str, Any], signed: bool = False) -> str:
    return (
        f"{_num(interval['estimate'], signed)} "
        f"[{_num(interval['low'], signed)}, {_num(interval['high'], signed)}]"
    )


def dropped_lines(
    rows: Sequence[Mapping[str, Any]], label: Callable[[Mapping[str, Any]], str] | None = None
) -> list[str]:
    """One line per row whose run left items out: "- model (audio): N items dropped (why)".

    Args:
        rows: Report rows carrying ``items_dropped``, ``model`` and ``setting``.
        label: How a row is named (default: "model (audio)").
    """
    lines = []
    for row in rows:
        text = describe_dropped(row.get("items_dropped") or {})
        if text:
            name = label(row) if label else f"{row['model']} ({row['setting']})"
            lines.append(f"- {name}: {text}")
    return ["Items not evaluated:", "", *lines, ""] if lines else []


def _rows(study: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [row for data in study.values() for row in data["rows"]]


def _task_run(row: Mapping[str, Any]) -> str:
    return f"{row['task_name']}, {row['model']} ({row['setting']})"


def _phrasings(study: Mapping[str, Any]) -> list[str]:
    lines = [
        "### Wording sensitivity (four phrasings)",
        "",
        "Mean P / R / F1 over items per phrasing (the open prompts open_casual, open, open_formal, "
        "and the list prompt); spread = max − min F1 over the phrasings.",
        "",
    ]
    for task, data in study.items():
        names = [PHRASING_TITLES.get(p, p) for p in data["phrasings"]]
        header = ["model", "audio", *(f"{n} P / R / F1" for n in names), "F1 spread"]
        lines += [f"**{TASK_TITLES.get(task, task)}**", ""]
        lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        for entry in data["models"]:
            cells = [entry["model"], entry["setting"]]
            for phrasing in data["phrasings"]:
                f = entry["figures"].get(phrasing)
                keys = ("precision", "recall", "f1")
                cells.append("–" if f is None else " / ".join(_num(f[k]) for k in keys))
            cells.append(_num(entry["spread"]))
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    return lines


def _binary(study: Mapping[str, Any], level: str) -> list[str]:
    lines = [
        "### Binary choice (\"Between A and B, ...\"; chance 0.5)",
        "",
        "The gold label and one wrong label, gold first for half of the items. Accuracy "
        "counts unreadable answers as wrong (generated: naming neither or both labels; "
        "log-likelihood: neither letter among an API's top tokens); *first chosen* is the "
        "share of readable answers picking the first-named option. F1 (the paper's figure): "
        "the answer's labels against the gold label, so an answer naming both options "
        "scores P 1/2, R 1, F1 2/3 (generated answers; with letters F1 equals accuracy).",
        "",
        f"| task | model | audio | scoring | items | accuracy [{level} CI] | F1 | gold first | "
        "gold second | first chosen | unreadable |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for task, data in study.items():
        for r in data["rows"]:
            flag = " ⚠ chance" if r["accuracy"]["low"] <= 0.5 <= r["accuracy"]["high"] else ""
            lines.append(
                f"| {task} | {r['model']} | {r['setting']} | {_SCORING[r['scoring']]} | "
                f"{r['n_items']} | {_ci(r['accuracy'])}{flag} | {_num(r.get('f1'))} | "
                f"{_num(r['acc_gold_first'])} | "
                f"{_num(r['acc_gold_second'])} | {_num(r['first_share'])} | "
                f"{_num(r['parse_failure'])} |"
            )
    return lines + [""] + dropped_lines(_rows(study), _task_run)


def _truefalse(study: Mapping[str, Any], level: str) -> list[str]:
    lines = [
        "### True/false per label (whole vocabulary)",
        "",
        "Accuracy over (item, label) pairs; precision and recall of the \"true\" answers; "
        "*said true* = share of pairs answered true, against the *base rate* of true pairs "
        "(always answering true scores accuracy = base rate). Windows combined as "
        "inclusive / majority (equal when every recording fits one window). *Unreadable*: "
        "pairs with no answer (generated: no true/false in it; log-likelihood: neither word "
        "among an API's top tokens), counted wrong.",
        "",
        f"| task | model | audio | scoring | items × labels | accuracy incl. [{level} CI] | "
        "acc. majority | P incl. / maj. | R incl. / maj. | said true incl. / maj. | "
        "base rate | unreadable |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for task, data in study.items():
        for r in data["rows"]:
            f = r["figures"]

            def both(name: str, f=f) -> str:
                return f"{_num(f[f'{name}_inclusive'])} / {_num(f[f'{name}_majority'])}"

            unreadable = _num(f["parse_failure"])  # log-likelihood: no word with a probability
            lines.append(
                f"| {task} | {r['model']} | {r['setting']} | {_SCORING[r['scoring']]} | "
                f"{r['n_items']} × {r['n_labels']} | {_ci(r['acc_inclusive_interval'])} | "
                f"{_num(f['acc_majority'])} | {both('precision')} | {both('recall')} | "
                f"{both('true_share')} | {_num(f['base_rate'])} | {unreadable} |"
            )
    return lines + [""] + dropped_lines(_rows(study), _task_run)


def _agreement(pairs: list[Mapping[str, Any]], level: str) -> list[str]:
    lines = [
        "### Parser agreement",
        "",
        "The same answers read by two parsers: per-item Jaccard of the label sets, the "
        "share of identical sets, mean F1 under each parser and the difference (b − a, "
        "paired bootstrap over items); Kendall's τ of the models' F1 under the two parsers "
        "(1 = same ranking). Malformed: windows whose LLM reply stayed unreadable, and "
        "items none of whose windows was read; both are left out of the figures (never "
        "scored as an empty prediction).",
        "",
    ]
    for pair in pairs:
        a, b = pair["a"], pair["b"]
        lines += [
            f"**{a} (a) vs {b} (b)**: largest |ΔF1| {_num(pair['max_abs_difference'])}; "
            f"τ over all rows {_num(pair['overall_tau'])}",
            "",
            f"| task | model | audio | items | mean Jaccard | identical | F1 a | F1 b | "
            f"ΔF1 [{level} CI] | malformed windows / items left out |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in pair["rows"]:
            lines.append(
                f"| {r['task_name']} | {r['model']} | {r['setting']} | {r['n']} | "
                f"{_num(r['mean_jaccard'])} | {_num(r['identical_share'])} | {_num(r['f1_a'])} | "
                f"{_num(r['f1_b'])} | {_ci(r['difference'], signed=True)} | "
                f"{r['malformed_windows']} / {r.get('items_left_out', 0)} |"
            )
        for r in pair.get("unscored", []):  # no item read by both parsers: nothing to compare
            lines.append(
                f"| {r['task_name']} | {r['model']} | {r['setting']} | 0 | – | – | – | – | – | "
                f"{r['malformed_windows']} / {r['items_left_out']} |"
            )
        ranked = [r for r in pair["rankings"] if r["n_models"] >= 2]
        lines.append("")
        if ranked:
            lines += [
                "| task | audio | models | Kendall τ | p | same order |",
                "|---|---|---|---|---|---|",
            ]
            lines += [
                f"| {r['task_name']} | {r['setting']} | {r['n_models']} | {_num(r['tau'])} | "
                f"{_num(r['pvalue'])} | {'yes' if r['same_order'] else 'no'} |"
                for r in ranked
            ]
            lines.append("")
        else:
            lines += ["(one model per task and setting: no model ranking to compare)", ""]
    return lines


def render_studies(studies: Mapping[str, Any], confidence_level: float) -> list[str]:
    """The lines of the studies (none when no run has one and no parser was compared)."""
    level = f"{confidence_level:.0%}"
    lines: list[str] = []
    if studies.get("phrasings"):
        lines += _phrasings(studies["phrasings"])
    if studies.get("binary"):
        lines += _binary(studies["binary"], level)
    if studies.get("truefalse"):
        lines += _truefalse(studies["truefalse"], level)
    if studies.get("parsers"):
        lines += _agreement(studies["parsers"], level)
    for name, path in (studies.get("figures") or {}).items():
        lines.append(f"![{name}]({path})")
    return lines + ([""] if lines else [])
