"""The paper's tables and figures from harness outputs: ``report.md`` + ``report.json``.

:func:`build_report` turns :class:`~lm_eval_rul.runs.Run` objects into one
JSON-ready dict holding every number (per benchmark: the accuracy table, paired
comparisons, text leakage, PI-accuracy correlations), :func:`write_report` draws the
figures and writes ``report.json`` and ``report.md``.

Definitions (see the README section "Report"):

* mean accuracy = mean over all logged (question, fold) pairs (the harness's group
  ``acc`` with ``weight_by_size``); its interval resamples questions (all folds of a
  question together) or, with ``by="track"``, tracks;
* majority vote: a question is right when its correct answer has strictly more votes
  than any other answer chosen over its folds (ties and unparsed answers never win;
  :func:`lm_eval_rul.stats.majority_vote`);
* perception gain ``original - X`` for every other condition X of the same model, and
  leakage ``max(0, none - text backbone)``, on the (question, fold) pairs both runs
  covered, with a paired bootstrap interval and a Wilcoxon signed-rank p-value of the
  per-question scores; *flagged* when the interval contains zero;
* PI vs accuracy: per question, accuracy averaged over the runs of a group and their
  folds, against the question's PI (a ``--pi`` file named after the benchmark, else the
  ``source_pi`` stored in the dataset);
* share above chance: the share of questions whose PI exceeds their own chance level
  ``1 - 1/n_options``;
* a run is one model under one audio condition and one set of audio settings
  (:attr:`lm_eval_rul.runs.Run.setting`, e.g. ``noise, seed=1``).
"""

from __future__ import annotations

import json
import math
import warnings
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from . import plots
from .errors import UserInputError
from .runs import TEXT_CONDITION, PIFile, Run, RunReadError, Sample
from .scoring import majority_from_answers
from .seeding import derive_seed
from .stats import (
    DEFAULT_N_RESAMPLES,
    Interval,
    accuracy_ci,
    leakage_ci,
    paired_difference_ci,
    pearson,
    wilcoxon_pvalue,
)

__all__ = [
    "ReportSettings",
    "ReportSettingsError",
    "build_report",
    "write_report",
    "render_markdown",
    "CONDITION_ORDER",
]

#: Conditions in display order; others follow alphabetically.
CONDITION_ORDER = (TEXT_CONDITION, "original", "noise", "silence", "random", "none")
_BENCHMARK_NAMES = {
    "muchomusic": "MuChoMusic",
    "rul_muchomusic": "RUL-MuChoMusic",
    "muchomusic_gen": "MuChoMusic (generation)",
    "rul_muchomusic_gen": "RUL-MuChoMusic (generation)",
}


class ReportSettingsError(UserInputError, ValueError):
    """An option of the report that cannot be used (confidence level, resamples, ...)."""


_METHODS = ("percentile", "basic", "BCa")


@dataclass
class ReportSettings:
    """Options of a report.

    Attributes:
        confidence_level: Coverage of every interval.
        n_resamples: Bootstrap resamples.
        seed: Base seed; each interval's generator is derived from it and the comparison.
        by: ``"question"`` or ``"track"``: the unit the bootstrap resamples.
        method: scipy bootstrap method (``percentile``, ``basic``, ``BCa``).
        text_backbone: Model name (or ``pretrained``) of the text run used for leakage.
        pi_files: Label -> :class:`~lm_eval_rul.runs.PIFile` (from ``--pi``); a label equal
            to a benchmark name supplies that benchmark's PI for the correlations.

    Raises:
        ReportSettingsError: An option out of range; the message names it and the fix.
    """

    confidence_level: float = 0.95
    n_resamples: int = DEFAULT_N_RESAMPLES
    seed: int = 0
    by: str = "question"
    method: str = "percentile"
    text_backbone: str | None = None
    pi_files: dict[str, PIFile] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.by not in ("question", "track"):
            raise ReportSettingsError(f"by must be 'question' or 'track', got {self.by!r}")
        if not 0.0 < self.confidence_level < 1.0:
            raise ReportSettingsError(
                f"--confidence {self.confidence_level!r} is not a level in (0, 1); e.g. 0.95"
            )
        if int(self.n_resamples) < 1:
            raise ReportSettingsError(
                f"--n-resamples {self.n_resamples!r} must be a positive number; e.g. 9999"
            )
        if self.method not in _METHODS:
            raise ReportSettingsError(f"--method {self.method!r} is not one of {_METHODS}")


def _condition_rank(condition: str) -> tuple[int, str]:
    if condition in CONDITION_ORDER:
        return CONDITION_ORDER.index(condition), condition
    return len(CONDITION_ORDER), condition


def _sort_runs(runs: Sequence[Run]) -> list[Run]:
    return sorted(
        runs, key=lambda r: (not r.is_text, r.model, _condition_rank(r.condition), r.variant)
    )


def _groups(samples: Sequence[Sample], by: str, where: str) -> list[str]:
    if by == "question":
        return [s.id for s in samples]
    missing = sorted({s.id for s in samples if s.track is None}, key=_id_key)
    if missing:
        raise RunReadError(
            f"--by track: {where} has no track for {len(missing)} question(s) (e.g. ids "
            f"{missing[:5]}); rerun with --metadata muchomusic_csv=PATH so the documents "
            "carry their track, or resample by question (leave out --by)"
        )
    return [str(s.track) for s in samples]


def _id_key(qid: str) -> tuple[int, int | str]:
    return (0, int(qid)) if qid.isdigit() else (1, qid)


def _mean(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return float(np.mean(present)) if present else None


def _majority(samples: Sequence[Sample]) -> float | None:
    """Majority vote over folds (:func:`lm_eval_rul.scoring.majority_from_answers`, the
    same count as the harness's ``majority_acc``); None with a single fold."""
    vote = majority_from_answers((s.id, s.answer, s.correct_answer) for s in samples)
    return vote["majority_acc"] if vote["max_folds"] >= 2 else None


def _interval(interval: Interval) -> dict[str, Any]:
    return interval.to_dict()


def _table_row(run: Run, benchmark: str, settings: ReportSettings) -> dict[str, Any]:
    tasks = run.tasks_of(benchmark)
    samples = [s for t in tasks for s in t.samples]
    if not samples:
        raise RunReadError(f"{run.label}: benchmark {benchmark} has no logged samples")
    is_generation = any(t.is_generation for t in tasks)
    folds: dict[str, dict[str, Any]] = {}
    notes: list[str] = []
    for task in tasks:
        from_samples = float(np.mean([s.correct for s in task.samples]))
        printed = task.metrics.get("acc")
        if printed is not None and not math.isclose(printed, from_samples, abs_tol=1e-9):
            notes.append(
                f"{run.label}: {task.task} acc printed {printed:.6f} but samples give "
                f"{from_samples:.6f} (the logged samples may come from another run)"
            )
        folds[str(task.fold if task.fold is not None else -1)] = {
            "task": task.task,
            "acc": printed if printed is not None else from_samples,
            "n": task.n,
        }
    groups = _groups(samples, settings.by, f"{run.label} on {benchmark}")
    accuracy = accuracy_ci(
        [s.correct for s in samples],
        groups=groups,
        confidence_level=settings.confidence_level,
        n_resamples=settings.n_resamples,
        seed=derive_seed("report", settings.seed, "accuracy", benchmark, run.label),
        method=settings.method,
    )
    majority = _majority(samples)
    printed_majority = run.group_metrics.get(benchmark, {}).get("majority_acc")
    if (
        majority is not None
        and printed_majority is not None
        and not math.isclose(majority, printed_majority, abs_tol=1e-9)
    ):
        notes.append(
            f"{run.label}: {benchmark} majority_acc printed {printed_majority:.6f} but the "
            f"logged samples give {majority:.6f}"
        )
    return {
        "run": run.label,
        "model": run.model,
        "pretrained": run.pretrained,
        "model_type": run.model_type,
        "condition": run.condition,
        "setting": run.setting,
        "audio_settings": dict(run.audio_settings),
        "folds": folds,
        "accuracy": _interval(accuracy),
        "n_questions": len({s.id for s in samples}),
        "n_samples": len(samples),
        "majority_vote": majority,
        "chance": float(np.mean([1.0 / s.n_options for s in samples])),
        "mean_pi": _mean([s.pi for s in samples]),
        "parse_failure_rate": _mean([s.parse_failure for s in samples]) if is_generation else None,
        "output_type": "generate_until" if is_generation else "multiple_choice",
        "notes": notes,
    }


def _aligned(a: Run, b: Run, benchmark: str) -> tuple[list[Sample], list[Sample], dict[str, Any]]:
    left = {s.key: s for s in a.samples_of(benchmark)}
    right = {s.key: s for s in b.samples_of(benchmark)}
    shared = sorted(left.keys() & right.keys(), key=lambda k: (_id_key(k[0]), k[1]))
    only_a = sorted(left.keys() - right.keys(), key=lambda k: (_id_key(k[0]), k[1]))
    only_b = sorted(right.keys() - left.keys(), key=lambda k: (_id_key(k[0]), k[1]))
    coverage = {
        "n_shared": len(shared),
        "n_dropped": len(only_a) + len(only_b),
        "only_in_a": len(only_a),
        "only_in_b": len(only_b),
        "examples_dropped": [list(k) for k in (only_a + only_b)[:5]],
    }
    return [left[k] for k in shared], [right[k] for k in shared], coverage


def _per_question(samples: Sequence[Sample]) -> dict[str, float]:
    scores: dict[str, list[float]] = defaultdict(list)
    for sample in samples:
        scores[sample.id].append(sample.correct)
    return {qid: float(np.mean(v)) for qid, v in scores.items()}


def _paired_entry(
    kind: str,
    a: Run,
    b: Run,
    benchmark: str,
    settings: ReportSettings,
    notes: list[str],
) -> dict[str, Any] | None:
    left, right, coverage = _aligned(a, b, benchmark)
    if coverage["n_dropped"]:
        notes.append(
            f"{benchmark}: {a.label} vs {b.label}: runs covered different questions; compared "
            f"on the {coverage['n_shared']} shared (question, fold) pairs, dropped "
            f"{coverage['only_in_a']} only in {a.label} and {coverage['only_in_b']} only in "
            f"{b.label} (e.g. {coverage['examples_dropped']})"
        )
    if not left:
        notes.append(
            f"{benchmark}: {a.label} vs {b.label}: no shared (question, fold) pair; skipped"
        )
        return None
    groups = _groups(left, settings.by, f"{a.label} on {benchmark}")
    options = dict(
        groups=groups,
        confidence_level=settings.confidence_level,
        n_resamples=settings.n_resamples,
        seed=derive_seed("report", settings.seed, kind, benchmark, a.label, b.label),
        method=settings.method,
    )
    x = [s.correct for s in left]
    y = [s.correct for s in right]
    difference = paired_difference_ci(x, y, **options)
    qa, qb = _per_question(left), _per_question(right)
    ids = sorted(qa, key=_id_key)
    entry: dict[str, Any] = {
        "kind": kind,
        "model": a.model,
        "a": a.label,
        "b": b.label,
        "condition_a": a.condition,
        "condition_b": b.condition,
        "setting_a": a.setting,
        "setting_b": b.setting,
        "acc_a": float(np.mean(x)),
        "acc_b": float(np.mean(y)),
        "difference": _interval(difference),
        "wilcoxon_p": wilcoxon_pvalue([qa[i] for i in ids], [qb[i] for i in ids]),
        "n_questions": len(ids),
        "coverage": coverage,
    }
    if kind == "leakage":
        leakage = leakage_ci(x, y, **options)
        entry["leakage"] = _interval(leakage)
        entry["flagged"] = leakage.contains_zero
    else:
        entry["flagged"] = difference.contains_zero
    return entry


def _find_backbone(runs: Sequence[Run], name: str | None, notes: list[str]) -> Run | None:
    text_runs = [r for r in runs if r.is_text]
    if name is None:
        if len({r.pretrained for r in text_runs}) == 1:
            notes.append(
                f"text leakage: no --text-backbone given; using the only text-only model, "
                f"{text_runs[0].model}"
            )
            return text_runs[0]
        if text_runs:
            notes.append(
                "text leakage: several text-only models and no --text-backbone; pass "
                f"--text-backbone NAME (one of {sorted({r.model for r in text_runs})})"
            )
        return None
    for run in text_runs:
        if name in (run.model, run.pretrained):
            return run
    raise RunReadError(
        f"--text-backbone {name!r} matches no text-only run; text-only models found: "
        f"{sorted({r.model for r in text_runs}) or 'none'}"
    )


def _comparisons(
    runs: Sequence[Run], benchmark: str, backbone: Run | None, settings, notes
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    audio: dict[str, list[Run]] = defaultdict(list)
    for run in runs:  # already sorted by condition, then audio settings
        if not run.is_text and run.tasks_of(benchmark):
            audio[run.pretrained].append(run)
    gains, leakage = [], []
    for model_runs in audio.values():
        # every original-audio run (several only when their audio settings differ) against
        # every other condition of the same model
        originals = [r for r in model_runs if r.condition == "original"]
        for original in originals:
            for other in (r for r in model_runs if r.condition != "original"):
                entry = _paired_entry(
                    "perception_gain", original, other, benchmark, settings, notes
                )
                if entry:
                    gains.append(entry)
        for none in (r for r in model_runs if r.condition == "none"):
            if backbone is not None and backbone.tasks_of(benchmark):
                entry = _paired_entry("leakage", none, backbone, benchmark, settings, notes)
                if entry:
                    leakage.append(entry)
    return gains, leakage


def _pi_source(
    runs: Sequence[Run], benchmark: str, settings: ReportSettings
) -> tuple[str | None, dict[str, float]]:
    base = benchmark.removesuffix("_gen")
    for label in (benchmark, base):
        if label in settings.pi_files:
            pi_file = settings.pi_files[label]
            return f"--pi {label}={pi_file.path}", pi_file.pi
    stored: dict[str, float] = {}
    for run in runs:
        for sample in run.samples_of(benchmark):
            if sample.source_pi is not None:
                stored.setdefault(sample.id, sample.source_pi)
    if stored:
        return "source_pi stored in the dataset", stored
    return None, {}


def _correlations(
    runs: Sequence[Run], benchmark: str, settings: ReportSettings, notes: list[str]
) -> tuple[list[dict[str, Any]], dict[str, tuple[list[float], list[float]]]]:
    source, pi = _pi_source(runs, benchmark, settings)
    if not pi:
        notes.append(
            f"{benchmark}: no PI for the PI-accuracy correlation: pass "
            f"--pi {benchmark.removesuffix('_gen')}=PI.jsonl (from lm-eval-rul pi)"
        )
        return [], {}
    groups: dict[str, list[Run]] = defaultdict(list)
    for run in runs:
        if run.tasks_of(benchmark):
            groups["text-only" if run.is_text else f"audio ({run.setting})"].append(run)
    entries, scatter = [], {}
    for name in sorted(groups, key=lambda g: _condition_rank(groups[g][0].condition)):
        members = groups[name]
        per_run = [_per_question(r.samples_of(benchmark)) for r in members]
        shared = set(pi).intersection(*per_run)
        union = set().union(*per_run)
        ids = sorted(shared, key=_id_key)
        dropped = len(union - shared)
        if dropped:
            notes.append(
                f"{benchmark}: PI-accuracy ({name}): {dropped} of {len(union)} questions dropped "
                "(not covered by every run of the group or without a PI)"
            )
        if len(ids) < 3:
            notes.append(f"{benchmark}: PI-accuracy ({name}): only {len(ids)} questions; skipped")
            continue
        x = [pi[i] for i in ids]
        y = [float(np.mean([scores[i] for scores in per_run])) for i in ids]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            correlation = pearson(x, y, confidence_level=settings.confidence_level)
        notes.extend(f"{benchmark}: PI-accuracy ({name}): {w.message}" for w in caught)
        entries.append(
            {
                "group": name,
                "runs": [r.label for r in members],
                "pi_source": source,
                "n_dropped": dropped,
                **correlation.to_dict(),
            }
        )
        scatter[name] = (x, y)
    return entries, scatter


def _coverage_note(runs: Sequence[Run], benchmark: str, notes: list[str]) -> None:
    keys = [{s.key for s in r.samples_of(benchmark)} for r in runs if r.tasks_of(benchmark)]
    if len(keys) < 2:
        return
    union, shared = set().union(*keys), set.intersection(*keys)
    if union != shared:
        notes.append(
            f"{benchmark}: runs disagree on which questions they covered ({len(shared)} "
            f"(question, fold) pairs in all runs, {len(union)} in any): each table row uses its "
            "own questions (the numbers the harness printed); paired comparisons use the "
            "intersection"
        )


def build_report(runs: Sequence[Run], settings: ReportSettings | None = None) -> dict[str, Any]:
    """Every number of the report as a JSON-ready dict (no files written).

    Args:
        runs: From :func:`lm_eval_rul.runs.load_runs`.
        settings: Statistics options (defaults: 95%, 9,999 resamples, seed 0, by question).

    Raises:
        RunReadError: ``--by track`` without tracks, or an unknown ``text_backbone``.
    """
    settings = settings or ReportSettings()
    if not runs:
        raise RunReadError("no runs to report on")
    runs = _sort_runs(runs)
    notes = [note for run in runs for note in run.notes]
    needs_backbone = settings.text_backbone is not None or any(r.condition == "none" for r in runs)
    backbone = _find_backbone(runs, settings.text_backbone, notes) if needs_backbone else None
    benchmarks: dict[str, Any] = {}
    for benchmark in sorted({b for r in runs for b in r.benchmarks()}):
        members = [r for r in runs if r.tasks_of(benchmark)]
        _coverage_note(members, benchmark, notes)
        rows = [_table_row(r, benchmark, settings) for r in members]
        for row in rows:
            notes.extend(row.pop("notes"))
        gains, leakage = _comparisons(members, benchmark, backbone, settings, notes)
        correlations, scatter = _correlations(members, benchmark, settings, notes)
        benchmarks[benchmark] = {
            "name": _BENCHMARK_NAMES.get(benchmark, benchmark),
            "chance": float(np.mean([row["chance"] for row in rows])),
            "folds": sorted({f for row in rows for f in row["folds"]}, key=int),
            "rows": rows,
            "perception_gain": gains,
            "leakage": leakage,
            "correlations": correlations,
            "_scatter": scatter,
        }
    return {
        "settings": {
            "confidence_level": settings.confidence_level,
            "n_resamples": settings.n_resamples,
            "seed": settings.seed,
            "resampled_by": settings.by,
            "bootstrap_method": settings.method,
            "text_backbone": backbone.label if backbone else None,
            "pi_files": {k: v.path for k, v in settings.pi_files.items()},
        },
        "runs": [
            {
                "label": r.label,
                "model": r.model,
                "pretrained": r.pretrained,
                "model_type": r.model_type,
                "condition": r.condition,
                "setting": r.setting,
                "audio_settings": dict(r.audio_settings),
                "model_args": {k: str(v) for k, v in r.model_args.items()},
                "tasks": sorted(r.tasks),
                "results_files": [str(p) for p in r.results_files],
            }
            for r in runs
        ],
        "benchmarks": benchmarks,
        "pi_distributions": _pi_distributions(runs, settings, notes),
        "notes": notes,
    }


def _sample_chance(runs: Sequence[Run], benchmarks: Sequence[str]) -> dict[str, float]:
    """Question id -> ``1 - 1/n_options`` from the documents the runs logged."""
    per_question: dict[str, list[float]] = defaultdict(list)
    for run in runs:
        for benchmark in benchmarks:
            for sample in run.samples_of(benchmark):
                per_question[sample.id].append(1.0 - 1.0 / sample.n_options)
    return {qid: float(np.mean(v)) for qid, v in per_question.items()}


def _pi_distributions(
    runs: Sequence[Run], settings: ReportSettings, notes: list[str]
) -> dict[str, Any]:
    """Per-question PI of each benchmark: the ``--pi`` files, else a text run's own PI.

    Each question's PI is compared with its own chance level ``1 - 1/n_options`` (the
    ``chance`` of a ``lm-eval-rul pi`` row, else the options of the documents the runs
    logged for a ``--pi`` label named after a benchmark).
    """
    values: dict[str, dict[str, float]] = {}
    chances: dict[str, dict[str, float]] = {}
    source = None
    if settings.pi_files:
        source = "--pi files"
        for label, pi_file in settings.pi_files.items():
            values[label] = dict(pi_file.pi)
            from_docs = _sample_chance(runs, [label, f"{label}_gen"])
            chances[label] = {
                qid: pi_file.chance.get(qid, from_docs.get(qid, math.nan)) for qid in pi_file.pi
            }
    else:
        for run in (r for r in runs if r.is_text):
            for benchmark in run.benchmarks():
                per_question: dict[str, list[float]] = defaultdict(list)
                chance: dict[str, list[float]] = defaultdict(list)
                for sample in run.samples_of(benchmark):
                    if sample.pi is not None:
                        per_question[sample.id].append(sample.pi)
                        chance[sample.id].append(1.0 - 1.0 / sample.n_options)
                label = _BENCHMARK_NAMES.get(benchmark, benchmark)
                if per_question and label not in values:
                    values[label] = {q: float(np.mean(v)) for q, v in per_question.items()}
                    chances[label] = {q: float(np.mean(v)) for q, v in chance.items()}
                    source = f"perceptual_index logged by {run.label}"
    summary = {}
    for label, pi in values.items():
        known = [qid for qid in pi if not math.isnan(chances[label][qid])]
        if len(known) < len(pi):
            notes.append(
                f"PI distribution {label}: {len(pi) - len(known)} of {len(pi)} questions have "
                "no chance level (their PI row has no 'chance' and no run logged their "
                "options); 'share above chance' counts the other questions only. Recompute the "
                "PI file with lm-eval-rul pi, or name it after its benchmark (--pi "
                "rul_muchomusic=FILE)"
            )
        summary[label] = {
            "n": len(pi),
            "mean": float(np.mean(list(pi.values()))),
            "median": float(np.median(list(pi.values()))),
            "share_above_chance": (
                float(np.mean([pi[q] > chances[label][q] for q in known])) if known else None
            ),
            "mean_chance": float(np.mean([chances[label][q] for q in known])) if known else None,
            "n_without_chance": len(pi) - len(known),
        }
    return {
        "source": source,
        "values": {label: list(pi.values()) for label, pi in values.items()},
        "summary": summary,
    }


def _figures(report: dict[str, Any], out: Path) -> None:
    level = report["settings"]["confidence_level"]
    figures_dir = out / "figures"
    for benchmark, data in report["benchmarks"].items():
        figures: dict[str, str] = {}
        rows = data["rows"]
        path = plots.accuracy_bars(
            figures_dir / f"accuracy_{benchmark}.png",
            [r["run"] for r in rows],
            [r["accuracy"]["estimate"] for r in rows],
            [r["accuracy"]["low"] for r in rows],
            [r["accuracy"]["high"] for r in rows],
            chance=data["chance"],
            title=f"{data['name']}: accuracy",
            confidence_level=level,
        )
        figures["accuracy"] = str(path.relative_to(out))
        audio_rows = [r for r in rows if r["condition"] != TEXT_CONDITION]
        if audio_rows:
            models = list(dict.fromkeys(r["model"] for r in audio_rows))
            ranks = {
                r["setting"]: (_condition_rank(r["condition"]), r["setting"]) for r in audio_rows
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
                figures_dir / f"conditions_{benchmark}.png",
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
                figures_dir / f"pi_vs_accuracy_{benchmark}.png",
                scatter,
                title=f"{data['name']}: per-question PI vs accuracy",
                annotations=annotations,
            )
            figures["pi_vs_accuracy"] = str(path.relative_to(out))
        data["figures"] = figures
    distributions = report["pi_distributions"]
    if distributions["values"]:
        path = plots.pi_histograms(
            figures_dir / "pi_histogram.png",
            {_BENCHMARK_NAMES.get(k, k): v for k, v in distributions["values"].items()},
            title=f"Perceptual Index ({distributions['source']})",
        )
        distributions["figure"] = str(path.relative_to(out))


def write_report(report: dict[str, Any], out: str | Path) -> dict[str, Path]:
    """Draw the figures, then write ``report.json`` and ``report.md`` into ``out``.

    Args:
        report: From :func:`build_report` (its figure paths are filled in here).
        out: Report folder (created).

    Returns:
        ``{"json": ..., "markdown": ...}`` paths.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    _figures(report, out)
    for data in report["benchmarks"].values():
        data.pop("_scatter", None)
    json_path = out / "report.json"
    json_path.write_text(
        json.dumps(_finite(report), indent=1, allow_nan=False, default=_json_default) + "\n"
    )
    md_path = out / "report.md"
    md_path.write_text(render_markdown(report))
    return {"json": json_path, "markdown": md_path}


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


def render_markdown(report: dict[str, Any]) -> str:
    """``report.md``: settings, one section per benchmark (tables + figures), notes."""
    settings = report["settings"]
    level = f"{settings['confidence_level']:.0%}"
    lines = [
        "# lm-eval-rul report",
        "",
        f"{len(report['runs'])} runs; {level} bootstrap intervals resampled by "
        f"{settings['resampled_by']} ({settings['n_resamples']} resamples, "
        f"{settings['bootstrap_method']}, seed {settings['seed']}). Every number is in "
        "`report.json`.",
        "",
    ]
    for data in report["benchmarks"].values():
        folds = [f for f in data["folds"] if f != "-1"]
        fold_cols = [f"fold {f}" for f in folds]
        lines += [f"## {data['name']}", "", f"Chance: {data['chance']:.3f}.", ""]
        header = ["model", "audio", *fold_cols, f"mean acc [{level} CI]", "n q"]
        header += ["majority vote"] if folds else []
        header += ["mean PI", "parse fail"]
        lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        for row in data["rows"]:
            cells = [row["model"], row["setting"]]
            cells += [_pct(row["folds"].get(f, {}).get("acc")) for f in folds]
            cells += [_ci(row["accuracy"]), str(row["n_questions"])]
            cells += [_pct(row["majority_vote"])] if folds else []
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
                    f"| {e['model']} | {e['setting_a']} − {e['setting_b']} | "
                    f"{e['acc_a']:.3f} | {e['acc_b']:.3f} | {_signed_ci(e['difference'])} | "
                    f"{_p(e['wilcoxon_p'])} | {e['n_questions']} | "
                    f"{'⚠ not distinguishable from 0' if e['flagged'] else ''} |"
                )
            lines.append("")
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
                    f"| {e['model']} | {e['b']} | {e['acc_a']:.3f} | {e['acc_b']:.3f} | "
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
                    f"| {c['group']} | {interval} | {_p(c['pvalue'])} | {c['n']} | "
                    f"{c['pi_source']} |"
                )
            lines.append("")
        for key, caption in (
            ("accuracy", "accuracy"),
            ("conditions", "audio conditions"),
            ("pi_vs_accuracy", "PI vs accuracy"),
        ):
            if key in data.get("figures", {}):
                lines.append(f"![{data['name']}: {caption}]({data['figures'][key]})")
        lines.append("")
    distributions = report["pi_distributions"]
    if distributions["summary"]:
        lines += [
            "## Perceptual Index distributions",
            "",
            f"From {distributions['source']}.",
            "",
            "| benchmark | n q | mean PI | median | chance PI (1 − 1/n options) | "
            "share above chance |",
            "|---|---|---|---|---|---|",
        ]
        for label, s in distributions["summary"].items():
            lines.append(
                f"| {_BENCHMARK_NAMES.get(label, label)} | {s['n']} | {s['mean']:.3f} | "
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
        lines.append(f"| {run['label']} | {run['model_type']} `{run['pretrained']}` | {files} |")
    return "\n".join(lines) + "\n"
