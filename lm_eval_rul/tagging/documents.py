"""Harness documents of the tagging tasks: one per clip.

Every document carries ``id`` (the clip), ``benchmark`` (the task family), ``tagging_task``,
``gold_tags``, ``tags`` (the vocabulary), the audio fields the conditions read
(``audio_ref``, ``audio_track``, ``audio_tried``, ``audio_pool``, ``audio_fix``: the
advice for a missing clip, in the task's own keys) and ``audio_window``
(``[start_s, end_s]`` heard, logged per sample), plus by form:

* ``letters`` (``gtzan``, the single-label releases): ``options``, ``letters``, ``gold``
  (the option index), ``prompt``;
* ``likelihood``: ``prompt``, the per-tag question with :data:`~.prompts.TAG_SLOT`
  (:mod:`.harness` makes two requests per tag from it);
* ``gen``: ``prompt``, the free-text instruction of the protocol.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..audio.conditions import register_clip_pool
from .data import AUDIO_FIX, TASK_SOURCES, audio_refs, heard_windows, task_clips, window_of
from .prompts import gen_prompt, letters_prompt, protocol_of, tag_question
from .releases import RELEASES
from .vocab import tag_text

__all__ = ["FORMS", "make_documents"]

#: The three task forms.
FORMS: tuple[str, ...] = ("letters", "likelihood", "gen")


def make_documents(task: str, form: str, metadata: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The documents of ``task`` (a key of :data:`~.data.TASK_SOURCES`) in ``form``.

    Raises:
        TaggingDataError: From the readers, the window or the protocol.
    """
    if form not in FORMS:
        raise ValueError(f"form must be one of {FORMS}, got {form!r}")
    window = window_of(metadata)
    protocol = protocol_of(metadata)
    data = task_clips(task, metadata)
    refs = audio_refs(data)
    pool = register_clip_pool(
        (ref, clip.id) for ref, clip in zip(refs, data.clips, strict=True) if ref
    )
    audio_key = TASK_SOURCES[task][1]
    shared: dict[str, Any] = {"benchmark": task, "tagging_task": task, "tags": list(data.tags)}
    if form == "letters":
        own = RELEASES.get(task)
        prompt, letters = letters_prompt(data.tags, *((own.question,) if own else ()))
        shared.update(
            options=[tag_text(t) for t in data.tags], letters=list(letters), prompt=prompt
        )
    elif form == "likelihood":
        shared.update(prompt=tag_question(task), tag_texts=[tag_text(t) for t in data.tags])
    else:
        shared.update(prompt=gen_prompt(task, data.tags, protocol), tagging_protocol=protocol)
    docs = []
    windows = heard_windows(data, window)
    for clip, ref, tried, heard in zip(data.clips, refs, data.tried, windows, strict=True):
        doc = {
            "id": clip.id,
            **shared,
            "gold_tags": list(clip.tags),
            "gold_text": ", ".join(tag_text(t) for t in clip.tags),
            "audio_path": clip.path,
            "audio_ref": ref,
            "audio_track": clip.id,
            "audio_tried": list(tried) or [f"--metadata {audio_key}/{clip.path}"],
            "audio_pool": pool,
            "audio_fix": AUDIO_FIX[audio_key],
            "audio_window": heard,
            "audio_window_key": "tagging_seconds",
            "audio_window_trims": True,  # a stretch of the clip, as music_mc trims a clip
            "tagging_offset": window.offset,
        }
        if form == "letters":
            doc["gold"] = list(data.tags).index(clip.tags[0])
        docs.append(doc)
    return docs
