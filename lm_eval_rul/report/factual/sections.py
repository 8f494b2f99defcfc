"""The factual section of the report: is the model right, and more right with the real clip?

Per factual task (e.g. ``factual_instrument_open``), from the logged windows:

* one row per run (model x audio condition): the item-level figures of
  :func:`~lm_eval_rul.factual.records.set_figures` (mean P/R/F1 with a bootstrap interval
  of the F1 over items, micro P/R/F1, macro F1, share of empty predictions, mean
  predicted-set size; genre adds the same-tree figures), items, windows, chunk rule;
* the model-free baselines on the evaluated items' gold sets: the majority label and
  the label-frequency guesser with its exact expected scores
  (:mod:`lm_eval_rul.factual.baselines`);
* correct vs random: for every model, each ``original`` run against each other
  condition of the same model (``random`` is the paper's comparison), per-item F1 paired
  by item id (:func:`~lm_eval_rul.report.factual.paired_scores.compare_conditions`: paired
  bootstrap interval of the mean difference, Wilcoxon signed-rank p-value), flagged when
  the interval contains 0; with the share of items whose random clip could not avoid
  their gold labels;
* per run, the items it left out and why (``items_dropped``: the readers' skipped rows and
  the items ``on_audio_problem=skip`` dropped), from its logged documents.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from ...audio.conditions import CLIP_POOL
from ...factual.baselines import frequency_baseline, label_frequencies, majority_baseline
from ...factual.reading.labels import TASKS
from ...factual.records import ItemPrediction, item_predictions, set_figures, unread_counts
from ...questions import derive_seed
from ..runs import Run, TaskResult
from ..settings import REFERENCE_CONDITION, ReportSettings, audio_condition_of, condition_rank
from ..stats import accuracy_ci
from .paired_scores import compare_conditions

__all__ = ["TASK_TITLES", "FIGURE_FIELDS", "factual_title", "factual_report"]

TASK_TITLES: dict[str, str] = {
    "instrument": "Instruments (MusicNet)",
    "composer": "Composer (MusicNet)",
    "genre": "Genre (FMA)",
    "regional": "Regional style (OverClocked ReMix)",
    "mood": "Mood (OverClocked ReMix)",
    "timesig": "Time signature (OverClocked ReMix)",
}
#: The :class:`~lm_eval_rul.factual.metrics.SetMetrics` fields a row reports.
FIGURE_FIELDS: tuple[str, ...] = (
    "f1",
    "precision",
    "recall",
    "micro_f1",
    "micro_precision",
    "micro_recall",
    "macro_f1",
    "empty_share",
    "mean_pred_size",
    "mean_gold_size",
)


#: How a prompt variant is named in titles.
VARIANT_TITLES: dict[str, str] = {
    "open_casual": "casual open prompt",
    "open_formal": "formal open prompt",
}


def factual_title(task: str, variant: str) -> str:
    """``"Instruments (MusicNet), open prompt"``."""
    return f"{TASK_TITLES.get(task, task)}, {VARIANT_TITLES.get(variant, f'{variant} prompt')}"


def _figures(metrics: Any) -> dict[str, Any]:
    out = {name: float(getattr(metrics, name)) for name in FIGURE_FIELDS}
    out["per_label"] = {k: vars(v) for k, v in metrics.per_label.items()}
    return out


def _row(
    run: Run, result: TaskResult, items: list[ItemPrediction], settings: ReportSettings, notes
) -> dict[str, Any]:
    figures = set_figures(items)
    f1 = [item.scores()[2] for item in items]
    interval = accuracy_ci(
        f1,
        confidence_level=settings.confidence_level,
        n_resamples=settings.n_resamples,
        seed=derive_seed("report", settings.seed, "factual", result.task, run.label),
        method=settings.method,
    )
    printed = result.metrics.get("f1")
    if printed is not None and not math.isclose(printed, interval.estimate, abs_tol=1e-9):
        notes.append(
            f"{run.label}: {result.task} f1 printed {printed:.6f} but the logged windows give "
            f"{interval.estimate:.6f} (the logged samples may come from another run)"
        )
    unread = unread_counts(w.record for w in result.windows)
    if unread["windows"]:  # a reparse copy given as a run: parser failures are not scored
        notes.append(
            f"{run.label}: {result.task}: {unread['windows']} windows whose parser reply was "
            f"malformed are left out of the figures ({unread['items']} items without any read "
            "window), never scored as empty predictions"
        )
    incomplete = sum(not item.complete for item in items)
    if incomplete:
        notes.append(
            f"{run.label}: {result.task}: {incomplete} of {len(items)} items were answered on "
            "only some of their windows (a run with --limit); they are scored on those"
        )
    disjoint = [w.random_disjoint for w in result.windows if w.random_disjoint is not None]
    no_disjoint = {w.id for w in result.windows if w.random_disjoint is False}
    return {
        "run": run.label,
        "model": run.model,
        "pretrained": run.pretrained,
        "condition": run.condition,
        "setting": run.setting,
        "n_items": len(items),
        "n_windows": len(result.windows),
        "incomplete_items": incomplete,
        "chunk_rule": str(result.windows[0].record["rule"]),
        "protocol": "/".join(sorted({w.protocol for w in result.windows})),
        "cut": _cut(result.windows),
        "f1_interval": interval.to_dict(),
        "node": _figures(figures["node"]),
        "tree": _figures(figures["tree"]) if "tree" in figures else None,
        "random_no_disjoint_share": len(no_disjoint) / len(items) if disjoint else None,
        "items_dropped": dict(result.windows[0].items_dropped),
        "_f1": {item.id: item.scores()[2] for item in items},
    }


def _cut(windows: Sequence[Any]) -> dict[str, Any]:
    """The recordings cut at the model's limit (``protocol=paper``): count and seconds."""
    by_item = {w.id: w for w in windows if w.cut}
    seconds = [(w.recording_seconds or 0.0) - (w.heard_seconds or 0.0) for w in by_item.values()]
    return {
        "items": len(by_item),
        "of": len({w.id for w in windows}),
        "heard_seconds": max((w.heard_seconds or 0.0 for w in by_item.values()), default=None),
        "unheard_seconds": sum(seconds),
    }


def _baselines(items: dict[str, ItemPrediction], genre: bool) -> dict[str, Any]:
    golds = [item.gold for item in items.values()]
    views = {"node": golds}
    if genre:
        views["tree"] = [item.tree(item.gold) for item in items.values()]
    out: dict[str, Any] = {}
    for view, sets in views.items():
        frequencies = label_frequencies(sets)
        majority = majority_baseline(sets)
        out[view] = {
            "majority_label": next(iter(frequencies)),
            "majority": {name: float(getattr(majority, name)) for name in FIGURE_FIELDS},
            "frequency": frequency_baseline(sets, frequencies=frequencies).to_dict(),
            "label_shares": frequencies,
        }
    return out


def _plays_pool(condition: str) -> bool:
    found = audio_condition_of(condition)
    return found is not None and found.reads == CLIP_POOL


def _comparisons(
    task: str, rows: list[dict[str, Any]], settings: ReportSettings, notes: list[str]
) -> list[dict[str, Any]]:
    by_model: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_model[row["pretrained"]].append(row)
    entries = []
    for model_rows in by_model.values():
        # the clip-pool condition (random) first: the paper's comparison
        ordered = sorted(
            model_rows,
            key=lambda r: (
                not _plays_pool(r["condition"]),
                condition_rank(r["condition"]),
                r["run"],
            ),
        )
        for a in (r for r in model_rows if r["condition"] == REFERENCE_CONDITION):
            for b in (r for r in ordered if r["condition"] != REFERENCE_CONDITION):
                shared = a["_f1"].keys() & b["_f1"].keys()
                dropped = len(a["_f1"].keys() ^ b["_f1"].keys())
                if dropped:
                    notes.append(
                        f"{task}: {a['run']} vs {b['run']}: compared on the {len(shared)} "
                        f"shared items; {dropped} items were in only one of the runs"
                    )
                if not shared:
                    continue
                comparison = compare_conditions(
                    a["_f1"],
                    b["_f1"],
                    confidence_level=settings.confidence_level,
                    n_resamples=settings.n_resamples,
                    seed=derive_seed("report", settings.seed, "factual", task, a["run"], b["run"]),
                )
                entries.append(
                    {
                        "model": a["model"],
                        "a": a["run"],
                        "b": b["run"],
                        "setting_a": a["setting"],
                        "setting_b": b["setting"],
                        "condition_b": b["condition"],
                        **comparison.to_dict(),
                        "flagged": comparison.difference.contains_zero,
                        "random_no_disjoint_share": b["random_no_disjoint_share"],
                    }
                )
    return entries


def _task_order(name: str, task: str, variant: str) -> tuple[int, int, str]:
    position = list(TASKS).index(task) if task in TASKS else len(TASKS)
    variants = ("open", "list", "open_casual", "open_formal")
    return position, variants.index(variant) if variant in variants else len(variants), name


def factual_report(
    runs: Sequence[Run], settings: ReportSettings, notes: list[str]
) -> dict[str, Any]:
    """Every factual number of the report, per task name (module docstring).

    Returns:
        ``{"tasks": {task name: {"task", "variant", "title", "n_items", "baselines",
        "rows", "comparisons"}}, "figures": {}, "studies": {...}}``, tasks in order
        (instrument ... timesig, open before list; none when no run has a factual task);
        the figures are filled in when the report is written. ``studies`` holds the
        robustness studies and the parser agreement
        (:func:`~lm_eval_rul.report.factual.studies.studies_section`).
    """
    from .studies import studies_section

    found: dict[str, list[tuple[Run, TaskResult]]] = defaultdict(list)
    for run in runs:
        for result in run.factual_tasks():
            found[result.task].append((run, result))
    out: dict[str, Any] = {}
    for name, members in found.items():
        first = members[0][1].windows[0]
        rows, gold_items = [], {}
        for run, result in members:
            items = item_predictions(w.record for w in result.windows)
            if not items:  # no window read (every parser reply malformed): nothing to score
                notes.append(f"{run.label}: {result.task}: no window was read; left out")
                continue
            gold_items.update({item.id: item for item in items})
            rows.append(_row(run, result, items, settings, notes))
        if not rows:
            continue
        if len({tuple(sorted(row["_f1"])) for row in rows}) > 1:
            notes.append(
                f"{name}: runs covered different items; the baselines use all {len(gold_items)} "
                "items any run covered, each row its own items"
            )
        comparisons = _comparisons(name, rows, settings, notes)
        for row in rows:
            row.pop("_f1")
        out[name] = {
            "task": first.task,
            "variant": first.variant,
            "title": factual_title(first.task, first.variant),
            "n_items": len(gold_items),
            "baselines": _baselines(gold_items, first.task == "genre"),
            "rows": rows,
            "comparisons": comparisons,
        }
    order = sorted(out, key=lambda n: _task_order(n, out[n]["task"], out[n]["variant"]))
    tasks = {name: out[name] for name in order}
    studies = studies_section(runs, tasks, settings, notes)
    return {"tasks": tasks, "figures": {}, "studies": studies}
