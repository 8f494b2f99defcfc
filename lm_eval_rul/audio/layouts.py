"""Where each document's clip is: the three layouts, chosen with ``--metadata``.

* ``audio_dir`` with one file per question id, ``{audio_dir}/{id}.{ext}`` (the
  RUListening release convention);
* ``audio_dir`` with one file per track, ``{audio_dir}/{track}.{ext}``, track = the
  MuChoMusic ``dataset_identifier`` stem (RUL rows need ``muchomusic_csv`` to know it);
* the question file's own audio column (:mod:`.located`: a path, read inside
  ``audio_dir`` or else the file's folder; or a dataset's ``Audio`` cell);
* ``audio_hf_dataset``: a Hugging Face dataset with an audio column (a
  ``save_to_disk`` folder, parquet file(s) or a hub name; ``audio_column`` default
  ``context``, ``audio_split`` default ``test``), joined on the normalised question
  text (``audio_question_column``, default ``instruction``); rows sharing a question
  are told apart by every field both sides have (:func:`match_hf_rows`: the correct
  answer, the option texts, a caption or track column); or joined on an id column with
  ``audio_id_column``. Questions that stay ambiguous are named in the missing-audio
  error; ``audio_skip_ambiguous: true`` leaves them out of the run (with a warning
  naming them) and lets the rest run.

``audio_layout`` (``auto`` | ``id`` | ``track``) forces a file layout; ``auto`` tries
the id file first, then the track file. Extensions tried: :data:`AUDIO_EXTENSIONS`.

:func:`attach_audio` adds to each document ``audio_ref``, ``audio_track``,
``audio_tried`` and ``audio_pool`` (read by :mod:`.conditions`).
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..paths import contained_path
from ..questions import normalize_answer
from ..questions.metadata_naming import metadata_key
from .conditions import CLIP_IDENTITY, register_clip_pool
from .errors import AMBIGUOUS, AudioError
from .hf_rows import match_hf_rows, resolve_hf_rows
from .located import carries_audio, resolve_locations
from .sources import file_ref

__all__ = [
    "AUDIO_EXTENSIONS",
    "AUDIO_METADATA_KEYS",
    "AMBIGUOUS",
    "attach_audio",
    "match_hf_rows",
    "track_identities",
]

#: The ``--metadata`` keys :func:`attach_audio` reads (the layouts above).
AUDIO_METADATA_KEYS: tuple[str, ...] = (
    "audio_dir",
    "audio_layout",
    "audio_hf_dataset",
    "audio_split",
    "audio_column",
    "audio_id_column",
    "audio_question_column",
    "audio_skip_ambiguous",
)

logger = logging.getLogger(__name__)

AUDIO_EXTENSIONS: tuple[str, ...] = ("wav", "flac", "mp3", "ogg", "m4a")


def _candidates(audio_dir: Path, stem: str, item: str) -> list[Path]:
    """The files ``{audio_dir}/{stem}.{ext}``; :class:`PathEscapeError` when the stem (an
    id or track from the data) leads out of ``audio_dir``."""
    return [
        contained_path(
            audio_dir,
            f"{stem}.{ext}",
            item=item,
            option="--metadata audio_dir",
            fix="question ids and tracks are used as file names inside audio_dir; correct "
            "them in the question file (or MuChoMusic CSV). Nothing was loaded.",
        )
        for ext in AUDIO_EXTENSIONS
    ]


def _present(path: Path, audio_dir: Path, names: frozenset[str]) -> bool:
    """Whether ``path`` exists: from the folder's listing when it is directly inside."""
    return path.name in names if path.parent == audio_dir else path.is_file()


def _listing(audio_dir: str) -> frozenset[str]:
    return _listing_cached(audio_dir, os.stat(audio_dir).st_mtime_ns)


@functools.lru_cache(maxsize=16)
def _listing_cached(audio_dir: str, mtime_ns: int) -> frozenset[str]:
    return frozenset(os.listdir(audio_dir))


def _resolve_files(
    questions: Sequence[Any], audio_dir: Path, layout: str
) -> list[tuple[str | None, list[str]]]:
    if not audio_dir.is_dir():
        raise FileNotFoundError(
            f"{metadata_key('audio_dir')}={str(audio_dir)!r}: no such directory. Give the folder "
            "holding one audio file per question id or per MuChoMusic track."
        )
    if layout not in ("auto", "id", "track"):
        raise AudioError(f"--metadata audio_layout={layout!r}: use auto, id or track")
    names = _listing(str(audio_dir.resolve()))
    out: list[tuple[str | None, list[str]]] = []
    for q in questions:
        stems = []
        if layout in ("auto", "id"):
            stems.append(str(q.id))
        if layout in ("auto", "track") and q.track:
            stems.append(str(q.track))
        tried: list[Path] = [
            p for stem in stems for p in _candidates(audio_dir, stem, f"question id {q.id!r}")
        ]
        found = next((p for p in tried if _present(p, audio_dir, names)), None)
        if found is None and layout in ("track",) and not q.track:
            out.append((None, [f"{audio_dir}/<track>.ext (track unknown: pass muchomusic_csv)"]))
            continue
        out.append((file_ref(found) if found else None, [] if found else [str(p) for p in tried]))
    return out



def _flag(metadata: Mapping[str, Any], key: str) -> bool:
    """A true/false ``--metadata`` value: a JSON boolean, 0/1, or its text; nothing else."""
    value = metadata.get(key, False)
    if value is None or isinstance(value, bool):
        return bool(value)
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in (
        "true",
        "false",
        "1",
        "0",
        "yes",
        "no",
        "",
    ):
        return value.strip().lower() in ("true", "1", "yes")
    raise AudioError(f"--metadata {key}={value!r}: use true or false")


def attach_audio(
    docs: Sequence[dict[str, Any]],
    questions: Sequence[Any],
    metadata: Mapping[str, Any],
    *,
    known_options: Mapping[str, Sequence[str]] | None = None,
) -> list[dict[str, Any]]:
    """Add the audio fields to each document (in place) and return the documents.

    Args:
        docs: Harness documents, one per question of ``questions`` (matched on ``id``).
        questions: The benchmark's FULL question list (the ``random`` pool is built from
            it, so ``--limit`` does not change the draw); items need ``id``, ``question``,
            ``correct_answer`` and ``track`` attributes.
        metadata: ``--metadata`` (``audio_dir``, ``audio_layout``, ``audio_hf_dataset``,
            ``audio_split``, ``audio_column``, ``audio_id_column``,
            ``audio_question_column``, ``audio_skip_ambiguous``).
        known_options: Question id -> more option texts it is known by (MuChoMusic's own
            options of a RUL row), to tell Hugging Face rows apart (:func:`match_hf_rows`).

    Documents get ``audio_ref`` (a clip reference, or ``None`` when missing),
    ``audio_track`` (the track identity, see :func:`track_identities`), ``audio_tried``
    (paths tried when missing) and ``audio_pool`` (the clip list id). With
    ``audio_skip_ambiguous`` the documents of questions whose Hugging Face row stays
    ambiguous are left out of the returned list, with a warning naming them.
    """
    skip_ambiguous = _flag(metadata, "audio_skip_ambiguous")
    if metadata.get("audio_hf_dataset"):
        resolved = resolve_hf_rows(questions, metadata, known_options or {})
    elif carries_audio(questions):  # the question file's own audio column
        resolved = resolve_locations(questions, metadata)
    elif metadata.get("audio_dir"):
        audio_dir = Path(os.path.expanduser(str(metadata["audio_dir"])))
        resolved = _resolve_files(questions, audio_dir, str(metadata.get("audio_layout", "auto")))
    else:
        return list(docs)
    identities = track_identities(questions, [ref for ref, _ in resolved])
    by_id: dict[str, tuple[str | None, str, list[str]]] = {}
    pool: list[tuple[str, str]] = []
    for q, (ref, tried), track in zip(questions, resolved, identities, strict=True):
        by_id[str(q.id)] = (ref, track, tried)
        if ref:
            pool.append((ref, track))
    pool_id = register_clip_pool(pool)
    ambiguous = {
        qid for qid, (_, _, tried) in by_id.items() if any(AMBIGUOUS in t for t in tried)
    }
    if skip_ambiguous and ambiguous:
        listed = ", ".join(sorted(ambiguous, key=lambda x: (len(x), x)))
        logger.warning(
            "audio_skip_ambiguous: leaving out %d question(s) whose clip in %s is ambiguous "
            "(same question text, and no shared field tells the rows apart): ids %s",
            len(ambiguous),
            metadata.get("audio_hf_dataset"),
            listed,
        )
        docs = [doc for doc in docs if str(doc["id"]) not in ambiguous]
    for doc in docs:
        ref, track, tried = by_id.get(str(doc["id"]), (None, f"id:{doc['id']}", []))
        doc["audio_ref"] = ref
        doc["audio_track"] = track
        doc["audio_tried"] = tried
        doc["audio_pool"] = pool_id
    return list(docs)


def _caption_identity(caption: str | None) -> str | None:
    text = normalize_answer(caption or "")
    if not text:
        return None
    return "caption:" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


def track_identities(questions: Sequence[Any], refs: Sequence[str | None]) -> list[str]:
    """What counts as "the same track" for the ``random`` condition, one per question.

    In order: the MuChoMusic track (``q.track``); else the track of another question with
    the same normalised caption; else the caption itself (the release's 644 captions are
    its 644 tracks, so questions on one clip share it even without ``muchomusic_csv``);
    only when neither is known, the clip reference (``clip:...``, a file per question
    then counts as its own track, which :func:`random_clip` warns about) or the id.

    Args:
        questions: Items with ``id``, ``track`` and ``caption`` attributes.
        refs: Each question's clip reference (``None`` when missing).
    """
    caption_track: dict[str, str] = {}
    for q in questions:
        caption = _caption_identity(getattr(q, "caption", None))
        if q.track and caption:
            caption_track.setdefault(caption, str(q.track))
    out = []
    for q, ref in zip(questions, refs, strict=True):
        caption = _caption_identity(getattr(q, "caption", None))
        if q.track:
            out.append(str(q.track))
        elif caption:
            out.append(caption_track.get(caption, caption))
        else:
            out.append(f"{CLIP_IDENTITY}{ref}" if ref else f"id:{q.id}")
    return out
