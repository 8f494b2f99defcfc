"""``lalm-api``: an audio LM behind an OpenAI-compatible chat endpoint, in the harness.

One adapter for open models served at scale (vLLM serves Qwen2-Audio, Qwen2.5-Omni...
behind ``/v1/chat/completions``) and for closed ones (OpenAI's audio models, Gemini's
OpenAI-compatible endpoint). Each request carries the audio the condition chooses
(:func:`lm_eval_rul.audio.condition_audio`, the same samples ``lalm`` hears) as a WAV
``input_audio`` part before the question (:mod:`.api_payload`). The class extends
lm-eval's :class:`~lm_eval.models.openai_completions.LocalChatCompletion` (arguments,
generation payload); requests go through :class:`.api_client.ChatClient` (retries on
429/5xx only, the key never logged); letter scoring is :mod:`.api_letters`. Every
answer is stored as it arrives in a resume cache (:class:`lm_eval_rul.cache.ResultCache`),
so an interrupted run never asks twice.
"""

from __future__ import annotations

import copy
import logging
from collections import Counter
from collections.abc import Mapping
from typing import Any

from lm_eval.models.openai_completions import LocalChatCompletion
from lm_eval.models.utils import postprocess_generated_text

from ..audio import AudioSpec
from ..bridge.client import NO_LOGLIKELIHOOD, read_declaration, watch_cuts, window_seconds
from ..cache import ResultCache, digest
from .api_args import API_PROTOCOLS, LOGPROB_MODES, check_api_model_args
from .api_client import ChatClient, Job, chat_url
from .api_counts import RequestCounts
from .api_http import DEFAULT_TIMEOUT, HTTPSettings
from .api_letters import APILetterScoringMixin
from .api_logprobs import MalformedLogprobsError
from .api_numbers import non_finite_in
from .api_payload import DEFAULT_WAV_SUBTYPE, AudioEncoder
from .args import LALMArgumentError
from .audio_requests import AudioRequestsMixin
from .common import audio_settings
from .stored_results import results_path

__all__ = ["LALMAPI", "check_model_args", "LOGPROB_MODES", "API_PROTOCOLS"]

logger = logging.getLogger(__name__)

_CACHE_VERSION = 1
#: The file ``results_cache=auto`` means, in ``$LM_EVAL_RUL_CACHE`` (beside ``lalm``'s).
API_RESULTS_FILE = "lalm_api.sqlite"


class LALMAPI(AudioRequestsMixin, APILetterScoringMixin, LocalChatCompletion):
    """An audio LM served behind an OpenAI-compatible chat-completions endpoint.

    Args:
        base_url: The endpoint: ``http://host:8000/v1`` or the full
            ``.../v1/chat/completions`` URL.
        model: The model name the endpoint serves (vLLM's ``--served-model-name``).
        audio: What the model hears, as for ``lalm``: ``original``, ``reversed``,
            ``noise``, ``silence``, ``random`` or ``none``.
        noise_seconds, noise_std, seed: The ``noise`` / ``silence`` / ``random`` settings
            (as for ``lalm``; ``seed`` is also sent as the request seed).
        max_audio_seconds: Trim longer audio (with a warning); default: the window a
            ``lm-eval-rul bridge`` server declares, else no trimming (the server applies
            its model's limit).
        sampling_rate: Rate of the WAV sent (16 kHz, what the supported LALMs take).
        wav_subtype: WAV sample format: ``FLOAT`` (default: the exact float32 samples
            ``lalm`` hears, beyond +-1 too), or ``PCM_16``, ``PCM_24``, ``PCM_32`` for an
            endpoint that refuses float WAV (clipped to +-1: warned and recorded).
        system_prompt: Optional system message (default: the server template's own).
        api_key_env: Environment variable holding the API key (the key itself is never
            a model argument, so never in the results); unset: no ``Authorization``.
        logprobs: Letter-scoring path: ``auto``, ``prompt``, ``top`` or ``none``.
        top_logprobs: ``k`` of the ``top`` path (OpenAI allows at most 20).
        num_concurrent: Requests in flight at once.
        max_retries: Retries of a request on 429/5xx/connection errors (not attempts).
        retry_backoff: First wait between retries in seconds (doubling, with jitter).
        timeout: Seconds per request, answer included: a total deadline (a server that
            drips bytes cannot stretch it), for the start-up ``GET /models`` too.
        max_gen_toks: Generation budget when a task sets none.
        protocol: ``rul`` (temperature 0, the task's token cap) or ``paper`` (the
            provider's defaults: no ``temperature``, no ``max_tokens`` sent); also read
            by the factual tasks (:mod:`lm_eval_rul.factual.protocol`).
        chunked: The model hears long audio in windows (a bridge's ``CHUNKED``): the
            factual tasks ask about 60 s windows (or the model's limit, if shorter).
        think_end_token: Drop a reasoning model's text up to this token (lm-eval's).
        results_cache: Resume cache file, as ``lalm``'s: ``auto`` = ``lalm_api.sqlite`` in
            ``$LM_EVAL_RUL_CACHE`` (default ``~/.cache/lm_eval_rul``), a path, or ``none``.
        verify_certificate, ca_cert_path: TLS checks of the endpoint.
        device, batch_size, max_batch_size: Accepted from the harness; unused (one
            request per prompt, concurrency from ``num_concurrent``).
    """

    MULTIMODAL = True
    MODEL_NAME = "lalm-api"

    def __init__(
        self,
        base_url: str | None = None,
        model: str | None = None,
        audio: str | None = "original",
        noise_seconds: float = 10.0,
        noise_std: float = 1.0,
        seed: int = 0,
        max_audio_seconds: float | None = None,
        sampling_rate: int = 16_000,
        wav_subtype: str = DEFAULT_WAV_SUBTYPE,
        system_prompt: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        logprobs: str = "auto",
        top_logprobs: int = 20,
        num_concurrent: int = 1,
        max_retries: int = 3,
        retry_backoff: float = 1.0,
        timeout: float = DEFAULT_TIMEOUT,
        max_gen_toks: int = 256,
        protocol: str = "rul",
        chunked: bool = False,
        think_end_token: str | None = None,
        results_cache: str | None = "auto",
        verify_certificate: bool = True,
        ca_cert_path: str | None = None,
        device: str | None = None,
        batch_size: int | str = 1,
        max_batch_size: int | None = None,
        **unknown: Any,
    ) -> None:
        given = {k: v for k, v in locals().items() if k not in ("self", "unknown", "__class__")}
        args = check_model_args({**given, **unknown})
        super().__init__(
            base_url=chat_url(args["base_url"]),
            model=args["model"],
            tokenizer_backend=None,
            tokenized_requests=False,
            num_concurrent=args["num_concurrent"],
            max_retries=args["max_retries"],
            timeout=args["timeout"],
            max_gen_toks=args["max_gen_toks"],
            seed=args["seed"],
            think_end_token=think_end_token,
            verify_certificate=args["verify_certificate"],
            ca_cert_path=ca_cert_path,
            batch_size=1,
        )
        self.condition = args["audio"]
        # a bridge's declaration (lm-eval-rul bridge): its window and chunking, read once
        self.bridge = read_declaration(self.base_url, self.model, HTTPSettings.of(args))
        self.max_audio_seconds = window_seconds(args["max_audio_seconds"], self.bridge)
        self.spec = AudioSpec(
            sampling_rate=args["sampling_rate"],
            max_seconds=self.max_audio_seconds,
            condition=self.condition,
            seed=args["seed"],
            noise_seconds=args["noise_seconds"],
            noise_std=args["noise_std"],
        )
        self.system_prompt = system_prompt
        self.protocol = args["protocol"]
        # chunked: the user's model argument, or what a bridge declares (its CHUNKED)
        self.chunked = bool(args.get("chunked", False)) or bool(self.bridge and self.bridge.chunked)
        self.logprobs = args["logprobs"]
        self.logprobs_why = "model_args logprobs=none"
        if self.bridge is not None and not self.bridge.has_loglikelihood:
            self.logprobs, self.logprobs_why = "none", NO_LOGLIKELIHOOD
        self.top_logprobs = args["top_logprobs"]
        self.wav_subtype = args["wav_subtype"]
        self.letter_path: str | None = None
        self.stats: Counter[str] = Counter()
        self.missing_examples: list[str] = []
        self._audio = AudioEncoder(self.spec, self.wav_subtype)
        self._client = ChatClient(
            self.base_url,
            model=self.model,
            api_key_env=args["api_key_env"],
            num_concurrent=args["num_concurrent"],
            max_retries=args["max_retries"],
            timeout=args["timeout"],
            retry_backoff=args["retry_backoff"],
            verify_certificate=args["verify_certificate"],
            ca_cert_path=ca_cert_path,
        )
        self.bridge_counts: dict[str, int] = {}
        if self.bridge is not None:
            self._client.send = watch_cuts(self._client.send, self.bridge_counts)  # type: ignore[method-assign]
        self._memo: dict[str, Any] = {}
        self._cache = self._open_cache(args["results_cache"])
        logger.info(
            "lalm-api: model %r at %s; audio=%s seed=%d sampling_rate=%d wav=%s logprobs=%s "
            "num_concurrent=%d results_cache=%s; generation: %s (protocol=%s)",
            self.model,
            self._client.host,
            self.condition,
            self.spec.seed,
            self.spec.sampling_rate,
            self.wav_subtype,
            self.logprobs,
            self._client.num_concurrent,
            self._cache.path if self._cache is not None else "off",  # an empty cache is falsy
            API_PROTOCOLS[self.protocol],
            self.protocol,
        )

    # ------------------------------------------------------------------ resume cache
    def _open_cache(self, setting: str | None) -> ResultCache | None:
        path = results_path(setting, API_RESULTS_FILE)
        if path is None:
            return None
        scope = {
            "cache": f"lalm-api/{_CACHE_VERSION}",
            "endpoint_model": self.model,
            **audio_settings(self.spec),
            "wav_subtype": self.wav_subtype,
            "system_prompt": self.system_prompt,
        }
        return ResultCache(path, scope=scope)

    def _cache_get(self, parts: list[Any]) -> Any | None:
        """A stored answer (this run's, or the resume cache's), or ``None``.

        An entry holding a number that is not finite (written before replies were
        checked for them) is a miss: the request is asked again and the entry replaced.
        """
        key = digest(parts)
        if key in self._memo:
            return self._memo[key]
        value = None if self._cache is None else self._cache.get(parts)
        if value is not None and non_finite_in(value):
            self._cache.hits, self._cache.misses = self._cache.hits - 1, self._cache.misses + 1
            self.stats["non_finite_cache_entries"] += 1
            if self.stats["non_finite_cache_entries"] == 1:
                logger.warning(
                    "lalm-api: the resume cache %s holds a score that is not finite (inf or "
                    "NaN, from a bad reply); such entries are asked again and replaced",
                    self._cache.path,
                )
            return None
        return value

    def _cache_put(self, parts: list[Any], value: Any) -> None:
        if non_finite_in(value):  # the readers refuse such numbers; this keeps the cache clean
            raise MalformedLogprobsError(f"{parts[0]} result", value, "a number is not finite")
        self._memo[digest(parts)] = value
        if self._cache is not None:
            self._cache.put(parts, value)

    def _send_one(self, job: Job) -> dict[str, Any]:
        replies: list[dict[str, Any]] = []
        self._client.send([job], lambda _job, body: replies.append(body), disable_tqdm=True)
        return replies[0]

    def _announce(self, counts: RequestCounts, path: str) -> None:
        header = (
            f"lalm-api: {counts.kind} requests of model {self.model!r} at {self._client.host} "
            f"({path}; audio={self.condition}), {counts.to_send} to send:"
        )
        logger.info("%s", counts.table(header))

    # ------------------------------------------------------------------ generation
    def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
        """One chat completion per request, the audio first in the user turn."""
        if not requests:
            return []
        sources = self.audio_sources(requests)
        results: list[str | None] = [None] * len(requests)
        counts = RequestCounts("generate_until")
        occurrences: Counter[str] = Counter()
        jobs = []
        for index, request in enumerate(requests):
            context, gen_kwargs = request.args[:2]
            source = sources[index]
            context = self.question_text(context, source)
            key = source.key(self.spec)
            body = self._create_payload(
                [], generate=True, gen_kwargs=copy.deepcopy(gen_kwargs), seed=self._seed
            )
            if self.protocol == "paper":  # the provider's default inference settings
                body = {k: v for k, v in body.items() if k not in ("temperature", "max_tokens")}
            stop = [s for s in body.pop("stop", None) or [] if s]
            if stop:
                body["stop"] = stop
            parts = ["gen", context, self._audio.digest(key, source), {**body, "messages": None}]
            if float(body.get("temperature", 1) or 0) > 0:  # sampled (a default too): repeats vary
                occurrences[digest(parts)] += 1
                parts.append(occurrences[digest(parts)])
            counts.request(request.task_name, index)
            cached = self._cache_get(parts)
            counts.http(request.task_name, cached=cached is not None)
            if cached is not None:
                results[index] = self._finish(cached["content"], stop)
                continue

            def build(source=source, key=key, context=context, body=body) -> dict[str, Any]:
                messages = self._audio.messages(key, source, context, self.system_prompt)
                return {**body, "messages": messages}

            jobs.append(Job((index, parts, stop), build))
        self._announce(counts, "one HTTP request per prompt")

        def on_reply(job: Job, response: dict[str, Any]) -> None:
            index, parts, stop = job.tag
            content = _content(response)
            if content is not _MALFORMED:
                self._cache_put(parts, {"content": content})
            results[index] = self._finish(None if content is _MALFORMED else content, stop)

        self._client.send(jobs, on_reply, desc="lalm-api: generate", disable_tqdm=disable_tqdm)
        return results  # type: ignore[return-value]

    def _finish(self, content: str | None, stop: list[str]) -> str:
        if not content:
            self.stats["empty_generations"] += 1
            return ""
        return postprocess_generated_text(content, stop=stop, think_end_token=self.think_end_token)

    # ------------------------------------------------------------------ harness hooks
    def loglikelihood_rolling(self, requests: list[Any], disable_tqdm: bool = False) -> list:
        raise LALMArgumentError(
            "lalm-api: loglikelihood_rolling (perplexity tasks) is not available over a chat "
            "API; run those tasks with lalm or the hf model."
        )

    def model_call(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError("lalm-api sends through ChatClient (retries, no key in logs)")

    async def amodel_call(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError("lalm-api sends through ChatClient (retries, no key in logs)")

    @property
    def eos_string(self) -> None:
        """No client-side end-of-sequence string: the server stops at its model's own."""
        return None

    @property
    def tokenizer_name(self) -> str:
        return f"lalm-api:{self.model}"

    def set_cache_hook(self, cache_hook: Any) -> None:
        """Refuse lm-eval's response cache when it would mix up what the model heard."""
        if getattr(cache_hook, "dbdict", None) is not None:
            raise LALMArgumentError(
                "lalm-api does not support --use_cache: lm-eval keys cached responses by "
                "prompt text only, so answers for another clip or audio condition would be "
                "reused. lalm-api keeps its own resume cache (model_args results_cache=PATH|none)."
            )
        super().set_cache_hook(cache_hook)

    def apply_chat_template(self, chat_history: list[dict[str, Any]], **kwargs: Any) -> str:
        raise LALMArgumentError(
            "lalm-api sends the chat itself (audio first in the user turn, the server applies "
            "its template); drop --apply_chat_template."
        )

    def get_model_info(self) -> dict[str, Any]:
        """The endpoint, the audio settings, the letter path and what it cost."""
        path = self.letter_path
        return {
            "api_model": self.model,
            "api_host": self._client.host,
            **audio_settings(self.spec),
            **self.audio_info(),
            "audio_wav_subtype": self.wav_subtype,
            **self._audio.sent(),
            "api_protocol": self.protocol,
            "api_generation": API_PROTOCOLS[self.protocol],
            "api_logprob_path": f"top-{self.top_logprobs}" if path == "top" else path,
            "api_letters_missing_from_top": self.stats["letters_missing_from_top"],
            "api_questions_missing_letters": self.stats["questions_missing_letters"],
            "api_questions_without_letters": self.stats["questions_without_letters"],
            "api_missing_letter_examples": list(self.missing_examples),
            "api_empty_generations": self.stats["empty_generations"],
            "api_http_requests": self._client.posts,
            "api_retries": self._client.retries,
            "api_cache": None if self._cache is None else str(self._cache.path),
            "api_cache_hits": 0 if self._cache is None else self._cache.hits,
            "api_bridge": None if self.bridge is None else vars(self.bridge),
            "api_bridge_cuts": self.bridge_counts.get("cuts", 0),
            "api_bridge_greedy_unknown": self.bridge_counts.get("greedy_unknown", 0),
        }


_MALFORMED = object()


def _content(response: Mapping[str, Any]) -> Any:
    """The first choice's message text (``None`` if empty), or ``_MALFORMED``."""
    try:
        return response["choices"][0]["message"].get("content")
    except (KeyError, IndexError, TypeError, AttributeError):
        logger.warning("lalm-api: an answer had no choices[0].message; counted as empty")
        return _MALFORMED


def check_model_args(model_args: Mapping[str, Any]) -> dict[str, Any]:
    """Validate ``lalm-api``'s ``--model_args`` without sending anything; return them converted
    (:func:`.api_args.check_api_model_args` against this class's arguments)."""
    return check_api_model_args(model_args, LALMAPI)
