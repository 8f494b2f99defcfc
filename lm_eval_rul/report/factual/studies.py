"""The robustness studies of the factual section: phrasings, binary choice, true/false.

* **phrasings**: for instrument, composer and genre, the mean P/R/F1 of each of the four
  phrasings (the open prompts ``open_casual``, ``open``, ``open_formal`` and the ``list``
  prompt) per model and audio condition, and the spread (max - min F1 over the phrasings)
  per model;
* **binary choice**: per run, task and scoring: accuracy with a bootstrap interval over
  items (chance 0.5), accuracy when the gold label was offered first and second, the
  share of answers picking the first option, and unreadable answers;
* **true/false**: per run, task and scoring: accuracy over (item, label) pairs (interval
  resampling items), precision and recall of the "true" answers and the share answered
  "true" against the base rate, for the inclusive and the majority window rule.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from ...factual.prompts import PHRASINGS
from ...factual.reading.binary import binary_figures, binary_items
from ...factual.reading.labels import TASKS
from ...factual.reading.truefalse import TRUEFALSE_RULES, label_answers, truefalse_figures
from ...questions import derive_seed
from ..runs import Run, TaskResult
from ..settings import ReportSettings, condition_rank
from ..stats import accuracy_ci

__all__ = [
    "PHRASING_TITLES",
    "phrasing_study",
    "binary_study",
    "truefalse_study",
    "studies_section",
]

#: How each phrasing is named in tables and figures: the tasks' own suffixes
#: (``factual_instrument_open_casual``), so readers see the names they ran.
PHRASING_TITLES: dict[str, str] = {p: p for ps in PHRASINGS.values() for p in ps}


def phrasing_study(tasks: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Per task of :data:`~lm_eval_rul.factual.prompts.PHRASINGS` with at least two of its
    phrasings run: ``{"phrasings", "models": [{"model", "setting", "condition",
    "figures": {phrasing: {"precision", "recall", "f1", "n_items"}}, "spread"}]}``.

    Args:
        tasks: The factual section's per-task data
            (:func:`~lm_eval_rul.report.factual.sections.factual_report`).
    """
    out: dict[str, Any] = {}
    for task, phrasings in PHRASINGS.items():
        found = {
            data["variant"]: data
            for data in tasks.values()
            if data["task"] == task and data["variant"] in phrasings
        }
        if len(found) < 2:
            continue
        present = [p for p in phrasings if p in found]
        rows: dict[tuple[str, str], dict[str, Any]] = {}
        for phrasing in present:
            for row in found[phrasing]["rows"]:
                entry = rows.setdefault(
                    (row["pretrained"], row["setting"]),
                    {
                        "model": row["model"],
                        "setting": row["setting"],
                        "condition": row["condition"],
                        "figures": {},
                    },
                )
                node = row["node"]
                entry["figures"][phrasing] = {
                    "precision": node["precision"],
                    "recall": node["recall"],
                    "f1": node["f1"],
                    "n_items": row["n_items"],
                }
        models = sorted(
            rows.values(), key=lambda r: (r["model"], condition_rank(r["condition"]), r["setting"])
        )
        for entry in models:
            f1 = [v["f1"] for v in entry["figures"].values()]
            entry["spread"] = max(f1) - min(f1) if len(f1) > 1 else None
        out[task] = {"phrasings": present, "models": models}
    return out


def _interval(scores, groups, settings: ReportSettings, *parts: object) -> dict[str, Any]:
    return accuracy_ci(
        scores,
        groups=groups,
        confidence_level=settings.confidence_level,
        n_resamples=settings.n_resamples,
        seed=derive_seed("report", settings.seed, "factual-study", *parts),
        method=settings.method,
    ).to_dict()


def _members(runs: Sequence[Run], study: str) -> dict[str, list[tuple[Run, TaskResult]]]:
    """Task key -> the (run, task) pairs of ``study``, tasks in the order of ``TASKS``."""
    found: dict[str, list[tuple[Run, TaskResult]]] = defaultdict(list)
    for run in runs:
        for result in run.study_tasks():
            if result.study_windows[0].study == study:
                found[result.study_windows[0].task].append((run, result))
    order = list(TASKS)
    return {
        task: found[task]
        for task in sorted(found, key=lambda t: (order.index(t) if t in order else len(order), t))
    }


def _row_base(run: Run, result: TaskResult) -> dict[str, Any]:
    first = result.study_windows[0]
    return {
        "run": run.label,
        "model": run.model,
        "pretrained": run.pretrained,
        "condition": run.condition,
        "setting": run.setting,
        "task_name": result.task,
        "scoring": first.scoring,
        "n_windows": len(result.study_windows),
        "items_dropped": dict(first.items_dropped),
    }


def _ordered(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(
        rows,
        key=lambda r: (r["model"], condition_rank(r["condition"]), r["setting"], r["scoring"]),
    )


def binary_study(
    runs: Sequence[Run], settings: ReportSettings, notes: list[str]
) -> dict[str, Any]:
    """Per task: ``{"chance": 0.5, "rows": [...]}`` (module docstring)."""
    out: dict[str, Any] = {}
    for task, members in _members(runs, "binary").items():
        rows = []
        for run, result in members:
            items = binary_items(w.record for w in result.study_windows)
            figures = binary_figures(items)
            correct = [float(it.correct) for it in items]
            by_order = {
                half: [float(it.correct) for it in items if it.gold_index == index]
                for half, index in (("gold_first", 0), ("gold_second", 1))
            }
            row = {
                **_row_base(run, result),
                "n_items": len(items),
                "accuracy": _interval(correct, None, settings, result.task, run.label),
                **{f"acc_{h}": (sum(v) / len(v) if v else math.nan) for h, v in by_order.items()},
                **{k: figures[k] for k in ("first_share", "gold_first_share", "parse_failure")},
                # the paper's figure (generated answers): the answer's labels against the gold
                **{k: figures[k] for k in ("precision", "recall", "f1")},
            }
            rows.append(row)
            if figures["parse_failure"] > 0:
                notes.append(
                    f"{run.label}: {result.task}: {figures['parse_failure']:.0%} of the items "
                    "have no readable choice (counted wrong)"
                )
        out[task] = {"chance": 0.5, "rows": _ordered(rows)}
    return out


def truefalse_study(
    runs: Sequence[Run], settings: ReportSettings, notes: list[str]
) -> dict[str, Any]:
    """Per task: ``{"rows": [...]}``, each row with the figures of both window rules."""
    out: dict[str, Any] = {}
    for task, members in _members(runs, "truefalse").items():
        rows = []
        for run, result in members:
            pairs = label_answers(w.record for w in result.study_windows)
            figures = truefalse_figures(pairs)
            multi = {p.id for p in pairs if p.n_chunks > 1}
            row = {
                **_row_base(run, result),
                "n_items": len({p.id for p in pairs}),
                "n_pairs": len(pairs),
                "n_labels": len({p.label for p in pairs}),
                "multi_window_items": len(multi),
                "figures": figures,
            }
            for rule in TRUEFALSE_RULES:
                scores = [float(p.answer(rule) == p.gold) for p in pairs]
                row[f"acc_{rule}_interval"] = _interval(
                    scores, [p.id for p in pairs], settings, result.task, run.label, rule
                )
            rows.append(row)
        out[task] = {"rows": _ordered(rows)}
    return out


def studies_section(
    runs: Sequence[Run],
    tasks: Mapping[str, Mapping[str, Any]],
    settings: ReportSettings,
    notes: list[str],
) -> dict[str, Any]:
    """Everything of the robustness studies and the parser agreement, for ``report.json``.

    Returns:
        ``{"phrasings", "binary", "truefalse", "parsers", "figures"}`` (empty parts when
        the runs have no such task or no ``--parsed`` copy was given).
    """
    from .parser_agreement import parser_agreement

    return {
        "phrasings": phrasing_study(tasks),
        "binary": binary_study(runs, settings, notes),
        "truefalse": truefalse_study(runs, settings, notes),
        "parsers": (
            parser_agreement(runs, settings.parsed_runs, settings, notes)
            if settings.parsed_runs
            else []
        ),
        "figures": {},
    }
