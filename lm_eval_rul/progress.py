"""Progress bars that end once, on a terminal and in a log file.

tqdm redraws a bar in place with ``\\r``; written to a file or a pipe (a job's log), every
redraw stays, and a bar whose last update is drawn is drawn again when it closes: the
log shows ``100%`` twice. :func:`progress_bar` draws the final state only when the bar
closes when its output is not a terminal, so each bar ends exactly once.
"""

from __future__ import annotations

from typing import Any

from tqdm.auto import tqdm

__all__ = ["EndsOnce", "progress_bar"]


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
