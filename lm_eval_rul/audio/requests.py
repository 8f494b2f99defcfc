"""Where a harness request's audio comes from: the one decision ``lalm`` and ``lalm-api`` share.

:func:`request_audio` sorts every request the harness sends into one of three kinds:

* ``harness``: the request's last argument is the harness's own audio argument (a task
  with ``doc_to_audio``: lm-eval appends ``{"audio": [{"array", "sampling_rate"}, ...]}``
  to the arguments of ``loglikelihood`` and ``generate_until`` requests alike). Each
  array becomes a clip reference (:mod:`.arrays`), heard through the same conditions as
  our clips: ``original``, ``reversed``, ``noise`` (seeded from the document's ``id``,
  else ``task:doc_id``), ``silence``, ``none``, and ``random`` (another clip of the same
  task among the requests being scored). Several clips per request are kept in order.
* ``plugin``: the document carries this package's audio fields (``benchmark``,
  ``audio_ref``... see :func:`~lm_eval_rul.audio.layouts.attach_audio`), read by
  :func:`~lm_eval_rul.audio.condition_key` as before.
* ``text``: neither. The request is answered from its text alone, with no audio slot in
  the prompt; the ``audio=`` condition does not apply to it.

Bad input (:class:`HarnessAudioError`): a harness audio argument that is not arrays with
sampling rates is refused for the whole batch before any model call, in one line naming
the task, the document and what was given.

What each document heard is recorded (:func:`record_heard`) and written into the logged
samples of this package's tasks as ``audio_heard`` and ``audio_replaced``
(:func:`heard_fields`, called by their ``process_results``), and ``audio_window`` when the
condition cut the stretch heard itself (``excerpt``).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .arrays import register_array
from .clips import CLIPS_FIELD, clip_parts
from .conditions import (
    AudioSpec,
    check_audio_available,
    condition_of_key,
    register_clip_pool,
)
from .errors import AudioError
from .sources import ref_name
from .windows import WINDOW_FIELD

__all__ = [
    "HARNESS_AUDIO_PLACEHOLDER",
    "PLUGIN_AUDIO_FIELDS",
    "HarnessAudioError",
    "RequestAudio",
    "harness_audio",
    "request_audio",
    "describe_heard",
    "record_heard",
    "heard_fields",
]

logger = logging.getLogger(__name__)

#: The placeholder harness audio tasks write where the audio goes (lm-eval's
#: ``hf-audiolm-qwen`` replaces it); ``lalm`` puts the audio first in the user turn and
#: drops the placeholder from the text.
HARNESS_AUDIO_PLACEHOLDER = "<audio>"
#: A document carrying any of these fields is one of this package's (audio from its fields).
PLUGIN_AUDIO_FIELDS: tuple[str, ...] = (
    "benchmark",
    "audio_ref",
    "audio_random_ref",
    "audio_pool",
    WINDOW_FIELD,
    CLIPS_FIELD,
)


class HarnessAudioError(AudioError):
    """A harness audio argument is not arrays with sampling rates."""


@dataclass(frozen=True)
class RequestAudio:
    """What one request's audio comes from.

    Attributes:
        kind: ``harness``, ``plugin`` or ``text`` (see the module doc).
        parts: The documents the audio conditions read, one per clip (``plugin``: the
            request's document; ``text``: none).
        task: The request's task name.
    """

    kind: str
    parts: tuple[Mapping[str, Any], ...]
    task: str | None = None

    def key(self, spec: AudioSpec) -> Hashable:
        """The key of what is heard (one clip: :func:`condition_key`'s own key)."""
        if self.kind == "text":
            return ("text",)
        keys = [spec.audio_condition.key(part, spec) for part in self.parts]
        return keys[0] if len(keys) == 1 else ("clips", *keys)

    def clips(self, spec: AudioSpec) -> int:
        """How many audio slots the prompt has (0: text, or ``audio=none``)."""
        return 0 if self.kind == "text" or not spec.audio_condition.audio_slot else len(self.parts)

    def waves(
        self, spec: AudioSpec, key: Hashable | None = None
    ) -> tuple[Hashable, list[np.ndarray] | None]:
        """(:meth:`key`, the waveforms heard, in order; ``None`` without audio).

        ``key``: this source's :meth:`key`, when the caller has it (a condition key, a
        noise seed among others, is then computed once per clip, not once per call).
        """
        if key is None:
            return self.key(spec), self._waves(spec, None)
        return key, self._waves(spec, key)

    def _waves(self, spec: AudioSpec, key: Hashable | None) -> list[np.ndarray] | None:
        if not self.clips(spec):
            return None
        condition = spec.audio_condition
        if key is None:
            return [condition.waveform(condition.key(p, spec), p, spec) for p in self.parts]
        keys = [key] if len(self.parts) == 1 else list(key[1:])
        return [condition.waveform(k, part, spec) for k, part in zip(keys, self.parts, strict=True)]


def harness_audio(args: Sequence[Any]) -> Any | None:
    """The harness's audio argument of a request (its arguments' last ``{"audio": ...}``)."""
    if args and isinstance(args[-1], Mapping) and "audio" in args[-1]:
        return args[-1]["audio"]
    return None


def _shown(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape}"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _clips(value: Any, where: str) -> list[tuple[np.ndarray, int]]:
    """The (mono float32 wave, rate) pairs of one harness audio argument, or the error."""
    fix = (
        "doc_to_audio must return [{'array': <samples>, 'sampling_rate': <Hz>}, ...] "
        "(decode the audio in doc_to_audio, e.g. with the datasets Audio feature). "
        "Nothing was scored."
    )
    items = [value] if isinstance(value, Mapping) else value
    if not isinstance(items, (list, tuple)) or not items:
        raise HarnessAudioError(f"{where}: the harness audio argument is {_shown(value)}; {fix}")
    out = []
    for item in items:
        if not isinstance(item, Mapping) or "array" not in item or "sampling_rate" not in item:
            shown = _shown(item)
            raise HarnessAudioError(f"{where}: the harness audio argument has {shown}; {fix}")
        try:
            wave = np.asarray(item["array"], dtype=np.float32)
            rate = int(item["sampling_rate"])
        except (TypeError, ValueError):
            raise HarnessAudioError(
                f"{where}: the harness audio argument has {_shown(item)}; {fix}"
            ) from None
        if wave.ndim == 2:  # (channels, frames) or (frames, channels): mixed to mono
            wave = wave.mean(axis=0 if wave.shape[0] < wave.shape[1] else 1)
        if wave.ndim != 1 or wave.size == 0 or rate <= 0 or not np.all(np.isfinite(wave)):
            raise HarnessAudioError(
                f"{where}: the harness audio argument has array {_shown(wave)} at sampling_rate "
                f"{item['sampling_rate']!r} (needs a non-empty, finite waveform and a positive "
                f"rate); {fix}"
            )
        out.append((wave, rate))
    return out


def _where(request: Any) -> str:
    doc = request.doc if isinstance(request.doc, Mapping) else {}
    shown = f" (id {doc['id']!r})" if "id" in doc else ""
    return f"task {request.task_name!r}, document {request.doc_id}{shown}"


def request_audio(requests: Sequence[Any], spec: AudioSpec) -> list[RequestAudio]:
    """The audio source of each request (see the module doc), checked before any model call.

    Raises:
        HarnessAudioError: A harness audio argument is not arrays with sampling rates.
        MissingAudioError: Plugin documents without a clip, for ``original``/``random``.
    """
    refs: dict[int, list[str]] = {}  # id(audio argument) -> clip refs (letters share it)
    for request in requests:
        value = harness_audio(request.args)
        if value is not None and id(value) not in refs:
            refs[id(value)] = [register_array(w, r) for w, r in _clips(value, _where(request))]
    pools: dict[str | None, list[str]] = {}
    for request in requests:
        value = harness_audio(request.args)
        if value is not None:
            pools.setdefault(request.task_name, []).extend(refs[id(value)])
    pool_ids = {
        task: register_clip_pool((ref, ref) for ref in task_refs)
        for task, task_refs in pools.items()
    }
    sources: list[RequestAudio] = []
    plugin_docs: dict[int, Mapping[str, Any]] = {}
    for request in requests:
        doc = request.doc if isinstance(request.doc, Mapping) else {}
        value = harness_audio(request.args)
        if value is not None:
            item = str(doc["id"]) if "id" in doc else f"{request.task_name}:{request.doc_id}"
            parts = tuple(
                {
                    "id": item if i == 0 else f"{item}#{i}",
                    "audio_ref": ref,
                    "audio_track": ref,
                    "audio_pool": pool_ids[request.task_name],
                }
                for i, ref in enumerate(refs[id(value)])
            )
            sources.append(RequestAudio("harness", parts, request.task_name))
        elif any(field in doc for field in PLUGIN_AUDIO_FIELDS):
            parts = clip_parts(doc)  # a several-clip document: each clip, in order
            for part in parts:
                plugin_docs[id(part)] = {"benchmark": doc.get("benchmark", ""), **part}
            sources.append(RequestAudio("plugin", parts, request.task_name))
        else:
            sources.append(RequestAudio("text", (), request.task_name))
    check_audio_available(plugin_docs.values(), spec.condition)
    return sources


def describe_heard(key: Hashable) -> str:
    """What a condition key means, in words (``audio_heard`` of the logged samples)."""
    if key[0] == "clips":
        return " + ".join(describe_heard(part) for part in key[1:])
    condition = condition_of_key(key)
    return "none" if condition is None else condition.describe(key)


#: The fields :func:`heard_fields` adds to a document (never part of its signature).
_HEARD_FIELDS = ("audio_heard", "audio_replaced", "audio_seconds", "audio_clip_seconds")
#: Document signature -> its heard fields, for the current run in this process.
_HEARD: dict[str, dict[str, Any]] = {}


def _signature(doc: Mapping[str, Any]) -> str:
    own = {k: v for k, v in doc.items() if k not in _HEARD_FIELDS}
    text = json.dumps(own, sort_keys=True, default=repr)
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def record_heard(
    source: RequestAudio,
    spec: AudioSpec,
    doc: Mapping[str, Any] | None,
    key: Hashable | None = None,
) -> None:
    """Remember what ``doc`` heard (``key``: ``source``'s, when known), for
    :func:`heard_fields` (this package's tasks only)."""
    if source.kind == "text" or not isinstance(doc, Mapping) or "benchmark" not in doc:
        return
    own = [part.get("audio_ref") for part in source.parts]
    if not spec.audio_condition.alters_clip:
        replaced = None
    elif any(own):
        replaced = " + ".join(ref_name(ref) for ref in own if ref)
    else:
        replaced = None
    key = source.key(spec) if key is None else key
    heard: dict[str, Any] = {
        "audio_heard": describe_heard(key),
        "audio_replaced": replaced,
        **(_seconds_fields(source, spec, key) if CLIPS_FIELD in doc else {}),
    }
    condition = None if key[0] == "clips" else condition_of_key(key)
    window = None if condition is None else condition.window(key)
    if window is not None:  # the condition cut the stretch itself (excerpt): what was heard
        heard[WINDOW_FIELD] = [round(window[0], 6), round(window[1], 6)]
    _HEARD[_signature(doc)] = heard


def _whole_seconds(ref: Any) -> float | None:
    """A file clip's whole length from its header (None: not a file, or unreadable)."""
    if not ref:
        return None
    try:
        spec = json.loads(ref)
        if spec.get("kind") != "file":
            return None
        import soundfile

        return round(float(soundfile.info(spec["path"]).duration), 3)
    except Exception:  # noqa: BLE001 - a length we cannot read is said as unknown
        return None


def _seconds_fields(source: RequestAudio, spec: AudioSpec, key: Hashable) -> dict[str, Any]:
    """``audio_seconds`` (what was heard of each clip, in order; ``[]`` with no audio) and
    ``audio_clip_seconds`` (each clip's own length), logged for several-clip documents so a
    clip cut to the model's limit is seen per sample, never silently."""
    _, waves = source.waves(spec, key)
    heard = [round(len(w) / spec.sampling_rate, 3) for w in waves or []]
    return {
        "audio_seconds": heard,
        "audio_clip_seconds": [_whole_seconds(p.get("audio_ref")) for p in source.parts],
    }


def heard_fields(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The ``audio_heard`` / ``audio_replaced`` fields recorded for ``doc`` (empty if none).

    Each record is read once (the task's ``process_results`` of the same run), so a later
    run of another model on the same documents never shows it.
    """
    return _HEARD.pop(_signature(doc), {})
