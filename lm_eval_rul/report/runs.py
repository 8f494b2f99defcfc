"""Read the harness's own output folders (``--output_path ... --log_samples``).

lm-eval writes, per run, ``<output_path>/<model_name_sanitized>/results_<time>.json``
and one ``samples_<task>_<time>.jsonl`` per task beside it. This module turns such
folders into :class:`Run` objects: which model, which audio condition
(``config.audio_condition`` that ``lalm`` writes, else ``model_args`` ``audio=``;
``lalm`` defaults to ``original``; text-only models are ``"text"``), and per task the
harness's printed metrics plus per-question :class:`Sample` records keyed by (question id, fold).

Several results files of the same model, dtype, condition, audio settings, declared
``--metadata`` and question files (:mod:`.run_keys`), e.g. one run per benchmark, are
merged into one :class:`Run`; when two of them hold the same task on the same questions,
the newest wins and the other is listed in :attr:`Run.notes`. Runs of one model and
condition whose settings or question files differ stay apart, and their labels name what
differs (``noise, seed=1``, ``text, questions=rul_tiny.json``, ``mmar_subset=music``).
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..adapters import checkpoint_adapter_names
from ..audio import condition_named
from ..audio.conditions import REFERENCE_CONDITION
from ..harness_compat import plain_results
from ..paths import contained_path
from .asked import asked_of, gen_kwargs_of, rows_digest
from .factual.runs import (
    FactualWindow,
    StudyWindow,
    factual_window,
    is_factual_row,
    is_study_row,
    study_window,
)
from .logged_metrics import Mismatch, logged_mismatches
from .model_names import model_args_of, name_models, short_name
from .not_runs import find_results_files, not_a_run
from .predictions_only import named_benchmark, predictions_only_entry
from .results_json import group_names, metrics_of, original_count
from .run_keys import (
    AUDIO_SETTINGS,
    audio_settings_of,
    content_digest,
    dtype_of,
    name_variants,
    question_file_of,
    report_key,
    same_run,
    settings_of,
)
from .samples import RunReadError, Sample, iter_rows, sample_from_row
from .tagging.runs import is_tagging_row, tagging_clip

__all__ = [
    "TaskResult",
    "Run",
    "RunReadError",
    "AUDIO_SETTINGS",
    "TEXT_CONDITION",
    "benchmark_of",
    "find_results_files",
    "read_results_file",
    "load_runs",
]

#: The condition of runs by text-only models (no audio input at all).
TEXT_CONDITION = "text"
#: Model types that load an audio checkpoint (:data:`~lm_eval_rul.adapters.ADAPTERS`);
#: their default condition is ``original``.
AUDIO_MODEL_TYPES = checkpoint_adapter_names()
_FOLD_SUFFIX = re.compile(r"_fold(\d+)$")


@dataclass
class TaskResult:
    """One task of one run: what the harness printed and what it logged.

    A factual task (:mod:`.factual.runs`) logs windows, not questions: its ``samples``
    are empty and ``windows`` (label-set tasks) or ``study_windows`` (binary-choice and
    true/false tasks) hold them.
    """

    task: str
    benchmark: str
    fold: int | None
    output_type: str
    metrics: dict[str, float]
    n: int
    samples: list[Sample]
    samples_file: Path
    results_file: Path
    windows: list[FactualWindow] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)  # the task's --metadata
    study_windows: list[StudyWindow] = field(default_factory=list)
    question_file: str = ""  # the --metadata question file the task read ("": the release)
    #: Documents in the task's whole benchmark (the harness's ``n-samples.original``; a
    #: ``--limit`` run evaluated ``n`` of them); None when the results file does not say.
    n_total: int | None = None
    question_set: str = ""  # the task's name without fold, before any benchmark_name
    content: str = ""  # :func:`.content_digest` of its questions, else :func:`.rows_digest`
    gen_kwargs: str = ""  # a generation task's --gen_kwargs (:func:`.gen_kwargs_of`)

    @property
    def identity(self) -> tuple[str, str, str, str]:
        """What one task's repeat must share: benchmark, question file, items, gen_kwargs."""
        return (self.benchmark, self.question_file, self.content, self.gen_kwargs)
    #: A tagging task's clip records (:mod:`.tagging.runs`); empty for other tasks.
    tagging_clips: list[dict[str, Any]] = field(default_factory=list)
    mismatches: list[Mismatch] = field(default_factory=list)  # :func:`.logged_mismatches`

    @property
    def is_generation(self) -> bool:
        return self.output_type == "generate_until"

    @property
    def is_factual(self) -> bool:
        return bool(self.windows)

    @property
    def is_study(self) -> bool:
        return bool(self.study_windows)


@dataclass
class Run:
    """All tasks of one model under one audio condition.

    Attributes:
        model: Short model name (the basename of a local ``pretrained`` path, or the hub id;
            more of the path where two runs' paths end alike: :mod:`.model_names`).
        pretrained: ``pretrained`` as given to the harness.
        model_type: The harness model (``hf``, ``lalm``, ...).
        condition: ``text`` for text-only models, else the ``audio=`` condition.
        model_args: The harness's ``model_args``.
        tasks: Task name -> :class:`TaskResult`.
        results_files: Every results JSON merged into this run.
        group_metrics: Group name (e.g. ``rul_muchomusic``) -> the harness's group metrics
            (``acc``, ``majority_acc`` added by ``lm-eval-rul run``, ...).
        notes: Things a reader should know (superseded duplicate tasks).
        audio_settings: ``model_args`` name -> value of each of :data:`AUDIO_SETTINGS`
            (None where the results file does not record it, e.g. text-only models).
        variant: The audio settings that differ from another run of the same model and
            condition (``"seed=1, noise_std=0.5"``), set by :func:`load_runs`; ``""`` when
            no other run shares the model and condition.
    """

    model: str
    pretrained: str
    model_type: str
    condition: str
    model_args: dict[str, Any]
    tasks: dict[str, TaskResult] = field(default_factory=dict)
    results_files: list[Path] = field(default_factory=list)
    group_metrics: dict[str, dict[str, float]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    audio_settings: dict[str, Any] = field(default_factory=dict)
    variant: str = ""
    predictions_only: dict[str, dict[str, Any]] = field(default_factory=dict)  # no answers
    #: Benchmark folder -> the declared --metadata its tasks ran with (:func:`settings_of`).
    settings: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    dtype: str | None = None  # the dtype the model ran in (:func:`~.run_keys.dtype_of`)
    asked: tuple[tuple[str, str], ...] = ()  # system prompt, gen_kwargs (:func:`.asked_of`)

    @property
    def setting(self) -> str:
        """The condition, with the differing audio settings if any (``noise, seed=1``)."""
        return f"{self.condition}, {self.variant}" if self.variant else self.condition

    @property
    def label(self) -> str:
        return f"{self.model} [{self.setting}]"

    @property
    def merge_key(self) -> tuple[Any, ...]:
        """Results files with equal keys are parts of one run (:func:`load_runs`)."""
        settings = tuple(sorted(self.audio_settings.items()))
        asked = tuple(a for a in self.asked if a[0] != "gen_kwargs")  # a task's: its identity
        return (self.pretrained, self.model_type, self.dtype, self.condition, settings, asked)

    @property
    def protocol(self) -> str | None:
        """The protocol its tasks of a benchmark family with protocols (factual, MMAU...)
        ran under, each read from its family's key (``mmau_protocol``...) or the bare
        ``protocol`` (``rul`` when not recorded); None for a run without such tasks."""
        from ..catalogue import by_folder, for_question_set

        factual = by_folder().get("factual")
        found = set()
        for task in self.tasks.values():
            family = factual if task.windows or task.study_windows else None
            family = family or for_question_set(task.benchmark)
            if family is not None and family.protocol_key:
                found.add(str(family.protocol(task.metadata) or "rul"))
        return "/".join(sorted(found)) or None

    @property
    def is_text(self) -> bool:
        return self.condition == TEXT_CONDITION

    def benchmarks(self) -> list[str]:
        """The multiple-choice benchmarks of the run (factual tasks: :meth:`factual_tasks`)."""
        return sorted(
            {t.benchmark for t in self.tasks.values() if not (t.is_factual or t.is_study)}
            - {t.benchmark for t in self.tasks.values() if t.tagging_clips}
        )

    def factual_tasks(self) -> list[TaskResult]:
        """The run's factual tasks, by name."""
        return sorted((t for t in self.tasks.values() if t.is_factual), key=lambda t: t.task)

    def study_tasks(self) -> list[TaskResult]:
        """The run's binary-choice and true/false tasks, by name."""
        return sorted((t for t in self.tasks.values() if t.is_study), key=lambda t: t.task)

    def tasks_of(self, benchmark: str) -> list[TaskResult]:
        """The tasks of ``benchmark``, by fold."""
        found = [t for t in self.tasks.values() if t.benchmark == benchmark]
        return sorted(found, key=lambda t: (t.fold if t.fold is not None else -1, t.task))

    def question_file(self, benchmark: str) -> str | None:
        """The question file ``benchmark``'s tasks read (``""``: the release; None: no task)."""
        tasks = self.tasks_of(benchmark)
        return tasks[0].question_file if tasks else None

    def samples_of(self, benchmark: str) -> list[Sample]:
        return [s for t in self.tasks_of(benchmark) for s in t.samples]


def benchmark_of(task: str) -> tuple[str, int | None]:
    """``("rul_muchomusic", 2)`` for ``rul_muchomusic_fold2``; ``(task, None)`` otherwise."""
    match = _FOLD_SUFFIX.search(task)
    if match:
        return task[: match.start()], int(match.group(1))
    return task, None


def _condition(model_type: str, args: dict[str, Any], config: dict[str, Any]) -> str:
    """``audio_condition`` written by ``lalm``, else ``audio=`` of ``model_args``."""
    recorded = config.get("audio_condition")
    if recorded not in (None, ""):
        return str(recorded)
    if "audio" in args:
        # lm-eval parses the string ``none`` in model_args to None
        audio = args["audio"]
        return condition_named(None).name if audio in (None, "", "None") else str(audio)
    return REFERENCE_CONDITION if model_type in AUDIO_MODEL_TYPES else TEXT_CONDITION


def read_results_file(path: str | Path) -> Run:
    """One harness results JSON and its logged samples, as a :class:`Run`.

    Raises:
        RunReadError: The file is not a harness results file, or a task's
            ``samples_<task>_<time>.jsonl`` is missing (rerun with ``--log_samples``).
    """
    path = Path(path)
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError):
        raise RunReadError(not_a_run(path)) from None
    if not isinstance(results, dict) or "results" not in results or "config" not in results:
        raise RunReadError(not_a_run(path))
    try:  # lm-eval 0.5 names a group's members group::task
        results, logged_names = plain_results(results)
    except (TypeError, ValueError, AttributeError) as error:
        raise RunReadError(f"{path}: cannot read its task names ({error})") from None
    config = results["config"]
    if not isinstance(config, dict) or not isinstance(results["results"], dict):
        raise RunReadError(f"{path}: 'config' and 'results' must be JSON objects")
    args = model_args_of(config)
    model_type = str(config.get("model") or "unknown")
    pretrained = str(args.get("pretrained") or results.get("model_name") or model_type)
    run = Run(
        model=short_name(pretrained),
        pretrained=pretrained,
        model_type=model_type,
        condition=_condition(model_type, args, config),
        model_args=args,
        results_files=[path],
        audio_settings=audio_settings_of(args, config, path, RunReadError),
        dtype=dtype_of(results, args),
    )
    stamp = path.stem[len("results_") :] if path.stem.startswith("results_") else None
    groups = group_names(results)
    for group in groups:
        row = (results.get("groups") or {}).get(group) or results["results"].get(group) or {}
        run.group_metrics[group] = metrics_of(row)
    for task in (name for name in results["results"] if name not in groups):
        if entry := predictions_only_entry(results, task, path):
            run.predictions_only[task] = entry
            continue
        metrics = metrics_of(results["results"][task])
        task_config = (results.get("configs") or {}).get(task) or {}
        output_type = str(task_config.get("output_type", ""))
        logged = logged_names.get(task, task)
        samples_file = contained_path(  # the task name comes from the results file
            path.parent, f"samples_{logged}_{stamp}.jsonl", item=f"{path}: task {task!r}",
            option="the run folder", fix="the results file names a task that is no file name.",
        )
        if stamp is None or not samples_file.is_file():
            raise RunReadError(
                f"{path}: task {task!r} has no logged samples (looked for {samples_file.name} "
                f"in {path.parent}): a results file of a run made without --log_samples; the "
                "report needs per-question results: rerun with --log_samples"
            )
        question_set, fold = benchmark_of(task)
        logged = iter_rows(samples_file)
        rows = list(itertools.islice(logged, 1))
        # a tagging task's rows (a clip's every tag question, thousands of clips) become
        # their clip records as they are read: one row held at a time
        tagging = bool(rows) and is_tagging_row(rows[0][1])
        if tagging:
            clips = [tagging_clip(row, where) for where, row in itertools.chain(rows, logged)]
        else:
            clips, rows = [], rows + list(logged)
        benchmark = report_key(question_set, named_benchmark(question_set, rows))
        task_metadata = dict(task_config.get("metadata") or {})
        folder, given = settings_of(question_set, task_metadata)
        run.settings.setdefault(folder, given)
        factual = bool(rows) and is_factual_row(rows[0][1])
        study = bool(rows) and is_study_row(rows[0][1])
        windows = [factual_window(row, where) for where, row in rows] if factual else []
        studies = [study_window(row, where) for where, row in rows] if study else []
        samples = [] if factual or study or clips else [sample_from_row(r, w) for w, r in rows]
        run.tasks[task] = TaskResult(
            task=task,
            benchmark=benchmark,
            fold=fold,
            output_type=output_type,
            metrics=metrics,
            n=len(windows or studies or samples or clips),
            samples=samples,
            samples_file=samples_file,
            results_file=path,
            windows=windows,
            metadata=task_metadata,
            study_windows=studies,
            question_file=question_file_of(question_set, task_metadata),
            n_total=original_count(results, task),
            question_set=question_set,
            content=content_digest(samples) if samples else rows_digest(r for _, r in rows),
            gen_kwargs=gen_kwargs_of(results) if output_type == "generate_until" else "",
            tagging_clips=clips,
            mismatches=logged_mismatches(
                results["results"][task], task_config, [row for _, row in rows]
            ),
        )
    if not run.tasks and not run.predictions_only:
        raise RunReadError(f"{path}: the results file lists no task")
    run.asked = asked_of(results, args, generation=any(t.is_generation for t in run.tasks.values()))
    return run


def _repeat_note(target: Run, repeated: list[str], file: Path) -> str:
    """One note for a results file that repeats tasks already read (a run reported twice)."""
    older = ", ".join(sorted({str(target.tasks[name].results_file) for name in repeated}))
    more = f" and {len(repeated) - 4} more" if len(repeated) > 4 else ""
    names = ", ".join(repeated[:4]) + more
    return (
        f"{target.label}: {file} repeats {len(repeated)} task(s) of {older} ({names}); "
        f"the newer {file.name} is used."
    )


def load_runs(run_dirs: Iterable[str | Path]) -> list[Run]:
    """Read every results file under ``run_dirs``; merge those of one model and setting.

    Args:
        run_dirs: Harness ``--output_path`` folders (or their model subfolders, or results
            JSON files).

    Returns:
        Runs in order of first appearance. Files merge when model, condition, audio
        settings (:data:`AUDIO_SETTINGS`), the question file of every benchmark both
        hold (:func:`~.run_keys.same_run`: also every declared ``--metadata`` key and the
        questions of a task both hold) and the factual protocol (when both have
        factual tasks) agree. When two files give the same task for the
        same run, the newer file (by name, which holds the harness's timestamp) wins and the
        choice is recorded in the run's ``notes``. Runs of one model and condition with
        different audio settings or question files get a :attr:`Run.variant` naming them.
    """
    runs: list[Run] = []
    files = [f for d in run_dirs for f in find_results_files(d)]
    for file in sorted(dict.fromkeys(files), key=lambda p: p.name):
        run = read_results_file(file)
        target = next((r for r in runs if same_run(r, run)), None)
        if target is None:
            runs.append(run)
            continue
        target.results_files.append(file)
        repeated = [name for name in run.tasks if name in target.tasks]
        if repeated:
            target.notes.append(_repeat_note(target, repeated, file))
        target.tasks.update(run.tasks)
        target.asked = tuple(dict((*target.asked, *run.asked)).items())  # gen_kwargs: the newer
        target.predictions_only.update(run.predictions_only)
        target.group_metrics.update(run.group_metrics)
    name_models(runs)  # two checkpoints ending alike (x, x) named apart
    name_variants(runs)
    return runs
