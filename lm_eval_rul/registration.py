"""Make the plugin's tasks and models known to lm-evaluation-harness."""

from __future__ import annotations

from typing import Any

from .adapters import ADAPTERS, Adapter, adapter_named, add_adapter, text_hf_names
from .catalogue import tasks_dir
from .errors import UserInputError

__all__ = [
    "tasks_dir",
    "register_models",
    "task_manager",
    "create_lm",
    "model_args_checker",
    "MODELS",
    "register_adapter",
    "UnknownTaskMetadataError",
]

#: Model name -> lazy import target (:data:`lm_eval_rul.adapters.ADAPTERS`), registered
#: without importing torch-heavy code (:func:`register_adapter` adds to it).
MODELS: dict[str, str] = {row.name: row.target for row in ADAPTERS}


def register_adapter(row: Adapter) -> None:
    """Add an engine: its :class:`~lm_eval_rul.adapters.Adapter` row (an
    :class:`~lm_eval_rul.models.core.AudioLM` subclass as its ``target``, whose module
    defines ``check_model_args``), known to the plugin's checks and to the harness.

    Raises:
        ValueError: The name is taken.
    """
    add_adapter(row)
    MODELS[row.name] = row.target
    register_models()


def model_args_checker(model: str) -> Any | None:
    """The ``check_model_args`` of one of the plugin's models (None for other models).

    Each plugin model's module defines ``check_model_args(model_args) -> dict``, which
    validates and converts ``--model_args`` without loading anything.
    """
    import importlib

    row = adapter_named(model)
    if row is None:
        return None
    return importlib.import_module(row.module).check_model_args


def register_models() -> None:
    """Register the plugin's models with the harness registry (idempotent, lazy)."""
    import lm_eval.models  # noqa: F401  - fills the built-in registry first
    from lm_eval.api.registry import model_registry

    from .harness_compat import accept_generation_metrics
    from .mcqa.harness_metric import register_metrics

    for name, target in MODELS.items():
        if name not in model_registry:
            model_registry.register(name, target=target)
    accept_generation_metrics()  # the generation tasks' acc/f1 on lm-eval 0.5
    register_metrics()  # perceptual_index, where lm-eval 0.5 looks the tasks' metrics up


def task_manager(
    *, include_path: str | list[str] | None = None, include_defaults: bool = True, **metadata: Any
) -> Any:
    """The harness's ``TaskManager`` for the plugin's tasks, with ``metadata`` applied.

    ``lm_eval.simple_evaluate(..., task_manager=task_manager(data_path=...))`` gives every
    task its ``data_path``, ``audio_dir``... whatever the harness version does with
    ``simple_evaluate(metadata=...)`` (lm-eval 0.4.13 drops it when a ``task_manager`` is
    passed). The keys are those of ``lm-eval-rul run --metadata``.

    Args:
        include_path: More task folders (the user's own YAML tasks), searched too.
        include_defaults: Also index the harness's own tasks (``arc_easy``...); ``False``
            indexes only the plugin's (and ``include_path``'s) folders, which is faster.
        **metadata: Task metadata (``rul_data_path``, ``audio_dir``, ``seed``...).

    Raises:
        UnknownTaskMetadataError: a keyword no plugin task reads (without ``include_path``).
        FileNotFoundError, DataValidationError, TaskMetadataError: a question file or
            ``audio_dir`` that is missing or not what the tasks read, a bad
            ``shuffle_seed`` or ``parser``: the CLI's one-line messages, naming the keyword
            (``lm_eval_rul.task_manager keyword rul_data_path='...'``), raised at this call.
    """
    from lm_eval.tasks import TaskManager

    from .data_keys import check_data_keys
    from .included import included
    from .questions.metadata_naming import named_as_keywords

    _quiet_git()
    extra = [include_path] if isinstance(include_path, str) else list(include_path or [])
    # a missing folder, a broken benchmark.py, a task named like a built-in: one line here
    with included(extra, flag="lm_eval_rul.task_manager include_path"):
        if not extra or _described(extra):  # every key must be one the tasks' benchmarks read
            _check_task_metadata(metadata)
        with named_as_keywords():  # a typo in a path stops here, not after the model loads
            check_data_keys(metadata)  # every benchmark's checks and data keys (descriptors')
    return TaskManager(
        include_path=[str(tasks_dir()), *map(str, extra)],
        include_defaults=include_defaults,
        metadata=dict(metadata),
    )


def _quiet_git() -> None:
    """The harness's ``simple_evaluate`` records the working folder's git commit; outside a
    clone git prints ``fatal: not a git repository`` on the terminal. The Python API path
    (this ``task_manager``) records it without that line, as ``lm-eval-rul run`` does."""
    import lm_eval.evaluator as evaluator

    from .harness_compat import quiet_git_hash

    evaluator.get_git_commit_hash = quiet_git_hash


def create_lm(
    model: str,
    model_args: str | None = None,
    *,
    device: str | None = None,
    batch_size: int | str | None = None,
    flag: str = "--model_args",
) -> Any:
    """Create a harness LM exactly as ``lm_eval --model ... --model_args ...`` does.

    Args:
        model: Registered model name (``hf``, ``vllm``, ``local-completions``, ``lalm``...).
        model_args: The ``key=value,...`` string of ``--model_args``.
        device: ``--device`` (``None``: ``cuda`` when torch sees a GPU, else ``cpu``, as
            ``lm_eval run`` does for the ``hf`` model).
        batch_size: ``--batch_size`` (an int, or ``auto``).
        flag: The command's flag that gave ``model_args`` (``--generator_args``,
            ``--judge_args``...), named when the model cannot be found.

    An API model (``local-chat-completions``...) makes one attempt per call: the callers
    retry with :mod:`lm_eval_rul.retries` (no retry on 401/403).

    Raises:
        ModelUnavailableError: The model is neither a local folder nor fetchable
            (:func:`lm_eval_rul.hub.check_model_available`), before anything loads.
        ModelKindError: A text model (``hf``) given an audio LM's checkpoint: the
            commands that create models here score text.
    """
    from lm_eval.api.registry import get_model
    from lm_eval.utils import simple_parse_args_string

    from .hub import check_model_available
    from .model_flags import settle_model_flags, with_dtype_names

    register_models()
    # a missing folder, an unreachable hub or a gated model: one line now, not retries
    parsed = simple_parse_args_string(model_args or "")
    check_model_available(model, parsed, flag=flag, data_hint="")
    _refuse_audio_checkpoint(model, parsed, flag)
    # device=/batch_size= in model_args are taken as the flags (the harness would pass both)
    settled, config = settle_model_flags(
        parsed, {"device": device, "batch_size": batch_size}, option=flag
    )
    settled = with_dtype_names(settled, who=flag)  # bf16, half...: the names torch has
    if config["device"] is None:
        import torch

        config["device"] = "cuda" if torch.cuda.is_available() else "cpu"
    if settled == parsed:
        lm = get_model(model).create_from_arg_string(model_args or "", config)
    else:
        lm = get_model(model).create_from_arg_obj(settled, config)
    _one_attempt_per_call(lm)
    return lm


def _one_attempt_per_call(lm: Any) -> None:
    """Turn off the harness's own retries of an API model (``TemplateAPI``).

    They retry every failure, a 401 included (each attempt logging the server's body,
    which may echo the key); the callers retry with :mod:`lm_eval_rul.retries`, which
    stops at once on authentication errors.
    """
    from lm_eval.models.api_models import TemplateAPI

    if isinstance(lm, TemplateAPI):
        lm.max_retries = 1


def _refuse_audio_checkpoint(model: str, model_args: dict[str, Any], flag: str) -> None:
    """A text model given an audio LM fails only after its load: say so before it."""
    from .hub import checkpoint_config
    from .models.families import ModelKindError, audio_family_of

    name = model_args.get("pretrained")
    if model not in text_hf_names() or not isinstance(name, str):
        return
    config = checkpoint_config(name, str(model_args.get("revision") or "main"))
    family = audio_family_of(config) if config else None
    if family is not None:
        raise ModelKindError(
            f"{flag} pretrained={name!r} is an audio LM ({family.name}), which --model "
            f"{model} cannot load as a text model, and this command scores text. Give a "
            "text-only LM (e.g. the audio LM's language-model base)."
        )


class UnknownTaskMetadataError(UserInputError, ValueError):
    """A :func:`task_manager` keyword that none of the plugin's tasks reads."""


def _described(folders: list[str]) -> bool:
    """Whether every task folder (a folder holding YAMLs) of ``folders`` has a descriptor,
    so the keys its tasks read are known."""
    from pathlib import Path

    from .catalogue import DESCRIPTOR_FILE

    task_folders = {p.parent for f in folders for p in Path(f).expanduser().rglob("*.yaml")}
    return bool(task_folders) and all((d / DESCRIPTOR_FILE).is_file() for d in task_folders)


def _check_task_metadata(metadata: dict[str, Any]) -> None:
    """Refuse keys no plugin task reads, with the closest known key (as ``run --metadata``)."""
    from .catalogue import metadata_keys, unknown_keys_text

    known = sorted({*metadata_keys(), "version"})  # every benchmark's, from the catalogue
    unknown = [key for key in metadata if key not in known]
    if not unknown:
        return
    raise UnknownTaskMetadataError(
        f"lm_eval_rul.task_manager: unknown keyword{'s' if len(unknown) > 1 else ''} "
        f"{unknown_keys_text(unknown, known)}; the plugin's tasks read: {', '.join(known)}. "
        "(Your own task "
        "folders' keys are accepted with include_path=...)"
    )
