"""Windows of a clip: a document that asks about one stretch of a recording.

Long recordings (a MusicNet piece runs for minutes) are asked about window by window: a
task makes one document per window and writes ``audio_window: [start_s, end_s]`` into
it. :func:`~lm_eval_rul.audio.condition_audio` then plays only that stretch, for every
model, with no model code involved. Rules:

* a window longer than the model's limit is an error naming ``chunk_seconds`` (never a
  silent trim: what the model hears must be what the task asked about), unless the
  document marks its window as a listening stretch the task chose (tagging's
  ``tagging_seconds``, :data:`WINDOW_TRIMS_FIELD`): that one is cut to the limit and
  counted in the run's one warning about trimmed clips, as a whole clip longer than the
  limit is (:func:`fit_window`);
* ``original`` plays the window of the item's own clip (``reversed``: that window,
  backwards); ``random`` plays the same window
  of the other clip, clipped to that clip's length, and when the other clip ends before
  the window starts, its last stretch of the window's length (so a window is never
  empty);
* ``noise``, ``silence`` and ``none`` ignore windows (there is no recording to cut).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from .errors import AudioError

__all__ = [
    "WINDOW_FIELD",
    "WINDOW_KEY_FIELD",
    "WINDOW_TRIMS_FIELD",
    "doc_window",
    "check_window_fits",
    "fit_window",
    "cut_window",
]

#: The document field holding ``[start_s, end_s]``.
WINDOW_FIELD = "audio_window"
#: The document field naming the ``--metadata`` key that sets its window's length (default
#: ``chunk_seconds``), for the message of a window longer than the model hears.
WINDOW_KEY_FIELD = "audio_window_key"
#: The document field saying its window may be cut to the model's limit (a stretch the task
#: chose to play, not the subject of the question).
WINDOW_TRIMS_FIELD = "audio_window_trims"
_TOLERANCE = 1e-6


def doc_window(doc: Mapping[str, Any]) -> tuple[float, float] | None:
    """The ``(start, end)`` seconds of a document's window, or None (the whole clip).

    Raises:
        AudioError: The field is not two finite numbers with ``0 <= start < end``.
    """
    window = doc.get(WINDOW_FIELD)
    if window is None:
        return None
    try:
        start, end = (float(v) for v in window)
    except (TypeError, ValueError):
        raise AudioError(
            f"item {doc.get('id')!r}: {WINDOW_FIELD}={window!r} must be [start_s, end_s]"
        ) from None
    if not (math.isfinite(start) and math.isfinite(end) and 0.0 <= start < end):
        raise AudioError(
            f"item {doc.get('id')!r}: {WINDOW_FIELD}={window!r} must satisfy 0 <= start < end"
        )
    return start, end


def check_window_fits(
    doc: Mapping[str, Any], window: tuple[float, float], max_seconds: float | None
) -> None:
    """Raise when ``window`` is longer than the model's limit (it would be trimmed).

    Raises:
        AudioError: Naming the window, the limit and ``chunk_seconds``.
    """
    length = window[1] - window[0]
    if max_seconds is not None and length > max_seconds + _TOLERANCE:
        key = str(doc.get(WINDOW_KEY_FIELD) or "chunk_seconds")
        after = (
            " (lm-eval-rul run does this itself when chunk_seconds is not given)"
            if key == "chunk_seconds"
            else ""
        )
        raise AudioError(
            f"item {doc.get('id')!r}: its audio window {window[0]:.1f}-{window[1]:.1f} s is "
            f"{length:.1f} s long, but the model hears at most {max_seconds:g} s, so the rest "
            f"would be cut off unheard. Set --metadata {key} to at most {max_seconds:g}{after}."
        )


def fit_window(
    doc: Mapping[str, Any], window: tuple[float, float], max_seconds: float | None
) -> tuple[float, float]:
    """``window``, cut to its first ``max_seconds`` when the document allows it
    (:data:`WINDOW_TRIMS_FIELD`; the caller counts the cut with the run's trimmed clips).

    Raises:
        AudioError: A longer window the document does not allow to cut
            (:func:`check_window_fits`).
    """
    length = window[1] - window[0]
    if max_seconds is None or length <= max_seconds + _TOLERANCE:
        return window
    if not doc.get(WINDOW_TRIMS_FIELD):
        check_window_fits(doc, window, max_seconds)
    return window[0], window[0] + max_seconds


def cut_window(wave: np.ndarray, sampling_rate: int, window: tuple[float, float]) -> np.ndarray:
    """The samples of ``window`` in ``wave`` (a view), clipped to the clip's length.

    When the clip ends before the window starts, the clip's last ``end - start`` seconds
    (or all of it, if shorter) are returned instead, so the result is never empty.

    Examples
    --------
    >>> wave = np.arange(10, dtype=np.float32)
    >>> cut_window(wave, 2, (1.0, 3.0)).tolist()
    [2.0, 3.0, 4.0, 5.0]
    >>> cut_window(wave, 2, (5.0, 7.0)).tolist()  # starts at the 5 s end: the last 2 s
    [6.0, 7.0, 8.0, 9.0]
    """
    length = wave.shape[0]
    first = int(round(window[0] * sampling_rate))
    last = max(first + 1, int(round(window[1] * sampling_rate)))
    if first >= length:
        first = max(0, length - (last - first))
        last = length
    return wave[first : min(last, length)]
