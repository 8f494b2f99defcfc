"""``lalm``: transformers-native audio language models inside lm-evaluation-harness.

The harness sends one ``loglikelihood`` request per answer letter; this model groups
the requests of one (document, context), reads every letter from ONE forward pass, and
encodes each clip once per run: the audio sits first in the user turn, the key/value
cache of the shared system + audio prefix is computed once per clip, and each
question only runs its own suffix tokens against a copy of that cache. The audio the
model hears (the original clip, reversed, noise, silence, another clip, or none) is
chosen by ``audio=`` and produced by :func:`lm_eval_rul.audio.condition_audio`. Letter scoring is
:mod:`.prefix_scoring`, generation :mod:`.generation`, argument checks :mod:`.args`.

The model loads through lm-eval's :class:`~lm_eval.models.huggingface.HFLM` (device
placement, ``accelerate launch`` data parallelism, dtype, rank/world size), overriding
only the hooks that differ: the config (family detection), the tokenizer (the family's
processor), and the model class. Text-only ``loglikelihood_rolling`` is HFLM's own.
"""

from __future__ import annotations

import inspect
import logging
from collections import OrderedDict
from collections.abc import Hashable, Mapping
from typing import Any

import torch
import transformers
from lm_eval.models.huggingface import HFLM

from ..audio import AudioSpec
from ..audio.requests import RequestAudio
from .args import USE_CACHE_REFUSAL, LALMArgumentError, audio_condition, validate_model_args
from .audio_requests import AudioRequestsMixin
from .chat_prompts import ChatPromptsMixin, check_prompt_dependencies
from .common import audio_settings
from .families import Family, family_for
from .generation import AudioGenerationMixin
from .prefix_scoring import ClipPrefix, PrefixScoringMixin
from .stored_results import StoredResults, results_path, results_scope

__all__ = ["LALM", "check_model_args"]

logger = logging.getLogger(__name__)

class LALM(
    AudioRequestsMixin, ChatPromptsMixin, PrefixScoringMixin, AudioGenerationMixin, HFLM
):
    """Any transformers-native audio LM (see :mod:`lm_eval_rul.models.families`).

    Args:
        pretrained: Hub id or local path of the checkpoint (a full Qwen Omni checkpoint
            loads only its thinker).
        audio: What the model hears, one registered condition
            (:func:`lm_eval_rul.audio.condition_names`): ``original`` (the item's clip),
            ``reversed`` (that clip backwards), ``noise`` (Gaussian, reproducible from
            ``seed`` and the question id), ``silence``, ``random`` (another clip of the
            same benchmark, seeded) or ``none`` (the prompt without any audio tokens).
        noise_seconds: Duration of the ``noise`` / ``silence`` waveform.
        noise_std: Standard deviation of the ``noise`` waveform.
        seed: Seed of ``noise`` and ``random``.
        max_audio_seconds: Trim longer audio (with a warning); default: the family's
            limit read from the processor or the family table.
        dtype: Weights dtype (``auto``, ``float32``, ``bfloat16``, ...).
        device: ``cuda``, ``cuda:1``, ``cpu``, ``mps``...; default: the accelerator if
            any, else CPU (under ``accelerate launch`` each process takes its own).
        batch_size: Questions per forward pass (letter scoring) or per ``generate``
            call; an integer (``auto`` is not supported).
        max_batch_size: Accepted for harness compatibility (unused: no auto batch size).
        chat_template: Wrap the question in the processor's chat template (audio first
            in the user turn). ``False`` writes the audio placeholder then the question.
        system_prompt: Optional system message (default: the template's own).
        prefix_cache: Reuse the key/value cache of the system + audio prefix across the
            questions and folds of a clip (default). ``False`` runs the naive path: one
            full forward per request, audio re-encoded each time (for checking).
        max_length: Context length cap (default: from the model config).
        max_gen_toks: Default generation budget when a task gives none.
        revision: Checkpoint revision on the Hub.
        trust_remote_code: Passed to transformers (the supported families need none).
        parallelize: Split one model over several GPUs (``device_map="auto"``).
        results_cache: Where results are kept as they are computed, so an interrupted
            run resumes without repeating a forward pass (:mod:`.stored_results`):
            ``auto`` (default: ``lalm_results.sqlite`` in ``$LM_EVAL_RUL_CACHE``), a
            file path, or ``none``.
    """

    MULTIMODAL = True

    def __init__(
        self,
        pretrained: str,
        audio: str | None = "original",
        noise_seconds: float = 10.0,
        noise_std: float = 1.0,
        seed: int = 0,
        max_audio_seconds: float | None = None,
        dtype: str = "auto",
        device: str | None = None,
        batch_size: int | str = 1,
        max_batch_size: int | None = 64,
        chat_template: bool = True,
        system_prompt: str | None = None,
        prefix_cache: bool = True,
        max_length: int | None = None,
        max_gen_toks: int = 256,
        revision: str = "main",
        trust_remote_code: bool = False,
        parallelize: bool = False,
        results_cache: str | None = "auto",
        **unknown: Any,
    ) -> None:
        given = {
            "pretrained": pretrained,
            "dtype": dtype,
            "noise_seconds": noise_seconds,
            "noise_std": noise_std,
            "seed": seed,
            "max_audio_seconds": max_audio_seconds,
            "batch_size": batch_size,
            "max_batch_size": max_batch_size,
            "chat_template": chat_template,
            "prefix_cache": prefix_cache,
            "max_length": max_length,
            "max_gen_toks": max_gen_toks,
            "trust_remote_code": trust_remote_code,
            "parallelize": parallelize,
        }
        args = check_model_args({**given, **unknown})
        condition = audio_condition(audio)
        self.condition = condition
        self.use_chat_template = args["chat_template"]
        self.system_prompt = system_prompt
        self.prefix_cache = args["prefix_cache"]
        self._max_gen_toks = args["max_gen_toks"]
        self.family: Family | None = None
        self._thinker_of_full_checkpoint = False
        super().__init__(
            pretrained=pretrained,
            backend="causal",
            revision=revision,
            max_length=args["max_length"],
            device=device or "",
            dtype=args["dtype"],
            batch_size=args["batch_size"],
            max_batch_size=args["max_batch_size"],
            trust_remote_code=args["trust_remote_code"],
            parallelize=args["parallelize"],
        )
        self.spec = AudioSpec(
            sampling_rate=self._sampling_rate(),
            max_seconds=self._max_seconds(args["max_audio_seconds"]),
            condition=condition,
            seed=args["seed"],
            noise_seconds=args["noise_seconds"],
            noise_std=args["noise_std"],
        )
        self._init_prompts(self.spec.audio_condition)
        self._prefix_lru: OrderedDict[Hashable, ClipPrefix] = OrderedDict()
        self._stored = StoredResults(results_path(results_cache), results_scope(self))
        self._forward_names = set(inspect.signature(self.model.forward).parameters)
        # transformers 5.24 renamed the forward argument past_key_values to cache
        self._cache_arg = "cache" if "cache" in self._forward_names else "past_key_values"
        logger.info(
            "lalm: %s from %s; audio=%s seed=%d noise_seconds=%s noise_std=%s "
            "sampling_rate=%d max_audio_seconds=%s prefix_cache=%s results_cache=%s",
            self.family.name,
            pretrained,
            self.condition,
            self.spec.seed,
            self.spec.noise_seconds,
            self.spec.noise_std,
            self.spec.sampling_rate,
            self.spec.max_seconds,
            self.prefix_cache,
            self._stored.path or "none",
        )

    # ------------------------------------------------------------------ loading hooks
    def _get_config(self, pretrained: str, **kwargs: Any) -> None:
        super()._get_config(pretrained, **kwargs)
        self.family = family_for(getattr(self._config, "model_type", None), where=pretrained)
        check_prompt_dependencies(self.family)
        thinker = self.family.thinker_config
        if thinker and hasattr(self._config, thinker):
            self._config = getattr(self._config, thinker)
            self._thinker_of_full_checkpoint = True
        self.AUTO_MODEL_CLASS = getattr(transformers, self.family.model_class)

    def _create_tokenizer(self, pretrained: str, tokenizer: Any, **kwargs: Any) -> None:
        if tokenizer:
            raise LALMArgumentError(
                "lalm: tokenizer= is not supported; the processor saved with the checkpoint "
                "provides the tokenizer."
            )
        self._load_processor(pretrained, kwargs)

    def _create_model(self, *args: Any, **kwargs: Any) -> None:
        if self._thinker_of_full_checkpoint:
            kwargs["config"] = self._config
            kwargs["key_mapping"] = {r"^thinker\.": ""}
        super()._create_model(*args, **kwargs)

    @property
    def max_gen_toks(self) -> int:
        return self._max_gen_toks

    def get_model_info(self) -> dict:
        """HFLM's model info plus the audio condition, so runs are told apart."""
        info = super().get_model_info()
        info.update(audio_settings(self.spec), audio_family=self.family.name, **self.audio_info())
        # what lalm-api records as audio_sent_*: here the processor gets the array itself
        info.update(audio_sent_encoding="float32 array (in process)", audio_sent_lossless=True)
        return info

    def set_cache_hook(self, cache_hook: Any) -> None:
        """Refuse lm-eval's response cache when it would mix up what the model heard."""
        if getattr(cache_hook, "dbdict", None) is not None:
            raise LALMArgumentError(USE_CACHE_REFUSAL)
        super().set_cache_hook(cache_hook)

    def apply_chat_template(self, chat_history: list[dict[str, Any]], **kwargs: Any) -> str:
        raise LALMArgumentError(
            "lalm applies the model's chat template itself (audio first in the user turn); "
            "drop --apply_chat_template (use model_args chat_template=false for raw prompts)."
        )

    def _model_inputs(self, texts: list[str], waves: list[Any] | None) -> dict[str, Any]:
        """Run the processor (``audio=``, never ``audios=``) and keep what forward takes."""
        kwargs: dict[str, Any] = dict(self.family.processor_kwargs)
        if waves is not None:
            kwargs.update(audio=list(waves), sampling_rate=self.spec.sampling_rate)
        text_kwargs: dict[str, Any] = {}
        if len(texts) > 1:
            text_kwargs.update(padding="longest", padding_side="left")
        bos = self.tokenizer.bos_token
        if bos and all(text.startswith(bos) for text in texts):
            # the template wrote the BOS itself; as transformers' apply_chat_template does,
            # the processor must not add another
            text_kwargs["add_special_tokens"] = False
        if text_kwargs:
            kwargs["text_kwargs"] = text_kwargs
        if self._mistral is not None:
            encoded = self._mistral.model_inputs(texts, waves)
        else:
            encoded = self.processor(text=texts, return_tensors="pt", **kwargs)
        inputs = {}
        for name, value in encoded.items():
            if name not in self._forward_names or not torch.is_tensor(value):
                continue
            if value.is_floating_point():
                value = value.to(self.model.dtype)
            inputs[name] = value.to(self.device)
        return inputs

    def _waves(self, source: RequestAudio) -> tuple[Hashable, list[Any] | None]:
        return source.waves(self.spec)


def check_model_args(model_args: Mapping[str, Any]) -> dict[str, Any]:
    """Validate ``lalm``'s ``--model_args`` without loading anything; return them converted.

    ``lm-eval-rul run`` calls it before any model or data is loaded, and :class:`LALM`
    reads its arguments through it, so both say the same thing.

    Raises:
        UnknownModelArgsError: A name ``lalm`` does not take (all of them named).
        UnknownConditionError: ``audio=`` names no condition.
        LALMArgumentError: A value of the wrong kind (e.g. ``noise_seconds=abc``).
    """
    return validate_model_args(model_args, LALM)
