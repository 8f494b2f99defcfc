"""Check the audio files of factual items before any model loads.

:func:`check_audio_files` looks at every item's file once: it must exist, be a
non-empty audio file whose header soundfile (or librosa's fallback for mp3) can read,
and match its expected checksum when one is known (FMA's ``checksums``). Every problem
is collected and raised at once as an
:class:`~lm_eval_rul.factual.errors.AudioFilesError` naming each file, with the count;
or, with ``on_problem="skip"``, the failing items are dropped and reported. Durations
read from the headers replace the metadata's.
"""

from __future__ import annotations

import hashlib
import logging
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ..errors import AudioFilesError
from ..items import Item

__all__ = ["CheckedItems", "check_audio_files", "audio_duration", "file_digest"]

logger = logging.getLogger(__name__)

_DIGESTS = {32: "md5", 40: "sha1", 64: "sha256"}


@dataclass(frozen=True)
class CheckedItems:
    """Items whose files passed, and the problems of the others.

    Attributes:
        items: Items with a usable file, ``duration`` from the file header.
        problems: ``{kind: [(item id, path, detail), ...]}`` (kinds of
            :data:`~lm_eval_rul.factual.errors.PROBLEM_KINDS`); empty when all passed.
    """

    items: tuple[Item, ...]
    problems: dict[str, list[tuple[str, str, str]]]

    @property
    def n_problems(self) -> int:
        return sum(len(v) for v in self.problems.values())


def file_digest(path: str | Path, algorithm: str) -> str:
    """Hex digest of a file, read in 1 MiB blocks."""
    digest = hashlib.new(algorithm)
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def audio_duration(path: str | Path) -> float:
    """Seconds of audio from the file header (soundfile; librosa/audioread as fallback).

    Raises:
        RuntimeError: Neither can read the file (the message says why).
    """
    import soundfile as sf

    try:
        return float(sf.info(str(path)).duration)
    except Exception as first:  # any decoder failure means "unreadable"
        try:
            import librosa

            with warnings.catch_warnings():  # librosa warns that it falls back to audioread
                warnings.simplefilter("ignore")
                return float(librosa.get_duration(path=str(path)))
        except Exception:
            raise RuntimeError(str(first).splitlines()[0] if str(first) else "unreadable") from None


def _problem(item: Item, verify_checksums: bool) -> tuple[str, str] | float:
    """(kind, detail) of the item's file, or its duration when it is fine."""
    path = item.audio
    if not path.is_file():
        return "missing", ""
    if path.stat().st_size == 0:
        return "unreadable", "empty file"
    if verify_checksums and item.checksum:
        algorithm = _DIGESTS.get(len(item.checksum))
        if algorithm is None:
            return "checksum mismatch", f"unknown digest {item.checksum!r}"
        actual = file_digest(path, algorithm)
        if actual != item.checksum.lower():
            return "checksum mismatch", f"{algorithm} {actual}, expected {item.checksum}"
    try:
        duration = audio_duration(path)
    except RuntimeError as error:
        return "unreadable", str(error)
    if duration <= 0:
        return "unreadable", "no audio frames"
    return duration


def check_audio_files(
    items: Sequence[Item],
    *,
    dataset: str,
    verify_checksums: bool = True,
    on_problem: str = "raise",
) -> CheckedItems:
    """Check every item's file (see the module docstring).

    Args:
        items: Items to check (a sample: only its files are read).
        dataset: Name for messages (``"FMA (fma_small)"``).
        verify_checksums: Hash files that have an expected checksum (FMA).
        on_problem: ``"raise"`` (default) or ``"skip"`` (drop failing items, log a
            warning with the count).

    Raises:
        AudioFilesError: Some files failed and ``on_problem="raise"``.
        ValueError: ``on_problem`` is neither.
    """
    if on_problem not in ("raise", "skip"):
        raise ValueError(f"on_problem must be 'raise' or 'skip', got {on_problem!r}")
    good: list[Item] = []
    problems: dict[str, list[tuple[str, str, str]]] = {}
    for item in items:
        result = _problem(item, verify_checksums)
        if isinstance(result, tuple):
            problems.setdefault(result[0], []).append((item.id, str(item.audio), result[1]))
        else:
            good.append(replace(item, duration=result))
    checked = CheckedItems(tuple(good), problems)
    if problems and on_problem == "raise":
        raise AudioFilesError(problems, total=len(items), dataset=dataset)
    if problems:
        logger.warning(
            "%s: skipped %d of %d items whose audio is missing, unreadable or fails its checksum",
            dataset,
            checked.n_problems,
            len(items),
        )
    return checked
