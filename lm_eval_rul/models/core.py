"""The audio-LM core: what ``lalm``, ``lalm-vllm`` and ``lalm-api`` share.

:class:`AudioLM` is the one base class of the three engines (read it as lm-eval's ``HFLM``:
one flow, engines overriding narrow hooks; ``docs/architecture.md``). It owns the audio
arguments (turned once into the model's :class:`~lm_eval_rul.audio.AudioSpec`), each
request's audio source, the grouping of letter requests by clip and context
(:class:`Question`), the stored-results -> compute -> store template of ``loglikelihood``
and ``generate_until``, ``get_model_info`` and the refusals.

:class:`StoredResults` keeps every result on disk as it is computed, so an interrupted run
resumes. Its scope (:func:`results_scope`) is everything that decides a result besides the
request; an entry's key (:func:`request_parts`) is the request and what the model hears, a
clip by its content digest. Batch size and device are not in the scope (they change
results only by float rounding). :func:`chat_messages` is the one chat layout of the three
engines: what makes their scores comparable.
"""

from __future__ import annotations

import json
import logging
import re
from abc import abstractmethod
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from lm_eval.api.model import LM

from ..adapters import adapter_named
from ..audio import AudioSpec, clip_identity, condition_named, condition_parameters
from ..audio.decoding import report_trims
from ..audio.requests import (
    HARNESS_AUDIO_PLACEHOLDER,
    RequestAudio,
    record_heard,
    request_audio,
)
from ..cache import ResultCache
from ..mcqa.letters import announce_multi_token
from ..progress import progress_bar
from .args import LALMArgumentError, audio_condition, use_cache_refusal

__all__ = [
    "AudioLM", "Question", "chat_messages", "audio_settings", "audio_words",
    "recorded_parameters", "TEXT_TASK_NOTE", "DEFAULT_RESULTS_FILE", "FORMAT", "results_path",
    "results_scope", "checkpoint_identity", "request_parts", "StoredResults"
]  # fmt: skip

logger = logging.getLogger(__name__)


def chat_messages(
    text: str,
    *,
    audio_part: dict[str, Any] | None = None,
    system_prompt: str | None = None,
    audio_parts: list[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """The chat of one question: an optional system turn, then the user turn.

    Args:
        text: The question (the harness's context).
        audio_part: The audio content part (``{"type": "audio", ...}`` for a processor,
            ``{"type": "input_audio", ...}`` for an OpenAI-compatible endpoint), placed
            before the text; ``None`` for a prompt without audio.
        system_prompt: A system message; ``None`` keeps the chat template's own.
        audio_parts: Several audio parts, in order, before the text (instead of
            ``audio_part``; empty: no audio).
    """
    messages: list[dict[str, Any]] = []
    if system_prompt:
        messages.append({"role": "system", "content": system_prompt})
    content = list(audio_parts or ([audio_part] if audio_part is not None else []))
    content.append({"type": "text", "text": text})
    messages.append({"role": "user", "content": content})
    return messages


def recorded_parameters(spec: AudioSpec) -> dict[str, Any]:
    """The condition parameters a run records and keys its caches with: the ones every
    run records (``Parameter.recorded``) and those of the spec's own condition."""
    names = [p.name for p in condition_parameters().values() if p.recorded]
    names += [p.name for p in spec.audio_condition.parameters]
    return {name: spec.params[name] for name in dict.fromkeys(names)}


def audio_words(spec: AudioSpec) -> str:
    """The condition and its recorded settings for a log line (``audio=noise seed=0 ...``)."""
    settings = [f"{name}={value}" for name, value in recorded_parameters(spec).items()]
    return " ".join([f"audio={spec.condition}", *settings])


def audio_settings(spec: AudioSpec) -> dict[str, Any]:
    """The audio condition and its settings as written to the results' ``config``
    (``audio_seed``, ``audio_noise_seconds``...: ``audio_`` + each recorded parameter)."""
    return {
        "audio_condition": spec.condition,
        **{f"audio_{name}": value for name, value in recorded_parameters(spec).items()},
        "audio_sampling_rate": spec.sampling_rate,
        "audio_max_seconds": spec.max_seconds,
    }


#: What ``audio_condition_by_task`` says of a task without audio.
TEXT_TASK_NOTE = "not applied (text task: answered from text alone, no audio in the prompt)"
_PLACEHOLDER = re.compile(r"[ \t]*" + re.escape(HARNESS_AUDIO_PLACEHOLDER))


#: The default file, inside ``$LM_EVAL_RUL_CACHE``.
DEFAULT_RESULTS_FILE = adapter_named("lalm").results_file
#: Bumped whenever what is stored, or how it is computed, changes meaning.
FORMAT = 1
_OFF = ("none", "off", "false", "no", "0", "")
_WEIGHTS = (".safetensors", ".bin", ".json", ".model", ".txt", ".jinja", ".py")


def results_path(setting: Any, default_file: str = DEFAULT_RESULTS_FILE) -> Path | None:
    """The file ``results_cache=setting`` means, for ``lalm`` and ``lalm-api`` alike.

    Args:
        setting: ``auto`` (``default_file`` in ``$LM_EVAL_RUL_CACHE``), ``none`` (off; also
            ``off``, ``false``, ``no``, ``0``, empty) or a file path.
        default_file: The file name ``auto`` means (each model has its own).
    """
    if setting is None or str(setting).strip().lower() in _OFF:
        return None
    if str(setting).strip().lower() == "auto":
        from ..questions import cache_dir

        return cache_dir() / default_file
    return Path(str(setting)).expanduser()


def checkpoint_identity(pretrained: str, revision: str, config: Any) -> dict[str, Any]:
    """What identifies the weights: a folder's files (size, mtime) or a hub commit."""
    folder = Path(pretrained).expanduser()
    if folder.is_dir():
        files = sorted(
            (p.name, p.stat().st_size, p.stat().st_mtime_ns)
            for p in folder.iterdir()
            if p.is_file() and p.suffix in _WEIGHTS
        )
        return {"path": str(folder.resolve()), "files": files}
    return {
        "hub_id": pretrained,
        "revision": revision,
        "commit": getattr(config, "_commit_hash", None),
    }


def results_scope(
    lm: Any,
    *,
    model: str = "lalm",
    dtype: str | None = None,
    versions: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Everything besides the request that decides ``lm``'s results (see the module doc).

    Args:
        lm: The model (``lalm``, or ``lalm-vllm``, which builds its prompts the same way).
        model: The model's name: results of two engines never mix.
        dtype: The weights' dtype (default: ``lm.model.dtype``).
        versions: More package versions that decide the results (``lalm-vllm``: vLLM's).
    """
    import torch
    import transformers

    from .. import __version__

    spec = lm.spec
    return {
        "model": model,
        "format": FORMAT,
        "versions": {
            "lm_eval_rul": __version__,
            "transformers": transformers.__version__,
            "torch": torch.__version__,
            **(versions or {}),
        },
        "checkpoint": checkpoint_identity(lm.pretrained, lm.revision, lm._config),
        "dtype": dtype or str(lm.model.dtype),
        "family": lm.family.name,
        "template": list(lm._parts),
        # only where the template trims the question, so other scopes keep their keys
        **({"question_trimmed": True} if getattr(lm, "_trims_question", False) else {}),
        "chat_template": lm.use_chat_template,
        "system_prompt": lm.system_prompt,
        "prefix_cache": lm.prefix_cache,
        "audio": {
            "condition": spec.condition,
            **recorded_parameters(spec),
            "max_seconds": spec.max_seconds,
            "sampling_rate": spec.sampling_rate,
        },
    }


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, sort_keys=True, default=repr))


def request_parts(kind: str, args: Sequence[Any], heard: Any) -> list[Any]:
    """The key parts of one request: its kind, its arguments and what the model hears."""
    return [kind, _jsonable(list(args)), heard]


class StoredResults:
    """The results cache of one ``lalm`` model (or nothing, when turned off).

    Args:
        path: The SQLite file, or ``None`` (off).
        scope: :func:`results_scope` of the model.
    """

    def __init__(self, path: Path | None, scope: Mapping[str, Any]) -> None:
        self.cache = None if path is None else ResultCache(path, scope=scope)
        self._heard: dict[Hashable, Any] = {}
        self.reused = 0

    @property
    def path(self) -> Path | None:
        return None if self.cache is None else self.cache.path

    def heard_key(self, key: Hashable) -> Any:
        """A condition key as key parts: files by their identity, harness arrays by their
        content hash, nested keys (several clips in order, a clip reversed) part by part,
        ``["text"]`` for a text task."""
        if key not in self._heard:
            if key[0] == "clip":
                self._heard[key] = ["clip", clip_identity(key[1]), *key[2:]]
            elif any(isinstance(part, tuple) for part in key):
                self._heard[key] = [
                    self.heard_key(part) if isinstance(part, tuple) else _jsonable(part)
                    for part in key
                ]
            else:
                self._heard[key] = _jsonable(list(key))
        return self._heard[key]

    def lookup(self, keys: Sequence[Any]) -> list[Any | None]:
        """Stored values of ``keys`` (``None`` where missing)."""
        if self.cache is None:
            return [None] * len(keys)
        values = self.cache.get_many(keys)
        self.reused += sum(v is not None for v in values)
        return values

    def keys(
        self, kind: str, arguments: Sequence[Sequence[Any]], heard: Sequence[Hashable]
    ) -> list[Any]:
        """The key of each request: its ``arguments`` and what it hears (condition keys)."""
        return [
            request_parts(kind, list(args), self.heard_key(key))
            for args, key in zip(arguments, heard, strict=True)
        ]

    def recall(self, kind: str, keys: Sequence[Any]) -> tuple[list[Any], list[int]]:
        """(stored values or ``None``, indices still to compute) of ``keys``, logged."""
        values = list(self.lookup(keys))
        todo = [i for i, value in enumerate(values) if value is None]
        self.report(kind, len(keys), len(keys) - len(todo))
        return values, todo

    def store(self, items: Sequence[tuple[Any, Any]]) -> None:
        """Write (and commit) finished results: ``[(key, value), ...]``."""
        if self.cache is not None and items:
            self.cache.put_many(items)

    def report(self, what: str, total: int, reused: int) -> None:
        """One log line: how many of ``total`` requests came from the file."""
        if self.cache is not None and total:
            logger.info(
                "lalm: %s: %d of %d requests read from %s, %d to compute "
                "(model_args results_cache=none recomputes everything)",
                what,
                reused,
                total,
                self.cache.path,
                total - reused,
            )


@dataclass
class Question:
    """The letter requests of one (clip, context): scored after one audio prefix."""

    key: Hashable  # what is heard (the clip's condition key)
    source: RequestAudio
    context_ids: list[int]  # the prompt's token ids (audio placeholder unexpanded)
    letters: list[tuple[int, list[int]]]  # (index among the requests to score, its ids)


class AudioLM(LM):
    """The core of the plugin's audio models (see the module doc); engines subclass it.

    An engine sets ``_stored`` (:class:`StoredResults`) and defines ``_engine_info``,
    ``_score_questions(questions) -> [(index, (log p, greedy))]`` (one call after one audio
    prefix per clip) and ``_generate(todo, finished, disable_tqdm)``; ``lalm-api`` builds
    its own units of work (letters, questions, prompts) on :meth:`_stored_run`.
    """

    MULTIMODAL = True
    #: ``compute`` is called even when every result was stored (to report the counts).
    COMPUTES_WHEN_STORED: ClassVar[bool] = False
    #: The ``--model`` name (its :data:`~lm_eval_rul.adapters.ADAPTERS` row).
    MODEL_NAME: ClassVar[str] = "lalm"
    #: The constructor takes every audio condition's parameters (:func:`supported_args`).
    AUDIO_CONDITION_ARGS: ClassVar[bool] = True
    #: Why ``--apply_chat_template`` is refused, after the model's name.
    TEMPLATE_REFUSAL: ClassVar[str] = (
        "applies the model's chat template itself (audio first in the user turn); drop "
        "--apply_chat_template (use model_args chat_template=false for raw prompts)."
    )
    #: Questions per call of :meth:`_score_questions` across clips (``lalm``: per clip).
    QUESTIONS_PER_CALL: ClassVar[int] = 256
    spec: AudioSpec
    condition: str

    # ------------------------------------------------------------------ audio
    def _hear(
        self, audio: Any, args: Mapping[str, Any], *, sampling_rate: int, max_seconds: Any
    ) -> AudioSpec:
        """Build :attr:`spec` once: the :class:`~lm_eval_rul.audio.Condition` of
        ``audio=`` and the condition parameters the user gave (checked ``args``)."""
        condition = condition_named(audio_condition(audio))
        params = {name: args[name] for name in condition_parameters() if name in args}
        self.spec = AudioSpec(sampling_rate, max_seconds, condition, **params)
        self.condition = condition.name
        return self.spec

    @property
    def audio_by_task(self) -> dict[str, str]:
        """Task name -> the audio condition it ran under (or :data:`TEXT_TASK_NOTE`)."""
        if not hasattr(self, "_audio_by_task"):
            self._audio_by_task: dict[str, str] = {}
        return self._audio_by_task

    def audio_sources(self, requests: Sequence[Any]) -> list[RequestAudio]:
        """Each request's :class:`RequestAudio`, checked before any model call."""
        sources = request_audio(requests, self.spec)
        for request, source in zip(requests, sources, strict=True):
            record_heard(source, self.spec, request.doc)
            task = str(request.task_name)
            if task in self.audio_by_task:
                continue
            if source.kind == "text":
                self.audio_by_task[task] = TEXT_TASK_NOTE
                logger.info(
                    "%s: task %s gives no audio: answered from text alone, no audio slot in "
                    "the prompt; audio=%s does not apply to it",
                    type(self).__name__.lower(),
                    task,
                    self.condition,
                )
            else:
                self.audio_by_task[task] = self.condition
        return sources

    @staticmethod
    def question_text(context: str, source: RequestAudio) -> str:
        """The question of a request: a harness task's ``<audio>`` placeholders dropped (the
        audio goes first in the user turn, as for this package's tasks)."""
        if source.kind != "harness" or HARNESS_AUDIO_PLACEHOLDER not in context:
            return context
        text = _PLACEHOLDER.sub("", context)
        return text.lstrip("\n") if context.startswith(HARNESS_AUDIO_PLACEHOLDER) else text

    def _log_start(self, model: str, settings: Mapping[str, Any], tail: str = "") -> None:
        """The start-up line: the model, what it hears and its settings (logged by the
        engine's module)."""
        shown = " ".join(f"{name}={value}" for name, value in settings.items())
        line = f"{self.MODEL_NAME}: {model}; {audio_words(self.spec)} {shown}{tail}"
        logging.getLogger(type(self).__module__).info("%s", line)

    def heard_keys(self, sources: Sequence[RequestAudio]) -> list[Hashable]:
        """Each source's condition key, computed once per document (its letters share it)."""
        known: dict[int, Hashable] = {}
        for source in sources:
            if id(source.parts) not in known:
                known[id(source.parts)] = source.key(self.spec)
        return [known[id(source.parts)] for source in sources]

    def audio_info(self) -> dict[str, Any]:
        """The per-task audio conditions, for ``get_model_info``."""
        return {"audio_condition_by_task": dict(self.audio_by_task)}

    # ------------------------------------------------------------------ the template
    def loglikelihood(self, requests: list[Any], disable_tqdm: bool = False) -> list:
        """``(log p(continuation | audio, prompt), is_greedy)`` per request.

        Results already in the results cache are read back; the others are grouped by clip
        (:meth:`_questions_by_clip`: each clip's audio prefix is computed once), scored by
        the engine and stored as each call returns.
        """
        if not requests:
            return []
        return self._requests_run(
            "loglikelihood", requests, [r.args[:2] for r in requests], self._score_letters,
            disable_tqdm, read=lambda v: (float(v[0]), bool(v[1])),
        )  # fmt: skip

    def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
        """Generation with audio (greedy unless the task samples): stored answers are read
        back, the others generated by the engine and stored as each batch finishes."""
        if not requests:
            return []
        arguments = [[r.args[0], r.args[1], self.max_gen_toks] for r in requests]
        return self._requests_run(
            "generate_until", requests, arguments, self._generate, disable_tqdm
        )

    def _requests_run(
        self, kind: str, requests: list[Any], arguments: list[Any], compute: Callable,
        disable_tqdm: bool, read: Callable[[Any], Any] = lambda value: value,
    ) -> list[Any]:  # fmt: skip
        """:meth:`_stored_run` over harness requests, keyed by their arguments and what
        each hears; ``compute`` gets (request, source) pairs."""
        sources = self.audio_sources(requests)
        keys = self._stored.keys(kind, arguments, self.heard_keys(sources))
        units = list(zip(requests, sources, strict=True))
        results = self._stored_run(kind, keys, units, compute, disable_tqdm, read)
        report_trims()  # said now, before the harness prints its table
        return results

    def _stored_run(
        self,
        kind: str,
        keys: Sequence[Any],
        units: Sequence[Any],
        compute: Callable[..., None],
        disable_tqdm: bool,
        read: Callable[[Any], Any] = lambda value: value,
    ) -> list[Any]:
        """Stored results -> compute the rest -> store them, one key per unit of work.

        ``compute(todo, finished, disable_tqdm)`` gets the units still to do (possibly
        none: an engine that reports what it sends says so) and hands each finished batch,
        ``[(index in todo, value)]``, to ``finished``; a value of ``None`` is a result not
        to keep (a malformed reply), and the caller sees ``None`` there.
        """
        stored, todo = self._stored.recall(kind, keys)
        results = [None if value is None else read(value) for value in stored]

        def finished(pairs: list[tuple[int, Any]]) -> None:
            for local, value in pairs:
                results[todo[local]] = value
            kept = [(keys[todo[local]], v) for local, v in pairs if v is not None]
            self._stored.store([(key, list(v) if isinstance(v, tuple) else v) for key, v in kept])

        if todo or self.COMPUTES_WHEN_STORED:
            compute([units[i] for i in todo], finished, disable_tqdm)
        return results

    def _score_letters(
        self, todo: list[tuple[Any, RequestAudio]], finished: Callable, disable_tqdm: bool
    ) -> None:
        """Score ``todo`` clip by clip, :meth:`_chunks` at a time."""
        groups = self._questions_by_clip(todo)
        bar = progress_bar(
            len(todo), f"{self.MODEL_NAME}: scoring", enabled=not disable_tqdm and self.rank == 0
        )
        try:
            for chunk in self._chunks(groups):
                finished(self._score_questions(chunk))
                bar.update(sum(len(question.letters) for question in chunk))
        finally:
            bar.close()

    def _questions_by_clip(self, todo: list[tuple[Any, RequestAudio]]) -> list[list[Question]]:
        """The requests as questions, clip by clip in order of first appearance, each
        clip's contexts in order (a continuation of several tokens is said once)."""
        by_clip: OrderedDict[Hashable, OrderedDict[str, Question]] = OrderedDict()
        multi_token: dict[str, list[int]] = {}
        heard = self.heard_keys([source for _, source in todo])
        for index, ((request, source), key) in enumerate(zip(todo, heard, strict=True)):
            context, continuation = request.args[:2]
            context = self.question_text(context, source)
            _, ctx_ids, cont_ids = self._encode_request(
                context, continuation, source.clips(self.spec)
            )
            if not cont_ids:
                raise LALMArgumentError(
                    f"{self.MODEL_NAME}: continuation {continuation!r} of document "
                    f"{request.doc.get('id')!r} encodes to no tokens."
                )
            if len(cont_ids) > 1:
                multi_token.setdefault(continuation, cont_ids)
            contexts = by_clip.setdefault(key, OrderedDict())
            contexts.setdefault(context, Question(key, source, ctx_ids, [])).letters.append(
                (index, cont_ids)
            )
        pieces = {t: self.tokenizer.convert_ids_to_tokens(ids) for t, ids in multi_token.items()}
        if pieces:
            announce_multi_token(self.MODEL_NAME, pieces, what="continuation", log=logger)
        return [list(contexts.values()) for contexts in by_clip.values()]

    def _chunks(self, groups: list[list[Question]]) -> Iterator[list[Question]]:
        """Questions per engine call: :data:`QUESTIONS_PER_CALL` across clips, a clip's
        questions together (its prefix then stays in the engine's cache)."""
        questions = [q for group in sorted(groups, key=lambda g: repr(g[0].key)) for q in group]
        for start in range(0, len(questions), self.QUESTIONS_PER_CALL):
            yield questions[start : start + self.QUESTIONS_PER_CALL]

    # ------------------------------------------------------------------ harness hooks
    @property
    def max_gen_toks(self) -> int:
        return self._max_gen_toks

    @abstractmethod
    def _engine_info(self) -> dict[str, Any]:
        """What identifies the engine's model in the results (checkpoint, endpoint...)."""

    def get_model_info(self) -> dict:
        """The engine's model, the audio condition and its settings, so runs are told apart."""
        return {**self._engine_info(), **audio_settings(self.spec), **self.audio_info()}

    def set_cache_hook(self, cache_hook: Any) -> None:
        """Refuse lm-eval's response cache when it would mix up what the model heard."""
        if getattr(cache_hook, "dbdict", None) is not None:
            raise LALMArgumentError(use_cache_refusal(self.MODEL_NAME))
        super().set_cache_hook(cache_hook)

    def apply_chat_template(self, chat_history: list[dict[str, Any]], **kwargs: Any) -> str:
        raise LALMArgumentError(f"{self.MODEL_NAME} {self.TEMPLATE_REFUSAL}")
