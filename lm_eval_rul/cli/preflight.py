"""Everything ``lm-eval-rul run`` checks before a model loads, for every model type.

The harness builds the model first and reads the tasks' data afterwards, so a typo in a
data path, a missing clip or a model argument meant for another model used to surface
only after minutes of model loading. :func:`check_before_model` runs, in order:

1. the ``model_args``: ``lalm``'s names and values; for any other model, the names that
   only ``lalm`` takes (``audio=``, ``noise_std``...) are named with the model they
   belong to;
2. the model's availability (:mod:`lm_eval_rul.hub`: a local folder, the cache, or one
   request to the hub, never retried), and that its kind fits the model type
   (:func:`check_model_kind`: an audio LM is not run with ``hf``, nor a text-only
   checkpoint with ``lalm``); then, for the audio models, that their results cache
   opens (:func:`check_results_cache`);
3. the tasks: loaded once with the run's ``--metadata`` (question files and metadata are
   validated here) and handed to the harness, so they are not read twice; a task that
   declares audio (``doc_to_audio``) given to a text model is refused in one line
   (:class:`AudioTaskForTextModelError`);
4. option letters that are several tokens for the model's tokenizer (a warning);
5. for audio models: every item has a clip (:class:`~lm_eval_rul.audio.MissingAudioError`)
   and every clip is readable (:func:`~lm_eval_rul.audio.preflight_clips`, ``--audio_check``).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ..adapters import (
    adapter_named,
    audio_adapter_names,
    checkpoint_adapter_names,
    text_hf_names,
    tokenizer_model_names,
)
from ..errors import UserInputError
from ..harness_compat import refuse_doc_to_audio_tasks
from ..hub import check_model_available
from .limits import say_limit_sample
from .task_names import DuplicateTaskError

__all__ = [
    "ModelArgsError",
    "check_model_kind",
    "check_text_scorer",
    "check_before_model",
    "check_model_args_for",
    "check_results_cache",
    "load_tasks_once",
    "plugin_docs",
    "check_clips_before_model",
    "AudioTaskForTextModelError",
]

logger = logging.getLogger(__name__)


class ModelArgsError(UserInputError, TypeError):
    """A ``model_args`` name the chosen model does not take (another model does)."""


def check_model_kind(model: str | None, model_args: Mapping[str, Any]) -> None:
    """The checkpoint's ``config.json`` fits the model type, read before anything loads.

    An audio LM (a ``model_type`` of :data:`~lm_eval_rul.models.families.FAMILIES`) given
    to ``hf`` fails after its load with a transformers error, and a text-only checkpoint
    given to ``lalm`` used to be reported as missing audio. Checkpoints not on this
    machine (a hub id not yet cached) are left to the model.

    Raises:
        ModelKindError: Which kind the checkpoint is and the ``--model`` to use.
        UnknownFamilyError: ``lalm`` and an audio checkpoint of an unsupported family.
    """
    from ..hub import checkpoint_config
    from ..models.families import ModelKindError, audio_family_of, family_for

    name = model_args.get("pretrained")
    checkpoint_audio = checkpoint_adapter_names()
    if model not in (*text_hf_names(), *checkpoint_audio) or not isinstance(name, str):
        return
    if not name:
        return
    config = checkpoint_config(name, str(model_args.get("revision") or "main"))
    if not config or not config.get("model_type"):
        return  # not a transformers config we can read: the model's load says what is wrong
    model_type = config.get("model_type")
    family = audio_family_of(config)
    if model in text_hf_names() and family is not None:
        raise ModelKindError(
            f"--model {model} with pretrained={name!r}: this is an audio LM ({family.name}, "
            f"model_type={model_type!r}), which --model {model} cannot load as a text model. "
            "Use --model lalm (audio=none for its text-only baseline)."
        )
    if model in checkpoint_audio and family is None:
        if not any("audio" in key for key in config):
            raise ModelKindError(
                f"--model {model} with pretrained={name!r}: the checkpoint has no audio encoder "
                f"(model_type={model_type!r}, no audio settings in its config.json), so it "
                "cannot hear the clips. Use --model hf for a text-only model."
            )
        family_for(model_type, where=name, who=model)  # an audio LM of a family we lack


def _constructor_names(model_class: type) -> set[str]:
    names: set[str] = set()
    for klass in model_class.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        for name, parameter in inspect.signature(init).parameters.items():
            if name != "self" and parameter.kind not in (
                inspect.Parameter.VAR_KEYWORD,
                inspect.Parameter.VAR_POSITIONAL,
            ):
                names.add(name)
        break  # the class's own constructor decides
    return names


def check_model_args_for(model: str | None, model_args: Mapping[str, Any]) -> dict[str, Any]:
    """Check ``model_args`` for ``model`` before anything loads; return them (converted).

    Raises:
        ModelArgsError: ``model`` is not an audio model and is given names only ``lalm``
            takes.
        UnknownModelArgsError, LALMArgumentError, UnknownConditionError: the audio
            model's own checks (its module's ``check_model_args``).
    """
    from ..models.args import supported_args
    from ..models.lalm import LALM
    from ..registration import model_args_checker

    if model in audio_adapter_names():
        return model_args_checker(model)(model_args)
    if not model or not model_args:
        return dict(model_args)
    from lm_eval.api.registry import get_model
    from lm_eval.models.huggingface import HFLM

    try:
        takes = _constructor_names(get_model(model))
    except Exception:  # noqa: BLE001 - an unknown model is the harness's to report
        return dict(model_args)
    audio_only = set(supported_args(LALM)) - _constructor_names(HFLM) - {"device", "batch_size"}
    wrong = sorted(name for name in model_args if name in audio_only and name not in takes)
    if wrong:
        shown = ", ".join(f"{name}={model_args[name]}" for name in wrong)
        raise ModelArgsError(
            f"--model {model} does not take model_args {shown}: "
            f"{'they are arguments' if len(wrong) > 1 else 'it is an argument'} of --model "
            "lalm (audio language models). For an audio model use --model lalm "
            f"--model_args pretrained=...,{wrong[0]}={model_args[wrong[0]]}; for a text-only "
            f"run drop {', '.join(wrong)}."
        )
    if get_model(model) is HFLM:  # the harness's own hf model, not a subclass of it
        from .hf_args import check_hf_model_args

        check_hf_model_args(model, model_args)
    if issubclass(get_model(model), HFLM):  # HFLM reads dtypes with getattr(torch, value)
        from ..model_flags import with_dtype_names

        return with_dtype_names(model_args, who=f"--model {model}")
    return dict(model_args)


def load_tasks_once(task_manager: Any, tasks: Any) -> dict[str, Any]:
    """Load ``tasks`` now and make the harness's own ``task_manager.load(tasks)`` reuse it.

    The question files and ``--metadata`` are read and validated here, before the model;
    the harness then gets the same task objects instead of reading everything again.
    """
    try:
        loaded = task_manager.load(tasks)
    except ValueError as error:
        if str(error).startswith("Duplicate task"):
            raise DuplicateTaskError(str(error)) from None
        raise
    original = task_manager.load

    def load(task_list: Any) -> Any:
        return loaded if task_list is tasks else original(task_list)

    task_manager.load = load
    return loaded


def plugin_docs(
    loaded: Mapping[str, Any], *, limit: int | float | None, samples: Mapping | None
) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """(task name, documents the run will evaluate) of each plugin task in ``loaded``.

    A plugin task is one whose documents carry a ``benchmark`` field. ``--limit`` and
    ``--samples`` select documents as the harness does.
    """
    from ..harness_compat import sample_size

    for name, task in (loaded.get("tasks") or {}).items():
        docs = list(task.eval_docs)
        if not docs or "benchmark" not in docs[0]:
            continue
        if samples and name in samples:
            docs = [docs[int(i)] for i in samples[name]]
        else:
            size = sample_size(task, limit)
            docs = docs[:size] if size is not None else docs
        yield name, docs


def check_clips_before_model(
    docs: Sequence[Mapping[str, Any]], condition: str, *, audio_check: str = "header"
) -> None:
    """Every item has a clip, and every clip it may hear is readable (before the model).

    Args:
        docs: The documents the run evaluates (any plugin task whose documents carry a
            ``benchmark`` field and the fields of :func:`lm_eval_rul.audio.attach_audio`).
        condition: The ``audio=`` condition.
        audio_check: ``header`` (read every clip's header), ``decode`` (decode every
            clip) or ``none``.

    Raises:
        MissingAudioError: Items without a clip (all named).
        UnreadableAudioError: Empty or unreadable clips (all named, with the count).
    """
    from ..audio import check_audio_available, preflight_clips, refs_to_check

    check_audio_available(docs, condition)
    preflight_clips(refs_to_check(docs, condition), level=audio_check)


def declares_audio(task: Any) -> bool:
    """Whether a harness task declares its audio (``doc_to_audio``), on either release."""
    config = getattr(task, "config", None)
    return getattr(config, "doc_to_audio", None) is not None or bool(
        getattr(task, "MULTIMODAL", False)
    )


class AudioTaskForTextModelError(UserInputError):
    """A task that declares audio (``doc_to_audio``) given to a text-only model."""


def _refuse_audio_tasks_for_text_models(model: str | None, loaded: Mapping[str, Any]) -> None:
    """The harness refuses them only after the model loads, with a traceback: say it now."""
    audio_tasks = sorted(
        name for name, task in (loaded.get("tasks") or {}).items() if declares_audio(task)
    )
    if not audio_tasks or not model or model in audio_adapter_names():
        return
    from lm_eval.api.registry import get_model

    try:
        if getattr(get_model(model), "MULTIMODAL", False):
            return
    except Exception:  # noqa: BLE001 - an unknown model is the harness's to report
        return
    shown = ", ".join(audio_tasks[:4]) + (" ..." if len(audio_tasks) > 4 else "")
    raise AudioTaskForTextModelError(
        f"--model {model} is a text model, and task(s) {shown} declare their audio "
        "(doc_to_audio), which the harness runs only with audio models. Use --model lalm "
        "(or lalm-api), or run the plain tasks without `_native` in their name "
        "(e.g. rul_muchomusic_gen) with a text model."
    )


def check_results_cache(model: str | None, model_args: Mapping[str, Any]) -> None:
    """``lalm``/``lalm-api``'s results cache opens, before the model loads: a file that is
    not SQLite, a folder that cannot be made, a read-only disk are one line now, not after
    minutes of loading (:class:`~lm_eval_rul.cache.CacheFileError`)."""
    row = adapter_named(model)
    if row is None or not row.hears_audio:
        return
    from ..cache import ResultCache
    from ..models.core import results_path

    path = results_path(model_args.get("results_cache", "auto"), row.results_file)
    if path is not None:
        ResultCache(path, scope={"check": "opens"}).close()


def check_before_model(
    *,
    model: str | None,
    model_args: Mapping[str, Any] | None,
    tasks: Any,
    task_manager: Any,
    limit: int | float | None = None,
    samples: Mapping | None = None,
    audio_check: str = "header",
    use_cache: str | None = None,
) -> None:
    """Run every check that needs no model (see the module docstring); raise the first."""
    args = check_model_args_for(model, dict(model_args or {}))
    if isinstance(model_args, dict):  # the harness builds the model from this object
        from ..model_flags import DTYPE_ARGS

        model_args.update({k: v for k, v in args.items() if k in DTYPE_ARGS})
    if model in audio_adapter_names() and use_cache:
        from ..models.args import LALMArgumentError, use_cache_refusal

        raise LALMArgumentError(use_cache_refusal(model))
    check_model_available(model, args)
    check_model_kind(model, args)
    check_results_cache(model, args)
    if task_manager is None:
        return
    loaded = load_tasks_once(task_manager, tasks)
    say_limit_sample(loaded, None if samples else limit)
    _refuse_audio_tasks_for_text_models(model, loaded)
    refuse_doc_to_audio_tasks(
        [name for name, task in (loaded.get("tasks") or {}).items() if declares_audio(task)]
    )
    docs, letter_scored = [], False
    for name, task_docs in plugin_docs(loaded, limit=limit, samples=samples):
        docs.extend(task_docs)
        letter_scored |= loaded["tasks"][name].OUTPUT_TYPE == "multiple_choice"
    if model in tokenizer_model_names() and letter_scored:
        from ..mcqa.letters import warn_for_model_args

        warn_for_model_args(model, args)
    if model in audio_adapter_names():
        check_clips_before_model(docs, str(args.get("audio", "original")), audio_check=audio_check)
        check_clip_counts(model, args, docs)


def check_clip_counts(
    model: str | None, model_args: Mapping[str, Any], docs: Sequence[Mapping[str, Any]]
) -> None:
    """Documents over several clips (MMAU-Pro) given to a checkpoint whose family takes
    fewer a prompt: one line naming them, before the model loads.

    Raises:
        SeveralClipsError: naming the family, the count and the items.
    """
    from ..audio import condition_named
    from ..audio.clips import clip_parts
    from ..hub import checkpoint_config
    from ..models.families import audio_family_of, several_clips_refusal

    name = model_args.get("pretrained")
    if model not in checkpoint_adapter_names() or not isinstance(name, str) or not name:
        return
    if not condition_named(str(model_args.get("audio", "original"))).audio_slot:
        return  # audio=none plays no clip at all
    config = checkpoint_config(name, str(model_args.get("revision") or "main")) or {}
    family = audio_family_of(config)
    if family is None or family.max_clips is None:
        return
    over = {
        str(d.get("id")): len(clip_parts(d)) for d in docs if len(clip_parts(d)) > family.max_clips
    }
    if over:
        listed = ", ".join(sorted(over)[:5]) + (" ..." if len(over) > 5 else "")
        raise SeveralClipsError(
            several_clips_refusal(
                f"--model {model} with pretrained={name!r}",
                family,
                max(over.values()),
                f"{len(over)} item(s) ({listed})",
            )
        )


class SeveralClipsError(UserInputError):
    """Items over several clips given to a family that takes one a prompt."""


def check_text_scorer(
    command: str, model: str | None, model_args: str | None, *, device: str | None = None
) -> None:
    """``pi`` / ``build``'s scorer, checked as ``run`` checks its model, without any I/O.

    The name is a registered model; not ``lalm``/``lalm-api`` (the PI is what a model
    answers from the text alone); no argument only ``lalm`` takes; a ``cuda``/``mps``
    ``--device`` exists. The checkpoint itself (there, and not an audio LM) is checked
    by :func:`lm_eval_rul.registration.create_lm`, after the question files.

    Args:
        command: ``pi`` or ``build``, named in the messages.
        model: ``--model``.
        model_args: The ``k=v,...`` string of ``--model_args``.
        device: ``--device``.

    Raises:
        UnknownModelError, ModelKindError, ModelArgsError, DeviceUnavailableError: each
        one line naming the fix.
    """
    from lm_eval.utils import simple_parse_args_string

    from ..models.families import ModelKindError
    from .processes import check_processes
    from .run_inputs import check_device, check_model_name

    check_model_name(model)
    check_processes(simple_parse_args_string(model_args or ""))
    if model in audio_adapter_names():
        raise ModelKindError(
            f"{command} scores text-only prompts (the PI is how often a model picks the "
            f"answer from the question and options alone), so it takes a text model, not "
            f"--model {model}. Use --model hf (or vllm, or an API model such as "
            "local-completions) with a text LM; for an audio LM's own text-only accuracy, "
            "run `lm-eval-rul run --model lalm --model_args pretrained=...,audio=none`."
        )
    check_model_args_for(model, simple_parse_args_string(model_args or ""))
    check_device(device)
