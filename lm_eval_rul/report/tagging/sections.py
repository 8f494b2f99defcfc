"""The numbers of the "Music tagging" section (see the package doc).

Per task: one row per run (model × condition, text-only runs included) with the task's
figures recomputed from the logged clips (:mod:`lm_eval_rul.tagging.records`, so they
equal the harness's); the popularity baseline (always the k most frequent tags of the
evaluated labels; a single-label task (GTZAN, NSynth, Medley-solos-DB): always its most
frequent label); the gains ``original − X`` of
each model on the clips both runs scored, with a percentile bootstrap interval that
resamples clips (at most 1,000 resamples, as arrays: :mod:`.bootstrap`); per-tag ROC-AUC of
``original`` and ``noise`` for the first model that has both.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ...catalogue import report_names
from ...questions.seeding import derive_seed
from ...tagging.metrics import macro_auc, popularity_baseline, popularity_tags
from ...tagging.records import gen_figures, likelihood_figures
from ..runs import Run
from ..settings import ReportSettings
from .bootstrap import clip_counts, resampled_figure
from .runs import FORM_METRIC

__all__ = ["tagging_report", "figures_of", "UNDERSTANDING_COLUMNS", "MAX_RESAMPLES"]

MAX_RESAMPLES = 1000
#: The reports' music table: column title -> (task, metric); RUL-MuChoMusic from its group.
UNDERSTANDING_COLUMNS: dict[str, tuple[str, str]] = {
    "RUL-MuChoMusic": ("rul_muchomusic", "acc"),
    "GTZAN": ("gtzan_gen", "acc"),
    "MTG genre": ("mtg_genre_gen", "micro_f1"),
    "MTG mood/theme": ("mtg_moodtheme_gen", "micro_f1"),
    "MTG instrument": ("mtg_instrument_gen", "micro_f1"),
    "MTG top-50": ("mtg_top50_gen", "micro_f1"),
    "MagnaTagATune": ("magnatagatune_gen", "micro_f1"),
    "NSynth instrument": ("nsynth_instrument_gen", "acc"),
    "NSynth source": ("nsynth_source_gen", "acc"),
    "Medley-solos-DB": ("medley_solos_gen", "acc"),
    "MMAU-Pro-music": ("mmau_pro_music_gen", "acc"),
}


def figures_of(clips: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """The figures of one task's clips, by form."""
    form = clips[0]["form"]
    if form == "likelihood":
        return likelihood_figures(clips)
    if form == "gen":
        return gen_figures(clips)
    figures = {"acc": float(np.mean([c["acc"] for c in clips]))}
    if form == "genre":
        figures["parse_failure"] = float(np.mean([bool(c.get("unparsed")) for c in clips]))
    return figures


def _baseline(clips: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    gold = [c["gold"] for c in clips]
    top = popularity_tags(gold, clips[0]["tags"])
    if clips[0]["form"] in ("letters", "genre"):
        first = popularity_tags([g[:1] for g in gold], clips[0]["tags"])[:1]
        acc = float(np.mean([g[:1] == list(first) for g in gold]))
        return {"tags": list(first), "acc": acc}
    return {"tags": list(top), "micro_f1": popularity_baseline(gold, clips[0]["tags"]).micro_f1}


def _gain(
    a: Sequence[Mapping[str, Any]], b: Sequence[Mapping[str, Any]], settings: ReportSettings, key
) -> dict[str, Any] | None:
    """``metric(a) − metric(b)`` on their common clips, bootstrap over clips."""
    by_id = {c["id"]: c for c in b}
    pairs = [(c, by_id[c["id"]]) for c in a if c["id"] in by_id]
    if len(pairs) < 2:
        return None
    metric = FORM_METRIC[a[0]["form"]]
    left, right = [p[0] for p in pairs], [p[1] for p in pairs]
    estimate = figures_of(left)[metric] - figures_of(right)[metric]
    rng = np.random.default_rng(derive_seed("tagging-gain", settings.seed, *key))
    figure_left, figure_right = resampled_figure(left, metric), resampled_figure(right, metric)
    draws = []
    for counts in clip_counts(rng, len(pairs), min(settings.n_resamples, MAX_RESAMPLES)):
        one = figure_left(counts) - figure_right(counts)
        draws.append(one[np.isfinite(one)])
    draws = np.concatenate(draws) if draws else np.empty(0)
    alpha = (1 - settings.confidence_level) / 2
    low, high = np.quantile(draws, [alpha, 1 - alpha]) if draws.size else (np.nan, np.nan)
    return {
        "metric": metric,
        "estimate": float(estimate),
        "low": float(low),
        "high": float(high),
        "n": len(pairs),
        "contains_zero": bool(low <= 0 <= high),
    }


def _per_tag(members: Sequence[tuple[Run, list]]) -> dict[str, Any] | None:
    by_model: dict[str, dict[str, list]] = {}
    for run, clips in members:
        by_model.setdefault(run.model, {})[run.setting] = clips
    for model, settings in by_model.items():
        if "original" in settings and "noise" in settings:
            out = {}
            for setting in ("original", "noise"):
                clips = settings[setting]
                scores = np.array([c["scores"] for c in clips])
                out[setting] = macro_auc(
                    clips[0]["tags"], scores, [c["gold"] for c in clips]
                ).per_tag
            tags = [t for t in out["original"] if t in out["noise"]]
            return {
                "model": model,
                "tags": tags,
                "original": [out["original"][t][0] for t in tags],
                "noise": [out["noise"][t][0] for t in tags],
            }
    return None


def tagging_report(
    runs: Sequence[Run], settings: ReportSettings, notes: list[str]
) -> dict[str, Any]:
    """``{"tasks": {task: {"name", "form", "metric", "rows", "baseline", "gains",
    "per_tag"}}, "understanding": {"columns", "rows"}, "figures": {}}`` (empty tasks when no
    run has a tagging task)."""
    names = report_names()
    found: dict[str, list[tuple[Run, list]]] = {}
    for run in runs:
        for task in run.tasks.values():
            if task.tagging_clips:
                found.setdefault(task.task, []).append((run, task.tagging_clips))
    tasks: dict[str, Any] = {}
    for name in sorted(found):
        members = found[name]
        form = members[0][1][0]["form"]
        rows = [
            {"model": run.model, "condition": run.setting, "n": len(clips), **figures_of(clips)}
            for run, clips in members
        ]
        gains = []
        for run, clips in members:
            if run.setting != "original":
                continue
            for other, other_clips in members:
                if other.model == run.model and other.setting != "original":
                    gain = _gain(clips, other_clips, settings, (name, run.model, other.setting))
                    if gain is not None:
                        gains.append({"model": run.model, "versus": other.setting, **gain})
        tasks[name] = {
            "name": names.get(name, name),
            "form": form,
            "metric": FORM_METRIC[form],
            "rows": rows,
            "baseline": _baseline(members[0][1]),
            "gains": gains,
            "per_tag": _per_tag(members) if form == "likelihood" else None,
        }
    return {"tasks": tasks, "understanding": _understanding(runs, tasks), "figures": {}}


def _understanding(runs: Sequence[Run], tasks: Mapping[str, Any]) -> dict[str, Any]:
    rows = []
    for run in runs:
        values: dict[str, float | None] = {}
        for column, (task, metric) in UNDERSTANDING_COLUMNS.items():
            if task == "rul_muchomusic":
                values[column] = (run.group_metrics.get(task) or {}).get(metric)
            elif task not in tasks and task in run.tasks:  # a question task: the harness's
                values[column] = run.tasks[task].metrics.get(metric)
            else:
                match = [
                    r
                    for r in (tasks.get(task) or {}).get("rows", ())
                    if r["model"] == run.model and r["condition"] == run.setting
                ]
                values[column] = match[0][metric] if match else None
        if any(v is not None for k, v in values.items() if k != "RUL-MuChoMusic"):
            rows.append({"model": run.model, "condition": run.setting, **values})
    return {"columns": list(UNDERSTANDING_COLUMNS), "rows": rows}
