"""The audio-LM core: what ``lalm``, ``lalm-vllm`` and ``lalm-api`` share.

:class:`AudioLM` is the one base class of the three engines (read it as lm-eval's ``HFLM``:
one flow, engines overriding narrow hooks; ``docs/architecture.md``).
:class:`StoredResults` keeps every result on disk as it is computed, so an interrupted run
resumes. Batch size and device are not in its scope (they change results only by float
rounding). :func:`chat_messages` is the one chat layout of the three engines: what makes
their scores comparable.
"""

from __future__ import annotations

import json
import logging
import re
from abc import abstractmethod
from collections.abc import Callable, Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from lm_eval.api.model import LM

from ..audio import AudioSpec, clip_identity, condition_named, condition_parameters
from ..audio.decoding import report_trims
from ..audio.requests import (
    HARNESS_AUDIO_PLACEHOLDER,
    RequestAudio,
    harness_audio,
    record_heard,
    request_audio,
)
from ..cache import ResultCache
from .args import LALMArgumentError, audio_condition, use_cache_refusal

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

_OFF = ("none", "off", "false", "no", "0", "")


def results_path(setting: Any, default_file: str) -> Path | None:
    """The file ``results_cache=setting`` means, for every engine alike.

    Args:
        setting: ``auto`` (``default_file`` in ``$LM_EVAL_RUL_CACHE``), ``none`` (off; also
            ``off``, ``false``, ``no``, ``0``, empty) or a file path.
        default_file: The file name ``auto`` means (each engine's row has its own).
    """
    if setting is None or str(setting).strip().lower() in _OFF:
        return None
    if str(setting).strip().lower() == "auto":
        from ..questions import cache_dir

        return cache_dir() / default_file
    return Path(str(setting)).expanduser()


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, sort_keys=True, default=repr))


def request_parts(kind: str, args: Sequence[Any], heard: Any) -> list[Any]:
    """The key parts of one request: its kind, its arguments and what the model hears."""
    return [kind, _jsonable(list(args)), heard]


class StoredResults:
    """The results cache of one engine (or nothing, when turned off).

    Args:
        path: The SQLite file, or ``None`` (off).
        scope: :func:`results_scope` of the model.
    """

    def __init__(self, path: Path | None, scope: Mapping[str, Any]) -> None:
        self.cache = None if path is None else ResultCache(path, scope=scope)
        self._heard: dict[Hashable, Any] = {}
        self.reused = 0
        self.who = "results"  # the engine's name, set by AudioLM: its messages say it

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
                "%s: %s: %d of %d requests read from %s, %d to compute "
                "(model_args results_cache=none recomputes everything)",
                self.who,
                what,
                reused,
                total,
                self.cache.path,
                total - reused,
            )


def hear(audio: Any, args: Mapping[str, Any], *, sampling_rate: int, max_seconds: Any) -> AudioSpec:
    """The :class:`~lm_eval_rul.audio.AudioSpec` of an engine: the condition ``audio=``
    names and the condition parameters the user gave (checked ``args``)."""
    condition = condition_named(audio_condition(audio))
    params = {name: args[name] for name in condition_parameters() if name in args}
    return AudioSpec(sampling_rate, max_seconds, condition, **params)


class AudioLM(LM):
    """The core of the plugin's audio models (see the module doc); engines subclass it.

    Args:
        spec: What the model hears (:func:`hear`): the condition is held here only.
        stored: The engine's results cache (:class:`StoredResults`).
        max_gen_toks: The generation budget when a task sets none.
        name: The ``--model`` name, which starts the engine's messages (default: the
            class's :attr:`MODEL_NAME`, its :data:`~lm_eval_rul.adapters.ADAPTERS` row).

    The engine initialises its harness base first (``HFLM``, ``LocalChatCompletion`` or
    ``LM``: this does not call it), then this. It defines ``_engine_info``,
    ``_score_letters(todo, finished, disable_tqdm)`` and ``_generate(todo, finished,
    disable_tqdm)``, each unit of ``todo`` a (request, source, heard key) triple;
    :class:`~.checkpoint.CheckpointLM` scores letters clip by clip for the engines that
    read a checkpoint; ``lalm-api`` builds its own units (letters, questions, prompts)
    on :meth:`_stored_run`.
    """

    MULTIMODAL = True
    #: ``compute`` is called even when every result was stored (to report the counts).
    COMPUTES_WHEN_STORED: ClassVar[bool] = False
    #: The ``--model`` name: its :data:`~lm_eval_rul.adapters.ADAPTERS` row, the prefix of
    #: its messages. Each engine sets its own.
    MODEL_NAME: ClassVar[str]
    #: The constructor takes every audio condition's parameters (:func:`supported_args`).
    AUDIO_CONDITION_ARGS: ClassVar[bool] = True
    #: The engine's own ``model_args`` table, read by :func:`~.args.validate_model_args`
    #: beside the common entries: numbers and their ranges, numbers of any value (checked by
    #: the engine in its own words), booleans.
    ARG_RANGES: ClassVar[dict[str, Any]] = {}
    NUMBER_ARGS: ClassVar[dict[str, type]] = {}
    BOOL_ARGS: ClassVar[tuple[str, ...]] = ()
    #: Why ``--apply_chat_template`` is refused, after the model's name.
    TEMPLATE_REFUSAL: ClassVar[str] = (
        "applies the model's chat template itself (audio first in the user turn); drop "
        "--apply_chat_template (use model_args chat_template=false for raw prompts)."
    )

    def __init__(
        self, spec: AudioSpec, stored: StoredResults, *, max_gen_toks: int, name: str | None = None
    ) -> None:
        self.spec = spec
        self._stored = stored
        stored.who = self.MODEL_NAME if name is None else name
        self._max_gen_toks = max_gen_toks
        if name is not None:
            self.MODEL_NAME = name
        #: Task name -> the audio condition it ran under (or :data:`TEXT_TASK_NOTE`).
        self.audio_by_task: dict[str, str] = {}

    @property
    def condition(self) -> str:  # its name; the condition is held by the spec alone
        return self.spec.condition

    # ------------------------------------------------------------------ audio
    def hear_requests(self, requests: Sequence[Any]) -> list[tuple[RequestAudio, Hashable]]:
        """Each request's (:class:`RequestAudio`, condition key), checked before any model
        call; a document's key (a clip's noise seed...) is computed once, its letters
        share it, and every later step (prefix, waveform, cache key) reads it."""
        sources = request_audio(requests, self.spec)
        known: dict[tuple[int, int], Hashable] = {}  # (document, harness audio) -> key
        heard = []
        for request, source in zip(requests, sources, strict=True):
            same = (id(request.doc), id(harness_audio(request.args)))
            if same not in known:
                known[same] = source.key(self.spec)
                record_heard(source, self.spec, request.doc, known[same])
            heard.append((source, known[same]))
            self._note_task(str(request.task_name), source)
        return heard

    def _note_task(self, task: str, source: RequestAudio) -> None:
        """Record (and, for a text task, say once) the condition ``task`` runs under."""
        if task in self.audio_by_task:
            return
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

    def audio_info(self) -> dict[str, Any]:
        """The per-task audio conditions, for ``get_model_info``."""
        return {"audio_condition_by_task": dict(self.audio_by_task)}

    # ------------------------------------------------------------------ the template
    def loglikelihood(self, requests: list[Any], disable_tqdm: bool = False) -> list:
        """``(log p(continuation | audio, prompt), is_greedy)`` per request.

        Results already in the results cache are read back; the others are scored by the
        engine (:meth:`_score_letters`) and stored as each call returns.
        """
        if not requests:
            return []
        return self._requests_run(
            "loglikelihood",
            requests,
            [r.args[:2] for r in requests],
            self._score_letters,
            disable_tqdm,
            read=lambda v: (float(v[0]), bool(v[1])),
        )

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
        self,
        kind: str,
        requests: list[Any],
        arguments: list[Any],
        compute: Callable,
        disable_tqdm: bool,
        read: Callable[[Any], Any] = lambda value: value,
    ) -> list[Any]:
        """:meth:`_stored_run` over harness requests, keyed by their arguments and what
        each hears; ``compute`` gets (request, source, heard key) triples."""
        heard = self.hear_requests(requests)
        keys = self._stored.keys(kind, arguments, [key for _, key in heard])
        units = [(r, source, key) for r, (source, key) in zip(requests, heard, strict=True)]
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

    def _score_letters(self, todo: list[Any], finished: Callable, disable_tqdm: bool) -> None:
        """Score ``todo`` (request, source, key) triples; ``finished([(index, (log p,
        greedy))])`` as results come (an engine defines it, or its own ``loglikelihood``)."""
        raise NotImplementedError(f"{self.MODEL_NAME} defines no _score_letters")

    def _generate(self, todo: list[Any], finished: Callable, disable_tqdm: bool) -> None:
        """Generate for ``todo`` (request, source, key) triples; ``finished([(index,
        text)])`` as results come (an engine defines it, or its own ``generate_until``)."""
        raise NotImplementedError(f"{self.MODEL_NAME} defines no _generate")

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
