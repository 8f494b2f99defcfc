"""What an audio model hears for a harness document: layouts, decoding and conditions.

Imports only :mod:`lm_eval_rul.questions`; the task functions (:mod:`lm_eval_rul.mcqa`)
attach clips to documents with :func:`attach_audio`, and the models
(:mod:`lm_eval_rul.models`) read waveforms with :func:`condition_audio`.

Public names:

* :func:`attach_audio`, :func:`track_identities`, :data:`AUDIO_EXTENSIONS`,
  :data:`AUDIO_METADATA_KEYS` (:mod:`.layouts`: where each document's clip is);
* :func:`decode_audio`, :func:`load_clip`, :func:`clear_audio_cache`,
  :func:`decode_count`, :data:`CLIP_CACHE` (:mod:`.decoding`);
* :class:`AudioSpec`, :class:`Condition`, :class:`Parameter`, :func:`register_condition`,
  :func:`condition_parameters`,
  :func:`registered_conditions`, :func:`condition_names`, :func:`condition_named`,
  :data:`AUDIO_CONDITIONS`, :data:`FILE_CONDITIONS`, :func:`condition_key`,
  :func:`condition_audio`, :func:`noise_waveform`, :func:`random_clip`, :func:`draw_other`,
  :func:`register_clip_pool`, :func:`check_audio_available`, :func:`pool_refs`
  (:mod:`.conditions`: one object per audio condition, one registry);
* :data:`WINDOW_FIELD`, :func:`doc_window`, :func:`cut_window` (:mod:`.windows`: a
  document that asks about one stretch of its clip);
* :func:`clip_identity`, :func:`file_content_digest` (:mod:`.sources`: what identifies a
  clip's content, for stored results);
* :func:`~.arrays.register_array`, :func:`~.arrays.array_clip`, :func:`~.arrays.is_array_ref`,
  :func:`~.arrays.array_ref_name` (:mod:`.arrays`: the harness's own waveforms, from a
  task's ``doc_to_audio``, as clip references);
* :func:`~.requests.request_audio`, :class:`~.requests.RequestAudio`,
  :class:`~.requests.HarnessAudioError`, :func:`~.requests.harness_audio`,
  :func:`~.requests.describe_heard`, :func:`~.requests.record_heard`,
  :func:`~.requests.heard_fields`, :data:`~.requests.HARNESS_AUDIO_PLACEHOLDER`,
  :data:`~.requests.PLUGIN_AUDIO_FIELDS` (:mod:`.requests`: where a harness request's
  audio comes from, the one decision both audio models share);
* :func:`preflight_clips`, :func:`refs_to_check`, :func:`clip_header_problem`,
  :data:`AUDIO_CHECKS`, :class:`UnreadableAudioError` (:mod:`.preflight`: every clip
  looked at before the model loads);
* :class:`AudioError`, :class:`MissingAudioError`, :class:`AudioDecodeError`,
  :class:`UnknownConditionError` (:mod:`.errors`).
"""

from .conditions import (
    AUDIO_CONDITIONS,
    FILE_CONDITIONS,
    AudioSpec,
    Condition,
    Parameter,
    check_audio_available,
    condition_audio,
    condition_key,
    condition_named,
    condition_names,
    condition_parameters,
    draw_other,
    noise_waveform,
    pool_refs,
    random_clip,
    register_clip_pool,
    register_condition,
    registered_conditions,
)
from .decoding import CLIP_CACHE, clear_audio_cache, decode_audio, decode_count, load_clip
from .errors import (
    AudioDecodeError,
    AudioError,
    MissingAudioError,
    UnknownConditionError,
)
from .layouts import AUDIO_EXTENSIONS, AUDIO_METADATA_KEYS, attach_audio, track_identities
from .preflight import (
    AUDIO_CHECKS,
    UnreadableAudioError,
    clip_header_problem,
    preflight_clips,
    refs_to_check,
)
from .sources import clip_identity, file_content_digest
from .windows import WINDOW_FIELD, cut_window, doc_window

__all__ = [
    "AUDIO_CONDITIONS",
    "FILE_CONDITIONS",
    "AUDIO_EXTENSIONS",
    "AUDIO_METADATA_KEYS",
    "AudioSpec",
    "Condition",
    "Parameter",
    "condition_parameters",
    "register_condition",
    "registered_conditions",
    "condition_names",
    "condition_named",
    "draw_other",
    "AudioError",
    "MissingAudioError",
    "AudioDecodeError",
    "UnknownConditionError",
    "attach_audio",
    "track_identities",
    "decode_audio",
    "load_clip",
    "clear_audio_cache",
    "decode_count",
    "CLIP_CACHE",
    "condition_key",
    "condition_audio",
    "noise_waveform",
    "random_clip",
    "register_clip_pool",
    "check_audio_available",
    "WINDOW_FIELD",
    "doc_window",
    "cut_window",
    "pool_refs",
    "clip_identity",
    "file_content_digest",
    "AUDIO_CHECKS",
    "UnreadableAudioError",
    "clip_header_problem",
    "preflight_clips",
    "refs_to_check",
]
