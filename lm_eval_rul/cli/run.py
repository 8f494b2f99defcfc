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
* The results' ``config.device`` is the device the model ran on (:func:`record_device`),
  not the harness's default ``cuda:0`` on a machine without a GPU.
* After ``simple_evaluate``: credentials in ``--model_args`` (``token=``, a password in
  ``base_url``) are masked in the results' config, the tasks' metadata and the summary
  line the harness prints (:func:`lm_eval_rul.masking.mask_model_args`); add
  ``majority_acc`` (our strict majority vote over the four leave-one-out folds) and
  ``plurality_acc_release`` (the authors' plurality vote,
  :func:`lm_eval_rul.report.samples.majority_from_samples`) to the fold groups the
  benchmark catalogue declares (:func:`lm_eval_rul.catalogue.fold_groups`), so they are in
  the printed table and the saved results JSON. The samples this needs are collected even
  without ``--log_samples`` (and dropped again unless it was given).
* After the harness has saved its results: the benchmarks' post-run files (MMAU's
  predictions file, the leaderboard's input for the ``test`` split), beside the model's
  results (:mod:`.post_run`).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
from collections.abc import Iterator
from typing import Any

from ..adapters import audio_adapter_names
from ..masking import mask_model_args
from .interrupted import said_on_interrupt
from .long_prompts import no_cut_generation, no_cut_prompts
from .post_run import check_output_places, requested_files, write_files
from .preflight import check_before_model, check_clips_before_model, plugin_docs
from .quiet import HELD_LOGS, quiet_harness_logs
from .task_names import task_name_hooks

__all__ = [
    "run_hooks",
    "check_command_line",
    "check_audio_before_model",
    "add_majority_acc",
    "evaluate_hooks",
    "record_device",
]

logger = logging.getLogger(__name__)


def _task_names(tasks: Any) -> set[str]:
    """The names in ``--tasks``: a comma-separated string or a list of them (task configs
    given as dicts have no name to match)."""
    parts = [tasks] if isinstance(tasks, str) else [t for t in tasks or [] if isinstance(t, str)]
    return {name.strip() for part in parts for name in part.split(",") if name.strip()}


def _wants_majority(tasks: Any) -> bool:
    """Whether ``--tasks`` names a fold group of the catalogue (whole names only:
    ``rul_muchomusic_oneshot`` is not ``rul_muchomusic``)."""
    from ..catalogue import fold_groups

    return not _task_names(tasks).isdisjoint(fold_groups())


def check_command_line(args: argparse.Namespace) -> None:
    """The ``run`` command line's own values, before tasks or model load: ``--model`` is a
    registered model, ``--limit`` selects documents (:mod:`.limits`), several processes
    are launched only with GPUs (:mod:`.processes`), a ``cuda``/``mps`` ``--device``
    exists (local models only), every ``--metadata`` key is one the requested tasks
    read (:mod:`.run_inputs`) and ``--output_path`` can be written.

    Raises:
        LimitError, DataParallelError, UnknownModelError, DeviceUnavailableError,
        UnknownMetadataKeyError, OutputPathError.
    """
    from ..included import run_included_checks
    from .limits import check_run_limit
    from .processes import check_processes
    from .run_flags import (
        check_model_key,
        check_required_model_args,
        check_tasks_given,
        warn_unlogged,
    )
    from .run_inputs import check_device, check_metadata_keys, check_model_name, task_folders

    check_tasks_given(getattr(args, "tasks", None))
    check_run_limit(getattr(args, "limit", None))
    check_processes(_model_args_of(args))
    model = getattr(args, "model", None)
    check_model_name(model)
    served = _is_api_model(model)
    check_model_key(model, _model_args_of(args), served)
    check_required_model_args(model, _model_args_of(args))
    if not served:
        check_device(getattr(args, "device", None))
    check_metadata_keys(getattr(args, "metadata", None), getattr(args, "tasks", None))
    run_included_checks(_metadata_of(args))  # the --include_path descriptors' checks
    _check_output_path(getattr(args, "output_path", None))
    check_output_places(getattr(args, "output_path", None), getattr(args, "model_args", None))
    warn_unlogged(
        getattr(args, "tasks", None), bool(getattr(args, "log_samples", False)), task_folders
    )


def _check_output_path(output_path: str | None) -> None:
    """``--output_path`` can be written (the harness writes it only after the whole run):
    a folder, or a ``.json`` file name whose folder holds the dated results files."""
    if not output_path:
        return
    from pathlib import Path

    from ..files import check_output_folder

    path = Path(output_path).expanduser()
    check_output_folder(path.parent if path.suffix == ".json" else path, flag="--output_path")


def _metadata_of(args: argparse.Namespace) -> dict[str, Any]:
    """``--metadata`` as a dict (the harness keeps the JSON text or the parsed object)."""
    import json

    value = getattr(args, "metadata", None) or {}
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:  # malformed: check_metadata_json has said so before
            return {}
    return dict(value) if isinstance(value, dict) else {}


def _model_args_of(args: argparse.Namespace) -> dict[str, Any]:
    """``--model_args`` as a dict (the harness keeps the string or the parsed JSON)."""
    from lm_eval.utils import simple_parse_args_string

    value = getattr(args, "model_args", None) or {}
    if isinstance(value, dict):
        return dict(value)
    try:
        return simple_parse_args_string(str(value))
    except ValueError:  # malformed: the model's own checks say so
        return {}


def _is_api_model(model: str | None) -> bool:
    """Whether ``model`` is served (the harness's API models, ``lalm-api``): no ``--device``."""
    from lm_eval.api.registry import get_model

    try:
        from lm_eval.models.api_models import TemplateAPI

        return issubclass(get_model(model), TemplateAPI)
    except Exception:  # noqa: BLE001 - a model whose optional package is missing is not ours
        return False


def _text_models_hear_nothing(args: argparse.Namespace) -> None:
    """A text model given factual tasks hears no audio: its documents are logged under
    condition ``none`` (the tasks' default is ``original``), unless ``audio`` was given."""
    import json

    value = getattr(args, "metadata", None) or {}
    metadata = dict(json.loads(value) if isinstance(value, str) else value)
    if "audio" not in metadata:
        args.metadata = {**metadata, "audio": "none"}


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
    if factual and getattr(args, "model", None) in audio_adapter_names():
        _factual_run.set_chunk_seconds(args)  # before the harness reads --metadata
        _factual_run.check_audio(args)
    elif factual:
        _text_models_hear_nothing(args)
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
        HELD_LOGS.release()  # the checks passed: the run's setup lines, then its progress
        majority = _wants_majority(kw.get("tasks"))
        wanted = bool(kw.get("log_samples"))
        kw["log_samples"] = wanted or majority or bool(post_run)
        results = original(*a, **kw)
        record_device(results, models)
        mask_model_args(kw.get("model_args"))  # in place: the harness prints this object
        if results is not None:
            _mask_results(results)
        if results is not None and (majority or factual or post_run):
            if majority:
                add_majority_acc(results)
            if post_run:  # written once the harness has saved its results (below)
                after.append((results.get("samples") or {}, kw.get("evaluation_tracker")))
            if factual and wanted:
                _factual_run.add_item_predictions(results)
            if not wanted:
                results.pop("samples", None)
        return results

    post_run = requested_files(sorted(_task_names(args.tasks)))
    after: list[tuple[dict[str, Any], Any]] = []
    # every harness function the run replaces, entered here and restored in reverse order
    # (docs/harness_versions.md lists each with its reason and test)
    with contextlib.ExitStack() as hooks:
        hooks.enter_context(_replaced(lm_eval, "simple_evaluate", simple_evaluate))
        hooks.enter_context(said_on_interrupt())  # Ctrl-C: what was kept, in one line
        hooks.enter_context(task_name_hooks())  # EvaluatorConfig.process_tasks, TaskManager
        hooks.enter_context(quiet_harness_logs())  # get_git_commit_hash, the task filter
        hooks.enter_context(no_cut_prompts())  # TemplateLM.loglikelihood
        models = hooks.enter_context(evaluate_hooks())  # evaluate, the model's generate_until
        yield
    for samples, tracker in after:
        write_files(post_run, samples, tracker)


@contextlib.contextmanager
def _replaced(owner: Any, name: str, replacement: Any) -> Iterator[None]:
    """``owner.name`` is ``replacement`` inside the block, the original again after."""
    original = getattr(owner, name)
    setattr(owner, name, replacement)
    try:
        yield
    finally:
        setattr(owner, name, original)


@contextlib.contextmanager
def evaluate_hooks() -> Iterator[list[Any]]:
    """The run's one wrapper of the harness's ``evaluate``: collect the model it runs
    (yielded list, for :func:`record_device`) and check its generation contexts
    (:func:`~.long_prompts.no_cut_generation`)."""
    import lm_eval.evaluator as evaluator

    original = evaluator.evaluate
    models: list[Any] = []

    def evaluate(*a: Any, **kw: Any) -> Any:
        lm = kw.get("lm", a[0] if a else None)
        models.append(lm)
        with no_cut_generation(lm):
            return original(*a, **kw)

    evaluator.evaluate = evaluate
    try:
        yield models
    finally:
        evaluator.evaluate = original


def record_device(results: dict[str, Any] | None, models: list[Any]) -> None:
    """The results' ``config.device``: the device the model ran on (``cpu`` when no GPU
    was found), not the harness's default ``cuda:0``; ``None`` for a served model."""
    if results is not None and models and isinstance(results.get("config"), dict):
        device = getattr(models[-1], "device", None)
        results["config"]["device"] = None if device is None else str(device)


def _mask_results(results: dict[str, Any]) -> None:
    """Mask credentials where the harness copies ``--model_args``: the results' config and
    every task's ``metadata`` (the harness merges the model's arguments into it)."""
    config = results.get("config")
    if isinstance(config, dict):
        config["model_args"] = mask_model_args(config.get("model_args"))
    for task_config in (results.get("configs") or {}).values():
        if isinstance(task_config, dict) and isinstance(task_config.get("metadata"), dict):
            mask_model_args(task_config["metadata"])


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
    from ..catalogue import fold_groups
    from ..report.samples import majority_from_samples

    groups = fold_groups()  # group -> its votes, from the benchmarks' descriptors
    samples = results.get("samples") or {}
    for group, subtasks in (results.get("group_subtasks") or {}).items():
        if group not in groups or not subtasks:
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
                    for metric in groups[group]:
                        row[f"{metric},{filter_key}"] = figures[metric]
                        row[f"{metric}_stderr,{filter_key}"] = "N/A"
            for metric in groups[group]:
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
