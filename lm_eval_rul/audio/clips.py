"""Documents that ask about several clips (MMAU-Pro: a question over two recordings).

Such a document carries :data:`CLIPS_FIELD`: a JSON list of one part per clip, in the
order the model hears them. Each part is a document of its own for the audio conditions
(``id``, ``audio_ref``, ``audio_track``, ``audio_pool``, ``audio_tried``): the first part's
``id`` is the document's, the others' ``{id}#{index}``, so ``noise`` draws one seeded
waveform per clip (seeded by the item and the clip's place) and ``random`` replaces each
clip by another clip of the pool. The document's own ``audio_ref`` fields are its first
clip's, so code that reads one clip per document still finds one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["CLIPS_FIELD", "clip_parts", "part_id"]

#: The document field listing a several-clip document's clips (JSON: Arrow needs one shape).
CLIPS_FIELD = "audio_clips"


def part_id(item_id: str, index: int) -> str:
    """The ``id`` the audio conditions read for clip ``index`` of item ``item_id``."""
    return item_id if index == 0 else f"{item_id}#{index}"


def clip_parts(doc: Mapping[str, Any]) -> tuple[Mapping[str, Any], ...]:
    """The parts the model hears for ``doc``, in order: its listed clips, else ``doc``."""
    listed = doc.get(CLIPS_FIELD)
    if not listed:
        return (doc,)
    parts = json.loads(listed) if isinstance(listed, str) else list(listed)
    return tuple(parts) if parts else (doc,)
