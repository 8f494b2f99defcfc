"""How a message names a task metadata key: the CLI's ``--metadata rul_data_path`` or the
Python API's keyword (``lm_eval_rul.task_manager(rul_data_path=...)``).

The same checks run under both; a user of ``task_manager`` never typed ``--metadata``,
so :func:`named_as_keywords` makes the messages name the keyword instead.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from contextvars import ContextVar

__all__ = ["metadata_key", "metadata_example", "named_as_keywords"]

_CLI_STYLE = "--metadata {key}"
_KEYWORD_STYLE = "lm_eval_rul.task_manager keyword {key}"
_style: ContextVar[str] = ContextVar("metadata_key_style", default=_CLI_STYLE)


def metadata_key(key: str) -> str:
    """``key`` as the user gave it: ``--metadata key`` (CLI) or ``... keyword key`` (Python)."""
    return _style.get().format(key=key)


def metadata_example(key: str, value: object) -> str:
    """How to give ``key``: ``--metadata '{"key": value}'`` or ``key=value``."""
    if _style.get() == _CLI_STYLE:
        return f"--metadata '{json.dumps({key: value})}'"
    return f"{key}={value!r}"


@contextlib.contextmanager
def named_as_keywords() -> Iterator[None]:
    """Within the block, messages name metadata keys as ``task_manager`` keywords."""
    token = _style.set(_KEYWORD_STYLE)
    try:
        yield
    finally:
        _style.reset(token)
