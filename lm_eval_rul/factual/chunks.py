"""Long recordings: windows of at most ``chunk_seconds``, and per-chunk label aggregation.

A model that hears a fixed window is asked once per window, each answer is parsed,
and the per-window label lists are aggregated into one prediction.

Our decisions:

* windows: ``ceil(duration / chunk_seconds)`` equal, contiguous, non-overlapping
  windows covering the whole recording, so none exceeds the limit and there is no
  short tail (a 130 s recording at 60 s gives three windows of 43.3 s);
  ``chunk_seconds`` defaults to 60, or the model's limit when that is shorter
  (:func:`effective_chunk_seconds`, the one place that decides it); the audio layer cuts
  each window from the decoded clip (:func:`lm_eval_rul.audio.windows.cut_window`);
* ``union`` (default): every label any window names, in order of first appearance
  (window order, then order within the window);
* ``majority``: the labels named by *more than half* of the windows, same order; a
  label named by exactly half (an even number of windows) is left out. With one window
  both rules give that window's labels.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from .errors import FactualInputError

__all__ = [
    "DEFAULT_CHUNK_SECONDS",
    "AGGREGATIONS",
    "effective_chunk_seconds",
    "chunk_windows",
    "aggregate_labels",
]

DEFAULT_CHUNK_SECONDS = 60.0
AGGREGATIONS: tuple[str, ...] = ("union", "majority")


def effective_chunk_seconds(
    chunk_seconds: float | str | None = None, model_max_seconds: float | None = None
) -> float:
    """The window length of a factual run: ``chunk_seconds`` when given, else the default.

    Given, it must be a positive number of seconds no longer than the model's limit (the
    end of a longer window would be cut off unheard). Not given: 60 s, or the model's
    limit when that is shorter. ``lm-eval-rul run`` calls it with the limit read from the
    model before anything loads; the tasks call it without one (plain ``lm_eval``).

    Raises:
        FactualInputError: ``chunk_seconds`` is not a positive number, or is longer than
            ``model_max_seconds``.

    Examples
    --------
    >>> effective_chunk_seconds(), effective_chunk_seconds(None, 30.0)
    (60.0, 30.0)
    >>> effective_chunk_seconds("20", 30.0)
    20.0
    """
    if chunk_seconds in (None, ""):
        value = DEFAULT_CHUNK_SECONDS
        if model_max_seconds is not None:
            value = min(value, float(model_max_seconds))
        return value
    try:
        value = float(chunk_seconds)
    except (TypeError, ValueError):
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise FactualInputError(
            f"--metadata chunk_seconds must be a positive number of seconds, got {chunk_seconds!r}"
        )
    if model_max_seconds is not None and value > model_max_seconds:
        raise FactualInputError(
            f"--metadata chunk_seconds={chunk_seconds} is longer than the "
            f"{model_max_seconds:g} s of audio the model hears: each window's end would be cut "
            f"off unheard. Give at most chunk_seconds={model_max_seconds:g}, or leave it out "
            f"(lm-eval-rul run then uses min({DEFAULT_CHUNK_SECONDS:g}, {model_max_seconds:g}))."
        )
    return value


def chunk_windows(duration: float, chunk_seconds: float) -> list[tuple[float, float]]:
    """``(start, end)`` seconds of the equal windows covering ``duration``.

    Examples
    --------
    >>> chunk_windows(130.0, 60.0)
    [(0.0, 43.333333333333336), (43.333333333333336, 86.66666666666667), (86.66666666666667, 130.0)]
    >>> chunk_windows(45.0, 60.0)
    [(0.0, 45.0)]
    """
    if not chunk_seconds > 0:
        raise ValueError(f"chunk_seconds must be positive, got {chunk_seconds!r}")
    if not duration > 0 or not math.isfinite(duration):
        raise ValueError(f"duration must be a positive number of seconds, got {duration!r}")
    n = max(1, math.ceil(duration / chunk_seconds - 1e-9))
    edges = [duration * k / n for k in range(n + 1)]
    edges[-1] = float(duration)
    return list(zip(edges[:-1], edges[1:], strict=True))


def aggregate_labels(per_chunk: Sequence[Sequence[str]], *, rule: str = "union") -> tuple[str, ...]:
    """One prediction from the label lists of the windows (see the module docstring).

    Examples
    --------
    >>> aggregate_labels([["piano"], ["piano", "violin"], ["cello"]])
    ('piano', 'violin', 'cello')
    >>> aggregate_labels([["piano"], ["piano", "violin"], ["cello"]], rule="majority")
    ('piano',)
    """
    if rule not in AGGREGATIONS:
        raise ValueError(f"rule must be one of {', '.join(AGGREGATIONS)}, got {rule!r}")
    order = list(dict.fromkeys(label for labels in per_chunk for label in labels))
    if rule == "union":
        return tuple(order)
    votes = Counter(label for labels in per_chunk for label in set(labels))
    return tuple(label for label in order if 2 * votes[label] > len(per_chunk))
