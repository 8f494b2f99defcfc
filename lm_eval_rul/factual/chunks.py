"""Long recordings: what of a recording a model hears, windows, and label aggregation.

A model hears each recording whole, up to its own limit (:func:`plan_windows`). Windows
are cut only when asked for: ``chunk_seconds`` (the user's), a model that hears long audio
in windows (``chunked``: the models the paper ran in 60 s segments). A recording longer
than the model's limit is cut there, as the model itself would cut it, under both
protocols (:mod:`~lm_eval_rul.factual.protocol`). Each window is asked once, each answer is parsed,
and the per-window label lists are aggregated into one prediction.

Our decisions:

* windows (``rul``): ``ceil(duration / length)`` equal, contiguous, non-overlapping
  windows covering the whole recording, so none exceeds the length and there is no
  short tail (a 130 s recording at 60 s gives three windows of 43.3 s); ``paper``:
  consecutive segments of the length from the start, the last one shorter;
  the audio layer cuts each window from the decoded clip
  (:func:`lm_eval_rul.audio.windows.cut_window`);
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
from dataclasses import dataclass

from .errors import FactualInputError

__all__ = [
    "DEFAULT_CHUNK_SECONDS",
    "AGGREGATIONS",
    "LAYOUTS",
    "effective_chunk_seconds",
    "chunk_windows",
    "HeardPlan",
    "plan_windows",
    "aggregate_labels",
]

#: The window length of a chunked model (the paper's 60 s segments), or its limit if shorter.
DEFAULT_CHUNK_SECONDS = 60.0
AGGREGATIONS: tuple[str, ...] = ("union", "majority")
#: How a recording is cut into windows: ``equal`` (ours) or ``fixed`` (the paper's segments).
LAYOUTS: tuple[str, ...] = ("equal", "fixed")


def effective_chunk_seconds(
    chunk_seconds: float | str | None = None,
    model_max_seconds: float | None = None,
    *,
    chunked: bool = False,
) -> float | None:
    """The window length of a factual run, or None: each recording is heard whole.

    Given, ``chunk_seconds`` must be a positive number of seconds no longer than the
    model's limit (the end of a longer window would be cut off unheard). Not given: None
    (the recording is heard whole, up to the model's limit: :func:`plan_windows`), except
    for a ``chunked`` model: 60 s (the paper's segments), or its limit when shorter.
    ``lm-eval-rul run`` calls it with the limit read from the model before anything
    loads; the tasks call it without one (plain ``lm_eval``).

    Raises:
        FactualInputError: ``chunk_seconds`` is not a positive number, or is longer than
            ``model_max_seconds``.

    Examples
    --------
    >>> effective_chunk_seconds(), effective_chunk_seconds(None, 30.0, chunked=True)
    (None, 30.0)
    >>> effective_chunk_seconds("20", 30.0)
    20.0
    """
    if chunk_seconds in (None, ""):
        if not chunked:
            return None
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
            "(each recording is then heard whole, up to the model's limit)."
        )
    return value


def chunk_windows(
    duration: float, chunk_seconds: float, layout: str = "equal"
) -> list[tuple[float, float]]:
    """``(start, end)`` seconds of the windows covering ``duration``.

    ``equal``: the fewest equal windows of at most ``chunk_seconds``; ``fixed``:
    consecutive windows of ``chunk_seconds`` from the start, the last one shorter.

    Examples
    --------
    >>> chunk_windows(130.0, 60.0)
    [(0.0, 43.333333333333336), (43.333333333333336, 86.66666666666667), (86.66666666666667, 130.0)]
    >>> chunk_windows(130.0, 60.0, "fixed")
    [(0.0, 60.0), (60.0, 120.0), (120.0, 130.0)]
    >>> chunk_windows(45.0, 60.0)
    [(0.0, 45.0)]
    """
    if not chunk_seconds > 0:
        raise ValueError(f"chunk_seconds must be positive, got {chunk_seconds!r}")
    if not duration > 0 or not math.isfinite(duration):
        raise ValueError(f"duration must be a positive number of seconds, got {duration!r}")
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {', '.join(LAYOUTS)}, got {layout!r}")
    n = max(1, math.ceil(duration / chunk_seconds - 1e-9))
    if layout == "fixed":
        edges = [min(float(duration), k * float(chunk_seconds)) for k in range(n + 1)]
    else:
        edges = [duration * k / n for k in range(n + 1)]
    edges[-1] = float(duration)
    return list(zip(edges[:-1], edges[1:], strict=True))


@dataclass(frozen=True)
class HeardPlan:
    """What a model hears of one recording.

    Attributes:
        windows: The documents' windows, ``None`` for the whole recording.
        recording_seconds: The recording's length.
        heard_seconds: How much of it the model hears (all of it unless ``cut``).
        cut: Whether its end goes unheard (longer than the model's limit, ``paper``).
    """

    windows: tuple[tuple[float, float] | None, ...]
    recording_seconds: float
    heard_seconds: float
    cut: bool


def plan_windows(
    duration: float,
    *,
    chunk_seconds: float | None,
    max_seconds: float | None,
    protocol: str = "rul",
) -> HeardPlan:
    """What a model with limit ``max_seconds`` hears of a ``duration`` s recording.

    ``chunk_seconds`` given (asked for, or a chunked model): its windows (``paper``:
    fixed segments; ``rul``: equal windows). Else the recording is heard whole, up to
    the limit; a longer one is cut there under every protocol (one window, the first
    ``max_seconds``: what the model itself keeps), and the plan records the cut.

    Examples
    --------
    >>> plan_windows(70.0, chunk_seconds=None, max_seconds=600.0).windows
    (None,)
    >>> plan = plan_windows(70.0, chunk_seconds=None, max_seconds=30.0, protocol="paper")
    >>> plan.windows, plan.heard_seconds, plan.cut
    (((0.0, 30.0),), 30.0, True)
    >>> plan_windows(70.0, chunk_seconds=None, max_seconds=30.0).windows
    ((0.0, 30.0),)
    """
    layout = "fixed" if protocol == "paper" else "equal"
    if chunk_seconds is not None:
        windows = chunk_windows(duration, chunk_seconds, layout)
        return HeardPlan(tuple(windows), duration, duration, False)
    if max_seconds is None or duration <= max_seconds + 1e-6:
        return HeardPlan((None,), duration, duration, False)
    return HeardPlan(((0.0, float(max_seconds)),), duration, float(max_seconds), True)


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
