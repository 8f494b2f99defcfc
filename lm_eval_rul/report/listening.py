"""Which items need the audio: each item's listening class, per benchmark and model.

For each benchmark and each audio model, over that model's runs (which differ by their
audio condition), every item the ``original`` run answered gets one class:

* ``missed``: wrong with ``original`` (the whole clip);
* ``needs_audio``: right with ``original`` and wrong in every no-audio run of the same
  model (the conditions that read nothing of the item: ``none``, ``noise``, ``silence``);
* ``answered_without_audio``: right with ``original`` and right in at least one of them.

So ``original``'s accuracy splits into the shares of ``needs_audio`` and
``answered_without_audio``. An item is *right* in a run when it is right in more than half
of the folds that run logged for it (one fold: that fold). With letter scoring (the
log-likelihood tasks) each item also gets ``p(correct)`` per run (``1 − PI`` of that run's
sample, the normalised probability of the correct letter, averaged over folds) and its
**audio reliance** ``p_original(correct) − max over the no-audio runs of p(correct)``.

With ``excerpt`` runs (:mod:`lm_eval_rul.audio.conditions.excerpt`), each ``needs_audio``
item gets the shortest excerpt with which it is right; every item an excerpt run logged gets
``needs_whole_clip``: right with the whole clip only (``needs_audio`` and right in none of
the excerpts), false for every other item, None when no excerpt run logged it. The excerpt
runs of one length are pooled whatever their ``excerpt_at``.

Everything is linear in the items: each run's samples are read once into a map by id.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..audio.conditions import NOTHING, REFERENCE_CONDITION
from ..audio.conditions.excerpt import EXCERPT_SECONDS, Excerpt
from ..questions import derive_seed
from .run_keys import question_file_label
from .runs import Run
from .settings import BENCHMARK_NAMES, ReportSettings, audio_condition_of, id_sort_key
from .stats import accuracy_ci

__all__ = [
    "CLASSES",
    "EXCERPT_CONDITION",
    "ItemScore",
    "classify_item",
    "audio_reliance",
    "shortest_excerpt",
    "listening_report",
]

#: The classes, in the order the report lists them.
CLASSES: tuple[str, ...] = ("needs_audio", "answered_without_audio", "missed")
#: The condition whose runs hear part of the clip (their length: ``excerpt_seconds``).
EXCERPT_CONDITION = Excerpt.name


@dataclass(frozen=True)
class ItemScore:
    """One item in one run: the share of its folds answered right, and ``p(correct)``
    averaged over them (None: not letter scoring)."""

    correct: float
    p_correct: float | None
    n_folds: int

    @property
    def right(self) -> bool:
        return self.correct > 0.5


def classify_item(original: bool, without_audio: Sequence[bool]) -> str:
    """The listening class of an item from whether it was right with the whole clip and
    in each no-audio run.

    >>> classify_item(True, [False, False]), classify_item(True, [False, True])
    ('needs_audio', 'answered_without_audio')
    >>> classify_item(False, [True])
    'missed'
    """
    if not without_audio:
        raise ValueError("an item's class needs at least one no-audio run")
    if not original:
        return "missed"
    return "answered_without_audio" if any(without_audio) else "needs_audio"


def audio_reliance(p_original: float | None, p_without: Sequence[float | None]) -> float | None:
    """``p_original − max(p_without)``; None when any probability is unknown.

    >>> round(audio_reliance(0.9, [0.3, 0.5]), 6)
    0.4
    """
    if p_original is None or not p_without or any(p is None for p in p_without):
        return None
    return float(p_original - max(p_without))  # type: ignore[type-var]


def shortest_excerpt(right_by_seconds: dict[float, bool]) -> float | None:
    """The shortest excerpt length with which the item was right (None: none).

    >>> shortest_excerpt({3.0: False, 10.0: True, 5.0: True}), shortest_excerpt({3.0: False})
    (5.0, None)
    """
    lengths = [seconds for seconds, right in right_by_seconds.items() if right]
    return min(lengths) if lengths else None


def _scores(run: Run, benchmark: str) -> dict[str, ItemScore]:
    """Item id -> its :class:`ItemScore` in ``run`` (one pass over the samples)."""
    correct: dict[str, list[float]] = defaultdict(list)
    probs: dict[str, list[float | None]] = defaultdict(list)
    for sample in run.samples_of(benchmark):
        correct[sample.id].append(sample.correct)
        probs[sample.id].append(None if sample.pi is None else 1.0 - sample.pi)
    return {
        qid: ItemScore(
            float(np.mean(values)),
            None if None in probs[qid] else float(np.mean(probs[qid])),  # type: ignore[arg-type]
            len(values),
        )
        for qid, values in correct.items()
    }


@dataclass
class _ModelRuns:
    """One model's runs of one benchmark, by their role."""

    original: Run | None = None
    without: list[Run] = field(default_factory=list)
    excerpts: list[tuple[float, Run]] = field(default_factory=list)
    others: list[Run] = field(default_factory=list)


def _roles(
    runs: Sequence[Run], benchmark: str, notes: list[str], name: str
) -> dict[str, _ModelRuns]:
    """Model -> its runs by role; a model that ran the benchmark on several question files
    is one entry per file (``model [questions=FILE]``): items of two files never mix."""
    files: dict[str, set[str]] = defaultdict(set)
    for run in runs:
        files[run.model].add(run.question_file(benchmark) or "")
    models: dict[str, _ModelRuns] = defaultdict(_ModelRuns)
    for run in runs:
        condition = audio_condition_of(run.condition)
        key = run.model
        if len(files[run.model]) > 1:
            label = question_file_label(run.question_file(benchmark) or "")
            key = f"{run.model} [questions={label}]"
        roles = models[key]
        if run.condition == REFERENCE_CONDITION and roles.original is None:
            roles.original = run
        elif run.condition == REFERENCE_CONDITION:
            notes.append(
                f"{name}, which items need the audio: {run.label} is a second original run "
                f"of {run.model}; the classes use {roles.original.label}."
            )
            roles.others.append(run)
        elif condition is not None and condition.reads == NOTHING:
            roles.without.append(run)
        elif run.condition == EXCERPT_CONDITION:
            seconds = run.audio_settings.get("excerpt_seconds")
            length = EXCERPT_SECONDS.default if seconds is None else seconds  # not recorded
            roles.excerpts.append((float(length), run))
        else:
            roles.others.append(run)
    return models


def _share(values: Sequence[float], settings: ReportSettings, *seed: Any) -> dict[str, Any]:
    return accuracy_ci(
        values,
        confidence_level=settings.confidence_level,
        n_resamples=settings.n_resamples,
        seed=derive_seed("report", settings.seed, "listening", *seed),
        method=settings.method,
    ).to_dict()


def _text_pi(
    benchmark: str, backbone: Run | None, settings: ReportSettings
) -> tuple[dict[str, float], str | None]:
    """Item id -> the text-only model's PI (a ``--pi`` file named after the benchmark,
    else the backbone's logged PI), and where it comes from."""
    name = BENCHMARK_NAMES.get(benchmark, benchmark)
    for label in (benchmark, name):
        if label in settings.pi_files:
            return dict(settings.pi_files[label].pi), f"--pi {label}"
    if backbone is None or not backbone.tasks_of(benchmark):
        return {}, None
    found: dict[str, list[float]] = defaultdict(list)
    for sample in backbone.samples_of(benchmark):
        if sample.pi is not None:
            found[sample.id].append(sample.pi)
    pis = {qid: float(np.mean(v)) for qid, v in found.items()}
    return pis, (f"the text-only run of {backbone.model}" if pis else None)


def _curve(
    roles: _ModelRuns, benchmark: str, ids: Sequence[str], settings: ReportSettings, model: str
) -> list[dict[str, Any]]:
    """Accuracy against the seconds heard: 0 (each no-audio run), each excerpt length
    (its runs pooled), the whole clip (``original``), on the items ``original`` answered."""
    points: list[tuple[float | None, str, list[Run]]] = [
        (0.0, run.setting, [run]) for run in roles.without
    ]
    by_length: dict[float, list[Run]] = defaultdict(list)
    for seconds, run in roles.excerpts:
        by_length[seconds].append(run)
    points += [(s, f"excerpt {s:g} s", by_length[s]) for s in sorted(by_length)]
    points.append((None, "whole clip", [roles.original]))  # type: ignore[list-item]
    wanted = set(ids)
    curve = []
    for seconds, label, runs in points:
        values, groups = [], []
        for run in runs:
            for sample in run.samples_of(benchmark):
                if sample.id in wanted:
                    values.append(sample.correct)
                    groups.append(sample.id)
        if not values:
            continue
        interval = accuracy_ci(
            values,
            groups=groups,
            confidence_level=settings.confidence_level,
            n_resamples=settings.n_resamples,
            method=settings.method,
            seed=derive_seed("report", settings.seed, "listening-curve", benchmark, model, label),
        ).to_dict()
        curve.append(
            {
                "seconds": seconds,
                "label": label,
                "accuracy": interval,
                "runs": [r.label for r in runs],
            }
        )
    return curve


def _model_section(
    benchmark: str,
    model: str,
    roles: _ModelRuns,
    settings: ReportSettings,
    text_pi: dict[str, float],
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(the model's summary, its items.csv rows)."""
    assert roles.original is not None
    original = _scores(roles.original, benchmark)
    without = [(run, _scores(run, benchmark)) for run in roles.without]
    excerpts = [(seconds, run, _scores(run, benchmark)) for seconds, run in roles.excerpts]
    others = [(run, _scores(run, benchmark)) for run in roles.others]
    ids = sorted(original, key=id_sort_key)
    rows: list[dict[str, Any]] = []
    unjudged = 0
    for qid in ids:
        heard = original[qid]
        silent = [scores[qid] for _, scores in without if qid in scores]
        if not silent:
            unjudged += 1
            continue
        item_class = classify_item(heard.right, [s.right for s in silent])
        by_seconds: dict[float, bool] = {}
        for seconds, _, scores in excerpts:
            if qid in scores:
                by_seconds[seconds] = by_seconds.get(seconds, False) or scores[qid].right
        shortest = shortest_excerpt(by_seconds) if item_class == "needs_audio" else None
        # right only with the whole clip: in no excerpt and no no-audio run (false for every
        # other item, empty only when no excerpt run logged the item)
        whole = (item_class == "needs_audio" and shortest is None) if by_seconds else None
        row: dict[str, Any] = {
            "benchmark": benchmark,
            "model": model,
            "id": qid,
            "class": item_class,
            "needs_whole_clip": whole,
            "shortest_excerpt_seconds": shortest,
            "audio_reliance": audio_reliance(heard.p_correct, [s.p_correct for s in silent]),
            "text_pi": text_pi.get(qid),
        }
        for run, scores in [
            (roles.original, original),
            *without,
            *((r, s) for _, r, s in excerpts),
            *others,
        ]:
            score = scores.get(qid)
            row[f"correct[{run.setting}]"] = None if score is None else score.correct
            row[f"p_correct[{run.setting}]"] = None if score is None else score.p_correct
        rows.append(row)
    classes = [row["class"] for row in rows]
    shares = (
        {
            name: _share([float(c == name) for c in classes], settings, benchmark, model, name)
            for name in CLASSES
        }
        if rows
        else {}
    )
    needing = [row for row in rows if row["class"] == "needs_audio"]
    flagged = [row["needs_whole_clip"] for row in needing if row["needs_whole_clip"] is not None]
    reliance = [row["audio_reliance"] for row in rows if row["audio_reliance"] is not None]
    pis = [text_pi[qid] for qid in ids if qid in text_pi]
    task = roles.original.tasks_of(benchmark)[0]
    summary = {
        "model": model,
        "original": roles.original.label,
        # what the subset command reads back: the file and the --metadata of the task
        "question_file": task.question_file,
        "task_metadata": {
            k: v for k, v in task.metadata.items() if isinstance(v, str | int | float | bool)
        },
        "no_audio": [run.label for run in roles.without],
        "excerpts": [run.label for _, run in roles.excerpts],
        "n_items": len(rows),
        "n_unjudged": unjudged,
        "counts": {name: classes.count(name) for name in CLASSES},
        "shares": shares,
        "needs_whole_clip": (
            _share([float(f) for f in flagged], settings, benchmark, model, "whole")
            if flagged
            else None
        ),
        "n_needs_whole_clip": sum(flagged),
        "shortest_excerpt_counts": {
            f"{s:g}": sum(row["shortest_excerpt_seconds"] == s for row in needing)
            for s in sorted({s for s, _ in roles.excerpts})
        },
        "mean_audio_reliance": float(np.mean(reliance)) if reliance else None,
        "text_mean_pi": float(np.mean(pis)) if pis else None,
        "curve": _curve(roles, benchmark, ids, settings, model),
    }
    return summary, rows


def listening_report(
    runs: Sequence[Run], settings: ReportSettings, backbone: Run | None, notes: list[str]
) -> dict[str, Any]:
    """``{benchmark: {"name", "models": [summary...], "pi_source", "_items": rows}}`` for
    every benchmark with an audio model that has an ``original`` and a no-audio run."""
    found: dict[str, Any] = {}
    for benchmark in sorted({b for r in runs for b in r.benchmarks()}):
        name = BENCHMARK_NAMES.get(benchmark, benchmark)
        members = [r for r in runs if not r.is_text and r.tasks_of(benchmark)]
        text_pi, pi_source = _text_pi(benchmark, backbone, settings)
        models, items = [], []
        for model, roles in _roles(members, benchmark, notes, name).items():
            if roles.original is None or not roles.without:
                if roles.without or roles.excerpts:
                    missing = "an original run" if roles.original is None else "a no-audio run"
                    notes.append(
                        f"{name}, which items need the audio: {model} has no {missing} "
                        "(original and none, noise or silence are needed), so its items have "
                        "no listening class."
                    )
                continue
            summary, rows = _model_section(benchmark, model, roles, settings, text_pi)
            if summary["n_unjudged"]:
                notes.append(
                    f"{name}, which items need the audio: {summary['n_unjudged']} item(s) of "
                    f"{roles.original.label} are in none of {model}'s no-audio runs and have "
                    "no class."
                )
            models.append(summary)
            items.extend(rows)
        if models:
            found[benchmark] = {
                "name": name,
                "models": models,
                "pi_source": pi_source,
                "_items": items,
            }
    return found
