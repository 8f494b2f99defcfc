""":func:`check_audio_available`: every item without a clip named at once, before any model."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import AMBIGUOUS, AMBIGUOUS_HINT, MissingAudioError
from .registry import NOTHING, condition_named

__all__ = ["check_audio_available"]


def check_audio_available(docs: Iterable[Mapping[str, Any]], condition: str = "original") -> None:
    """Raise one :class:`MissingAudioError` naming every item without audio.

    Call it before the model is loaded. Conditions that read no file (``reads`` is
    ``nothing``: ``noise``, ``silence``, ``none``) always pass. Items are counted once per
    (benchmark, id): the folds of one benchmark repeat an id, while two benchmarks (RUL and
    MuChoMusic share ids) each count theirs; with several benchmarks the ids are named
    ``benchmark:id``.

    Raises:
        UnknownConditionError: ``condition`` names no registered condition.
        MissingAudioError: Some items have no clip.
    """
    if condition_named(condition).reads == NOTHING:
        return
    found: dict[tuple[str, str], list[str] | None] = {}  # None = has audio
    no_fields: set[tuple[str, str]] = set()
    fixes: dict[str, None] = {}  # a task's own advice (``audio_fix``: its own keys), in order
    for doc in docs:
        item = (str(doc.get("benchmark", "")), str(doc.get("id")))
        if item in found:  # the same question in several folds
            continue
        if "audio_ref" not in doc:
            no_fields.add(item)
            found[item] = []
        elif not doc.get("audio_ref"):
            found[item] = list(doc.get("audio_tried") or [])
            if doc.get("audio_fix"):
                fixes[str(doc["audio_fix"])] = None
        else:
            found[item] = None
    missing_items = {item: tried for item, tried in found.items() if tried is not None}
    if not missing_items:
        return
    several = len({benchmark for benchmark, _ in found}) > 1
    missing = {
        (f"{benchmark}:{item_id}" if several else item_id): tried
        for (benchmark, item_id), tried in missing_items.items()
    }
    hint = ""
    if any(AMBIGUOUS in t for tried in missing_items.values() for t in tried):
        hint = AMBIGUOUS_HINT
    elif fixes:
        hint = " ".join(fixes)
    elif len(no_fields) == len(missing_items):
        hint = (
            f"Fix: audio={condition} needs the clips: pass --metadata "
            "'{\"audio_dir\": DIR}' (files {id}.wav|flac|mp3|ogg|m4a or {track}.ext) or "
            "'{\"audio_hf_dataset\": PATH_OR_NAME}', or use audio=noise|silence|none."
        )
    raise MissingAudioError(missing, total=len(found), hint=hint)
