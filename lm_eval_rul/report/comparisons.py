"""Paired comparisons between runs: perception gain, text leakage, PI-accuracy correlation.

Each comparison uses the (question, fold) pairs both runs covered, a paired bootstrap
interval (resampled by question or track) and the Wilcoxon signed-rank p-value of the
per-question scores; an interval containing 0 is flagged. Runs made on different question
sets (:func:`~.run_keys.question_set_mismatch`) are not paired: a note says why.
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..questions import derive_seed
from .correlation import pearson
from .model_names import runs_named
from .run_keys import question_file_label, question_set_mismatch
from .runs import Run, RunReadError
from .samples import Sample
from .settings import (
    BENCHMARK_NAMES,
    REFERENCE_CONDITION,
    ReportSettings,
    base_benchmark,
    condition_rank,
    id_sort_key,
    plays_no_audio,
    resample_groups,
)
from .stats import leakage_ci, paired_difference_ci, wilcoxon_pvalue

__all__ = ["paired_comparisons", "pi_correlations", "find_backbone"]


def _aligned(a: Run, b: Run, benchmark: str) -> tuple[list[Sample], list[Sample], dict[str, Any]]:
    left = {s.key: s for s in a.samples_of(benchmark)}
    right = {s.key: s for s in b.samples_of(benchmark)}
    shared = sorted(left.keys() & right.keys(), key=lambda k: (id_sort_key(k[0]), k[1]))
    only_a = sorted(left.keys() - right.keys(), key=lambda k: (id_sort_key(k[0]), k[1]))
    only_b = sorted(right.keys() - left.keys(), key=lambda k: (id_sort_key(k[0]), k[1]))
    coverage = {
        "n_shared": len(shared),
        "n_dropped": len(only_a) + len(only_b),
        "only_in_a": len(only_a),
        "only_in_b": len(only_b),
        "examples_dropped": [list(k) for k in (only_a + only_b)[:5]],
    }
    return [left[k] for k in shared], [right[k] for k in shared], coverage


def _name(benchmark: str) -> str:
    return BENCHMARK_NAMES.get(benchmark, benchmark)


def _pairs(keys: Sequence[Sequence[Any]]) -> str:
    """``[["11", 0], ["11", 1]]`` -> ``question 11 (fold 0), question 11 (fold 1)``."""
    return ", ".join(
        f"question {qid}" + (f" (fold {fold})" if fold is not None and fold >= 0 else "")
        for qid, fold in keys
    )


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
    mismatch = question_set_mismatch(a, b, benchmark)
    if mismatch:
        notes.append(
            f"{_name(benchmark)}, {a.label} vs {b.label}: not compared, as {mismatch}; "
            "paired comparisons need both runs on the same question file."
        )
        return None
    left, right, coverage = _aligned(a, b, benchmark)
    if coverage["n_dropped"]:
        notes.append(
            f"{_name(benchmark)}, {a.label} vs {b.label}: the runs covered different "
            f"questions, so they are compared on the {coverage['n_shared']} (question, fold) "
            f"pairs both have; left out: {coverage['only_in_a']} only in {a.label} and "
            f"{coverage['only_in_b']} only in {b.label} (e.g. "
            f"{_pairs(coverage['examples_dropped'])})."
        )
    if not left:
        notes.append(
            f"{_name(benchmark)}, {a.label} vs {b.label}: no question in common; not compared."
        )
        return None
    groups = resample_groups(left, settings.by, f"{a.label} on {benchmark}")
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
    ids = sorted(qa, key=id_sort_key)
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
        "difference": difference.to_dict(),
        "wilcoxon_p": wilcoxon_pvalue([qa[i] for i in ids], [qb[i] for i in ids]),
        "n_questions": len(ids),
        "coverage": coverage,
    }
    if kind == "leakage":
        leakage = leakage_ci(x, y, **options)
        entry["leakage"] = leakage.to_dict()
        entry["flagged"] = leakage.contains_zero
    else:
        entry["flagged"] = difference.contains_zero
    return entry


def find_backbone(runs: Sequence[Run], name: str | None, notes: list[str]) -> Run | None:
    text_runs = [r for r in runs if r.is_text]
    if name is None:
        if len({r.pretrained for r in text_runs}) == 1:
            notes.append(
                "Text leakage is measured against the only text-only model, "
                f"{text_runs[0].model} (no --text-backbone given)."
            )
            return text_runs[0]
        if text_runs:
            notes.append(
                "Text leakage is not reported: there are several text-only models; choose one "
                f"with --text-backbone NAME ({', '.join(sorted({r.model for r in text_runs}))})."
            )
        return None
    matching = runs_named(text_runs, name, option="--text-backbone")
    if matching:
        return matching[0]
    raise RunReadError(
        f"--text-backbone {name!r} matches no text-only run; text-only models found: "
        f"{', '.join(sorted({r.model for r in text_runs})) or 'none'}"
    )


def paired_comparisons(
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
        originals = [r for r in model_runs if r.condition == REFERENCE_CONDITION]
        for original in originals:
            for other in (r for r in model_runs if r.condition != REFERENCE_CONDITION):
                entry = _paired_entry(
                    "perception_gain", original, other, benchmark, settings, notes
                )
                if entry:
                    gains.append(entry)
        for none in (r for r in model_runs if plays_no_audio(r.condition)):
            text = _backbone_run(runs, backbone, none, benchmark)
            if text is not None:
                entry = _paired_entry("leakage", none, text, benchmark, settings, notes)
                if entry:
                    leakage.append(entry)
    return gains, leakage


def _backbone_run(runs: Sequence[Run], backbone: Run | None, none: Run, benchmark: str):
    """The backbone's run of ``benchmark`` on ``none``'s question file, else its first run
    of ``benchmark`` (which :func:`_paired_entry` then refuses with a note)."""
    if backbone is None:
        return None
    candidates = [
        r
        for r in runs
        if r.is_text and r.pretrained == backbone.pretrained and r.tasks_of(benchmark)
    ]
    same = [r for r in candidates if question_set_mismatch(none, r, benchmark) is None]
    return (same or candidates or [None])[0]


def _pi_names(runs: Sequence[Run], benchmark: str) -> list[str]:
    """The ``--pi NAME`` a benchmark's PI file may be given under: the benchmark, its
    question set, and for a renamed ``music_mc`` benchmark the ``benchmark_name`` its
    tasks ran with (``--pi Bench-A=...`` for ``Bench-A`` and ``Bench-A_gen``)."""
    names = [benchmark, base_benchmark(benchmark)]
    for run in runs:
        for task in run.tasks_of(benchmark):
            given = task.metadata.get("benchmark_name")
            if task.benchmark != task.question_set and given not in (None, ""):
                names.append(str(given))
    return list(dict.fromkeys(names))


def _pi_source(
    runs: Sequence[Run], benchmark: str, settings: ReportSettings
) -> tuple[str | None, dict[str, float]]:
    for label in _pi_names(runs, benchmark):
        if label in settings.pi_files:
            pi_file = settings.pi_files[label]
            return f"--pi {label}={pi_file.path}", pi_file.pi
    stored: dict[str, float] = {}
    for run in runs:
        for sample in run.samples_of(benchmark):
            if sample.source_pi is not None:
                stored.setdefault(sample.id, sample.source_pi)
    if stored:
        return "the PI stored in the dataset", stored
    for run in (r for r in runs if r.is_text):  # the PI the text-only run logged
        logged: dict[str, list[float]] = defaultdict(list)
        for sample in run.samples_of(benchmark):
            if sample.pi is not None:
                logged[sample.id].append(sample.pi)
        if logged:
            return (
                f"the text-only run of {run.model}",
                {q: float(np.mean(v)) for q, v in logged.items()},
            )
    return None, {}


def _pi_run(runs: Sequence[Run], benchmark: str) -> Run | None:
    """The text-only run whose logged PI :func:`_pi_source` reads (its first)."""
    for run in (r for r in runs if r.is_text):
        if any(sample.pi is not None for sample in run.samples_of(benchmark)):
            return run
    return None


def _pi_kind(source: str | None) -> str:
    """Which PI ``source`` is, in words: ``pi``'s 16 shuffled prompts, or one run's prompt."""
    if source and source.startswith("--pi"):
        return "lm-eval-rul pi: 16 shuffled prompts per question"
    if source and source.startswith("the text-only run"):
        return "the run's own prompt, one option order per question and fold"
    return ""


def pi_correlations(
    runs: Sequence[Run], benchmark: str, settings: ReportSettings, notes: list[str]
) -> tuple[list[dict[str, Any]], dict[str, tuple[list[float], list[float]]]]:
    source, pi = _pi_source(runs, benchmark, settings)
    if not pi:
        notes.append(
            f"{_name(benchmark)}: no PI-accuracy correlation, as no PI is known for its "
            "questions (no text-only run logged one); pass --pi "
            f"{_pi_names(runs, benchmark)[-1]}=PI.jsonl (written by lm-eval-rul pi)."
        )
        return [], {}
    groups: dict[str, list[Run]] = defaultdict(list)
    files = {r.question_file(benchmark) for r in runs if r.tasks_of(benchmark)}
    for run in runs:
        if run.tasks_of(benchmark):
            name = "text-only" if run.is_text else f"audio ({run.setting})"
            if len(files) > 1:  # per question file: one id may be another question elsewhere
                where = question_file_label(run.question_file(benchmark) or "")
                name = f"{'text-only' if run.is_text else f'audio ({run.condition})'} on {where}"
            groups[name].append(run)
    entries, scatter = [], {}
    own = _pi_run(runs, benchmark) if (source or "").startswith("the text-only run") else None
    for name in sorted(groups, key=lambda g: condition_rank(groups[g][0].condition)):
        members = groups[name]
        if own is not None and own in members:  # its accuracy against its own PI: circular
            notes.append(
                f"{_name(benchmark)}, PI-accuracy of {name}: not reported, as its PI comes "
                "from the same run (a question's PI and its accuracy are read from the same "
                "answers); pass --pi to set it against lm-eval-rul pi's PI."
            )
            continue
        per_run = [_per_question(r.samples_of(benchmark)) for r in members]
        shared = set(pi).intersection(*per_run)
        union = set().union(*per_run)
        ids = sorted(shared, key=id_sort_key)
        dropped = len(union - shared)
        if dropped:
            notes.append(
                f"{_name(benchmark)}, PI-accuracy of {name}: {dropped} of {len(union)} questions "
                "left out (not covered by every run of the group, or without a PI)."
            )
        if len(ids) < 3:
            notes.append(
                f"{_name(benchmark)}, PI-accuracy of {name}: only {len(ids)} questions, too few "
                "for a correlation; not reported."
            )
            continue
        x = [pi[i] for i in ids]
        y = [float(np.mean([scores[i] for scores in per_run])) for i in ids]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            correlation = pearson(x, y, confidence_level=settings.confidence_level)
        notes.extend(f"{_name(benchmark)}, PI-accuracy of {name}: {w.message}" for w in caught)
        entries.append(
            {
                "group": name,
                "runs": [r.label for r in members],
                "pi_source": source,
                "pi_kind": _pi_kind(source),
                "n_dropped": dropped,
                **correlation.to_dict(),
            }
        )
        scatter[name] = (x, y)
    return entries, scatter


