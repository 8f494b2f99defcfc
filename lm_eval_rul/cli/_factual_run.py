"""What ``lm-eval-rul run`` adds to a run of the factual tasks.

* Before the model loads: every requested factual task reads its tables and checks its
  audio files, and one error names every problem of every task (the harness would stop
  at the first task).
* Before anything loads: the protocol and what the model hears. ``--metadata protocol``
  is checked (``rul`` or ``paper``) and handed to ``lalm-api`` as its model argument (the
  inference settings it sends). The model's audio limit is read from the checkpoint's
  processor without loading its weights (``lalm``: Audio Flamingo 3 600 s, Qwen2-Audio
  30 s) or from ``max_audio_seconds``, and written into the metadata as
  ``max_audio_seconds``: each recording is heard whole up to it
  (:func:`~lm_eval_rul.factual.chunks.plan_windows`). A ``chunk_seconds`` longer than the
  limit stops the run at once (the model would not hear the end of each window).
  ``lalm-api`` cannot read a served model's limit: given neither ``max_audio_seconds``
  nor ``chunk_seconds``, the run stops before anything is sent.
* After ``simple_evaluate``: each logged window gets its item's aggregated prediction
  (:func:`~lm_eval_rul.factual.tasks.add_item_predictions`), so the sample log holds the
  raw answer, the window's labels and the item's prediction.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import logging
from typing import TYPE_CHECKING, Any

from ..adapters import adapter_named

if TYPE_CHECKING:
    from ..factual.errors import FactualInputError

__all__ = [
    "FACTUAL_FOLDER",
    "uses_factual_tasks",
    "set_chunk_seconds",
    "check_audio",
    "add_item_predictions",
]

logger = logging.getLogger(__name__)

#: The factual benchmark's task folder (its catalogue descriptor: tasks/factual/benchmark.py).
FACTUAL_FOLDER = "factual"


def _served(model: str | None) -> bool:
    """``model`` is an audio engine behind a server (its row): it takes the protocol as a
    model argument, may be a bridge that declares its window and chunking."""
    row = adapter_named(model)
    return row is not None and row.hears_audio and row.served


def uses_factual_tasks(names: str) -> bool:
    """Whether the comma-separated ``--tasks`` names a task or group of the factual
    benchmark: one whose YAML is in the folder of its catalogue descriptor, whatever its
    name looks like (a glob counts when it matches one, as the harness expands it).
    """
    from ..catalogue import by_folder, plugin_task_names
    from .run_inputs import task_folders

    requested = [name.strip() for name in names.split(",") if name.strip()]
    if not requested:
        return False
    known = plugin_task_names()
    expanded = [m for n in requested for m in (fnmatch.filter(known, n) if _glob(n) else [n])]
    factual = by_folder()[FACTUAL_FOLDER]
    return any(
        by_folder().get(folder) is factual
        for folder in task_folders(expanded).values()
        if folder is not None
    )


def _glob(name: str) -> bool:
    return any(c in name for c in "*?[")


def _metadata(args: argparse.Namespace) -> dict[str, Any]:
    value = getattr(args, "metadata", None) or {}
    return dict(json.loads(value) if isinstance(value, str) else value)


def _served_model_limit_unknown(model: str) -> FactualInputError:
    from ..factual.errors import FactualInputError

    return FactualInputError(
        f"{model} with the factual tasks: each recording is heard whole up to the model's own "
        "limit and cut there (recorded in every document), but the served model's audio limit "
        "is not known here, and a server that hears less (Qwen2-Audio: 30 s) would silently "
        "drop the rest. Say how much audio the served model hears: --model_args "
        "...,max_audio_seconds=30, or ask for windows: --metadata '{..., \"chunk_seconds\": "
        "30}' (or serve it with lm-eval-rul bridge, which declares it). Nothing was sent."
    )


def _model_args_with(args: argparse.Namespace, name: str, value: str) -> None:
    """Add ``name=value`` to ``args.model_args`` (a ``k=v,...`` string or a dict)."""
    current = getattr(args, "model_args", None)
    if isinstance(current, dict):
        args.model_args = {**current, name: value}
    else:
        text = str(current or "").strip().strip(",")
        args.model_args = f"{text},{name}={value}" if text else f"{name}={value}"


def _protocol(args: argparse.Namespace, model_args: dict[str, Any], metadata: dict[str, Any]):
    """The run's checked protocol; ``lalm-api`` is given it as its model argument."""
    from ..catalogue import by_folder
    from ..factual.errors import FactualInputError
    from ..factual.protocol import check_protocol

    key = by_folder()[FACTUAL_FOLDER].protocol_source(metadata)  # factual_protocol, or protocol
    given = metadata.get(key)
    protocol = check_protocol(given, where=f"--metadata {key}")
    if not _served(args.model):
        return protocol
    in_model = model_args.get("protocol")
    if in_model not in (None, ""):
        model_protocol = check_protocol(in_model, where="--model_args protocol")
        if given not in (None, "") and model_protocol != protocol:
            raise FactualInputError(
                f"--metadata {key}={given!r} and --model_args protocol={in_model!r} differ; "
                "give the protocol once (either place sets both the tasks and lalm-api)."
            )
        return model_protocol
    if given not in (None, ""):
        _model_args_with(args, "protocol", protocol)
    return protocol


def set_chunk_seconds(args: argparse.Namespace) -> None:
    """Check the protocol and ``chunk_seconds``; write the model's audio limit into
    ``--metadata max_audio_seconds``.

    ``lalm`` reads the limit from the checkpoint's processor (or ``max_audio_seconds``);
    ``lalm-api`` cannot read a served model's limit, so it must be told: its
    ``max_audio_seconds``, or ``chunk_seconds`` itself. The window length itself is
    :func:`~lm_eval_rul.factual.chunks.effective_chunk_seconds`.

    Raises:
        FactualInputError: ``protocol`` names no protocol (or differs between
            ``--metadata`` and ``lalm-api``'s ``--model_args``), ``chunk_seconds`` was given
            and exceeds the model's limit, or ``lalm-api`` was given neither
            ``max_audio_seconds`` nor ``chunk_seconds``.
    """
    from lm_eval.config.evaluate_config import EvaluatorConfig

    from ..factual.chunks import effective_chunk_seconds
    from ..factual.protocol import is_chunked
    from ..models.families import audio_limit_seconds
    from ..registration import model_args_checker

    metadata = _metadata(args)
    cfg = EvaluatorConfig.from_cli(argparse.Namespace(**vars(args)))
    model_args = model_args_checker(args.model)(cfg.model_args or {})
    protocol = _protocol(args, dict(cfg.model_args or {}), metadata)  # as given, no defaults
    # recorded in the results' configs, read by the report; under the family's own key so
    # that a bare `protocol` never reaches another family (MMAU) of the same run
    metadata.pop("protocol", None)
    metadata["factual_protocol"] = protocol
    args.metadata = metadata
    row = adapter_named(args.model)
    if row is not None and row.reads_checkpoint and not model_args.get("pretrained"):
        return  # the model's own check says what is missing
    try:
        limit = audio_limit_seconds(model_args)
    except (OSError, ValueError) as error:  # the model load will say what is wrong
        logger.warning("factual tasks: cannot read the model's audio limit (%s)", error)
        return
    given = metadata.get("chunk_seconds")
    given = None if given in (None, "") else given
    if given is None and limit is None and row is not None and not row.knows_audio_limit:
        raise _served_model_limit_unknown(args.model)
    chunked = is_chunked(model_args.get("chunked", metadata.get("chunked")))
    if not chunked and _served(args.model) and model_args.get("base_url"):
        from ..models.api_http import (
            HTTPSettings,
            read_declaration,  # a bridge's CHUNKED
        )

        settings = HTTPSettings.of(model_args)
        declared = read_declaration(str(model_args["base_url"]), model_args.get("model"), settings)
        chunked = bool(declared and declared.chunked)
        if chunked:  # the tasks read it from the metadata, as a user's chunked=true
            metadata = {**metadata, "chunked": True}
            args.metadata = metadata
    seconds = effective_chunk_seconds(given, limit, chunked=chunked)
    if limit is not None and metadata.get("max_audio_seconds") in (None, ""):
        args.metadata = {**metadata, "max_audio_seconds": limit}  # the tasks' cut or windows
    if seconds is not None:
        how = f"windows of at most {seconds:g} s"
    elif limit is None:
        how = "each recording whole (the model has no limit)"
    else:
        how = f"each recording whole up to the model's {limit:g} s, longer ones cut there"
    logger.info("factual tasks (protocol=%s): %s", protocol, how)


def _factual_tasks(index: dict[str, Any], names: list[str]) -> list[str]:
    """The factual task keys (``mood``...) of the requested task and group names."""
    found: list[str] = []
    for name in names:
        entry = index.get(name)
        cfg = (entry.cfg if entry is not None else None) or {}
        if entry is not None and entry.kind.name == "GROUP":
            children = cfg.get("task") or []
            found += _factual_tasks(
                index, [c if isinstance(c, str) else c.get("task") for c in children]
            )
        elif (cfg.get("dataset_kwargs") or {}).get("factual_task"):
            found.append(str(cfg["dataset_kwargs"]["factual_task"]))
    return found


def check_audio(args: argparse.Namespace) -> None:
    """Check the audio of every requested factual task before the model loads.

    Raises:
        FactualInputError: Naming every missing, unreadable or mismatching file.
    """
    from lm_eval.config.evaluate_config import EvaluatorConfig
    from lm_eval.tasks import TaskManager

    from ..factual.tasks import check_tasks_audio
    from ..harness_compat import task_index

    cfg = EvaluatorConfig.from_cli(argparse.Namespace(**vars(args)))
    manager = TaskManager(include_path=cfg.include_path, include_defaults=False)
    requested = cfg.tasks.split(",") if isinstance(cfg.tasks, str) else list(cfg.tasks or [])
    tasks = _factual_tasks(dict(task_index(manager)), [str(t).strip() for t in requested])
    if tasks:
        check_tasks_audio(tasks, cfg.metadata or {})


def add_item_predictions(results: dict[str, Any]) -> None:
    """Add each item's aggregated prediction to the logged factual samples (in place)."""
    from ..factual.tasks import add_item_predictions as add

    samples = results.get("samples")
    if samples:
        count = add(samples)
        logger.info("factual tasks: aggregated predictions of %d items added to the samples", count)
