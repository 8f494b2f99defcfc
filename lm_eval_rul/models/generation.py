"""Generation with audio for the ``_gen`` tasks: batched, greedy unless the task says so.

When the documents are windows of longer recordings (``audio_window``: one document per
window of an item), the progress bar also counts the items whose windows are all done.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import torch
from lm_eval.models.utils import (
    Collator,
    handle_stop_sequences,
    normalize_gen_kwargs,
    postprocess_generated_text,
)
from lm_eval.models.utils_hf import stop_sequences_criteria

from ..audio import WINDOW_FIELD
from ..progress import progress_bar

__all__ = ["AudioGenerationMixin"]


class AudioGenerationMixin:
    """``generate_until`` for :class:`~lm_eval_rul.models.lalm.LALM`.

    Uses the model's ``audio_sources``, ``question_text``, ``prompt_text``,
    ``_model_inputs``, ``_stored`` and ``spec``.
    """

    @torch.no_grad()
    def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
        """Greedy (unless the task asks otherwise) generation with audio, batched.

        Answers already in the results cache (:mod:`.stored_results`) are read back;
        the others are generated and written as each batch finishes.
        """
        if not requests:
            return []
        sources = self.audio_sources(requests)
        keys, results, todo = self._stored.recall(
            "generate_until",
            [[r.args[0], r.args[1], self.max_gen_toks] for r in requests],
            [source.key(self.spec) for source in sources],
        )
        if todo:
            self._sources = {i: sources[index] for i, index in enumerate(todo)}
            generated = self._generate([requests[i] for i in todo], disable_tqdm, keys, todo)
            for local, text in generated.items():
                results[todo[local]] = text
        return results  # type: ignore[return-value]

    def _generate(
        self, requests: list[Any], disable_tqdm: bool, keys: list[Any], todo: list[int]
    ) -> dict[int, str]:
        """Generate ``requests`` in batches; each batch's answers are stored when done."""
        indexed = [(i, r.args[0], r.args[1], self._sources[i]) for i, r in enumerate(requests)]
        collator = Collator(
            indexed,
            sort_fn=lambda x: (-len(x[1]), x[0]),
            group_by="gen_kwargs",
            group_fn=lambda x: x[2],
        )
        results: dict[int, str] = {}
        bar = progress_bar(len(requests), "lalm: gen", enabled=not disable_tqdm and self.rank == 0)
        items = _ItemProgress([r.doc for r in requests], bar)
        eos = self.tok_decode(self.eot_token_id, skip_special_tokens=False)
        try:
            for chunk in collator.get_batched(n=self.batch_size, batch_fn=None):
                indices, contexts, all_kwargs, chunk_sources = zip(*chunk, strict=True)
                texts = self._generate_batch(contexts, all_kwargs[0], chunk_sources, eos)
                for index, context, text in zip(indices, contexts, texts, strict=True):
                    results[index] = text
                    self.cache_hook.add_partial("generate_until", (context, all_kwargs[0]), text)
                self._stored.store([(keys[todo[i]], results[i]) for i in indices])
                bar.update(len(indices))
                for index in indices:
                    items.done(requests[index].doc)
        finally:
            bar.close()
        return results

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
            for c, s in zip(contexts, sources, strict=True)
        ]
        heard = [wave for s in sources for wave in (s.waves(self.spec)[1] or [])]
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


class _ItemProgress:
    """Counts items (benchmark, id) whose window documents are all generated, on the bar."""

    def __init__(self, docs: list[Any], bar: Any) -> None:
        self.bar = bar
        self.windowed = any(d is not None and d.get(WINDOW_FIELD) is not None for d in docs)
        self.left = Counter(self._key(d) for d in docs)
        self.total, self.finished = len(self.left), 0
        if self.windowed:
            bar.set_postfix_str(f"items 0/{self.total}", refresh=False)

    @staticmethod
    def _key(doc: Any) -> tuple[str, str]:
        doc = doc or {}
        return str(doc.get("benchmark", "")), str(doc.get("id"))

    def done(self, doc: Any) -> None:
        key = self._key(doc)
        self.left[key] -= 1
        if self.left[key] == 0:
            self.finished += 1
            if self.windowed:
                self.bar.set_postfix_str(f"items {self.finished}/{self.total}", refresh=False)
