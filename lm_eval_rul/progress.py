"""Progress bars that end once, on a terminal and in a log file.

tqdm redraws a bar in place with ``\\r``; written to a file or a pipe (a job's log), every
redraw stays, and a bar whose last update is drawn is drawn again when it closes: the
log shows ``100%`` twice. :func:`progress_bar` draws the final state only when the bar
closes when its output is not a terminal, so each bar ends exactly once.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from tqdm.auto import tqdm

__all__ = ["EndsOnce", "progress_bar", "ItemProgress"]


class EndsOnce(tqdm):
    """A tqdm bar that, away from a terminal, leaves its final state to :meth:`close`."""

    def refresh(self, *args: Any, **kwargs: Any) -> Any:
        if self.total and self.n >= self.total and not _is_terminal(self.fp):
            return None  # close() draws it, once
        return super().refresh(*args, **kwargs)


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def progress_bar(total: int | None, desc: str, *, enabled: bool = True, unit: str = "it") -> Any:
    """A bar of ``total`` steps named ``desc`` (disabled when not ``enabled``)."""
    return EndsOnce(total=total, desc=desc, unit=unit, disable=not enabled)


class ItemProgress:
    """Counts items (benchmark, id) whose documents are all done, on ``bar`` (shown when
    the documents are ``windowed``: several per item)."""

    def __init__(self, docs: list[Any], bar: Any, *, windowed: bool) -> None:
        self.bar = bar
        self.windowed = windowed
        self.left = Counter(self._key(d) for d in docs)
        self.total, self.finished = len(self.left), 0
        if self.windowed:
            bar.set_postfix_str(f"items 0/{self.total}", refresh=False)

    @staticmethod
    def _key(doc: Any) -> tuple[str, str]:
        doc = doc or {}
        return str(doc.get("benchmark", "")), str(doc.get("id"))

    def done(self, doc: Any) -> None:
        key = self._key(doc)
        self.left[key] -= 1
        if self.left[key] == 0:
            self.finished += 1
            if self.windowed:
                self.bar.set_postfix_str(f"items {self.finished}/{self.total}", refresh=False)
