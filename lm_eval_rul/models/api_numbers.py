"""The one reader of numbers in what a server answers, and the check of what is stored.

Python's ``json`` reads ``Infinity``, ``-Infinity`` and ``NaN`` (not JSON, but some
servers write them) and turns an out-of-range literal such as ``1e400`` into ``inf``.
No such number is a log-probability, a window or a wait: every number ``lalm-api`` reads
from a reply (log-probabilities, ranks, a bridge's window; ``Retry-After``:
:func:`lm_eval_rul.retries.retry_after_seconds`) goes through
:func:`finite_number`, and nothing that :func:`non_finite_in` flags reaches the resume
cache.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

__all__ = [
    "LOGPROB_SLACK",
    "finite_number",
    "log_probability",
    "non_finite_in",
]

#: How far above 0 a log-probability may come from rounding (a server's float32 softmax)
#: before it is a probability above 1; the bridge (``lm_eval_rul/bridge/server.py``) allows
#: the same.
LOGPROB_SLACK = 1e-6


def finite_number(value: Any) -> float | None:
    """``value`` as a float when it is a finite number, else ``None``.

    Booleans are not numbers here (``True`` would read as 1), nor are strings (a JSON
    number is never quoted); an integer too large for a float is not finite.

    >>> finite_number(-0.25), finite_number(3)
    (-0.25, 3.0)
    >>> [finite_number(v) for v in (float("inf"), float("nan"), 10**400, True, "-1.0", None)]
    [None, None, None, None, None, None]
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:  # an int beyond the float range
        return None
    return number if math.isfinite(number) else None


def log_probability(value: Any) -> float | None:
    """``value`` as a log-probability: a finite number at most 0 (rounding up to
    :data:`LOGPROB_SLACK` above 0 reads as 0), else ``None`` (a probability above 1 is no
    probability).

    >>> log_probability(-0.5), log_probability(5e-7), log_probability(0.544), log_probability("-1")
    (-0.5, 0.0, None, None)
    """
    number = finite_number(value)
    if number is None or number > LOGPROB_SLACK:
        return None
    return min(number, 0.0)


def non_finite_in(value: Any) -> bool:
    """Whether ``value`` (a JSON-like tree of lists, dicts, numbers, strings) holds a
    number that is not finite.

    >>> non_finite_in([float("inf"), True]), non_finite_in({"a": [[" A", -0.5]]})
    (True, False)
    """
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, Mapping):
        return any(non_finite_in(item) for item in value.values())
    if isinstance(value, (list, tuple)):
        return any(non_finite_in(item) for item in value)
    return False
