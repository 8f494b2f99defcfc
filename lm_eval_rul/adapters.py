"""The plugin's model adapters: one row each, the one list every other module reads.

An adapter is an engine class (a :class:`~lm_eval_rul.models.core.AudioLM` subclass) plus
one :class:`Adapter` row here. Registration (:data:`lm_eval_rul.registration.MODELS`), the
run's pre-flight checks (which models hear audio, load a checkpoint, keep a results file),
the hub checks, the multi-token letter check (whose tokenizer loads), the factual run
(which model cannot say its own audio limit) and the report (which model types default to
``original``) all read these rows, so adding an engine is its module and one row
(docs/architecture.md; from outside the package:
:func:`lm_eval_rul.registration.register_adapter`). The harness's own models the checks
know (``hf`` and its aliases...) are :data:`HARNESS_MODELS`, here too.

This module imports nothing heavy: it is read before any model or data loads.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "Adapter",
    "ADAPTERS",
    "HarnessModel",
    "HARNESS_MODELS",
    "adapter_named",
    "adapter_names",
    "audio_adapter_names",
    "checkpoint_adapter_names",
    "add_adapter",
    "text_hf_names",
    "tokenizer_model_names",
    "hub_model_names",
]


@dataclass(frozen=True)
class Adapter:
    """One harness model of the plugin.

    Attributes:
        name: The ``--model`` name, also the prefix of its messages (its class's
            ``MODEL_NAME``).
        target: ``module:Class``, imported lazily when the harness builds the model.
        hears_audio: The model takes the tasks' audio (the audio pre-flight checks apply).
        reads_checkpoint: It loads ``pretrained=`` itself (a local folder or a hub id,
            checked before anything loads).
        results_file: The file ``results_cache=auto`` means, in ``$LM_EVAL_RUL_CACHE``.
        knows_audio_limit: It reads the longest audio its model hears from the checkpoint
            (a served model must be told, e.g. a bridge's declared window).
        served: It talks to a server over HTTP instead of running the model in process (a
            bridge may declare its window and chunking; the factual protocol is its
            ``model_args`` too).
        loads_tokenizer: Its tokenizer loads from ``pretrained=`` (the multi-token letter
            check before the run reads it).
        required_args: The ``--model_args`` it cannot start without, each with an example
            (checked before anything loads: the harness names the output folder from them).
    """

    name: str
    target: str
    hears_audio: bool
    reads_checkpoint: bool
    results_file: str
    knows_audio_limit: bool
    served: bool
    loads_tokenizer: bool = False
    required_args: tuple[tuple[str, str], ...] = ()

    @property
    def module(self) -> str:
        """The module of :attr:`target` (it defines ``check_model_args``)."""
        return self.target.split(":")[0]


_CHECKPOINT = ("pretrained", "Qwen/Qwen2-Audio-7B-Instruct or a local checkpoint folder")

#: Every adapter, one row each (:func:`add_adapter` adds one from outside the package).
ADAPTERS: list[Adapter] = [
    Adapter(
        "lalm", "lm_eval_rul.models.lalm:LALM",
        hears_audio=True, reads_checkpoint=True, results_file="lalm_results.sqlite",
        knows_audio_limit=True, served=False, loads_tokenizer=True,
        required_args=(_CHECKPOINT,),
    ),
    Adapter(
        "lalm-api", "lm_eval_rul.models.api:LALMAPI",
        hears_audio=True, reads_checkpoint=False, results_file="lalm_api.sqlite",
        knows_audio_limit=False, served=True,
        required_args=(
            ("base_url", "http://localhost:8000/v1"),
            ("model", "the served model's name, e.g. Qwen/Qwen2-Audio-7B-Instruct"),
        ),
    ),
    Adapter(
        "lalm-vllm", "lm_eval_rul.models.lalm_vllm:LALMVLLM",
        hears_audio=True, reads_checkpoint=True, results_file="lalm_vllm_results.sqlite",
        knows_audio_limit=True, served=False, loads_tokenizer=True,
        required_args=(_CHECKPOINT,),
    ),
]


@dataclass(frozen=True)
class HarnessModel:
    """A model of lm-evaluation-harness itself that the plugin's checks know.

    Attributes:
        names: Its ``--model`` names (one class registered under several).
        text_checkpoint: It loads ``pretrained=`` as a text LM (an audio LM given to it
            fails only after its load: refused before).
        reads_checkpoint: It reads ``pretrained=`` from a folder or the hub.
        loads_tokenizer: Its tokenizer loads from ``pretrained=`` / ``tokenizer=``.
    """

    names: tuple[str, ...]
    text_checkpoint: bool = False
    reads_checkpoint: bool = True
    loads_tokenizer: bool = False


#: The harness's own models the checks know, one row each.
HARNESS_MODELS: tuple[HarnessModel, ...] = (
    HarnessModel(("hf", "hf-auto", "huggingface"), text_checkpoint=True, loads_tokenizer=True),
    HarnessModel(("vllm",)),
    HarnessModel(("hf-multimodal",)),
    HarnessModel(("hf-audiolm-qwen",)),
)


def adapter_named(name: str | None) -> Adapter | None:
    """The row of ``--model name`` (``None`` for a model that is not the plugin's)."""
    return next((row for row in ADAPTERS if row.name == name), None)


def add_adapter(row: Adapter) -> None:
    """Add an engine's row (the public registration point is
    :func:`lm_eval_rul.registration.register_adapter`, which also tells the harness).

    Raises:
        ValueError: ``row.name`` is taken (by an adapter or a harness model).
    """
    taken = {*adapter_names(), *(name for model in HARNESS_MODELS for name in model.names)}
    if row.name in taken:
        raise ValueError(f"--model {row.name} is taken; name the engine otherwise")
    ADAPTERS.append(row)


def adapter_names() -> tuple[str, ...]:
    """Every adapter's ``--model`` name, in table order."""
    return tuple(row.name for row in ADAPTERS)


def audio_adapter_names() -> tuple[str, ...]:
    """The adapters that hear audio."""
    return tuple(row.name for row in ADAPTERS if row.hears_audio)


def checkpoint_adapter_names() -> tuple[str, ...]:
    """The audio adapters that load a checkpoint (``pretrained=``) themselves."""
    return tuple(row.name for row in ADAPTERS if row.hears_audio and row.reads_checkpoint)


def text_hf_names() -> tuple[str, ...]:
    """The harness's text models for a local or hub checkpoint (``hf`` and its aliases)."""
    return tuple(name for model in HARNESS_MODELS if model.text_checkpoint for name in model.names)


def tokenizer_model_names() -> tuple[str, ...]:
    """The models whose tokenizer loads from ``pretrained=`` (the letter check reads it)."""
    harness = [n for model in HARNESS_MODELS if model.loads_tokenizer for n in model.names]
    return (*harness, *(row.name for row in ADAPTERS if row.loads_tokenizer))


def hub_model_names() -> tuple[str, ...]:
    """The models that read ``pretrained`` (and ``tokenizer``) from the hub or a folder."""
    harness = [n for model in HARNESS_MODELS if model.reads_checkpoint for n in model.names]
    return (*harness, *(row.name for row in ADAPTERS if row.reads_checkpoint))
