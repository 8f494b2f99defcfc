"""Clips a question file itself locates (:class:`~lm_eval_rul.questions.AudioLocation`):
an audio path column, or a cell of a dataset's ``Audio`` column.

A path is read inside ``audio_dir`` when given, else inside the question file's folder
(one line naming the item when it points outside both); a dataset cell becomes the clip
reference of that row (:func:`~.sources.hf_ref`), decoded from its bytes or its path by
the audio layer like any ``audio_hf_dataset`` row.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..paths import PathEscapeError, contained_path, is_contained
from .sources import file_ref, hf_ref

__all__ = ["carries_audio", "resolve_locations"]


def carries_audio(questions: Sequence[Any]) -> bool:
    """Whether any question says where its clip is."""
    return any(getattr(q, "audio", None) is not None for q in questions)


def _in_folder(root: str, path: str, qid: str, option: str) -> Path:
    if os.path.isabs(path) and is_contained(root, path):
        return Path(path)
    return contained_path(
        root,
        path,
        item=f"question id {qid!r}",
        option=option,
        fix="give relative paths inside the question file's folder, or --metadata audio_dir "
        "as the folder holding the files. Nothing was loaded.",
    )


def _file(q: Any, audio_dir: str | None) -> tuple[str | None, list[str]]:
    location = q.audio
    roots = [(audio_dir, "--metadata audio_dir")] if audio_dir else []
    roots.append((location.base or ".", "the question file's folder"))
    tried: list[str] = []
    escaped: PathEscapeError | None = None
    for root, option in roots:
        try:
            candidate = _in_folder(root, location.path, str(q.id), option)
        except PathEscapeError as error:
            escaped = escaped or error
            continue
        if candidate.is_file():
            return file_ref(candidate), []
        tried.append(str(candidate))
    if escaped is not None and not tried:
        raise escaped
    return None, tried


def resolve_locations(
    questions: Sequence[Any], metadata: Mapping[str, Any]
) -> list[tuple[str | None, list[str]]]:
    """Each question's clip reference from its own location, or None and what was tried
    (a question without a location: ``(nothing in its audio column)``)."""
    audio_dir = metadata.get("audio_dir")
    audio_dir = os.path.expanduser(str(audio_dir)) if audio_dir else None
    out: list[tuple[str | None, list[str]]] = []
    for q in questions:
        location = getattr(q, "audio", None)
        if location is None:
            out.append((None, ["(nothing in its audio column)"]))
        elif location.dataset is not None:
            out.append(
                (
                    hf_ref(
                        location.dataset,
                        str(location.split),
                        str(location.column),
                        int(location.row),
                    ),
                    [],
                )
            )
        else:
            out.append(_file(q, audio_dir))
    return out
