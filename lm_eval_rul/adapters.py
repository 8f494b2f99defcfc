"""The plugin's model adapters: one row each, the one list every other module reads.

An adapter is an engine class (a :class:`~lm_eval_rul.models.core.AudioLM` subclass) plus
one :class:`Adapter` row here. Registration (:data:`lm_eval_rul.registration.MODELS`), the
run's pre-flight checks (which models hear audio, load a checkpoint, keep a results file),
the hub checks (:data:`lm_eval_rul.hub.HUB_MODELS`), the factual run (which model cannot
say its own audio limit) and the report (which model types default to ``original``) all
read these rows, so adding an engine is its module and one row (docs/architecture.md).

This module imports nothing heavy: it is read before any model or data loads.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "Adapter",
    "ADAPTERS",
    "adapter_named",
    "adapter_names",
    "audio_adapter_names",
    "checkpoint_adapter_names",
]


@dataclass(frozen=True)
class Adapter:
    """One harness model of the plugin.

    Attributes:
        name: The ``--model`` name.
        target: ``module:Class``, imported lazily when the harness builds the model.
        hears_audio: The model takes the tasks' audio (the audio pre-flight checks apply).
        reads_checkpoint: It loads ``pretrained=`` itself (a local folder or a hub id,
            checked before anything loads).
        results_file: The file ``results_cache=auto`` means, in ``$LM_EVAL_RUL_CACHE``.
        knows_audio_limit: It reads the longest audio its model hears from the checkpoint
            (a served model must be told, e.g. a bridge's declared window).
        served: It talks to a server over HTTP instead of running the model in process.
    """

    name: str
    target: str
    hears_audio: bool
    reads_checkpoint: bool
    results_file: str
    knows_audio_limit: bool
    served: bool

    @property
    def module(self) -> str:
        """The module of :attr:`target` (it defines ``check_model_args``)."""
        return self.target.split(":")[0]


#: Every adapter, one row each.
ADAPTERS: tuple[Adapter, ...] = (
    Adapter(
        "lalm", "lm_eval_rul.models.lalm:LALM",
        hears_audio=True, reads_checkpoint=True, results_file="lalm_results.sqlite",
        knows_audio_limit=True, served=False,
    ),
    Adapter(
        "lalm-api", "lm_eval_rul.models.api:LALMAPI",
        hears_audio=True, reads_checkpoint=False, results_file="lalm_api.sqlite",
        knows_audio_limit=False, served=True,
    ),
    Adapter(
        "lalm-vllm", "lm_eval_rul.models.lalm_vllm:LALMVLLM",
        hears_audio=True, reads_checkpoint=True, results_file="lalm_vllm_results.sqlite",
        knows_audio_limit=True, served=False,
    ),
)  # fmt: skip


def adapter_named(name: str | None) -> Adapter | None:
    """The row of ``--model name`` (``None`` for a model that is not the plugin's)."""
    return next((row for row in ADAPTERS if row.name == name), None)


def adapter_names() -> tuple[str, ...]:
    """Every adapter's ``--model`` name, in table order."""
    return tuple(row.name for row in ADAPTERS)


def audio_adapter_names() -> tuple[str, ...]:
    """The adapters that hear audio."""
    return tuple(row.name for row in ADAPTERS if row.hears_audio)


def checkpoint_adapter_names() -> tuple[str, ...]:
    """The audio adapters that load a checkpoint (``pretrained=``) themselves."""
    return tuple(row.name for row in ADAPTERS if row.hears_audio and row.reads_checkpoint)
