"""``lalm``: transformers-native audio language models inside lm-evaluation-harness.

The harness sends one ``loglikelihood`` request per answer letter; this model groups
the requests of one (document, context), reads every letter from ONE forward pass, and
encodes each clip once per run: the audio sits first in the user turn, the key/value
cache of the shared system + audio prefix is computed once per clip, and each
question only runs its own suffix tokens against a copy of that cache. The audio the
model hears (the original clip, noise, silence, another clip, or none) is chosen by
``audio=`` and produced by :func:`lm_eval_rul.audio.condition_audio`.

The model loads through lm-eval's :class:`~lm_eval.models.huggingface.HFLM` (device
placement, ``accelerate launch`` data parallelism, dtype, rank/world size), overriding
only the hooks that differ: the config (family detection), the tokenizer (the family's
processor), and the model class. Text-only ``loglikelihood_rolling`` is HFLM's own.
"""

from __future__ import annotations

import inspect
import logging
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
import transformers
from lm_eval.models.huggingface import HFLM
from lm_eval.models.utils import (
    Collator,
    handle_stop_sequences,
    normalize_gen_kwargs,
    postprocess_generated_text,
)
from lm_eval.models.utils_hf import stop_sequences_criteria
from tqdm import tqdm

from ..audio import (
    AUDIO_CONDITIONS,
    AudioSpec,
    UnknownConditionError,
    check_audio_available,
    condition_audio,
    condition_key,
)
from ..errors import UserInputError
from .families import Family, UnknownFamilyError, audio_only_class, family_for, resolve_attr

__all__ = ["LALM", "LALMArgumentError", "UnknownModelArgsError", "check_model_args"]

logger = logging.getLogger(__name__)

#: Marks where the question text goes when the chat template is rendered once.
_SENTINEL = "\ue000LALM-TEXT\ue000"

#: Keyword arguments lm-eval itself adds to every model's constructor.
_HARNESS_ARGS = ("batch_size", "max_batch_size", "device")


class UnknownModelArgsError(UserInputError, TypeError):
    """``--model_args`` holds names the ``lalm`` model does not take."""


class LALMArgumentError(UserInputError, ValueError):
    """A ``--model_args`` value, harness option or task input ``lalm`` cannot use."""


_TRUE, _FALSE = ("true", "1", "yes", "on"), ("false", "0", "no", "off")


def _as_bool(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE or text in _FALSE:
        return text in _TRUE
    raise LALMArgumentError(f"lalm: {name}={value!r} is not a boolean; use {name}=true or false.")


def _as_number(kind: Callable[[Any], Any], name: str, value: Any, optional: bool = False) -> Any:
    if value is None or (optional and str(value).strip().lower() in ("", "none")):
        if optional:
            return None
        raise LALMArgumentError(f"lalm: {name} needs a value.")
    if isinstance(value, bool):  # True would pass as 1
        raise LALMArgumentError(f"lalm: {name}={value!r} is not a number.")
    try:
        number = kind(value)
        if kind is int and isinstance(value, float) and number != value:
            raise ValueError
    except (TypeError, ValueError):
        what = "an integer" if kind is int else "a number"
        raise LALMArgumentError(
            f"lalm: {name}={value!r} is not {what}; e.g. --model_args pretrained=...,{name}="
            f"{'10' if kind is int else '10.0'}"
        ) from None
    return number


#: How each ``model_args`` value is read (name -> converter of (name, value)).
_CONVERTERS: dict[str, Callable[[str, Any], Any]] = {
    "noise_seconds": lambda n, v: _as_number(float, n, v),
    "noise_std": lambda n, v: _as_number(float, n, v),
    "seed": lambda n, v: _as_number(int, n, v),
    "max_audio_seconds": lambda n, v: _as_number(float, n, v, optional=True),
    "max_batch_size": lambda n, v: _as_number(int, n, v, optional=True),
    "max_length": lambda n, v: _as_number(int, n, v, optional=True),
    "max_gen_toks": lambda n, v: _as_number(int, n, v),
    "chat_template": _as_bool,
    "prefix_cache": _as_bool,
    "trust_remote_code": _as_bool,
    "parallelize": _as_bool,
}


def _condition(audio: Any) -> str:
    condition = "none" if audio is None else str(audio)
    if condition not in AUDIO_CONDITIONS:
        raise UnknownConditionError(audio)
    return condition


def _batch_size(value: Any) -> int:
    if str(value).startswith("auto"):
        raise LALMArgumentError("lalm: batch_size=auto is not supported; give an integer.")
    size = _as_number(int, "batch_size", value)
    if size < 1:
        raise LALMArgumentError(f"lalm: batch_size={value!r} must be at least 1.")
    return size


def check_model_args(model_args: Mapping[str, Any]) -> dict[str, Any]:
    """Validate ``--model_args`` of ``lalm`` without loading anything; return them converted.

    ``lm-eval-rul run`` calls it before any model or data is loaded, and :class:`LALM`
    reads its arguments through it, so both say the same thing.

    Args:
        model_args: Names and values as the harness parsed them (strings, numbers, bools).

    Raises:
        UnknownModelArgsError: A name ``lalm`` does not take (all of them named).
        UnknownConditionError: ``audio=`` names no condition.
        LALMArgumentError: A value of the wrong kind (e.g. ``noise_seconds=abc``).
    """
    unknown = sorted(set(model_args) - set(_supported_args()))
    if unknown:
        raise UnknownModelArgsError(
            f"lalm: unknown model_args {', '.join(unknown)}. Supported: "
            f"{', '.join(_supported_args())}."
        )
    out = dict(model_args)
    for name, value in model_args.items():
        if name in _CONVERTERS:
            out[name] = _CONVERTERS[name](name, value)
    if "audio" in out:
        out["audio"] = _condition(out["audio"])
    if "batch_size" in out:
        out["batch_size"] = _batch_size(out["batch_size"])
    if "pretrained" in out and not isinstance(out["pretrained"], str):
        raise LALMArgumentError("lalm: pretrained must be a Hub id or a local path (a string).")
    return out


@dataclass
class _Prefix:
    """The encoded system + audio prefix of one clip (or of no audio)."""

    key: Hashable
    plain_ids: list[int]  # tokenizer ids, audio placeholder unexpanded
    expanded_len: int  # length after the processor expanded the placeholder
    audio_end_plain: int  # index after the last audio token in plain_ids
    layers: list[tuple[torch.Tensor, torch.Tensor]]  # per-layer keys/values
    rope_delta: torch.Tensor | None  # multimodal-RoPE offset of text after the audio


class LALM(HFLM):
    """Any transformers-native audio LM (see :mod:`lm_eval_rul.models.families`).

    Args:
        pretrained: Hub id or local path of the checkpoint (a full Qwen Omni checkpoint
            loads only its thinker).
        audio: What the model hears: ``original`` (the item's clip), ``noise``
            (Gaussian, reproducible from ``seed`` and the question id), ``silence``,
            ``random`` (another clip of the same benchmark, seeded) or ``none`` (the
            prompt without any audio tokens).
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
        **unknown: Any,
    ) -> None:
        given = {
            "pretrained": pretrained,
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
        condition = _condition(audio)
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
            dtype=dtype,
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
        self._audio_ids = self._audio_token_ids()
        self._parts = self._template_parts(with_audio=condition != "none")
        self._warned: set[str] = set()
        self._prefix_lru: OrderedDict[Hashable, _Prefix] = OrderedDict()
        self._forward_names = set(inspect.signature(self.model.forward).parameters)
        # transformers 5.24 renamed the forward argument past_key_values to cache
        self._cache_arg = "cache" if "cache" in self._forward_names else "past_key_values"
        logger.info(
            "lalm: %s from %s; audio=%s seed=%d noise_seconds=%s noise_std=%s "
            "sampling_rate=%d max_audio_seconds=%s prefix_cache=%s",
            self.family.name,
            pretrained,
            self.condition,
            self.spec.seed,
            self.spec.noise_seconds,
            self.spec.noise_std,
            self.spec.sampling_rate,
            self.spec.max_seconds,
            self.prefix_cache,
        )

    # ------------------------------------------------------------------ loading hooks
    def _get_config(self, pretrained: str, **kwargs: Any) -> None:
        super()._get_config(pretrained, **kwargs)
        self.family = family_for(getattr(self._config, "model_type", None), where=pretrained)
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
        self.processor = _load_processor(self.family, pretrained, kwargs)
        self.tokenizer = self.processor.tokenizer

    def _create_model(self, *args: Any, **kwargs: Any) -> None:
        if self._thinker_of_full_checkpoint:
            kwargs["config"] = self._config
            kwargs["key_mapping"] = {r"^thinker\.": ""}
        super()._create_model(*args, **kwargs)

    # ------------------------------------------------------------------ facts
    def _sampling_rate(self) -> int:
        rate = resolve_attr(self.processor, "feature_extractor.sampling_rate")
        return int(rate or self.family.sampling_rate)

    def _max_seconds(self, override: float | None) -> float | None:
        if override is not None:
            return float(override)
        limit = self.family.max_seconds
        if isinstance(limit, str):
            limit = resolve_attr(self.processor, limit)
        return None if limit is None else float(limit)

    @property
    def placeholder(self) -> str:
        """The audio placeholder written into the prompt (before processor expansion)."""
        token = getattr(self.processor, "audio_token", None)
        if token and token not in self.family.placeholder:
            return token
        return self.family.placeholder

    def _audio_token_ids(self) -> set[int]:
        ids = set()
        for name in ("audio_token", "audio_bos_token", "audio_eos_token"):
            token = getattr(self.processor, name, None)
            if isinstance(token, str):
                ids.add(self.tokenizer.convert_tokens_to_ids(token))
        ids.update(self.tokenizer.convert_tokens_to_ids(self.tokenizer.tokenize(self.placeholder)))
        ids.discard(self.tokenizer.unk_token_id)
        return ids

    @property
    def max_gen_toks(self) -> int:
        return self._max_gen_toks

    def get_model_info(self) -> dict:
        """HFLM's model info plus the audio condition, so runs are told apart."""
        info = super().get_model_info()
        info.update(
            audio_condition=self.condition,
            audio_seed=self.spec.seed,
            audio_noise_seconds=self.spec.noise_seconds,
            audio_noise_std=self.spec.noise_std,
            audio_sampling_rate=self.spec.sampling_rate,
            audio_max_seconds=self.spec.max_seconds,
            audio_family=self.family.name,
        )
        return info

    def set_cache_hook(self, cache_hook: Any) -> None:
        """Refuse lm-eval's response cache when it would mix up what the model heard."""
        if getattr(cache_hook, "dbdict", None) is not None:
            raise LALMArgumentError(
                "lalm does not support --use_cache: lm-eval keys cached responses by prompt "
                "text only, so answers for another clip or audio condition would be reused. "
                "Run without --use_cache (the clip prefix cache already avoids re-encoding)."
            )
        super().set_cache_hook(cache_hook)

    def apply_chat_template(self, chat_history: list[dict[str, Any]], **kwargs: Any) -> str:
        raise LALMArgumentError(
            "lalm applies the model's chat template itself (audio first in the user turn); "
            "drop --apply_chat_template (use model_args chat_template=false for raw prompts)."
        )

    # ------------------------------------------------------------------ prompts
    def _template_parts(self, *, with_audio: bool) -> tuple[str, str]:
        """(text before the question, text after it) of the rendered prompt."""
        if not self.use_chat_template:
            return (f"{self.placeholder}\n" if with_audio else ""), ""
        messages: list[dict[str, Any]] = []
        if self.system_prompt:
            messages.append({"role": "system", "content": self.system_prompt})
        if self.family.content == "inline":
            content: Any = (self.placeholder if with_audio else "") + _SENTINEL
        else:
            content = [{"type": "audio", "audio": "clip"}] if with_audio else []
            content.append({"type": "text", "text": _SENTINEL})
        messages.append({"role": "user", "content": content})
        try:
            rendered = self.processor.apply_chat_template(
                messages, tokenize=False, add_generation_prompt=True
            )
        except ValueError as error:
            raise LALMArgumentError(
                f"lalm: the processor of {self.pretrained} has no usable chat template "
                f"({error}); pass model_args chat_template=false to write the audio "
                "placeholder and the question without one."
            ) from error
        if isinstance(rendered, list):
            rendered = rendered[0]
        before, after = rendered.split(_SENTINEL)
        if with_audio and not self._audio_ids.intersection(self._encode(before)):
            raise LALMArgumentError(
                f"lalm: the chat template of {self.pretrained} did not write the audio "
                f"placeholder {self.placeholder!r} before the question; rendered: {before!r}. "
                "Pass model_args chat_template=false to write it without the template."
            )
        return before, after

    def prompt_text(self, context: str) -> str:
        """The full prompt (audio placeholder unexpanded) the model reads for ``context``."""
        before, after = self._parts
        return before + context + after

    def _encode(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def _encode_request(self, context: str, continuation: str) -> tuple[str, list[int], list[int]]:
        """(full text, prompt ids, continuation ids) of a request, split as HFLM splits.

        The continuation's ids are those of the whole text after the prompt's ids, so
        a tokenizer that merges across the boundary is scored the way lm-eval's ``hf``
        model scores it.
        """
        n_spaces = len(context) - len(context.rstrip())
        if n_spaces and not self._parts[1]:
            continuation = context[-n_spaces:] + continuation
            context = context[:-n_spaces]
        prompt = self.prompt_text(context)
        context_ids = self._encode(prompt)
        whole = self._encode(prompt + continuation)
        return prompt + continuation, context_ids, whole[len(context_ids) :]

    def _model_inputs(self, texts: list[str], waves: list[Any] | None) -> dict[str, Any]:
        """Run the processor (``audio=``, never ``audios=``) and keep what forward takes."""
        kwargs: dict[str, Any] = dict(self.family.processor_kwargs)
        if waves is not None:
            kwargs.update(audio=list(waves), sampling_rate=self.spec.sampling_rate)
        if len(texts) > 1:
            kwargs["text_kwargs"] = {"padding": "longest", "padding_side": "left"}
        encoded = self.processor(text=texts, return_tensors="pt", **kwargs)
        inputs = {}
        for name, value in encoded.items():
            if name not in self._forward_names or not torch.is_tensor(value):
                continue
            if value.is_floating_point():
                value = value.to(self.model.dtype)
            inputs[name] = value.to(self.device)
        return inputs

    def _waves(self, doc: dict[str, Any]) -> tuple[Hashable, list[Any] | None]:
        key, wave = condition_audio(doc, self.spec)
        return key, (None if wave is None else [wave])

    # ------------------------------------------------------------------ loglikelihood
    def loglikelihood(self, requests: list[Any], disable_tqdm: bool = False) -> list:
        """``(log p(continuation | audio, prompt), is_greedy)`` per request.

        Requests sharing a clip are scored together: the clip's prefix is encoded
        once; each (document, context) costs one batched forward of its suffix.
        """
        if not requests:
            return []
        if any(r.doc is None for r in requests):
            raise ValueError("lalm: a loglikelihood request has no document to take audio from.")
        check_audio_available({id(r.doc): r.doc for r in requests}.values(), self.condition)
        if not self.prefix_cache:
            return self._loglikelihood_naive(requests, disable_tqdm)

        # (clip key) -> (prompt context) -> [(request index, continuation ids)]
        by_clip: OrderedDict[Hashable, OrderedDict[str, list]] = OrderedDict()
        first_doc: dict[Hashable, dict] = {}
        context_ids: dict[str, list[int]] = {}
        keys: dict[int, Hashable] = {}  # the letters of one document share its dict
        for index, request in enumerate(requests):
            context, continuation = request.args[:2]
            if id(request.doc) not in keys:
                keys[id(request.doc)] = condition_key(request.doc, self.spec)
            key = keys[id(request.doc)]
            first_doc.setdefault(key, request.doc)
            _, ctx_ids, cont_ids = self._encode_request(context, continuation)
            if not cont_ids:
                raise LALMArgumentError(
                    f"lalm: continuation {continuation!r} of document {request.doc.get('id')!r} "
                    "encodes to no tokens."
                )
            self._warn_multi_token(continuation, cont_ids)
            context_ids.setdefault(context, ctx_ids)
            by_clip.setdefault(key, OrderedDict()).setdefault(context, []).append((index, cont_ids))

        results: list[tuple[float, bool] | None] = [None] * len(requests)
        bar = tqdm(
            total=len(requests),
            disable=disable_tqdm or self.rank != 0,
            desc="lalm: scoring (one prefix per clip)",
        )
        for key, contexts in by_clip.items():
            prefix = self._prefix(key, first_doc[key])
            items = list(contexts.items())
            for start in range(0, len(items), self.batch_size):
                chunk = items[start : start + self.batch_size]
                scores = self._score_suffixes(prefix, [(context_ids[c], reqs) for c, reqs in chunk])
                for index, value in scores:
                    results[index] = value
                    self.cache_hook.add_partial("loglikelihood", requests[index].args, value)
                bar.update(sum(len(reqs) for _, reqs in chunk))
        bar.close()
        self._prefix_lru.clear()
        return results  # type: ignore[return-value]

    def _warn_multi_token(self, continuation: str, ids: list[int]) -> None:
        if len(ids) > 1 and continuation not in self._warned:
            self._warned.add(continuation)
            pieces = self.tokenizer.convert_ids_to_tokens(ids)
            logger.warning(
                "lalm: continuation %r is %d tokens for this tokenizer (%s); it is scored as a "
                "multi-token continuation (one extra row in the same forward pass).",
                continuation,
                len(ids),
                pieces,
            )

    @torch.no_grad()
    def _prefix(self, key: Hashable, doc: dict[str, Any]) -> _Prefix:
        """Encode (once) the system + audio prefix of ``key``'s clip into a KV cache."""
        if key in self._prefix_lru:
            self._prefix_lru.move_to_end(key)
            return self._prefix_lru[key]
        before = self._parts[0]
        plain = self._encode(before)
        _, waves = self._waves(doc)
        inputs = self._model_inputs([before], waves)
        expanded = inputs["input_ids"][0].tolist()
        audio_end_plain = _after_last(plain, self._audio_ids)
        audio_end_expanded = _after_last(expanded, self._audio_ids)
        first = next((i for i, t in enumerate(plain) if t in self._audio_ids), len(plain))
        if (
            plain[:first] != expanded[:first]
            or plain[audio_end_plain:] != expanded[audio_end_expanded:]
        ):
            raise LALMArgumentError(
                "lalm: the processor changed text outside the audio placeholder; "
                f"plain={plain} expanded={expanded}. Run with prefix_cache=false."
            )
        inner = getattr(self.model, "model", None)
        if inner is not None and hasattr(inner, "rope_deltas"):
            inner.rope_deltas = None
        out = self.model(**inputs, use_cache=True)
        rope_delta = getattr(inner, "rope_deltas", None) if inner is not None else None
        cache = getattr(out, "cache", None) or out.past_key_values
        layers = [(layer.keys, layer.values) for layer in cache.layers]
        prefix = _Prefix(
            key=key,
            plain_ids=plain,
            expanded_len=len(expanded),
            audio_end_plain=audio_end_plain,
            layers=layers,
            rope_delta=None if rope_delta is None else rope_delta.detach().clone(),
        )
        self._prefix_lru[key] = prefix
        while len(self._prefix_lru) > 1:
            self._prefix_lru.popitem(last=False)
        return prefix

    @torch.no_grad()
    def _score_suffixes(
        self, prefix: _Prefix, chunk: Sequence[tuple[list[int], list[tuple[int, list[int]]]]]
    ) -> list[tuple[int, tuple[float, bool]]]:
        """One forward over the suffixes of several contexts sharing ``prefix``."""
        shared = min(_common_prefix(prefix.plain_ids, ctx) for ctx, _ in chunk)
        if shared < prefix.audio_end_plain:
            raise RuntimeError(
                "lalm: a prompt does not start with the clip's system + audio prefix "
                f"(shares {shared} of {len(prefix.plain_ids)} tokens). Run with prefix_cache=false."
            )
        shift = prefix.expanded_len - len(prefix.plain_ids)
        past_len = shared + shift
        rows: list[list[int]] = []
        plan: list[tuple[int, list[int], int, int]] = []  # (request, cont ids, row, first pos)
        for ctx_ids, reqs in chunk:
            base_row = len(rows)
            rows.append(ctx_ids[shared:])
            for index, cont_ids in reqs:
                if len(cont_ids) == 1:
                    plan.append((index, cont_ids, base_row, len(ctx_ids) - shared - 1))
                else:
                    plan.append((index, cont_ids, len(rows), len(ctx_ids) - shared - 1))
                    rows.append(ctx_ids[shared:] + cont_ids[:-1])
        width = max(len(r) for r in rows)
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        input_ids = torch.full((len(rows), width), pad, dtype=torch.long)
        mask = torch.zeros((len(rows), past_len + width), dtype=torch.long)
        mask[:, :past_len] = 1
        for r, row in enumerate(rows):
            input_ids[r, : len(row)] = torch.tensor(row)
            mask[r, past_len : past_len + len(row)] = 1
        kwargs: dict[str, Any] = {}
        if prefix.rope_delta is not None:
            positions = torch.arange(past_len, past_len + width).view(1, 1, -1)
            positions = positions + prefix.rope_delta.to(positions.device).view(1, -1, 1)[:, :1]
            kwargs["position_ids"] = positions.expand(3, len(rows), -1).to(self.device)
        logits = self.model(
            input_ids=input_ids.to(self.device),
            attention_mask=mask.to(self.device),
            use_cache=True,
            **{self._cache_arg: self._cache_copy(prefix, past_len, len(rows))},
            **kwargs,
        ).logits
        return [
            (index, _continuation_score(logits[row, first : first + len(cont_ids)], cont_ids))
            for index, cont_ids, row, first in plan
        ]

    def _cache_copy(self, prefix: _Prefix, length: int, batch: int) -> transformers.DynamicCache:
        cache = transformers.DynamicCache()
        for layer, (keys, values) in enumerate(prefix.layers):
            cache.update(
                keys[:, :, :length].expand(batch, -1, -1, -1),
                values[:, :, :length].expand(batch, -1, -1, -1),
                layer,
            )
        return cache

    @torch.no_grad()
    def _loglikelihood_naive(self, requests: list[Any], disable_tqdm: bool) -> list:
        """Reference path: one full forward per request, the audio encoded each time."""
        out = []
        for request in tqdm(requests, disable=disable_tqdm or self.rank != 0, desc="lalm: naive"):
            context, continuation = request.args[:2]
            whole, _, cont_ids = self._encode_request(context, continuation)
            _, waves = self._waves(request.doc)
            inputs = self._model_inputs([whole], waves)
            logits = self.model(**inputs).logits[0]
            out.append(_continuation_score(logits[-len(cont_ids) - 1 : -1], cont_ids))
        return out

    # ------------------------------------------------------------------ generation
    @torch.no_grad()
    def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
        """Greedy (unless the task asks otherwise) generation with audio, batched."""
        if not requests:
            return []
        check_audio_available([r.doc for r in requests if r.doc is not None], self.condition)
        indexed = [(i, r.args[0], r.args[1], r.doc) for i, r in enumerate(requests)]
        collator = Collator(
            indexed,
            sort_fn=lambda x: (-len(x[1]), x[0]),
            group_by="gen_kwargs",
            group_fn=lambda x: x[2],
        )
        results: dict[int, str] = {}
        bar = tqdm(total=len(requests), disable=disable_tqdm or self.rank != 0, desc="lalm: gen")
        eos = self.tok_decode(self.eot_token_id, skip_special_tokens=False)
        for chunk in collator.get_batched(n=self.batch_size, batch_fn=None):
            indices, contexts, all_kwargs, chunk_docs = zip(*chunk, strict=True)
            kwargs = normalize_gen_kwargs(dict(all_kwargs[0]), self.max_gen_toks)
            until = handle_stop_sequences(kwargs.pop("until", None), eos=eos)
            max_new = int(kwargs.pop("max_gen_toks"))
            kwargs.pop("max_length", None)
            texts = [self.prompt_text(c) for c in contexts]
            waves = None
            if self.condition != "none":
                waves = [condition_audio(doc, self.spec)[1] for doc in chunk_docs]
            padding_side = self.tokenizer.padding_side
            self.tokenizer.padding_side = "left"
            try:
                inputs = self._model_inputs(texts, waves)
            finally:
                self.tokenizer.padding_side = padding_side
            width = inputs["input_ids"].shape[1]
            if not kwargs.get("do_sample"):
                kwargs["do_sample"] = False
                kwargs.pop("temperature", None)
                kwargs.pop("top_p", None)
            output = self.model.generate(
                **inputs,
                max_new_tokens=max_new,
                stopping_criteria=stop_sequences_criteria(self.tokenizer, until, width, len(texts)),
                pad_token_id=self.tokenizer.pad_token_id,
                **kwargs,
            )
            for index, context, tokens in zip(indices, contexts, output.tolist(), strict=True):
                text = self.tok_decode(tokens[width:])
                text = postprocess_generated_text(text, stop=until, think_end_token=None)
                results[index] = text
                self.cache_hook.add_partial("generate_until", (context, all_kwargs[0]), text)
                bar.update(1)
        bar.close()
        return [results[i] for i in range(len(requests))]


def _supported_args() -> list[str]:
    names = [
        name
        for name in inspect.signature(LALM.__init__).parameters
        if name not in ("self", "unknown")
    ]
    return sorted(set(names) | set(_HARNESS_ARGS))


def _continuation_score(logits: torch.Tensor, cont_ids: Sequence[int]) -> tuple[float, bool]:
    """``(sum of log p(token), all tokens greedy)`` of a continuation.

    Args:
        logits: ``(len(cont_ids), vocab)``: row ``i`` is the prediction of ``cont_ids[i]``.
        cont_ids: The continuation's token ids.
    """
    logprobs = F.log_softmax(logits.float(), dim=-1)
    target = torch.tensor(list(cont_ids), device=logprobs.device)
    total = logprobs.gather(1, target[:, None]).sum().item()
    greedy = bool((logprobs.argmax(dim=-1) == target).all().item())
    return float(total), greedy


def _after_last(ids: Sequence[int], wanted: set[int]) -> int:
    """Index just after the last element of ``ids`` that is in ``wanted`` (0 if none)."""
    for position in range(len(ids) - 1, -1, -1):
        if ids[position] in wanted:
            return position + 1
    return 0


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _load_processor(family: Family, pretrained: str, kwargs: dict[str, Any]) -> Any:
    """The checkpoint's processor; audio-only when its video processor cannot load."""
    options = {
        k: kwargs[k] for k in ("revision", "trust_remote_code", "subfolder") if kwargs.get(k)
    }
    try:
        return transformers.AutoProcessor.from_pretrained(pretrained, **options)
    except (ImportError, AttributeError, ValueError, OSError) as error:
        if not family.needs_video_processor:
            raise
        logger.warning(
            "lalm: the full processor of %s could not load (%s: %s); using its audio-only part "
            "(install torchvision to load the video processor; lalm never uses it).",
            pretrained,
            type(error).__name__,
            error,
        )
        return audio_only_processor(pretrained, **options)


def audio_only_processor(pretrained: str, **options: Any) -> Any:
    """The checkpoint's processor class without its image/video processors.

    Qwen Omni processors want a video processor, which needs torchvision; audio
    evaluation does not use it. See :func:`~lm_eval_rul.models.families.audio_only_class`.
    """
    import json
    from pathlib import Path

    from transformers.utils import cached_file

    config_file = cached_file(pretrained, "processor_config.json", **options)
    name = json.loads(Path(config_file).read_text()).get("processor_class") if config_file else None
    base = getattr(transformers, str(name), None)
    if base is None:
        raise UnknownFamilyError(f"lalm: no processor class {name!r} in {pretrained}.")
    return audio_only_class(base).from_pretrained(pretrained, **options)
