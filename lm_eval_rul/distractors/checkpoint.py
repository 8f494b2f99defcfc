"""Checkpoints of the build's stages: one JSON line per finished question, resumable.

Also the small helpers every stage shares: atomic JSON writes, file digests and secret
redaction of ``model_args`` (:mod:`lm_eval_rul.masking`'s, re-exported). The retry policy
of the generator's calls is the package's one (:mod:`lm_eval_rul.retries`), re-exported.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path
from typing import Any

from ..errors import UserInputError
from ..files import (
    open_jsonl_for_append,
    repair_torn_tail,
    write_json_atomic,
    write_text_atomic,
)
from ..masking import is_secret_arg, redact_args
from ..questions.reading import file_digest as read_file_digest
from ..retries import error_text, permanent_error, with_retries

__all__ = [
    "CHECKPOINT_FORMAT",
    "Checkpoint",
    "CheckpointMismatch",
    "file_digest",
    "fingerprint_digest",
    "redact_args",
    "is_secret_arg",
    "permanent_error",
    "error_text",
    "with_retries",
    "write_json",
]

logger = logging.getLogger(__name__)

CHECKPOINT_FORMAT = "lm-eval-rul build checkpoint v1"


def file_digest(path: Path | None) -> str | None:
    """The file's digest (from the reading of it this command already did, if any)."""
    return None if path is None else read_file_digest(path)


def fingerprint_digest(fingerprint: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(fingerprint, sort_keys=True).encode()).hexdigest()[:16]


class CheckpointMismatch(UserInputError, RuntimeError):
    """A checkpoint on disk was written by a run with other arguments."""


class Checkpoint:
    """One JSON line per finished question, after a header naming the run's arguments.

    Args:
        path: The ``.ckpt.jsonl`` file.
        fingerprint: The arguments that decide the results; a file with another
            fingerprint is refused with :class:`CheckpointMismatch`.
    """

    def __init__(self, path: Path, fingerprint: dict[str, Any]) -> None:
        self.path = Path(path)
        self.fingerprint = fingerprint
        self.records: dict[str, dict[str, Any]] = {}
        if self.path.is_file():  # a line cut by an interruption: gone before we append
            repair_torn_tail(self.path)
        if self.path.is_file() and self.path.stat().st_size > 0:
            self._load()
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            header = {"format": CHECKPOINT_FORMAT, "fingerprint": fingerprint}
            write_text_atomic(self.path, json.dumps(header) + "\n")

    def _load(self) -> None:
        lines = self.path.read_text(encoding="utf-8").splitlines()
        try:
            header = json.loads(lines[0])
        except (json.JSONDecodeError, IndexError):
            header = {}
        if header.get("format") != CHECKPOINT_FORMAT:
            raise CheckpointMismatch(
                f"{self.path} is not an lm-eval-rul build checkpoint; move it away or choose "
                "another --output."
            )
        theirs = header.get("fingerprint", {})
        mine = self.fingerprint
        differ = sorted(k for k in set(theirs) | set(mine) if theirs.get(k) != mine.get(k))
        if differ:
            shown = "; ".join(
                f"{k}: checkpoint {theirs.get(k)!r}, now {self.fingerprint.get(k)!r}"
                for k in differ
            )
            raise CheckpointMismatch(
                f"checkpoint {self.path} was made with other arguments ({shown}). Rerun with the "
                "same arguments to resume, or delete the checkpoint (or choose another --output) "
                "to start over."
            )
        for lineno, line in enumerate(lines[1:], start=2):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                raise CheckpointMismatch(
                    f"{self.path}: line {lineno} is not valid JSON (damaged, e.g. by an older "
                    f"version appending after a cut line). Delete line {lineno} (its question "
                    "is recomputed) or the file (every question is recomputed), then rerun."
                ) from None
            if not isinstance(record, dict) or "id" not in record:
                raise CheckpointMismatch(
                    f'{self.path}: line {lineno} is not a question record (no "id"); the '
                    f"file was edited or is not a build checkpoint. Delete line {lineno} (its "
                    "question is recomputed) or the file (every question is recomputed), or "
                    "choose another --output."
                )
            self.records[str(record["id"])] = record

    def done(self, question_id: str) -> bool:
        """Whether the question needs no more work (finished, or failed for good)."""
        record = self.records.get(question_id)
        return record is not None and not record.get("retryable", False)

    def add(self, record: dict[str, Any]) -> None:
        """Append one question's record and flush it to disk."""
        self.records[str(record["id"])] = record
        with open_jsonl_for_append(self.path) as handle:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
            handle.flush()
            os.fsync(handle.fileno())


def write_json(path: Path, payload: Any) -> None:
    """``payload`` as JSON, written atomically under a unique temporary name."""
    write_json_atomic(path, payload)
