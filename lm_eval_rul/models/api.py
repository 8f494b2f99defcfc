"""``lalm-api``: an audio LM behind an OpenAI-compatible chat endpoint, in the harness.

The engine of :class:`~.core.AudioLM` for served models; extends lm-eval's
:class:`~lm_eval.models.openai_completions.LocalChatCompletion` (arguments, generation
payload) and sends through :class:`~.api_http.ChatClient`. The manual: ``docs/models.md``.
"""

from __future__ import annotations

import copy
import logging
from collections import Counter, OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lm_eval.models.openai_completions import LocalChatCompletion
from lm_eval.models.utils import postprocess_generated_text

from ..adapters import adapter_named
from ..audio import AudioSpec, condition_parameters
from ..audio.decoding import report_trims
from ..audio.requests import RequestAudio
from ..cache import digest
from .api_http import (
    DEFAULT_TIMEOUT,
    NO_LOGLIKELIHOOD,
    APIRequestError,
    ChatClient,
    HTTPSettings,
    Job,
    RequestCounts,
    chat_url,
    check_http_args,
    non_finite_in,
    read_declaration,
    watch_cuts,
    window_seconds,
)
from .api_payload import (
    DEFAULT_WAV_SUBTYPE,
    WAV_SUBTYPES,
    AudioEncoder,
    MalformedLogprobsError,
    NoLogprobsError,
    has_prompt_logprobs,
    no_logprobs_message,
    prompt_logprobs_body,
    prompt_path_score,
    rejects_prompt_logprobs,
    top_logprobs_body,
    top_logprobs_of,
    top_path_scores,
)
from .args import (
    LALMArgumentError,
    NumberRange,
    audio_condition,
    given_args,
    validate_model_args,
)
from .core import AudioLM, StoredResults, audio_settings, hear, results_path

logger = logging.getLogger(__name__)

_MAX_EXAMPLES = 10


@dataclass
class _Letter:
    index: int
    task: str | None
    doc: Any  # the harness document
    source: RequestAudio  # where its audio comes from
    key: Hashable  # key of the audio the document hears
    context: str
    continuation: str


#: ``logprobs=`` values (see :mod:`.api`).
LOGPROB_MODES: tuple[str, ...] = ("auto", "prompt", "top", "none")
#: ``protocol=`` (the factual protocols) -> the inference settings a generation carries.
API_PROTOCOLS: dict[str, str] = {
    "rul": "temperature 0 and the task's max_tokens",
    "paper": "the provider's defaults (no temperature, no max_tokens sent)",
}

_SECRET_ARGS = ("api_key", "header", "auth_token")


def check_model_args(model_args: Mapping[str, Any]) -> dict[str, Any]:
    """Validate ``lalm-api``'s ``--model_args`` without sending anything; return them converted.

    Raises:
        LALMArgumentError: A secret passed as an argument, a missing ``base_url`` or
            ``model``, a value of the wrong kind, a ``timeout`` not above 0, or a key (in
            ``$api_key_env``) no HTTP header can carry.
        UnknownModelArgsError: A name ``lalm-api`` does not take.
        UnknownConditionError: ``audio=`` names no condition.
    """
    if "cache" in model_args:
        raise LALMArgumentError(
            "lalm-api: model_args cache= is now results_cache= (the same name and values as "
            "lalm's: auto, a file path, or none)."
        )
    secrets = [name for name in _SECRET_ARGS if name in model_args]
    if secrets:  # never echo the value
        raise LALMArgumentError(
            f"lalm-api: do not pass {', '.join(secrets)} in --model_args (model_args are "
            "written to the results). Export the key in an environment variable and name it: "
            "api_key_env=OPENAI_API_KEY (the default)."
        )
    args = validate_model_args(model_args, LALMAPI)
    for name in ("base_url", "model"):
        if not args.get(name) or not isinstance(args[name], str):
            raise LALMArgumentError(
                f"lalm-api: {name}= is required, e.g. --model_args "
                "base_url=http://localhost:8000/v1,model=Qwen/Qwen2-Audio-7B-Instruct"
            )
    defaults = {
        "audio": "original",
        "logprobs": "auto",
        "wav_subtype": DEFAULT_WAV_SUBTYPE,
        "protocol": "rul",
    }
    args = {**defaults, **args}
    args["audio"] = audio_condition(args["audio"])
    choices = {"logprobs": LOGPROB_MODES, "wav_subtype": WAV_SUBTYPES, "protocol": API_PROTOCOLS}
    for name, allowed in choices.items():
        value = str(args[name])
        args[name] = value.upper() if name == "wav_subtype" else value.lower()
        if args[name] not in allowed:
            raise LALMArgumentError(
                f"lalm-api: {name}={value!r} is not one of {', '.join(allowed)}."
            )
    check_http_args(args)  # timeout, retry_backoff, the key: before any request
    return args


_CACHE_VERSION = 1


class LALMAPI(AudioLM, LocalChatCompletion):
    """An audio LM served behind an OpenAI-compatible chat-completions endpoint.

    Its ``--model_args``: ``docs/models.md`` ("lalm-api"); the key is never an argument
    (``api_key_env`` names its variable).
    """

    MODEL_NAME = "lalm-api"
    #: Its own ``model_args`` (:func:`~.args.validate_model_args` reads them; ``timeout``
    #: and ``retry_backoff``: any number here, refused by :func:`~.api_http.check_http_args`
    #: in their own words).
    ARG_RANGES = {
        "sampling_rate": NumberRange(int, 1000, high=768_000, unit="samples per second"),
        "top_logprobs": NumberRange(int, 1),
        "num_concurrent": NumberRange(int, 1),
        "max_retries": NumberRange(int, 0),
    }
    NUMBER_ARGS = {"timeout": float, "retry_backoff": float}
    BOOL_ARGS = ("verify_certificate", "chunked")
    COMPUTES_WHEN_STORED = True  # the request table is logged, read-back requests too
    TEMPLATE_REFUSAL = (
        "sends the chat itself (audio first in the user turn, the server applies its "
        "template); drop --apply_chat_template."
    )

    def __init__(
        self,
        base_url: str | None = None,
        model: str | None = None,
        audio: str | None = "original",
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
        **condition_args: Any,
    ) -> None:
        args = check_model_args(given_args(locals()))
        LocalChatCompletion.__init__(
            self,
            base_url=chat_url(args["base_url"]),
            model=args["model"],
            tokenizer_backend=None,
            tokenized_requests=False,
            num_concurrent=args["num_concurrent"],
            max_retries=args["max_retries"],
            timeout=args["timeout"],
            max_gen_toks=args["max_gen_toks"],
            seed=args.get("seed", condition_parameters()["seed"].default),  # the request seed
            think_end_token=think_end_token,
            verify_certificate=args["verify_certificate"],
            ca_cert_path=ca_cert_path,
            batch_size=1,
        )
        # the harness 0.5 API base takes the argument but keeps no attribute: kept here
        self.think_end_token = think_end_token
        # a bridge's declaration (lm-eval-rul bridge): its window and chunking, read once
        self.bridge = read_declaration(self.base_url, self.model, HTTPSettings.of(args))
        self.max_audio_seconds = window_seconds(args["max_audio_seconds"], self.bridge)
        spec = hear(
            args["audio"],
            args,
            sampling_rate=args["sampling_rate"],
            max_seconds=self.max_audio_seconds,
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
        self._audio = AudioEncoder(spec, self.wav_subtype)
        self._client = ChatClient(
            self.base_url,
            model=self.model,
            settings=HTTPSettings.of(args),
            num_concurrent=args["num_concurrent"],
            max_retries=args["max_retries"],
            retry_backoff=args["retry_backoff"],
        )
        self.bridge_counts: dict[str, int] = {}
        if self.bridge is not None:
            self._client.send = watch_cuts(self._client.send, self.bridge_counts)  # type: ignore[method-assign]
        stored = _APIResults(
            results_path(args["results_cache"], adapter_named(self.MODEL_NAME).results_file),
            self._scope(spec),
            self.stats,
        )
        AudioLM.__init__(self, spec, stored, max_gen_toks=args["max_gen_toks"])
        self._log_start(
            f"model {self.model!r} at {self._client.host}",
            {
                "sampling_rate": self.spec.sampling_rate,
                "wav": self.wav_subtype,
                "logprobs": self.logprobs,
                "num_concurrent": self._client.num_concurrent,
                "results_cache": self._stored.path or "off",
            },
            f"; generation: {API_PROTOCOLS[self.protocol]} (protocol={self.protocol})",
        )

    # ------------------------------------------------------------------ resume cache
    def _scope(self, spec: AudioSpec) -> dict[str, Any]:
        return {
            "cache": f"lalm-api/{_CACHE_VERSION}",
            "endpoint_model": self.model,
            **audio_settings(spec),
            "wav_subtype": self.wav_subtype,
            "system_prompt": self.system_prompt,
        }

    def _no_logprobs(self, why: str, advice: str = "") -> NoLogprobsError:
        return NoLogprobsError(no_logprobs_message(self._client.host, self.model, why) + advice)

    def _send_one(self, job: Job) -> dict[str, Any]:
        replies: list[dict[str, Any]] = []
        self._client.send([job], lambda _job, body: replies.append(body), disable_tqdm=True)
        return replies[0]

    def _announce(
        self, kind: str, path: str, units: list[Any], todo: list[Any], asks: Callable
    ) -> None:
        """Log the request table: per task, its requests (``asks(unit)``: ``[(task,
        request)]``), the HTTP requests a unit is and those read back (not in ``todo``)."""
        counts = RequestCounts(kind)
        waiting = {id(unit) for unit in todo}
        for unit in units:
            asked = asks(unit)
            for task, request in asked:
                counts.request(task, request)
            counts.http(asked[0][0], cached=id(unit) not in waiting)
        header = (
            f"lalm-api: {kind} requests of model {self.model!r} at {self._client.host} "
            f"({path}; audio={self.condition}), {counts.to_send} to send:"
        )
        logger.info("%s", counts.table(header))

    # ------------------------------------------------------------------ generation
    def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
        """One chat completion per request, the audio first in the user turn."""
        if not requests:
            return []
        heard = self.hear_requests(requests)
        occurrences: Counter[str] = Counter()
        keys, stops, units = [], [], []
        for index, (request, (source, key)) in enumerate(zip(requests, heard, strict=True)):
            context, gen_kwargs = request.args[:2]
            context = self.question_text(context, source)
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

            def build(source=source, key=key, context=context, body=body) -> dict[str, Any]:
                messages = self._audio.messages(key, source, context, self.system_prompt)
                return {**body, "messages": messages}

            keys.append(parts)
            stops.append(stop)
            units.append((request.task_name, index, build))

        def compute(todo: list[Any], finished: Callable, disable_tqdm: bool) -> None:
            path = "one HTTP request per prompt"
            self._announce("generate_until", path, units, todo, lambda unit: [unit[:2]])

            def on_reply(job: Job, response: dict[str, Any]) -> None:
                content = _content(response)
                finished([(job.tag, None if content is _MALFORMED else {"content": content})])

            jobs = [Job(local, unit[2]) for local, unit in enumerate(todo)]
            self._client.send(jobs, on_reply, desc="lalm-api: generate", disable_tqdm=disable_tqdm)

        answers = self._stored_run("generate_until", keys, units, compute, disable_tqdm)
        report_trims()
        return [
            self._finish(None if answer is None else answer["content"], stop)
            for answer, stop in zip(answers, stops, strict=True)
        ]

    def _finish(self, content: str | None, stop: list[str]) -> str:
        if not content:
            self.stats["empty_generations"] += 1
            return ""
        return postprocess_generated_text(content, stop=stop, think_end_token=self.think_end_token)

    # ------------------------------------------------------------------ letters
    def loglikelihood(self, requests: list[Any], disable_tqdm: bool = False) -> list:
        """``(log p(letter | audio, prompt), greedy)`` per request, in order (the path:
        ``logprobs=``; each answer kept in the resume cache as it arrives)."""
        if not requests:
            return []
        if self.logprobs == "none":
            raise self._no_logprobs(self.logprobs_why)
        letters = []
        heard = self.hear_requests(requests)
        for index, (request, (source, key)) in enumerate(zip(requests, heard, strict=True)):
            context, continuation = request.args[:2]
            text, task, doc = self.question_text(context, source), request.task_name, request.doc
            letters.append(_Letter(index, task, doc or {}, source, key, text, continuation))
        path = self._resolve_letter_path(letters[0])
        if path == "prompt":
            results = self._score_prompt_path(letters, disable_tqdm)
        else:
            results = self._score_top_path(letters, disable_tqdm)
        report_trims()  # said now, before the harness prints its table
        return results

    # ------------------------------------------------------------------ path
    def _resolve_letter_path(self, probe: _Letter) -> str:
        """``prompt`` or ``top``: forced, found earlier (this run or the cache), or probed.

        The probed path is stored in the resume cache only once a request on it succeeded
        (the probe itself for ``prompt``, the first ``top`` answer for ``top``), so one bad
        reply never pins a path for later runs. Where the path came from is logged once
        per run.
        """
        if self.letter_path is not None and self.logprobs not in ("prompt", "top"):
            return self.letter_path
        if self.logprobs in ("prompt", "top"):
            self.letter_path, source = self.logprobs, f"logprobs={self.logprobs}"
        elif (cached := self._stored.lookup([["letter_path"]])[0]) is not None:
            where = self._stored.path or "this run"
            self.letter_path, source = str(cached), f"from the resume cache {where}"
        else:
            self.letter_path = self._probe_prompt_path(probe)
            source = "probed"
            if self.letter_path == "prompt":  # the probe was answered on this path
                self._stored.store([(["letter_path"], self.letter_path)])
            else:
                self._letter_path_unconfirmed = True  # stored after a top answer
        if getattr(self, "_letter_path_logged", None) != self.letter_path:
            self._letter_path_logged = self.letter_path
            shown = (
                "the prompt path (exact)"
                if self.letter_path == "prompt"
                else f"the top-{self.top_logprobs} path (approximate)"
            )
            logger.info("lalm-api: letters are scored on %s: %s", shown, source)
        return self.letter_path

    def _confirm_letter_path(self) -> None:
        """A request on the probed path succeeded: keep the path for later runs."""
        if getattr(self, "_letter_path_unconfirmed", False):
            self._letter_path_unconfirmed = False
            self._stored.store([(["letter_path"], self.letter_path)])

    def _probe_prompt_path(self, letter: _Letter) -> str:
        """Send ``letter`` on the prompt path; ``prompt`` if the answer has prompt logprobs."""
        try:
            body = self._send_one(Job(letter, self._letter_body(letter, "prompt")))
        except APIRequestError as error:
            if not rejects_prompt_logprobs(error.status, error.server_message):
                raise
            why = f"HTTP {error.status}: {error.server_message}"
        else:
            if has_prompt_logprobs(body):
                score = prompt_path_score(body, letter.continuation)
                self._stored.store([(self._letter_parts(letter, "prompt"), list(score))])
                logger.info("lalm-api: letters scored from prompt log-probabilities (exact)")
                return "prompt"
            why = "the answer has no prompt_logprobs"
        logger.warning(
            "lalm-api: %s has no prompt log-probabilities (%s); letters are scored from the "
            "top-%d log-probabilities of the first answer token (approximate; see "
            "api_letters_missing_from_top in the results).",
            self._client.host,
            why,
            self.top_logprobs,
        )
        return "top"

    # ------------------------------------------------------------------ prompt path
    def _letter_parts(self, letter: _Letter, path: str) -> list[Any]:
        """The resume-cache key of ``letter``'s request on ``path`` (``top``: its question's)."""
        digest = self._audio.digest(letter.key, letter.source)
        if path == "prompt":
            return ["prompt", letter.context, letter.continuation, digest]
        return ["top", letter.context, digest, int(self.top_logprobs)]

    def _letter_body(self, letter: _Letter, path: str) -> Callable[[], dict[str, Any]]:
        """The body of ``letter``'s request on ``path``, built when it is about to go."""

        def build() -> dict[str, Any]:
            messages = self._audio.messages(
                letter.key, letter.source, letter.context, self.system_prompt
            )
            if path == "prompt":
                return prompt_logprobs_body(self.model, messages, letter.continuation)
            return top_logprobs_body(self.model, messages, self.top_logprobs)

        return build

    def _score_prompt_path(self, letters: list[_Letter], disable_tqdm: bool) -> list:
        def compute(todo: list[_Letter], finished: Callable, disable_tqdm: bool) -> None:
            path = "prompt path, exact: one HTTP request per letter"
            self._announce("loglikelihood", path, letters, todo, _asks)

            def on_reply(job: Job, body: dict[str, Any]) -> None:
                local, letter = job.tag
                if not has_prompt_logprobs(body):
                    raise self._no_logprobs(
                        "no prompt_logprobs",
                        " (logprobs=top reads the top log-probabilities of the first token.)",
                    )
                finished([(local, prompt_path_score(body, letter.continuation))])

            jobs = [Job((i, x), self._letter_body(x, "prompt")) for i, x in enumerate(todo)]
            self._client.send(jobs, on_reply, desc="lalm-api: letters", disable_tqdm=disable_tqdm)

        keys = [self._letter_parts(letter, "prompt") for letter in letters]
        return self._stored_run(
            "loglikelihood",
            keys,
            letters,
            compute,
            disable_tqdm,
            read=lambda v: (float(v[0]), bool(v[1])),
        )

    # ------------------------------------------------------------------ top path
    def _score_top_path(self, letters: list[_Letter], disable_tqdm: bool) -> list:
        for letter in letters:
            if not letter.continuation.strip() or len(letter.continuation.split()) != 1:
                raise LALMArgumentError(
                    f"lalm-api: logprobs=top scores single-token answers (option letters); "
                    f"continuation {letter.continuation!r} is not one. Use a server with "
                    "prompt log-probabilities (vLLM) for these tasks."
                )
        groups: OrderedDict[tuple[Hashable, str], list[_Letter]] = OrderedDict()
        for letter in letters:
            groups.setdefault((letter.key, letter.context), []).append(letter)
        questions = list(groups.values())

        def compute(todo: list[list[_Letter]], finished: Callable, disable_tqdm: bool) -> None:
            path = f"top-{self.top_logprobs} path, approximate: one HTTP request per question"
            self._announce("loglikelihood", path, questions, todo, lambda q: _asks(*q))

            def on_reply(job: Job, body: dict[str, Any]) -> None:
                top = top_logprobs_of(body)
                if top is None:
                    raise self._no_logprobs("its answers carry no top_logprobs")
                finished([(job.tag, [list(pair) for pair in top])])
                self._confirm_letter_path()

            jobs = [Job(i, self._letter_body(q[0], "top")) for i, q in enumerate(todo)]
            try:
                self._client.send(
                    jobs, on_reply, desc="lalm-api: questions", disable_tqdm=disable_tqdm
                )
            except APIRequestError as error:
                if "logprob" not in error.server_message.lower():
                    raise
                why = f"HTTP {error.status}: {error.server_message}"
                raise self._no_logprobs(why) from None

        keys = [self._letter_parts(question[0], "top") for question in questions]
        tops = self._stored_run("loglikelihood", keys, questions, compute, disable_tqdm)
        results: list[tuple[float, bool] | None] = [None] * len(letters)
        for group, stored in zip(questions, tops, strict=True):
            top = [(str(token), float(logprob)) for token, logprob in stored]
            scores = top_path_scores(top, [letter.continuation for letter in group])
            missing = [letter for letter, score in zip(group, scores, strict=True) if not score]
            for letter, score in zip(group, scores, strict=True):
                results[letter.index] = score if score else (float("-inf"), False)
            self._count_missing(group, missing)
        self._warn_missing()
        return results

    def _count_missing(self, group: list[_Letter], missing: list[_Letter]) -> None:
        if not missing:
            return
        self.stats["letters_missing_from_top"] += len(missing)
        self.stats["questions_missing_letters"] += 1
        if len(missing) == len(group):
            self.stats["questions_without_letters"] += 1
        if len(self.missing_examples) < _MAX_EXAMPLES:
            doc = group[0].doc if isinstance(group[0].doc, Mapping) else {}
            name = f"{doc.get('benchmark', group[0].task)}:{doc.get('id')}"
            if isinstance(doc.get("fold"), int) and doc["fold"] >= 0:  # which fold's prompt
                name += f" fold {doc['fold']}"
            letters = ",".join(m.continuation.strip() for m in missing)
            self.missing_examples.append(f"{name} ({letters})")

    def _warn_missing(self) -> None:
        if not self.stats["letters_missing_from_top"]:
            return
        logger.warning(
            "lalm-api: %d letters of %d questions were not among the top %d first tokens "
            "(%d questions had no letter at all), e.g. %s. Such a letter gets no probability "
            "(log p = -inf); a question with no letter counts as wrong. The counts are in the "
            "results' config (api_letters_missing_from_top, ...).",
            self.stats["letters_missing_from_top"],
            self.stats["questions_missing_letters"],
            self.top_logprobs,
            self.stats["questions_without_letters"],
            "; ".join(self.missing_examples),
        )

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

    def _engine_info(self) -> dict[str, Any]:
        """The endpoint, the WAV sent, the letter path and what it cost."""
        path = self.letter_path
        return {
            "api_model": self.model,
            "api_host": self._client.host,
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
            "api_cache": None if self._stored.path is None else str(self._stored.path),
            "api_cache_hits": 0 if self._stored.cache is None else self._stored.cache.hits,
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


def _asks(*letters: _Letter) -> list[tuple[str | None, tuple[Hashable, str]]]:
    """The harness requests of letters: (task, the question they answer)."""
    return [(letter.task, (letter.key, letter.context)) for letter in letters]


class _APIResults(StoredResults):
    """``lalm-api``'s resume cache: this run's answers also kept in memory (the probe's, the
    letter path, with the file off too); an entry holding a number that is not finite
    (written before replies were checked) is a miss, asked again and replaced; none is
    ever written."""

    def __init__(self, path: Path | None, scope: Mapping[str, Any], stats: Counter) -> None:
        super().__init__(path, scope)
        self._memo: dict[str, Any] = {}
        self._stats = stats

    def lookup(self, keys: Sequence[Any]) -> list[Any | None]:
        values = []
        for parts in keys:
            value = self._memo.get(digest(parts))
            if value is None and self.cache is not None:
                value = self.cache.get(parts)
                if value is not None and non_finite_in(value):
                    value = self._non_finite()
            values.append(value)
        self.reused += sum(value is not None for value in values)
        return values

    def _non_finite(self) -> None:
        self.cache.hits, self.cache.misses = self.cache.hits - 1, self.cache.misses + 1
        self._stats["non_finite_cache_entries"] += 1
        if self._stats["non_finite_cache_entries"] == 1:
            logger.warning(
                "lalm-api: the resume cache %s holds a score that is not finite (inf or "
                "NaN, from a bad reply); such entries are asked again and replaced",
                self.cache.path,
            )

    def store(self, items: Sequence[tuple[Any, Any]]) -> None:
        for parts, value in items:  # the readers refuse such numbers: keep the cache clean
            if non_finite_in(value):
                raise MalformedLogprobsError(f"{parts[0]} result", value, "a number is not finite")
        self._memo.update((digest(parts), value) for parts, value in items)
        super().store(items)

    def report(self, what: str, total: int, reused: int) -> None:
        """Nothing: :meth:`LALMAPI._announce`'s table says what was read back."""
