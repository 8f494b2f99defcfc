"""A text file under an audio name (a note, or a web page saved in place of a clip), told
before any decoder opens it: decoders print their own noise first (libmpg123's ``Note:``
lines on the terminal) and then blame a missing ffmpeg."""

from __future__ import annotations

__all__ = ["text_instead_of_audio"]

#: Bytes read from the start of a file to tell text from audio.
_HEAD = 512
#: Longest multi-byte UTF-8 character a head may cut at its end.
_CUT = 3


def _head(source: str | bytes) -> bytes:
    if isinstance(source, bytes):
        return source[:_HEAD]
    with open(source, "rb") as handle:
        return handle.read(_HEAD)


def text_instead_of_audio(source: str | bytes) -> str | None:
    """Why ``source`` (a path or the file's bytes) is no audio, when it starts as plain text.

    Every audio container starts with binary bytes (a NUL, or a byte no UTF-8 text has), so
    printable UTF-8 text in the first bytes is never audio.

    >>> text_instead_of_audio(b"<!DOCTYPE html><html>Not found</html>")
    "is a text file, not audio (it starts '<!DOCTYPE html><html>Not found</html>')"
    >>> text_instead_of_audio(b"RIFF\\x24\\x00\\x00\\x00WAVEfmt ") is None
    True
    """
    try:
        head = _head(source)
    except OSError:
        return None  # the decoders name unreadable files
    if not head.strip() or b"\0" in head:
        return None
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as error:
        if error.start < len(head) - _CUT or len(head) < _HEAD:
            return None
        text = head[: error.start].decode("utf-8")
    if not all(c.isprintable() or c in "\t\r\n" for c in text):
        return None
    first = text.strip().splitlines()[0]
    shown = first if len(first) <= 40 else first[:40] + "..."
    return f"is a text file, not audio (it starts {shown!r})"
