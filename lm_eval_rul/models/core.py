"""The audio-LM core: what ``lalm``, ``lalm-vllm`` and ``lalm-api`` share.

CORE_DOC_PLACEHOLDER
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..adapters import adapter_named
from ..audio import AudioSpec, clip_identity, condition_key
from ..audio.requests import (
    HARNESS_AUDIO_PLACEHOLDER,
    RequestAudio,
    record_heard,
    request_audio,
)
from ..cache import ResultCache

__all__ = [
    "chat_messages", "audio_settings", "AudioRequestsMixin", "TEXT_TASK_NOTE",
    "DEFAULT_RESULTS_FILE", "FORMAT", "results_path", "results_scope", "checkpoint_identity",
    "request_parts", "StoredResults"
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


def audio_settings(spec: AudioSpec) -> dict[str, Any]:
    """The audio condition and its settings as written to the results' ``config``."""
    return {
        "audio_condition": spec.condition,
        "audio_seed": spec.seed,
        "audio_noise_seconds": spec.noise_seconds,
        "audio_noise_std": spec.noise_std,
        "audio_sampling_rate": spec.sampling_rate,
        "audio_max_seconds": spec.max_seconds,
    }


#: What ``audio_condition_by_task`` says of a task without audio.
TEXT_TASK_NOTE = "not applied (text task: answered from text alone, no audio in the prompt)"
_PLACEHOLDER = re.compile(r"[ \t]*" + re.escape(HARNESS_AUDIO_PLACEHOLDER))


class AudioRequestsMixin:
    """Audio sources of requests for ``lalm`` / ``lalm-api`` (uses ``spec`` and ``condition``)."""

    spec: Any
    condition: str

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

    def audio_info(self) -> dict[str, Any]:
        """The per-task audio conditions, for ``get_model_info``."""
        return {"audio_condition_by_task": dict(self.audio_by_task)}


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
            "seed": spec.seed,
            "noise_seconds": spec.noise_seconds,
            "noise_std": spec.noise_std,
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
        self.reused = self.computed = 0

    @property
    def path(self) -> Path | None:
        return None if self.cache is None else self.cache.path

    def heard(self, doc: Mapping[str, Any], spec: Any) -> Any:
        """What the model hears for ``doc``, as key parts (files by their identity)."""
        return self.heard_key(condition_key(doc, spec))

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

    def recall(
        self, kind: str, arguments: Sequence[Sequence[Any]], heard: Sequence[Hashable]
    ) -> tuple[list[Any], list[Any], list[int]]:
        """(keys, stored values or None, indices still to compute) of a batch of requests
        (their ``arguments`` and condition keys), the counts logged (:meth:`report`)."""
        keys = [
            request_parts(kind, list(args), self.heard_key(key))
            for args, key in zip(arguments, heard, strict=True)
        ]
        values = list(self.lookup(keys))
        todo = [i for i, value in enumerate(values) if value is None]
        self.report(kind, len(keys), len(keys) - len(todo))
        return keys, values, todo

    def store(self, items: Sequence[tuple[Any, Any]]) -> None:
        """Write (and commit) finished results: ``[(key, value), ...]``."""
        self.computed += len(items)
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
