"""What the model hears for a document: the audio conditions, reproducibly.

Each condition is one :class:`Condition` subclass registered with
:func:`register_condition` (:mod:`.registry` lists the fields each declares); every module
that needs to know something about a condition asks its object
(:func:`condition_named`, ``AudioSpec.audio_condition``), never compares names.

* :mod:`.basic`: ``original``, ``noise``, ``silence``, ``random``, ``none``, and the
  :class:`Parameter` entries they read (``seed``, ``noise_seconds``, ``noise_std``);
  :func:`condition_parameters` lists every registered condition's;
* :mod:`.reversed_clip`: ``reversed``, the example of a condition added as one class;
* :mod:`.excerpt`: ``excerpt``, ``excerpt_seconds`` of the clip cut at ``excerpt_at``;
* :mod:`.pools`: the clip pools of ``random`` and its one draw, :func:`draw_other`, shared
  by the multiple-choice and the factual tasks;
* :mod:`.heard`: :func:`condition_key` (the key of what is heard, reading no audio) and
  :func:`condition_audio` (the key and the waveform);
* :mod:`.availability`: :func:`check_audio_available`, before any model loads.

``noise`` is reproducible from (seed, item id); ``random`` draws another clip of the same
benchmark from its full clip list (registered by
:func:`~lm_eval_rul.audio.layouts.attach_audio`), never the item's own track, unless the
document names its random clip itself (``audio_random_ref``, chosen by the task). A
document with an ``audio_window`` hears only that stretch of the clip
(:mod:`~lm_eval_rul.audio.windows`). Documents without audio fields (text-only runs) still
work with the conditions that read nothing.
"""

from __future__ import annotations

from . import basic, excerpt, reversed_clip  # noqa: F401 - importing a module registers its conditions
from .availability import check_audio_available
from .basic import noise_waveform
from .heard import condition_audio, condition_key
from .pools import (
    CLIP_IDENTITY,
    draw_other,
    excluded_positions,
    pool_refs,
    random_clip,
    register_clip_pool,
)
from .registry import (
    CLIP_POOL,
    NOTHING,
    OWN_CLIP,
    READS,
    REFERENCE_CONDITION,
    Condition,
    Parameter,
    condition_named,
    condition_names,
    condition_of_key,
    condition_parameters,
    register_condition,
    registered_conditions,
)
from .spec import AudioSpec

#: The built-in conditions' names at import time (:func:`condition_names` is the live list).
AUDIO_CONDITIONS: tuple[str, ...] = condition_names()
#: The conditions that read the benchmark's audio files, at import time.
FILE_CONDITIONS: tuple[str, ...] = tuple(
    c.name for c in registered_conditions() if c.reads != NOTHING
)

__all__ = [
    "AUDIO_CONDITIONS",
    "FILE_CONDITIONS",
    "CLIP_IDENTITY",
    "CLIP_POOL",
    "NOTHING",
    "OWN_CLIP",
    "READS",
    "REFERENCE_CONDITION",
    "AudioSpec",
    "Condition",
    "Parameter",
    "condition_parameters",
    "register_condition",
    "registered_conditions",
    "condition_names",
    "condition_named",
    "condition_of_key",
    "noise_waveform",
    "register_clip_pool",
    "random_clip",
    "draw_other",
    "excluded_positions",
    "condition_key",
    "condition_audio",
    "check_audio_available",
    "pool_refs",
]
