"""Output files written whole or not at all, locks on outputs, and append-only JSONL logs.

* :func:`atomic_write` (and :func:`write_text_atomic`, :func:`write_json_atomic`): every
  output file of the project is written to a temporary file with a unique name in the
  same folder, flushed to disk, then renamed over the target (``os.replace``). A reader
  sees the old file or the new one, never half of one; two writers never share a
  temporary file; an exception (or a kill) mid-write leaves the target untouched.
* :class:`OutputLock`: ``<output>.lock`` held with ``fcntl.flock`` (holding the writer's
  pid) while a command writes ``<output>``; a second command on the same output is refused
  with :class:`OutputBusyError` instead of redoing the same work.
* :func:`check_output_file` / :func:`check_output_folder`: an output path checked before
  any model loads (not a folder where a file is written, nor a file where a folder is;
  its folder can be made and written; the disk has room left), one line naming the flag,
  the path and the fix (:class:`OutputPathError`). A disk that fills up (or turns
  read-only) while :func:`atomic_write` writes is the same one line, and the target is
  left as it was.
* :func:`open_jsonl_for_append`: a JSONL log (one record per line, appended as work
  finishes) whose last line was cut by a kill, a power loss or a full disk is truncated
  back to its last complete line before anything is appended, so a torn record is never
  glued to the next one.

>>> import tempfile, pathlib
>>> target = pathlib.Path(tempfile.mkdtemp()) / "out.json"
>>> write_json_atomic(target, {"a": 1})
>>> target.read_text()
'{\\n "a": 1\\n}'
>>> sorted(p.name for p in target.parent.iterdir())
['out.json']
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from .errors import UserInputError

__all__ = [
    "atomic_write",
    "write_text_atomic",
    "write_json_atomic",
    "OutputLock",
    "OutputBusyError",
    "OutputPathError",
    "check_output_file",
    "check_output_folder",
    "repair_torn_tail",
    "open_jsonl_for_append",
]

logger = logging.getLogger(__name__)


@contextlib.contextmanager
def atomic_write(
    path: str | os.PathLike[str], mode: str = "w", *, encoding: str | None = "utf-8"
) -> Iterator[IO[Any]]:
    """A handle on a unique temporary file beside ``path``, renamed over ``path`` on success.

    On an exception the temporary file is removed and ``path`` is left as it was.

    Args:
        path: The file to (re)write; its folder is created when missing.
        mode: ``"w"`` (text) or ``"wb"`` (bytes).
        encoding: Text encoding (ignored for ``"wb"``).
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_write writes whole files: mode 'w' or 'wb', not {mode!r}")
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    handle = tempfile.NamedTemporaryFile(  # noqa: SIM115 - closed below, before the rename
        mode,
        dir=target.parent,
        prefix=f".{target.name}.",
        suffix=".tmp",
        delete=False,
        **({} if "b" in mode else {"encoding": encoding, "newline": ""}),
    )
    try:
        with handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        # the temporary file is private (0600); the output gets the mode of a plain
        # open(): what it had, else 0666 less the umask (0644 mostly), as the harness's
        os.chmod(handle.name, _output_mode(target))
        os.replace(handle.name, target)
    except BaseException as error:
        with contextlib.suppress(OSError):
            os.unlink(handle.name)
        if isinstance(error, OSError) and error.errno in _NO_ROOM:
            raise OutputPathError(
                f"could not write {target}: {os.strerror(error.errno)}; nothing of it was "
                "written (an older file there is as it was). Free some space, or write "
                "elsewhere, and rerun."
            ) from None
        raise


def _output_mode(target: Path) -> int:
    """The mode an output written in place would have: the existing file's, else the
    umask's default for a new file."""
    with contextlib.suppress(OSError):
        return target.stat().st_mode & 0o7777
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


#: Write errors that are the disk's, not the program's: one line, not a traceback.
_NO_ROOM = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG}
#: Free bytes below which an output's disk is taken as full before anything runs.
MIN_FREE_BYTES = 1 << 20


class OutputPathError(UserInputError, OSError):
    """An output path that cannot be written: checked before any model loads."""


def _nearest_existing(path: Path) -> Path:
    return next(p for p in (path, *path.parents) if p.exists() or p == p.parent)


def _check_writable_place(path: Path, flag: str) -> None:
    """The folder ``path`` goes in can be made and written, with room left."""
    where = _nearest_existing(path.parent)
    if not where.is_dir():
        raise OutputPathError(
            f"{flag} {path}: {where} is a file, so no folder can be made there. Choose "
            f"another {flag}, or move that file away."
        )
    if not os.access(where, os.W_OK | os.X_OK):
        raise OutputPathError(
            f"{flag} {path}: {where} cannot be written (read-only, or not yours). Choose "
            f"another {flag} on a writable disk."
        )
    try:
        stats = os.statvfs(where)
    except (OSError, AttributeError):  # no statvfs (Windows): the write says it
        return
    free = stats.f_bavail * stats.f_frsize
    if free < MIN_FREE_BYTES:
        raise OutputPathError(
            f"{flag} {path}: the disk of {where} is full ({free} bytes free). Free some "
            f"space, or choose another {flag}."
        )


def check_output_file(path: str | os.PathLike[str], *, flag: str = "--output") -> Path:
    """``path`` can be written as a file (checked before any work; nothing is created).

    Raises:
        OutputPathError: ``path`` is a folder, its folder cannot be made or written, or
            its disk is full.
    """
    path = Path(path).expanduser()
    if path.is_dir():
        raise OutputPathError(
            f"{flag} {path} is a folder; give a file name (e.g. {path / 'out.jsonl'})."
        )
    _check_writable_place(path, flag)
    return path


def check_output_folder(path: str | os.PathLike[str], *, flag: str = "--out") -> Path:
    """``path`` can be made (or is) a folder and written into (nothing is created).

    Raises:
        OutputPathError: ``path`` is a file, cannot be made or written, or its disk is
            full.
    """
    path = Path(path).expanduser()
    if path.exists() and not path.is_dir():
        raise OutputPathError(f"{flag} {path} is a file; give a folder to write the outputs in.")
    _check_writable_place(path / "x", flag)
    return path


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` atomically (:func:`atomic_write`)."""
    with atomic_write(path) as handle:
        handle.write(text)


def write_json_atomic(path: str | os.PathLike[str], payload: Any, *, indent: int = 1) -> None:
    """Write ``payload`` as JSON (UTF-8, non-ASCII kept) to ``path`` atomically."""
    write_text_atomic(path, json.dumps(payload, indent=indent, ensure_ascii=False))


class OutputBusyError(UserInputError, RuntimeError):
    """Another process is writing the same output."""


class OutputLock:
    """``<output>.lock``, held (``fcntl.flock``, exclusive, non-blocking) while writing ``output``.

    The lock file holds the pid of its holder and is removed when the holder leaves; the
    lock is released when the holder exits, even by a kill, so a lock file left by a
    killed run never blocks a later one.

    Args:
        output: The output the lock protects.
        command: The command's name, for the message (``"lm-eval-rul build"``).
        flag: The option naming the output, for the message (``"--output"``).

    Raises:
        OutputBusyError: on entering, when another process holds the lock.
    """

    def __init__(
        self,
        output: str | os.PathLike[str],
        *,
        command: str = "lm-eval-rul",
        flag: str = "--output",
    ) -> None:
        self.output = Path(output)
        self.path = self.output.with_name(self.output.name + ".lock")
        self.command = command
        self.flag = flag
        self._handle: IO[str] | None = None

    def __enter__(self) -> OutputLock:
        try:
            import fcntl
        except ImportError:  # Windows: no advisory locks here; run one writer at a time
            return self
        self.path.parent.mkdir(parents=True, exist_ok=True)
        while True:
            handle = self.path.open("a+", encoding="utf-8")
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                handle.seek(0)
                holder = handle.read().strip() or "unknown"
                handle.close()
                raise OutputBusyError(
                    f"{self.output} is busy: another {self.command} (pid {holder}) is writing "
                    f"it (lock {self.path}). Wait for that run to finish (a rerun then resumes "
                    f"from its checkpoints), or choose another {self.flag}."
                ) from None
            if self._still_named(handle):
                break
            handle.close()  # its holder removed it on leaving: lock the new file instead
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        self._handle = handle
        return self

    def _still_named(self, handle: IO[str]) -> bool:
        """Whether the locked file is still the one at :attr:`path` (not removed meanwhile)."""
        try:
            return os.stat(self.path).st_ino == os.fstat(handle.fileno()).st_ino
        except FileNotFoundError:
            return False

    def __exit__(self, *_exc: Any) -> None:
        if self._handle is None:
            return
        import fcntl

        with contextlib.suppress(OSError):
            self.path.unlink()  # while still held: no lock file is left behind
        fcntl.flock(self._handle.fileno(), fcntl.LOCK_UN)
        self._handle.close()
        self._handle = None


def repair_torn_tail(path: str | os.PathLike[str]) -> int:
    """Cut a JSONL file back to its last complete line; returns the bytes removed.

    A last line without its newline was cut mid-write (a kill, a power loss, a full disk).
    When it still parses as JSON only its newline was lost, and it is completed instead
    (0 bytes removed). Warns, naming the file, when something is removed.
    """
    path = Path(path)
    with path.open("rb+") as handle:
        size = handle.seek(0, os.SEEK_END)
        if size == 0:
            return 0
        handle.seek(size - 1)
        if handle.read(1) == b"\n":
            return 0
        # find the start of the last line, reading backwards in blocks
        position, tail = size, b""
        while position > 0 and b"\n" not in tail:
            step = min(1 << 16, position)
            position -= step
            handle.seek(position)
            tail = handle.read(step) + tail
        cut = tail.rfind(b"\n")
        start = position + cut + 1 if cut >= 0 else 0
        handle.seek(start)
        last = handle.read()
        try:
            json.loads(last.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            handle.truncate(start)
            logger.warning(
                "%s: removed a partial last line (%d bytes, cut by an interrupted run); that "
                "record is recomputed",
                path,
                size - start,
            )
            return size - start
        handle.seek(size)
        handle.write(b"\n")
        return 0


def open_jsonl_for_append(path: str | os.PathLike[str]) -> IO[str]:
    """``path`` opened for appending text lines, after :func:`repair_torn_tail`."""
    path = Path(path)
    if path.is_file():
        repair_torn_tail(path)
    return path.open("a", encoding="utf-8")
