"""What ``lalm`` and ``lalm-api`` do with each request's audio source, in one place.

:func:`~lm_eval_rul.audio.requests.request_audio` decides where a request's audio comes
from (the harness's audio argument, this package's document fields, or none: a text
task). This mixin calls it for every batch of requests, records what each document heard
(for the logged samples), says once per task in the run log when a task is answered from
text alone (``audio=`` does not apply to it), and reports the condition each task ran
under in the results' ``config`` (``audio_condition_by_task``).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import Any

from ..audio.requests import (
    HARNESS_AUDIO_PLACEHOLDER,
    RequestAudio,
    record_heard,
    request_audio,
)

__all__ = ["AudioRequestsMixin", "TEXT_TASK_NOTE"]

logger = logging.getLogger(__name__)

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
