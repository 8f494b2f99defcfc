"""Audio pre-flight: every clip a run will play is looked at before any model loads.

A clip that cannot be read ends a run where it is first decoded, after minutes of model
loading and possibly hours of work. :func:`preflight_clips` looks at every clip once,
up front, and raises ONE :class:`UnreadableAudioError` naming every empty or unreadable
file, with the count:

* ``header`` (default): the file exists, is not empty, and its header says it holds
  samples (``soundfile.info``; for mp3/m4a that soundfile cannot read, audioread, which
  opens the file with ffmpeg and reads its header without decoding). Cheap: a few
  milliseconds per file.
* ``decode``: every clip is fully decoded (:func:`~lm_eval_rul.audio.decoding.decode_audio`),
  which also finds files truncated or corrupt past their header. Costs a full decode per
  clip (decoded clips are not kept).
* ``none``: no check.

The clips are those the condition reads: each document's own clip (``original``,
``reversed``) or, for ``random``, the benchmark's whole pool (any of them may be drawn).
Any plugin task whose documents carry the fields of
:func:`~lm_eval_rul.audio.layouts.attach_audio` is covered.
"""

from __future__ import annotations

import errno
import io
import logging
import os
import re
import tempfile
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..files import write_json_atomic
from .clips import clip_parts
from .conditions import CLIP_POOL, OWN_CLIP, condition_named, pool_refs
from .errors import AudioDecodeError
from .not_audio import text_instead_of_audio
from .sources import LINK_LOOP, clip_source, ref_name

__all__ = [
    "AUDIO_CHECKS",
    "UnreadableAudioError",
    "clip_header_problem",
    "preflight_clips",
    "refs_to_check",
]

logger = logging.getLogger(__name__)

#: The levels of ``--audio_check``.
AUDIO_CHECKS: tuple[str, ...] = ("header", "decode", "none")
#: Files named in the message; the full list goes to a file when there are more.
_SHOWN = 20


class UnreadableAudioError(AudioDecodeError):
    """Clips are empty or unreadable; ``problems`` maps each clip's name to the reason."""

    def __init__(self, problems: Mapping[str, str], *, total: int, listing: Path | None = None):
        self.problems = dict(problems)
        names = list(self.problems)
        lines = [f"{len(names)} of {total} audio files cannot be used:"]
        lines += [f"  {name}: {self.problems[name]}" for name in names[:_SHOWN]]
        if len(names) > _SHOWN:
            where = f" (all {len(names)} listed in {listing})" if listing else ""
            lines.append(f"  ... and {len(names) - _SHOWN} more{where}")
        lines.append(
            "Fix: replace these files (re-download or re-convert them, e.g. to wav), point "
            "--metadata audio_dir elsewhere, or run with audio=noise|silence|none, which "
            "read no files. Nothing was loaded."
        )
        super().__init__("\n".join(lines))


def _info_soundfile(source: str | bytes) -> tuple[int, int]:
    """(frames, sampling rate) from the header, read by soundfile."""
    import soundfile as sf

    info = sf.info(io.BytesIO(source) if isinstance(source, bytes) else source)
    return int(info.frames), int(info.samplerate)


def _info_audioread(source: str | bytes, suffix: str) -> tuple[int, int]:
    """(frames, sampling rate) from the header, read by audioread (ffmpeg for m4a)."""
    import audioread

    def read(path: str) -> tuple[int, int]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with audioread.audio_open(path) as handle:
                return int(round(handle.duration * handle.samplerate)), int(handle.samplerate)

    if isinstance(source, bytes):
        with tempfile.NamedTemporaryFile(suffix=suffix or ".audio") as tmp:
            tmp.write(source)
            tmp.flush()
            return read(tmp.name)
    return read(source)


def _first_line(error: BaseException) -> str:
    """The reader's own reason, without the path it repeats."""
    if type(error).__name__ == "NoBackendError":
        return "no decoder for this format (install ffmpeg)"
    lines = str(error).strip().splitlines()
    text = re.sub(r"^Error opening .*?: ", "", lines[0]) if lines else ""
    text = re.sub(r"^Error : ", "", text).strip().rstrip(".")
    if text.startswith("File does not exist or is not a regular file"):
        text = "format not recognised"  # libsndfile's words for a file it cannot parse
    return text or type(error).__name__


def _file_problem(source: str | bytes) -> str | None:
    """Why a clip's file (or bytes) holds nothing to read: a folder, a link loop, a file
    that cannot be opened, no bytes; None otherwise (both levels ask this first)."""
    if isinstance(source, bytes):
        return "empty (0 bytes)" if not source else None
    if os.path.isdir(source):
        return "is a folder, not an audio file"
    try:
        size = os.path.getsize(source)
    except OSError as error:
        if error.errno == errno.ELOOP:
            return LINK_LOOP
        return f"cannot be read ({error.strerror or error})"
    return "empty (0 bytes)" if size == 0 else None


def clip_header_problem(ref: str) -> str | None:
    """Why the clip of ``ref`` cannot be played (read from its header), or ``None``.

    Args:
        ref: A clip reference (:mod:`lm_eval_rul.audio.sources`).
    """
    try:
        source, name = clip_source(ref)
    except AudioDecodeError as error:
        return str(error)
    problem = _file_problem(source)
    if problem is not None:
        return problem
    text = text_instead_of_audio(source)
    if text:
        return f"{text}; replace it with the clip"
    suffix = Path(name).suffix.lower()
    try:
        frames, rate = _info_soundfile(source)
    except Exception as first:  # noqa: BLE001 - any reader failure means "try the fallback"
        if suffix not in (".mp3", ".m4a", ".mp4", ".aac", ".wma", ""):
            kind = suffix.lstrip(".") or "audio"
            return f"not a readable {kind} file (soundfile: {_first_line(first)})"
        try:
            frames, rate = _info_audioread(source, suffix)
        except Exception as second:  # noqa: BLE001
            return (
                f"not a readable audio file (soundfile: {_first_line(first)}; audioread: "
                f"{_first_line(second)})"
            )
    if frames <= 0 or rate <= 0:
        return f"holds no samples ({frames} frames at {rate} Hz)"
    return None


def _decode_problem(ref: str, sampling_rate: int) -> str | None:
    from .decoding import decode_audio

    try:
        source, name = clip_source(ref)
        problem = _file_problem(source)
        if problem is not None:
            return problem
        with warnings.catch_warnings():  # over-long clips are trimmed later, with a warning
            warnings.simplefilter("ignore")
            decode_audio(source, sampling_rate=sampling_rate, name=name)
    except AudioDecodeError as error:  # "audio file X: cannot be decoded (why). Check ..."
        return str(error).split(": ", 1)[-1].split(". Check the file")[0]
    return None


def refs_to_check(docs: Iterable[Mapping[str, Any]], condition: str) -> list[str]:
    """The distinct clip references a run under ``condition`` may play, in first-seen order.

    What the condition ``reads``: the document's own clip (``original``, ``reversed``), or
    every clip of each document's benchmark pool (``random``: the draw may land on any of
    them); the conditions that read nothing: none.
    """
    reads = condition_named(condition).reads
    refs: dict[str, None] = {}
    pools: set[str] = set()
    for doc in docs:
        if reads == OWN_CLIP:
            for part in clip_parts(doc):  # every clip of a several-clip document
                if part.get("audio_ref"):
                    refs.setdefault(str(part["audio_ref"]))
        elif reads == CLIP_POOL and doc.get("audio_pool") and doc["audio_pool"] not in pools:
            pools.add(doc["audio_pool"])
            for ref in pool_refs(doc["audio_pool"]):
                refs.setdefault(ref)
    return list(refs)


def preflight_clips(
    refs: Iterable[str],
    *,
    level: str = "header",
    sampling_rate: int = 16_000,
    progress: bool = True,
    listing: str | os.PathLike[str] | None = None,
) -> int:
    """Check every clip of ``refs`` at ``level``; returns how many were checked.

    Args:
        refs: Clip references (duplicates are checked once).
        level: One of :data:`AUDIO_CHECKS`.
        sampling_rate: Rate the ``decode`` level resamples to (the model's, if known).
        progress: Show a progress bar.
        listing: Where to write the full list of bad files when there are too many to
            name in the message (default: a file in the temporary folder).

    Raises:
        ValueError: ``level`` is not one of :data:`AUDIO_CHECKS`.
        UnreadableAudioError: Some clips are empty or unreadable (all of them named).
    """
    if level not in AUDIO_CHECKS:
        raise ValueError(f"audio check must be one of {AUDIO_CHECKS}, got {level!r}")
    unique = list(dict.fromkeys(refs))
    if level == "none" or not unique:
        return 0
    from ..progress import progress_bar

    problems: dict[str, str] = {}
    bar = progress_bar(len(unique), f"audio check ({level})", enabled=progress, unit="clip")
    for ref in unique:
        problem = clip_header_problem(ref)
        if problem is None and level == "decode":
            problem = _decode_problem(ref, sampling_rate)
        if problem is not None:
            problems[ref_name(ref)] = problem
        bar.update(1)
    bar.close()
    if problems:
        path = None
        if len(problems) > _SHOWN:
            path = Path(listing or Path(tempfile.gettempdir()) / "lm_eval_rul_bad_audio.json")
            write_json_atomic(path, problems)
        raise UnreadableAudioError(problems, total=len(unique), listing=path)
    logger.info("audio check (%s): all %d clips readable", level, len(unique))
    return len(unique)
