"""Path containment: a path built from data stays inside the folder the user named.

Question ids become audio file names, dataset rows name their files, a tag table's
download URL gives a remix's file name, and task and model names become output file
names. Such a name could be ``../outside/1740``, ``../../x`` or an absolute path; joined
naively, the run would read (and, over an API, send) or write a file outside the
folder. :func:`contained_path` joins a folder and a name taken from data and raises
:class:`PathEscapeError` (one line naming the item, the name and the folder) when the
result is not inside the folder; :func:`safe_name` makes a task or model name into one
file-name component.

The check is lexical: the name is joined to the folder and normalised (``..`` and ``.``
collapsed, an absolute name replaces the folder, as ``os.path.join`` does), and the
result must lie inside the normalised folder. Symbolic links already inside the folder
are followed as the user placed them (the Hugging Face cache, for one, is a tree of links
into ``blobs/``); data can name files, never create links, so the lexical check is what
keeps a run inside the folder.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from .errors import UserInputError

__all__ = ["PathEscapeError", "contained_path", "is_contained", "safe_name"]

#: Characters a file-name component built from a task or model name keeps.
_UNSAFE = re.compile(r"[^A-Za-z0-9._=+-]+")


class PathEscapeError(UserInputError, ValueError):
    """A path built from data points outside the folder the user named."""


def is_contained(root: str | os.PathLike[str], path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` (normalised, relative to the working folder) lies inside ``root``.

    >>> is_contained("/data/audio", "/data/audio/12.wav"), is_contained("/data/a", "/data/ab")
    (True, False)
    >>> is_contained("/data/audio", "/data/audio/../outside/1.wav")
    False
    """
    base = os.path.normpath(os.path.abspath(os.fspath(root)))
    target = os.path.normpath(os.path.abspath(os.fspath(path)))
    return target == base or target.startswith(base.rstrip(os.sep) + os.sep)


def contained_path(
    root: str | os.PathLike[str],
    relative: str | os.PathLike[str],
    *,
    item: str,
    option: str = "the folder",
    fix: str = "",
) -> Path:
    """``root / relative``, or :class:`PathEscapeError` when it leaves ``root``.

    Args:
        root: The folder the user named.
        relative: A name taken from data (an id with its extension, a row's path, a URL's
            last part).
        item: What the name belongs to, for the message (``"question id '../x'"``).
        option: Where the user named ``root`` (``"--metadata audio_dir"``).
        fix: What to do, appended to the message.

    >>> contained_path("/data/audio", "12.wav", item="question id '12'").as_posix()
    '/data/audio/12.wav'
    >>> try:
    ...     contained_path("/data/audio", "../x.wav", item="question id '../x'")
    ... except PathEscapeError as error:
    ...     print(str(error)[:59])
    question id '../x': the file name '../x.wav' points outside
    """
    text = os.fspath(relative)
    joined = Path(os.path.join(os.fspath(root), text))
    if "\x00" not in text and is_contained(root, joined):
        return joined
    where = os.path.normpath(os.path.abspath(joined)) if "\x00" not in text else "?"
    raise PathEscapeError(
        f"{item}: the file name {text!r} points outside {option} "
        f"{os.path.normpath(os.path.abspath(os.fspath(root)))} (to {where}); nothing outside "
        f"it is read or written. Fix: {fix or 'correct the name in the data.'}"
    )


def safe_name(name: str) -> str:
    """``name`` as one file-name component: separators and other odd characters become
    ``_``, and a name of dots only becomes ``_`` (never ``..``).

    >>> safe_name("rul_muchomusic"), safe_name("../../etc/x"), safe_name("org/model:v1")
    ('rul_muchomusic', '.._.._etc_x', 'org_model_v1')
    >>> safe_name(".."), safe_name("")
    ('_', '_')
    """
    cleaned = _UNSAFE.sub("_", str(name))
    return "_" if not cleaned.strip(".") else cleaned
