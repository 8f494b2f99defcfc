"""Reading data files: strict UTF-8, linear JSON parsing, each file read once per command.

Every question, pools and PI file of the project is read here, whatever the command:

* the bytes are decoded as UTF-8, strictly: a byte that is not UTF-8 (a Latin-1 ``é``
  is ``0xe9``) is one :class:`FileEncodingError` naming the file, the byte, its offset
  and its line, raised before anything loads;
* JSON objects are parsed with a duplicate-key check that is linear in the object's size
  (the released dict-of-dicts layout has one key per question);
* inside :func:`read_once` (every ``lm-eval-rul`` command runs in it) a file is read and
  parsed once, however many readers and checks look at it: the result is kept for the
  command under the file's (path, size, modification time, inode);
* reading a large file logs a line before it starts, and how long it took.

Callers must not modify what :func:`json_value`, :func:`jsonl_values` and
:func:`csv_table` return (it may be shared); readers copy the rows they change.
"""

from __future__ import annotations

import contextlib
import csv
import functools
import gc
import hashlib
import io
import json
import logging
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from .schema import DataValidationError

__all__ = [
    "FileEncodingError",
    "KeyedObject",
    "read_once",
    "reads_once",
    "read_text",
    "json_value",
    "jsonl_values",
    "csv_table",
    "csv_reader",
    "file_digest",
]

logger = logging.getLogger(__name__)

#: Files at least this large get a log line before they are read.
_ANNOUNCE_BYTES = 20 * 2**20
#: Reading (and parsing) that takes longer than this is logged with its time.
_SLOW_SECONDS = 3.0

T = TypeVar("T")
R = TypeVar("R")
P = ParamSpec("P")
_cache: dict[tuple[Any, ...], Any] | None = None


class FileEncodingError(DataValidationError):
    """A data file is not UTF-8 text."""


@contextlib.contextmanager
def read_once() -> Iterator[None]:
    """Within the block, each file is read and parsed once (kept by path, size, time, inode)."""
    global _cache
    previous = _cache
    _cache = {} if previous is None else previous
    try:
        yield
    finally:
        _cache = previous


def reads_once(func: Callable[P, R]) -> Callable[P, R]:
    """Decorator: the whole call runs in :func:`read_once` (a public reader reads its file
    once even when called outside a command), with Python's cycle collector paused: a
    large file makes millions of objects and no cycles, and collections triggered by
    their count made reading grow faster than the file (1.3x per question at 80k)."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        collecting = gc.isenabled()
        gc.disable()
        try:
            with read_once():
                return func(*args, **kwargs)
        finally:
            if collecting:
                gc.enable()

    return wrapper


def _stamp(path: Path) -> tuple[Any, ...]:
    stat = path.stat()
    return str(path.resolve()), stat.st_size, stat.st_mtime_ns, stat.st_ino


def _cached(path: Path, what: str, make: Callable[[], T]) -> T:
    if _cache is None:
        return make()
    key = (*_stamp(path), what)
    if key not in _cache:
        _cache[key] = make()
    return _cache[key]


def _read_bytes(path: Path) -> bytes:
    size = path.stat().st_size
    if size >= _ANNOUNCE_BYTES:
        logger.info("reading %s (%.0f MB)", path, size / 2**20)
    return path.read_bytes()


def _decode(path: Path, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        offset = error.start
        line = data.count(b"\n", 0, offset) + 1
        byte = data[offset]
        raise FileEncodingError(
            path,
            [
                f"byte 0x{byte:02x} at offset {offset} (line {line}) is not UTF-8 (a Latin-1 "
                f"or Windows-1252 file?); save the file as UTF-8, e.g. iconv -f latin1 -t utf-8 "
                f"{path.name} > fixed{path.suffix}"
            ],
        ) from None


def _text_and_digest(path: Path) -> tuple[str, str]:
    data = _read_bytes(path)
    return _decode(path, data), hashlib.sha256(data).hexdigest()[:16]


def read_text(path: str | os.PathLike[str]) -> str:
    """The file's text, decoded as strict UTF-8 (a leading byte-order mark is dropped).

    Raises:
        FileEncodingError: naming the file, the first byte that is not UTF-8, its offset
            and line.
    """
    path = Path(path)
    text = _cached(path, "text", lambda: _text_and_digest(path))[0]
    return text[1:] if text.startswith("\ufeff") else text


def file_digest(path: str | os.PathLike[str]) -> str:
    """The first 16 hex digits of the file's SHA-256 (from the text read, when it was)."""
    path = Path(path)
    if _cache is not None and (*_stamp(path), "text") in _cache:
        return _cache[(*_stamp(path), "text")][1]
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:16]


class KeyedObject(dict):
    """A JSON object that remembers the keys it held more than once."""

    duplicate_keys: tuple[str, ...] = ()


def _keep_duplicate_keys(pairs: list[tuple[str, Any]]) -> KeyedObject:
    obj = KeyedObject()
    duplicates: dict[str, None] = {}
    for key, value in pairs:
        if key in obj:
            duplicates[key] = None
        obj[key] = value
    if duplicates:
        obj.duplicate_keys = tuple(duplicates)
    return obj


def _timed(path: Path, what: str, parse: Callable[[], T]) -> T:
    start = time.perf_counter()
    value = parse()
    seconds = time.perf_counter() - start
    if seconds > _SLOW_SECONDS:
        logger.info("read %s (%s) in %.1f s", path, what, seconds)
    return value


def _loads(text: str, **options: Any) -> Any:
    """``json.loads``, with nesting too deep for the parser (``RecursionError``) reported
    as the parse failure it is, so every reader names the file in one line."""
    try:
        return json.loads(text, **options)
    except RecursionError:
        raise json.JSONDecodeError(
            f"nested too deep to parse (more than {_DEEP} levels from here; a question file "
            "holds flat records)",
            text,
            _depth_position(text, _DEEP),
        ) from None


#: Nesting reported as the place a too-deep file goes wrong (no question file needs 10).
_DEEP = 100


def _depth_position(text: str, depth: int) -> int:
    """Where the brackets of ``text`` first open ``depth`` deep (strings skipped)."""
    level, in_string, escaped = 0, False, False
    for position, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            level += 1
            if level >= depth:
                return position
        elif char in "]}":
            level -= 1
    return 0


def json_value(path: str | os.PathLike[str]) -> Any:
    """The file parsed as one JSON value; objects are :class:`KeyedObject`.

    Raises:
        FileEncodingError: the file is not UTF-8.
        json.JSONDecodeError: it is not one JSON value.
    """
    path = Path(path)

    def parse() -> Any:
        text = read_text(path)
        hook = _keep_duplicate_keys
        return _timed(path, "JSON", lambda: _loads(text, object_pairs_hook=hook))

    return _cached(path, "json", parse)


def jsonl_values(path: str | os.PathLike[str]) -> list[tuple[int, Any]]:
    """``(line number, value)`` of each non-blank line; a line that is not JSON has its
    :class:`json.JSONDecodeError` as value."""
    path = Path(path)

    def parse() -> list[tuple[int, Any]]:
        values: list[tuple[int, Any]] = []
        for lineno, line in enumerate(read_text(path).splitlines(), start=1):
            if not line.strip():
                continue
            try:
                values.append((lineno, _loads(line, object_pairs_hook=_keep_duplicate_keys)))
            except json.JSONDecodeError as error:
                values.append((lineno, error))
        return values

    return _cached(path, "jsonl", lambda: _timed(path, "JSON lines", parse))


def csv_reader(text: str, *, delimiter: str = ",", header: bool = True) -> Any:
    """A :class:`csv.DictReader` (``header``) or :class:`csv.reader` over ``text``: every
    CSV and TSV of the project is parsed through here.

    The csv module refuses a cell above 128 KiB (``_csv.Error: field larger than field
    limit``), which a caption or a lyrics cell can exceed; no cell can be longer than the
    file holding it, so the limit is raised to the text's length for this file.
    """
    if len(text) > csv.field_size_limit():
        csv.field_size_limit(min(len(text) + 1, _C_LONG_MAX))
    stream = io.StringIO(text, newline="")
    if header:
        return csv.DictReader(stream, delimiter=delimiter)
    return csv.reader(stream, delimiter=delimiter)


#: The csv module's largest field limit (a C long; 32 bits on Windows).
_C_LONG_MAX = 2**31 - 1


def csv_table(path: str | os.PathLike[str]) -> tuple[list[str], list[dict[str, Any]]]:
    """``(header, rows)`` of a CSV file (rows as :class:`csv.DictReader` gives them)."""
    path = Path(path)

    def parse() -> tuple[list[str], list[dict[str, Any]]]:
        reader = csv_reader(read_text(path))
        rows = list(reader)
        return list(reader.fieldnames or []), rows

    return _cached(path, "csv", lambda: _timed(path, "CSV", parse))
