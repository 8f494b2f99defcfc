"""``lalm``: transformers-native audio language models inside lm-evaluation-harness.

Every letter of a context is read from ONE forward pass against the key/value cache of the
shared system + audio prefix (``prefix_cache=false`` is the naive reference path). Loads
through lm-eval's :class:`~lm_eval.models.huggingface.HFLM`. The manual: ``docs/models.md``.
"""

from __future__ import annotations

import inspect
import logging
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
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

from ..audio import WINDOW_FIELD
from ..audio.requests import RequestAudio
from ..progress import ItemProgress, progress_bar
from .args import LALMArgumentError, given_args, validate_model_args
from .checkpoint import CheckpointLM, Question, check_prompt_dependencies
from .families import Family, family_for
from .prompts import SpanMismatch, match_spans

logger = logging.getLogger(__name__)


@dataclass
class ClipPrefix:
    """The encoded system + audio prefix of one clip (or of no audio)."""

    key: Hashable
    plain_ids: list[int]  # tokenizer ids, audio placeholder unexpanded
    expanded_len: int  # length after the processor expanded the placeholder
    audio_end_plain: int  # index after the last audio token in plain_ids
    layers: list[tuple[torch.Tensor, torch.Tensor]]  # per-layer keys/values (none: empty)
    rope_delta: torch.Tensor | None  # multimodal-RoPE offset of text after the audio


class LALM(CheckpointLM, HFLM):
    """Any transformers-native audio LM (see :mod:`lm_eval_rul.models.families`).

    Its ``--model_args`` (``pretrained``, ``audio`` and every condition's parameters,
    ``dtype``, ``batch_size``, ``chat_template``, ``system_prompt``, ``prefix_cache``,
    ``results_cache``...) are the table of ``docs/models.md`` ("lalm"), the one manual.
    """

    MODEL_NAME = "lalm"
    BOOL_ARGS = ("parallelize",)

    def __init__(
        self,
        pretrained: str,
        audio: str | None = "original",
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
        **condition_args: Any,
    ) -> None:
        args = check_model_args(given_args(locals()))
        self.use_chat_template = args["chat_template"]
        self.system_prompt = system_prompt
        self.prefix_cache = args["prefix_cache"]
        self.family: Family | None = None
        self._thinker_of_full_checkpoint = False
        HFLM.__init__(
            self,
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
        spec = self._start(args)
        self._prefix_lru: OrderedDict[Hashable, ClipPrefix] = OrderedDict()
        if not self.prefix_cache:  # the reference path replaces the scoring by clip
            self._score_letters = self._loglikelihood_naive  # type: ignore[method-assign]
        self._forward_names = set(inspect.signature(self.model.forward).parameters)
        # transformers 5.24 renamed the forward argument past_key_values to cache
        self._cache_arg = "cache" if "cache" in self._forward_names else "past_key_values"
        self._log_start(
            f"{self.family.name} from {pretrained}",
            {
                "sampling_rate": spec.sampling_rate,
                "max_audio_seconds": spec.max_seconds,
                "prefix_cache": self.prefix_cache,
                "results_cache": self._stored.path or "none",
            },
        )

    # ------------------------------------------------------------------ loading hooks
    def _get_config(self, pretrained: str, **kwargs: Any) -> None:
        super()._get_config(pretrained, **kwargs)
        model_type = getattr(self._config, "model_type", None)
        self.family = family_for(model_type, where=pretrained, who=self.MODEL_NAME)
        check_prompt_dependencies(self.family, self.MODEL_NAME)
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

    def _engine_info(self) -> dict[str, Any]:
        """HFLM's model info, the family, the weights' dtype and how the audio is handed
        over (``audio_sent_*``, as ``lalm-api`` records it: here the array itself)."""
        return {
            **HFLM.get_model_info(self),
            "audio_family": self.family.name,
            "model_dtype": str(self.model.dtype),
            "audio_sent_encoding": "float32 array (in process)",
            "audio_sent_lossless": True,
        }

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

    # ------------------------------------------------------------------ letters
    def _chunks(self, groups: list[list[Question]]) -> Iterator[list[Question]]:
        """A clip's questions, ``batch_size`` contexts per forward pass; the cached prefix is
        dropped once the run's questions are scored (or it stops)."""
        try:
            for questions in groups:
                for start in range(0, len(questions), self.batch_size):
                    yield questions[start : start + self.batch_size]
        finally:
            self._prefix_lru.clear()

    def _score_questions(self, chunk: list[Question]) -> list[tuple[int, tuple[float, bool]]]:
        """One forward over the suffixes of ``chunk``'s contexts after their clip's prefix."""
        prefix = self._prefix(chunk[0].key, chunk[0].source)
        return self._score_suffixes(prefix, [(q.context_ids, q.letters) for q in chunk])

    @torch.no_grad()
    def _prefix(self, key: Hashable, source: RequestAudio) -> ClipPrefix:
        """Encode (once) the system + audio prefix of ``key``'s clip into a KV cache."""
        if key in self._prefix_lru:
            self._prefix_lru.move_to_end(key)
            return self._prefix_lru[key]
        before = self.parts_for(source.clips(self.spec))[0]
        plain = self._encode(before)
        if not plain:
            # no system turn and no audio (audio=none, chat_template=false): the prompt
            # starts with the question itself, so there is nothing to encode or cache
            prefix = ClipPrefix(key, [], 0, 0, [], None)
            self._prefix_lru[key] = prefix
            return prefix
        _, waves = source.waves(self.spec, key)
        inputs = self._model_inputs([before], waves)
        expanded = inputs["input_ids"][0].tolist()
        try:
            span = match_spans(
                plain,
                expanded,
                self._audio_ids,
                self._blank_ids,
                self.family.audio_padding,
                self.tokenizer.decode,
            )
        except SpanMismatch as error:
            raise LALMArgumentError(
                f"lalm: {self.family.name}: the processor changed text outside the audio span "
                f"({error}). Run with prefix_cache=false."
            ) from error
        # a prompt must share the prefix up to the end of the span: the blank lines in it
        # are the processor's, counted in the expanded length
        audio_end_plain = span.end if span is not None else 0
        inner = getattr(self.model, "model", None)
        if inner is not None and hasattr(inner, "rope_deltas"):
            inner.rope_deltas = None
        out = self.model(**inputs, use_cache=True)
        rope_delta = getattr(inner, "rope_deltas", None) if inner is not None else None
        cache = getattr(out, "cache", None) or out.past_key_values
        layers = [(layer.keys, layer.values) for layer in cache.layers]
        short = [
            i for i, (k, _) in enumerate(layers) if k is not None and k.shape[-2] < len(expanded)
        ]
        if short:
            raise LALMArgumentError(
                f"lalm: {self.family.name}: layers {short} keep fewer keys than the "
                f"{len(expanded)}-token system + audio prefix (a sliding window shorter than "
                "the prefix). Run with prefix_cache=false."
            )
        prefix = ClipPrefix(
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
        self, prefix: ClipPrefix, chunk: Sequence[tuple[list[int], list[tuple[int, list[int]]]]]
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
        if prefix.layers:
            kwargs[self._cache_arg] = self._cache_copy(prefix, past_len, len(rows))
        logits = self.model(
            input_ids=input_ids.to(self.device),
            attention_mask=mask.to(self.device),
            use_cache=True,
            **kwargs,
        ).logits
        return [
            (index, continuation_score(logits[row, first : first + len(cont_ids)], cont_ids))
            for index, cont_ids, row, first in plan
        ]

    def _cache_copy(self, prefix: ClipPrefix, length: int, batch: int) -> transformers.DynamicCache:
        cache = transformers.DynamicCache()
        for layer, (keys, values) in enumerate(prefix.layers):
            if keys is None:
                continue  # a layer that reuses an earlier layer's keys (Gemma 3n) stores none
            cache.update(
                keys[:, :, :length].expand(batch, -1, -1, -1),
                values[:, :, :length].expand(batch, -1, -1, -1),
                layer,
            )
        return cache

    @torch.no_grad()
    def _loglikelihood_naive(
        self,
        requests: list[tuple[Any, RequestAudio, Hashable]],
        finished: Callable[[list[tuple[int, tuple[float, bool]]]], None],
        disable_tqdm: bool,
    ) -> None:
        """Reference path: one full forward per request, the audio encoded each time."""
        bar = progress_bar(
            len(requests), "lalm: naive", enabled=not disable_tqdm and self.rank == 0
        )
        for index, (request, source, key) in enumerate(requests):
            context, continuation = request.args[:2]
            context = self.question_text(context, source)
            whole, _, cont_ids = self._encode_request(
                context, continuation, source.clips(self.spec)
            )
            _, waves = source.waves(self.spec, key)
            inputs = self._model_inputs([whole], waves)
            logits = self.model(**inputs).logits[0]
            finished([(index, continuation_score(logits[-len(cont_ids) - 1 : -1], cont_ids))])
            bar.update(1)
        bar.close()

    # ------------------------------------------------------------------ generation
    def _generate(
        self, todo: list[tuple[Any, RequestAudio, Hashable]], finished: Callable, disable_tqdm: bool
    ) -> None:
        """Generate ``todo`` in batches of prompts sharing their settings."""
        indexed = [(i, r.args[0], r.args[1], (s, key)) for i, (r, s, key) in enumerate(todo)]
        collator = Collator(
            indexed,
            sort_fn=lambda x: (-len(x[1]), x[0]),
            group_by="gen_kwargs",
            group_fn=lambda x: x[2],
        )
        bar = progress_bar(len(todo), "lalm: gen", enabled=not disable_tqdm and self.rank == 0)
        docs = [r.doc for r, _, _ in todo]
        windowed = any(d is not None and d.get(WINDOW_FIELD) is not None for d in docs)
        items = ItemProgress(docs, bar, windowed=windowed)
        eos = self.tok_decode(self.eot_token_id, skip_special_tokens=False)
        try:
            for chunk in collator.get_batched(n=self.batch_size, batch_fn=None):
                indices, contexts, all_kwargs, chunk_sources = zip(*chunk, strict=True)
                texts = self._generate_batch(contexts, all_kwargs[0], chunk_sources, eos)
                finished(list(zip(indices, texts, strict=True)))
                bar.update(len(indices))
                for index in indices:
                    items.done(todo[index][0].doc)
        finally:
            bar.close()

    def _generate_batch(
        self, contexts: tuple[str, ...], gen_kwargs: dict, sources: tuple[Any, ...], eos: str
    ) -> list[str]:
        """One ``generate`` call over a batch of prompts sharing ``gen_kwargs``."""
        kwargs = normalize_gen_kwargs(dict(gen_kwargs), self.max_gen_toks)
        until = handle_stop_sequences(kwargs.pop("until", None), eos=eos)
        max_new = int(kwargs.pop("max_gen_toks"))
        kwargs.pop("max_length", None)
        texts = [
            self.prompt_text(self.question_text(c, s), s.clips(self.spec))
            for c, (s, _) in zip(contexts, sources, strict=True)
        ]
        heard = [wave for s, key in sources for wave in (s.waves(self.spec, key)[1] or [])]
        waves = heard or None
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
        return [
            postprocess_generated_text(
                self.tok_decode(tokens[width:]), stop=until, think_end_token=None
            )
            for tokens in output.tolist()
        ]


def continuation_score(logits: torch.Tensor, cont_ids: Sequence[int]) -> tuple[float, bool]:
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


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def check_model_args(model_args: Mapping[str, Any]) -> dict[str, Any]:
    """Validate ``lalm``'s ``--model_args`` without loading anything; return them converted
    (:func:`~.args.validate_model_args`: ``lm-eval-rul run`` and :class:`LALM` both)."""
    return validate_model_args(model_args, LALM)
