"""Hooks around the harness's ``run`` (``lm-eval-rul run``).

* While the command parses its tasks: a fast task index and unknown names as one line
  (:mod:`.task_names`); the harness's noise about our tasks muted (:mod:`.quiet`).
* Before the model is built, for every model type: :func:`~.preflight.check_before_model`
  checks the ``model_args``, that the model can be loaded, the question files and
  ``--metadata`` (the tasks are loaded here, once, and handed to the harness) and, for
  audio models, every clip (``--audio_check``).
* While the harness scores: a plugin task's prompt longer than the model's context stops
  the run with the questions named, instead of being cut from the left
  (:mod:`.long_prompts`).
* Factual tasks with an audio model (:mod:`._factual_run`): the window length set from
  the model's audio limit, and every requested factual task's audio checked at once,
  before anything loads; after scoring, each logged window gets its item's prediction.
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
import logging
from collections.abc import Iterator
from typing import Any

from .long_prompts import no_cut_prompts
from .preflight import AUDIO_MODELS, check_before_model, check_clips_before_model, plugin_docs
from .quiet import quiet_harness_logs
from .task_names import task_name_hooks

__all__ = [
    "MAJORITY_GROUPS",
    "VOTE_METRICS",
    "run_hooks",
    "check_command_line",
    "check_audio_before_model",
    "add_majority_acc",
]

logger = logging.getLogger(__name__)

#: Groups whose subtasks are the leave-one-out folds of one benchmark.
MAJORITY_GROUPS: tuple[str, ...] = (
    "rul_muchomusic",
    "rul_muchomusic_gen",
    "rul_muchomusic_textonly_gen",
    "rul_muchomusic_native_gen",
)
#: The fold votes added to those groups (:func:`~lm_eval_rul.report.majority_from_samples`).
VOTE_METRICS: tuple[str, ...] = ("majority_acc", "plurality_acc_release")


def _task_names(tasks: Any) -> set[str]:
    """The names in ``--tasks``: a comma-separated string or a list of them (task configs
    given as dicts have no name to match)."""
    parts = [tasks] if isinstance(tasks, str) else [t for t in tasks or [] if isinstance(t, str)]
    return {name.strip() for part in parts for name in part.split(",") if name.strip()}


def _wants_majority(tasks: Any) -> bool:
    """Whether ``--tasks`` names a fold group of :data:`MAJORITY_GROUPS` (whole names only:
    ``rul_muchomusic_oneshot`` is not ``rul_muchomusic``)."""
    return not _task_names(tasks).isdisjoint(MAJORITY_GROUPS)


def check_command_line(args: argparse.Namespace) -> None:
    """The ``run`` command line's own values, before tasks or model load: ``--model`` is a
    registered model, a ``cuda``/``mps`` ``--device`` exists (local models only) and every
    ``--metadata`` key is one the requested tasks read (:mod:`.run_inputs`).

    Raises:
        UnknownModelError, DeviceUnavailableError, UnknownMetadataKeyError.
    """
    from .run_inputs import check_device, check_metadata_keys, check_model_name

    model = getattr(args, "model", None)
    check_model_name(model)
    if not _is_api_model(model):
        check_device(getattr(args, "device", None))
    check_metadata_keys(getattr(args, "metadata", None), getattr(args, "tasks", None))


def _is_api_model(model: str | None) -> bool:
    """Whether ``model`` is served (the harness's API models, ``lalm-api``): no ``--device``."""
    from lm_eval.api.registry import get_model

    try:
        from lm_eval.models.api_models import TemplateAPI

        return issubclass(get_model(model), TemplateAPI)
    except Exception:  # noqa: BLE001 - a model whose optional package is missing is not ours
        return False


@contextlib.contextmanager
def run_hooks(args: argparse.Namespace, *, audio_check: str = "header") -> Iterator[None]:
    """Wrap one ``run``: checks before the model, quiet logs, majority vote after.

    Args:
        args: The parsed ``run`` arguments (the harness's).
        audio_check: ``header``, ``decode`` or ``none`` (``--audio_check``).
    """
    import lm_eval

    from . import _factual_run

    names = args.tasks if isinstance(args.tasks, str) else ",".join(map(str, args.tasks or []))
    factual = _factual_run.uses_factual_tasks(names)
    if factual and getattr(args, "model", None) in AUDIO_MODELS:
        _factual_run.set_chunk_seconds(args)  # before the harness reads --metadata
        _factual_run.check_audio(args)
    original = lm_eval.simple_evaluate

    def simple_evaluate(*a: Any, **kw: Any) -> dict[str, Any] | None:
        check_before_model(
            model=kw.get("model"),
            model_args=kw.get("model_args"),
            tasks=kw.get("tasks"),
            task_manager=kw.get("task_manager"),
            limit=kw.get("limit"),
            samples=kw.get("samples"),
            audio_check=audio_check,
            use_cache=kw.get("use_cache"),
        )
        majority = _wants_majority(kw.get("tasks"))
        if not majority and not factual:
            return original(*a, **kw)
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
        with task_name_hooks(), quiet_harness_logs(), no_cut_prompts():
            yield
    finally:
        lm_eval.simple_evaluate = original


def check_audio_before_model(args: argparse.Namespace) -> None:
    """The audio checks of a parsed ``run`` command line on their own, before any model.

    The audio model's ``--model_args`` (names and values), then every document the run would
    evaluate (plugin tasks of the ``--include_path`` folders, ``--limit`` applied) must
    have a clip, and every clip must be readable at ``args.audio_check`` (``header`` by
    default). ``lm-eval-rul run`` runs the same checks inside :func:`run_hooks`.

    Raises:
        UnknownModelArgsError, LALMArgumentError, UnknownConditionError: bad model_args.
        MissingAudioError, UnreadableAudioError: see :func:`check_clips_before_model`.
    """
    from lm_eval.config.evaluate_config import EvaluatorConfig
    from lm_eval.tasks import TaskManager

    from .preflight import check_model_args_for

    options = dict(vars(args))
    audio_check = options.pop("audio_check", None) or "header"
    cfg = EvaluatorConfig.from_cli(argparse.Namespace(**options))
    model_args = check_model_args_for(args.model, cfg.model_args or {})
    condition = str(model_args.get("audio", "original"))
    if not cfg.tasks:
        return
    manager = TaskManager(
        include_path=cfg.include_path, include_defaults=False, metadata=cfg.metadata
    )
    requested = cfg.tasks.split(",") if isinstance(cfg.tasks, str) else list(cfg.tasks)
    names = manager.match_tasks([t for t in requested if isinstance(t, str)])
    loaded = manager.load(names) if names else {}
    docs = [
        d
        for _, task_docs in plugin_docs(loaded, limit=cfg.limit, samples=cfg.samples)
        for d in task_docs
    ]
    check_clips_before_model(docs, condition, audio_check=audio_check)


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
