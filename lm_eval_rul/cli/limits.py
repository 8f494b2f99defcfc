"""``--limit``: checked before anything loads, in every command that takes it.

``run`` passes it to the harness, which reads a number below 1 as a fraction of each
task's documents (``0.1``: a tenth) and a larger one as a count; ``pi`` and ``build``
take a count of questions. Zero, a negative number (``questions[:-1]`` would silently
drop the last question), a fraction of a document (``2.5``) or a value that is no number
is one :class:`LimitError` instead of a traceback after the model has loaded.

The harness's rule surprises beside ``0.5`` (half): ``--limit 1.0`` is a count, one document
per task. ``run --help`` says so (:data:`RUN_LIMIT_HELP`), and before the model loads ``run``
logs how many documents of how many the limit selects (:func:`say_limit_sample`).
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from collections.abc import Mapping
from typing import Any

from ..errors import UserInputError

__all__ = [
    "LimitError",
    "check_run_limit",
    "check_count_limit",
    "say_limit_sample",
    "RUN_LIMIT_HELP",
]

logger = logging.getLogger(__name__)

#: ``run --limit``'s help (the harness's own says "If <1, limit is a percentage").
RUN_LIMIT_HELP = (
    "Documents per task: a count (--limit 40), or a fraction of each task below 1 "
    "(--limit 0.5: half). 1 and 1.0 are counts: ONE document per task (the harness's rule), "
    "not all of them; leave --limit out to run every document. The run logs the number "
    "selected before the model loads"
)
_RULE = "1 or more counts documents per task (1.0 is one document), below 1 is a fraction"


class LimitError(UserInputError, ValueError):
    """A ``--limit`` that selects no documents, or not a whole number of them."""


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _shown(value: Any) -> str:
    """The value as typed: the harness parses ``--limit -1`` as ``-1.0``."""
    return f"{value:g}" if isinstance(value, float) else str(value)


def check_run_limit(value: Any) -> None:
    """``run --limit``: a whole number of documents per task (>= 1), or a fraction in (0, 1).

    Raises:
        LimitError: zero, negative, not finite, no number, or a count with a fraction.
    """
    if value is None:
        return
    number = _number(value)
    if number is not None and (0 < number < 1 or (number >= 1 and number.is_integer())):
        return
    raise LimitError(
        f"--limit {_shown(value)}: give a whole number of documents per task (e.g. --limit 40) "
        "or a fraction of each task between 0 and 1 (--limit 0.1: a tenth); leave it out to "
        "run every document"
    )


def check_count_limit(value: Any, *, what: str = "questions") -> None:
    """``pi`` / ``build`` ``--limit``: a whole number of ``what`` of at least 1.

    Raises:
        LimitError: zero, negative or no whole number.
    """
    if value is None:
        return
    number = _number(value)
    if number is not None and number >= 1 and number.is_integer():
        return
    raise LimitError(
        f"--limit {_shown(value)}: give how many {what} to use, a whole number of at least 1 "
        f"(e.g. --limit 40); leave it out to use them all"
    )


def say_limit_sample(loaded: Mapping[str, Any], limit: int | float | None) -> str | None:
    """Log (and return) how many documents ``--limit`` selects of the loaded tasks, in one
    line, e.g. ``--limit 1 runs 1 of 1,187 documents in each of 4 tasks; ...``."""
    if limit is None:
        return None
    from ..harness_compat import sample_size

    counts: Counter[tuple[int, int]] = Counter()
    for task in (loaded.get("tasks") or {}).values():
        total = len(task.eval_docs)
        counts[(min(sample_size(task, limit) or total, total), total)] += 1
    if not counts:
        return None
    parts = ", ".join(
        f"{chosen:,} of {total:,} documents" + (f" in each of {n} tasks" if n > 1 else "")
        for (chosen, total), n in counts.items()
    )
    line = f"--limit {_shown(limit)} runs {parts}; a --limit of {_RULE}"
    logger.info(line)
    return line
