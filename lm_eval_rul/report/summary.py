"""The report's numbers: one JSON-ready dict per set of runs (:func:`build_report`)."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..mcqa.voting import majority_from_answers, plurality_from_answers
from ..questions import derive_seed
from .breakdowns import category_breakdowns, category_keys, load_categories
from .comparisons import find_backbone, paired_comparisons, pi_correlations
from .factual.sections import factual_report
from .listening import listening_report
from .logged_metrics import mismatch_note
from .mmau import always_letter_baselines, label_breakdowns
from .run_keys import question_files_note
from .runs import Run, RunReadError
from .samples import Sample
from .settings import (
    BENCHMARK_NAMES,
    ReportSettings,
    mean_or_none,
    plays_no_audio,
    resample_groups,
    sort_runs,
)
from .stats import accuracy_ci
from .tagging.sections import tagging_report

__all__ = ["build_report"]


def _majority(samples: Sequence[Sample]) -> float | None:
    """Majority vote over folds (:func:`lm_eval_rul.mcqa.voting.majority_from_answers`, the
    same count as the harness's ``majority_acc``); None with a single fold."""
    vote = majority_from_answers((s.id, s.answer, s.correct_answer) for s in samples)
    return vote["majority_acc"] if vote["max_folds"] >= 2 else None


def _plurality(samples: Sequence[Sample]) -> float | None:
    """The authors' plurality vote over folds (``plurality_acc_release``); None with one fold."""
    if len({s.fold for s in samples}) < 2:
        return None
    vote = plurality_from_answers((s.id, s.fold, s.answer, s.correct_answer) for s in samples)
    return vote["plurality_acc_release"]


def _benchmark_size(tasks: Sequence[Any]) -> int | None:
    """Questions in the whole benchmark the tasks come from (each fold task has one document
    per question): the harness's count before ``--limit``; None when unrecorded."""
    sizes = [t.n_total for t in tasks if t.n_total is not None]
    return max(sizes) if sizes else None


def _table_row(run: Run, benchmark: str, settings: ReportSettings) -> dict[str, Any]:
    tasks = run.tasks_of(benchmark)
    samples = [s for t in tasks for s in t.samples]
    if not samples:
        raise RunReadError(f"{run.label}: benchmark {benchmark} has no logged samples")
    is_generation = any(t.is_generation for t in tasks)
    folds: dict[str, dict[str, Any]] = {}
    notes: list[str] = []
    for task in tasks:  # a printed acc the samples do not give: build_report's note
        from_samples = float(np.mean([s.correct for s in task.samples]))
        printed = task.metrics.get("acc")
        folds[str(task.fold if task.fold is not None else -1)] = {
            "task": task.task,
            "acc": printed if printed is not None else from_samples,
            "n": task.n,
        }
    groups = resample_groups(samples, settings.by, f"{run.label} on {benchmark}")
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
            f"{run.label}, {BENCHMARK_NAMES.get(benchmark, benchmark)}: the harness printed "
            f"majority_acc {printed_majority:.6f} but the logged samples give {majority:.6f}."
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
        "accuracy": accuracy.to_dict(),
        "n_questions": len({s.id for s in samples}),
        "n_questions_total": _benchmark_size(tasks),
        "n_samples": len(samples),
        "majority_vote": majority,
        "plurality_vote_release": _plurality(samples),
        "chance": float(np.mean([1.0 / s.n_options for s in samples])),
        "mean_pi": mean_or_none([s.pi for s in samples]),
        "parse_failure_rate": (
            mean_or_none([s.parse_failure for s in samples]) if is_generation else None
        ),
        "output_type": "generate_until" if is_generation else "multiple_choice",
        "notes": notes,
    }



def _coverage_note(runs: Sequence[Run], benchmark: str, notes: list[str]) -> None:
    keys = [{s.key for s in r.samples_of(benchmark)} for r in runs if r.tasks_of(benchmark)]
    if len(keys) < 2:
        return
    union, shared = set().union(*keys), set.intersection(*keys)
    if union != shared:
        covered = "; ".join(
            f"{r.label}: {len({s.id for s in r.samples_of(benchmark)}):,}"
            for r in runs
            if r.tasks_of(benchmark)
        )
        notes.append(
            f"{BENCHMARK_NAMES.get(benchmark, benchmark)}: the runs covered different questions "
            f"({len(shared)} (question, fold) pairs in all runs, {len(union)} in any; questions "
            f"per run: {covered}). Each table row uses its own questions (the numbers the "
            "harness printed, its n q column says how many of the benchmark's); paired "
            "comparisons use the pairs both runs have, and give their count."
        )


def _unread_names_note(runs: Sequence[Run]) -> str | None:
    """The runs' task names no task folder this command knows defines (a run from an
    ``--include_path`` folder reported without it): reported under their bare names."""
    from ..catalogue import for_question_set, known_task_names
    from .runs import benchmark_of

    known = known_task_names()
    unread = sorted(
        {
            t
            for r in runs
            for t in [*r.tasks, *r.predictions_only]
            if t not in known and for_question_set(benchmark_of(t)[0]) is None
        }
    )
    if not unread:
        return None
    shown = ", ".join(unread[:8]) + (f", ... (+{len(unread) - 8} more)" if len(unread) > 8 else "")
    return (
        f"{len(unread)} task name(s) no lm-eval-rul task folder defines could not be read as "
        f"a benchmark's: {shown}; they are reported under their own names, without their "
        "benchmark's names, keys or categories. A run from an --include_path folder: give "
        "report --include_path FOLDER."
    )


def build_report(runs: Sequence[Run], settings: ReportSettings | None = None) -> dict[str, Any]:
    """Every number of the report as a JSON-ready dict (no files written).

    Args:
        runs: From :func:`lm_eval_rul.report.runs.load_runs`.
        settings: Statistics options (defaults: 95%, 9,999 resamples, seed 0, by question).

    Raises:
        RunReadError: ``--by track`` without tracks, or an unknown ``text_backbone``.
    """
    settings = settings or ReportSettings()
    if not runs:
        raise RunReadError("no runs to report on")
    runs = sort_runs(runs)
    notes = [note for run in runs for note in run.notes]
    notes.extend(filter(None, [_unread_names_note(runs)]))
    notes += [  # every family: the printed figures its logged samples do not give
        mismatch_note(run.label, task.task, mismatch)
        for run in runs
        for task in sorted(run.tasks.values(), key=lambda t: t.task)
        for mismatch in task.mismatches
    ]
    needs_backbone = settings.text_backbone is not None or any(
        plays_no_audio(r.condition) for r in runs
    )
    backbone = find_backbone(runs, settings.text_backbone, notes) if needs_backbone else None
    categories, categories_source = {}, None
    if any(category_keys(t.question_set or t.benchmark) for r in runs for t in r.tasks.values()):
        categories, categories_source = load_categories(runs, settings.muchomusic_csv, notes)
    benchmarks: dict[str, Any] = {}
    for benchmark in sorted({b for r in runs for b in r.benchmarks()}):
        members = [r for r in runs if r.tasks_of(benchmark)]
        name = BENCHMARK_NAMES.get(benchmark, benchmark)
        notes.extend(filter(None, [question_files_note(members, benchmark, name)]))
        _coverage_note(members, benchmark, notes)
        rows = [_table_row(r, benchmark, settings) for r in members]
        for row in rows:
            notes.extend(row.pop("notes"))
        gains, leakage = paired_comparisons(members, benchmark, backbone, settings, notes)
        correlations, scatter = pi_correlations(members, benchmark, settings, notes)
        benchmarks[benchmark] = {
            "name": BENCHMARK_NAMES.get(benchmark, benchmark),
            "chance": float(np.mean([row["chance"] for row in rows])),
            "folds": sorted({f for row in rows for f in row["folds"]}, key=int),
            "rows": rows,
            "perception_gain": gains,
            "leakage": leakage,
            "correlations": correlations,
            "breakdowns": category_breakdowns(members, benchmark, categories, notes),
            "label_breakdowns": label_breakdowns(members, benchmark),
            "always_letter": always_letter_baselines(members, benchmark),
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
            "muchomusic_csv": categories_source,
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
        "predictions_only": [
            {"run": r.label, "task": task, **entry}
            for r in runs
            for task, entry in sorted(r.predictions_only.items())
        ],
        "factual": factual_report(runs, settings, notes),
        "tagging": tagging_report(runs, settings, notes),
        "listening": listening_report(runs, settings, backbone, notes),
        "pi_distributions": pi_distributions(runs, settings, notes),
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


def pi_distributions(
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
    kind = ""
    title = "Perceptual Index"
    if settings.pi_files:
        source = "from the --pi files"
        kind = "They are lm-eval-rul pi's: 16 shuffled prompts per question."
        title = "Perceptual Index (--pi files: lm-eval-rul pi, 16 shuffled prompts per question)"
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
                label = BENCHMARK_NAMES.get(benchmark, benchmark)
                if per_question and label not in values:
                    values[label] = {q: float(np.mean(v)) for q, v in per_question.items()}
                    chances[label] = {q: float(np.mean(v)) for q, v in chance.items()}
                    source = f"logged by the text-only run of {run.model}"
                    kind = (
                        "Each is 1 − p(correct) under the run's own prompt and option "
                        "order (not lm-eval-rul pi's 16 shuffled prompts), averaged over "
                        "folds."
                    )
                    title = (
                        "Perceptual Index per question, as the text-only model "
                        f"{run.model} scored it"
                    )
    summary = {}
    for label, pi in values.items():
        known = [qid for qid in pi if not math.isnan(chances[label][qid])]
        if len(known) < len(pi):
            notes.append(
                f"PI distribution of {label}: {len(pi) - len(known)} of {len(pi)} questions "
                "have no chance level (their PI row has no chance field and no run logged "
                "their options), so the share above chance counts the other questions only. "
                "Recompute the PI file with lm-eval-rul pi, or name it after its benchmark "
                "(--pi rul_muchomusic=FILE)."
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
        "kind": kind,
        "figure_title": title,
        "values": {label: list(pi.values()) for label, pi in values.items()},
        "summary": summary,
    }

