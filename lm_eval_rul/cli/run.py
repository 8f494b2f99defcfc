"""Hooks around the harness's ``run`` (``lm-eval-rul run``).

* Before the model is built (``--model lalm``): load the selected tasks' documents with
  the same ``--metadata`` and raise ONE :class:`~lm_eval_rul.audio.MissingAudioError`
  for every item whose audio is missing (the harness builds the model first, so a
  missing file would otherwise surface only after minutes of model loading).
* After ``simple_evaluate``: add ``majority_acc`` (our strict majority vote over the four
  leave-one-out folds) and ``plurality_acc_release`` (the authors' plurality vote,
  :func:`lm_eval_rul.report.samples.majority_from_samples`) to the fold groups
  (:data:`MAJORITY_GROUPS`), so they are in the printed table and the saved results
  JSON. The samples this needs are collected even without ``--log_samples`` (and dropped
  again unless it was given).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
from collections.abc import Iterator
from typing import Any

__all__ = [
    "MAJORITY_GROUPS",
    "VOTE_METRICS",
    "run_hooks",
    "check_audio_before_model",
    "add_majority_acc",
]

logger = logging.getLogger(__name__)

#: Groups whose subtasks are the leave-one-out folds of one benchmark.
MAJORITY_GROUPS: tuple[str, ...] = (
    "rul_muchomusic",
    "rul_muchomusic_gen",
    "rul_muchomusic_textonly_gen",
)
#: The fold votes added to those groups (:func:`~lm_eval_rul.report.majority_from_samples`).
VOTE_METRICS: tuple[str, ...] = ("majority_acc", "plurality_acc_release")
#: Audio models -> the module of ``lm_eval_rul.models`` whose ``check_model_args`` checks them.
_AUDIO_MODELS: dict[str, str] = {"lalm": "lalm", "lalm-api": "api"}


@contextlib.contextmanager
def run_hooks(args: argparse.Namespace) -> Iterator[None]:
    """Wrap one ``run``: audio checked before the model, majority vote added after."""
    from . import _factual_run

    tasks = getattr(args, "tasks", None) or ""
    names = tasks if isinstance(tasks, str) else ",".join(map(str, tasks))
    factual = _factual_run.uses_factual_tasks(names)
    if getattr(args, "model", None) in _AUDIO_MODELS:
        if factual:
            _factual_run.set_chunk_seconds(args)
            _factual_run.check_audio(args)
        check_audio_before_model(args)
    majority = any(group in names for group in MAJORITY_GROUPS)
    if not majority and not factual:
        yield
        return
    import lm_eval

    original = lm_eval.simple_evaluate

    def simple_evaluate(*a: Any, **kw: Any) -> dict[str, Any] | None:
        wanted = bool(kw.get("log_samples"))
        kw["log_samples"] = wanted or majority
        results = original(*a, **kw)
        if results is not None:
            if majority:
                add_majority_acc(results)
            if factual and wanted:
                _factual_run.add_item_predictions(results)
            if not wanted:
                results.pop("samples", None)
        return results

    lm_eval.simple_evaluate = simple_evaluate
    try:
        yield
    finally:
        lm_eval.simple_evaluate = original


def _tasks(task_dict: dict[Any, Any]) -> Iterator[Any]:
    for value in task_dict.values():
        if isinstance(value, dict):
            yield from _tasks(value)
        else:
            yield value


def check_audio_before_model(args: argparse.Namespace) -> None:
    """Raise :class:`~lm_eval_rul.audio.MissingAudioError` before any model is loaded.

    First the ``lalm`` ``--model_args`` are checked
    (:func:`~lm_eval_rul.models.lalm.check_model_args`): an unknown name, an unknown
    ``audio=`` condition or a value of the wrong kind is reported at once.

    Reads the documents the run will evaluate (``--limit`` applied as the harness does)
    of every plugin task in ``--tasks``, with the run's ``--metadata`` and the
    ``audio=`` condition of ``--model_args``. Only the ``--include_path`` folders are
    indexed (the plugin's tasks live there), so the check costs little; conditions
    that need no files skip it.
    """
    from lm_eval.config.evaluate_config import EvaluatorConfig
    from lm_eval.evaluator_utils import get_sample_size
    from lm_eval.tasks import TaskManager, get_task_dict

    from ..audio import FILE_CONDITIONS, check_audio_available

    checker = importlib.import_module(f"lm_eval_rul.models.{_AUDIO_MODELS[args.model]}")
    cfg = EvaluatorConfig.from_cli(argparse.Namespace(**vars(args)))
    # bad names or values (audio=loud, noise_seconds=abc) fail here, before data and model
    model_args = checker.check_model_args(cfg.model_args or {})
    condition = str(model_args.get("audio", "original"))
    if condition not in FILE_CONDITIONS or not cfg.tasks:
        return
    task_manager = TaskManager(
        include_path=cfg.include_path, include_defaults=False, metadata=cfg.metadata
    )
    requested = cfg.tasks.split(",") if isinstance(cfg.tasks, str) else list(cfg.tasks)
    names = task_manager.match_tasks([t for t in requested if isinstance(t, str)])
    docs: list[dict[str, Any]] = []
    for task in _tasks(get_task_dict(names, task_manager) if names else {}):
        task_docs = list(task.eval_docs)
        if not task_docs or "benchmark" not in task_docs[0]:
            continue  # not one of the plugin's tasks
        limit = None if cfg.samples else get_sample_size(task, cfg.limit)
        docs.extend(task_docs[:limit] if limit is not None else task_docs)
    check_audio_available(docs, condition)


def add_majority_acc(results: dict[str, Any]) -> None:
    """Add ``majority_acc`` and ``plurality_acc_release`` to the fold groups (in place).

    Needs ``results["samples"]``; groups whose subtasks have no samples are left alone.
    """
    from ..report.samples import majority_from_samples

    samples = results.get("samples") or {}
    for group, subtasks in (results.get("group_subtasks") or {}).items():
        if group not in MAJORITY_GROUPS or not subtasks:
            continue
        if not all(samples.get(task) for task in subtasks):
            logger.warning("majority_acc of %s: no samples for some of %s", group, subtasks)
            continue
        filters = sorted({s["filter"] for task in subtasks for s in samples[task]})
        for filter_key in filters:
            folds = [[s for s in samples[t] if s["filter"] == filter_key] for t in subtasks]
            figures = majority_from_samples(folds)
            for table in ("results", "groups"):
                if group in (results.get(table) or {}):
                    row = results[table][group]
                    for metric in VOTE_METRICS:
                        row[f"{metric},{filter_key}"] = figures[metric]
                        row[f"{metric}_stderr,{filter_key}"] = "N/A"
            for metric in VOTE_METRICS:
                results.setdefault("higher_is_better", {}).setdefault(group, {})[metric] = True
            logger.info(
                "%s majority_acc,%s = %.4f, plurality_acc_release = %.4f over %d items x %d folds",
                group,
                filter_key,
                figures["majority_acc"],
                figures["plurality_acc_release"],
                figures["n_items"],
                figures["n_folds"],
            )
