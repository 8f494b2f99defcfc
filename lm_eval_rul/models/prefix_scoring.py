"""Letter scoring with audio: one forward pass per (document, context), one prefix per clip.

The harness sends one ``loglikelihood`` request per answer letter. Requests are grouped
by clip (:func:`~lm_eval_rul.audio.condition_key`, which reads no audio); the key/value
cache of the system + audio prefix is computed once per clip, and each context runs
only its own suffix tokens against a copy of that cache, all its letters in one row.
``prefix_cache=false`` takes the naive reference path (one full forward per request).
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
import transformers

from ..audio.requests import RequestAudio
from ..mcqa.letters import announce_multi_token
from ..progress import progress_bar
from .args import LALMArgumentError
from .audio_span import SpanMismatch, match_spans

__all__ = ["ClipPrefix", "PrefixScoringMixin", "continuation_score"]

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



class PrefixScoringMixin:
    """``loglikelihood`` for :class:`~lm_eval_rul.models.lalm.LALM` (see the module doc).

    Uses the model's ``audio_sources``, ``question_text``, ``_encode_request``, ``_encode``,
    ``_model_inputs``, ``_waves``, ``parts_for``, ``_audio_ids``, ``_blank_ids``, ``family``,
    ``_stored``, ``spec`` and ``prefix_cache``
    (:class:`~lm_eval_rul.models.audio_requests.AudioRequestsMixin`).
    """

    def loglikelihood(self, requests: list[Any], disable_tqdm: bool = False) -> list:
        """``(log p(continuation | audio, prompt), is_greedy)`` per request.

        Results already in the model's results cache (:mod:`.stored_results`) are read
        back; the others are computed and written as each forward pass finishes.
        Requests sharing a clip are scored together: the clip's prefix is encoded
        once; each (document, context) costs one batched forward of its suffix.
        """
        if not requests:
            return []
        sources = self.audio_sources(requests)
        keys, stored, todo = self._stored.recall(
            "loglikelihood", [r.args[:2] for r in requests], [s.key(self.spec) for s in sources]
        )
        results: list[tuple[float, bool] | None] = [
            None if v is None else (float(v[0]), bool(v[1])) for v in stored
        ]

        def finished(pairs: list[tuple[int, tuple[float, bool]]]) -> None:
            for local, value in pairs:
                results[todo[local]] = value
                self.cache_hook.add_partial("loglikelihood", requests[todo[local]].args, value)
            self._stored.store([(keys[todo[local]], list(value)) for local, value in pairs])

        remaining = [(requests[i], sources[i]) for i in todo]
        if remaining and not self.prefix_cache:
            self._loglikelihood_naive(remaining, disable_tqdm, finished)
        elif remaining:
            self._loglikelihood_prefix(remaining, disable_tqdm, finished)
        return results  # type: ignore[return-value]

    def _loglikelihood_prefix(
        self,
        requests: list[tuple[Any, RequestAudio]],
        disable_tqdm: bool,
        finished: Callable[[list[tuple[int, tuple[float, bool]]]], None],
    ) -> None:
        """Score ``requests`` clip by clip; ``finished`` gets each forward's results."""
        # (clip key) -> (prompt context) -> [(request index, continuation ids)]
        by_clip: OrderedDict[Hashable, OrderedDict[str, list]] = OrderedDict()
        first_source: dict[Hashable, RequestAudio] = {}
        context_ids: dict[str, list[int]] = {}
        keys: dict[int, Hashable] = {}  # the letters of one document share its source
        multi_token: dict[str, list[int]] = {}  # said in one line, once per process
        for index, (request, source) in enumerate(requests):
            context, continuation = request.args[:2]
            context = self.question_text(context, source)
            if id(source.parts) not in keys:
                keys[id(source.parts)] = source.key(self.spec)
            key = keys[id(source.parts)]
            first_source.setdefault(key, source)
            _, ctx_ids, cont_ids = self._encode_request(
                context, continuation, source.clips(self.spec)
            )
            if not cont_ids:
                raise LALMArgumentError(
                    f"lalm: continuation {continuation!r} of document {request.doc.get('id')!r} "
                    "encodes to no tokens."
                )
            if len(cont_ids) > 1:
                multi_token.setdefault(continuation, cont_ids)
            context_ids.setdefault(context, ctx_ids)
            by_clip.setdefault(key, OrderedDict()).setdefault(context, []).append((index, cont_ids))
        self._warn_multi_token(multi_token)

        bar = progress_bar(
            len(requests),
            "lalm: scoring (one prefix per clip)",
            enabled=not disable_tqdm and self.rank == 0,
        )
        try:
            for key, contexts in by_clip.items():
                prefix = self._prefix(key, first_source[key])
                items = list(contexts.items())
                for start in range(0, len(items), self.batch_size):
                    chunk = items[start : start + self.batch_size]
                    finished(self._score_suffixes(prefix, [(context_ids[c], r) for c, r in chunk]))
                    bar.update(sum(len(reqs) for _, reqs in chunk))
        finally:
            bar.close()
            self._prefix_lru.clear()

    def _warn_multi_token(self, found: dict[str, list[int]]) -> None:
        """One line for the continuations that are several tokens (unless said already)."""
        pieces = {text: self.tokenizer.convert_ids_to_tokens(ids) for text, ids in found.items()}
        if pieces:
            announce_multi_token("lalm", pieces, what="continuation", log=logger)

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
        _, waves = self._waves(source)
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
        requests: list[tuple[Any, RequestAudio]],
        disable_tqdm: bool,
        finished: Callable[[list[tuple[int, tuple[float, bool]]]], None],
    ) -> None:
        """Reference path: one full forward per request, the audio encoded each time."""
        bar = progress_bar(
            len(requests), "lalm: naive", enabled=not disable_tqdm and self.rank == 0
        )
        for index, (request, source) in enumerate(requests):
            context, continuation = request.args[:2]
            context = self.question_text(context, source)
            whole, _, cont_ids = self._encode_request(
                context, continuation, source.clips(self.spec)
            )
            _, waves = self._waves(source)
            inputs = self._model_inputs([whole], waves)
            logits = self.model(**inputs).logits[0]
            finished([(index, continuation_score(logits[-len(cont_ids) - 1 : -1], cont_ids))])
            bar.update(1)
        bar.close()


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
