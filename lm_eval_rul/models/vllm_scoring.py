"""``lalm-vllm``'s letters and generations on vLLM's engine.

Letters: ``lalm``'s quantity, log p(letter | audio, prompt) from the model's log-softmax
after the prompt, summed over a continuation's tokens. A question's letters go in ONE
vLLM request: the prompt (``lalm``'s token ids, the audio placeholder unexpanded: vLLM
expands it) and ``max_tokens=1`` with ``logprob_token_ids`` = the letters' first tokens;
vLLM returns their log-probabilities from the raw logits (``logprobs_mode``
``raw_logprobs``, before temperature or any processor) at the position after the prompt.
A letter of several tokens adds a request per further token, its prompt the question's
plus the letter's tokens so far. Why not ``prompt_logprobs``: vLLM never reads the prefix
cache for a request that asks for prompt log-probabilities (it recomputes the whole
prompt, audio included), so they would cost one full prefill per letter. Here every
request of a clip shares its system + audio prefix, which vLLM's prefix cache computes
once (``prefix_cache=true``, the default). Greedy: the letter's token is the argmax
(vLLM samples greedily at temperature 0).

Requests are submitted clip by clip, up to :data:`QUESTIONS_PER_CALL` questions per
``LLM.generate`` call, and stored in the results cache as each call returns.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from typing import Any

from lm_eval.models.utils import (
    handle_stop_sequences,
    normalize_gen_kwargs,
    postprocess_generated_text,
)

from ..progress import progress_bar
from .args import LALMArgumentError

__all__ = ["VLLMScoringMixin", "QUESTIONS_PER_CALL"]

#: Questions (letter scoring) or prompts (generation) per ``LLM.generate`` call: enough for
#: vLLM to fill its batches, few enough that an interruption loses little.
QUESTIONS_PER_CALL = 256


class VLLMScoringMixin:
    """``loglikelihood`` and ``generate_until`` for :class:`~.lalm_vllm.LALMVLLM`.

    Uses ``llm``, ``spec``, ``tokenizer``, ``_stored``, ``max_gen_toks`` and the prompt
    methods of :class:`~.chat_prompts.ChatPromptsMixin`.
    """

    def loglikelihood(self, requests: list[Any], disable_tqdm: bool = False) -> list:
        """``(log p(continuation | audio, prompt), is_greedy)`` per request (see the module
        doc); stored results are read back, the others computed and stored."""
        if not requests:
            return []
        sources = self.audio_sources(requests)
        keys, stored, todo = self._stored.recall(
            "loglikelihood", [r.args[:2] for r in requests], [s.key(self.spec) for s in sources]
        )
        results: list[Any] = [None if v is None else (float(v[0]), bool(v[1])) for v in stored]
        # (clip key, prompt context) -> (source, context ids, [(request index, cont ids)])
        questions: OrderedDict[tuple[Hashable, str], list] = OrderedDict()
        for index in sorted(todo, key=lambda i: _clip_order(sources, i, self.spec)):
            request, source = requests[index], sources[index]
            context, continuation = request.args[:2]
            context = self.question_text(context, source)
            _, ctx_ids, cont_ids = self._encode_request(
                context, continuation, source.clips(self.spec)
            )
            if not cont_ids:
                raise LALMArgumentError(
                    f"lalm-vllm: continuation {continuation!r} of document "
                    f"{request.doc.get('id')!r} encodes to no tokens."
                )
            entry = questions.setdefault((source.key(self.spec), context), [source, ctx_ids, []])
            entry[2].append((index, cont_ids))
        bar = progress_bar(len(todo), "lalm-vllm: scoring", enabled=not disable_tqdm)
        items = list(questions.values())
        try:
            for start in range(0, len(items), QUESTIONS_PER_CALL):
                done = self._score_questions(items[start : start + QUESTIONS_PER_CALL])
                for index, value in done:
                    results[index] = value
                    self.cache_hook.add_partial("loglikelihood", requests[index].args, value)
                self._stored.store([(keys[index], list(value)) for index, value in done])
                bar.update(len(done))
        finally:
            bar.close()
        return results

    def _score_questions(self, questions: list[list]) -> list[tuple[int, tuple[float, bool]]]:
        """One ``LLM.generate`` call for ``questions`` ([source, context ids, letters])."""
        from vllm import SamplingParams

        prompts: list[dict[str, Any]] = []
        params: list[Any] = []
        # per request index: the (prompt row, token) of each of its continuation's tokens
        reads: dict[int, list[tuple[int, int]]] = {}
        audio: dict[Hashable, Any] = {}
        for source, ctx_ids, letters in questions:
            key = source.key(self.spec)
            if key not in audio:
                audio[key] = self._vllm_audio(source)
            rows: dict[tuple[int, ...], list[int]] = {}  # prompt ids -> tokens to read there
            row_of: dict[tuple[int, ...], int] = {}
            for index, cont_ids in letters:
                reads[index] = []
                for j, token in enumerate(cont_ids):
                    ids = tuple(ctx_ids + cont_ids[:j])
                    if ids not in rows:
                        rows[ids], row_of[ids] = [], len(prompts) + len(rows)
                    if token not in rows[ids]:
                        rows[ids].append(token)
                    reads[index].append((row_of[ids], token))
            for ids, tokens in rows.items():
                prompts.append(_prompt(list(ids), audio[key]))
                params.append(
                    SamplingParams(
                        max_tokens=1, temperature=0.0, logprob_token_ids=tokens, detokenize=False
                    )
                )
        outputs = self._run(prompts, params)
        answers = [_read_logprobs(output) for output in outputs]
        done = []
        for index, positions in reads.items():
            total, greedy = 0.0, True
            for row, token in positions:
                logprobs, sampled = answers[row]
                total += logprobs[token]
                greedy &= sampled == token
            done.append((index, (float(total), bool(greedy))))
        return done

    def _run(self, prompts: list[dict[str, Any]], params: list[Any]) -> list[Any]:
        """One ``LLM.generate`` call, counted in ``engine_counts``."""
        outputs = self.llm.generate(prompts, params, use_tqdm=False)
        counts = self.engine_counts
        counts["requests"] += len(outputs)
        counts["prompt_tokens"] += sum(len(o.prompt_token_ids) for o in outputs)
        counts["cached_tokens"] += sum(o.num_cached_tokens or 0 for o in outputs)
        return outputs

    def _vllm_audio(self, source: Any) -> list[tuple[Any, int]] | None:
        """The waveforms ``lalm`` hears for ``source``, as vLLM's (array, rate) pairs."""
        _, waves = source.waves(self.spec)
        if not waves:
            return None
        return [(wave, self.spec.sampling_rate) for wave in waves]

    def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
        """Generation with the task's ``until`` and ``max_gen_toks`` (greedy unless the task
        samples); stored answers are read back, the others generated and stored."""
        if not requests:
            return []
        sources = self.audio_sources(requests)
        keys, results, todo = self._stored.recall(
            "generate_until",
            [[r.args[0], r.args[1], self.max_gen_toks] for r in requests],
            [source.key(self.spec) for source in sources],
        )
        bar = progress_bar(len(todo), "lalm-vllm: gen", enabled=not disable_tqdm)
        try:
            for start in range(0, len(todo), QUESTIONS_PER_CALL):
                chunk = todo[start : start + QUESTIONS_PER_CALL]
                texts = self._generate([(requests[i], sources[i]) for i in chunk])
                for index, text in zip(chunk, texts, strict=True):
                    results[index] = text
                    self.cache_hook.add_partial("generate_until", requests[index].args, text)
                self._stored.store([(keys[i], results[i]) for i in chunk])
                bar.update(len(chunk))
        finally:
            bar.close()
        return results

    def _generate(self, chunk: list[tuple[Any, Any]]) -> list[str]:
        from vllm import SamplingParams

        eos = self.tokenizer.decode([self.tokenizer.eos_token_id], skip_special_tokens=False)
        prompts, params, stops = [], [], []
        for request, source in chunk:
            context, gen_kwargs = request.args[:2]
            kwargs = normalize_gen_kwargs(dict(gen_kwargs), self.max_gen_toks)
            until = handle_stop_sequences(kwargs.pop("until", None), eos=eos)
            sampling: dict[str, Any] = {"temperature": 0.0}
            if kwargs.get("do_sample"):
                names = ("temperature", "top_p", "top_k")
                sampling = {name: kwargs[name] for name in names if name in kwargs}
                sampling["seed"] = self.spec.seed
            text = self.prompt_text(self.question_text(context, source), source.clips(self.spec))
            prompts.append(_prompt(self._encode(text), self._vllm_audio(source)))
            params.append(
                SamplingParams(max_tokens=int(kwargs["max_gen_toks"]), stop=until, **sampling)
            )
            stops.append(until)
        outputs = self._run(prompts, params)
        # the answer's tokens decoded whole, as lalm decodes them: vLLM's incremental text
        # holds back a trailing incomplete UTF-8 sequence that lalm writes as U+FFFD
        return [
            postprocess_generated_text(
                self.tokenizer.decode(output.outputs[0].token_ids, skip_special_tokens=True),
                stop=until,
                think_end_token=None,
            )
            for output, until in zip(outputs, stops, strict=True)
        ]


def _prompt(ids: list[int], audio: list[tuple[Any, int]] | None) -> dict[str, Any]:
    prompt: dict[str, Any] = {"prompt_token_ids": ids}
    if audio:
        prompt["multi_modal_data"] = {"audio": audio}
    return prompt


def _read_logprobs(output: Any) -> tuple[dict[int, float], int]:
    """({token: log-probability} at the first generated position, the greedy token)."""
    completion = output.outputs[0]
    first = completion.logprobs[0]
    return {token: entry.logprob for token, entry in first.items()}, completion.token_ids[0]


def _clip_order(sources: list[Any], index: int, spec: Any) -> tuple[str, int]:
    """Sort key keeping a clip's requests together (its prefix then stays cached)."""
    return repr(sources[index].key(spec)), index
