"""The ``_native_gen`` tasks: our generation tasks with the clip declared the harness's way.

Their YAMLs (``tasks/harness_native/``) take the prompt, parsing and metrics of the
plain ``_gen`` tasks (:mod:`.tasks`) and add ``doc_to_audio``: :func:`doc_to_audio`
hands the harness the document's clip as ``[{"array", "sampling_rate"}]``, so any harness
audio model can run them. Their documents are the plain tasks' plus ``audio_from:
doc_to_audio``, which tells their logged samples apart from the plain tasks' on the same
items (the audio actually heard is in ``audio_heard``).
"""

from __future__ import annotations

from typing import Any

from .tasks import load_muchomusic, load_rul_muchomusic

__all__ = [
    "NATIVE_SAMPLING_RATE",
    "doc_to_audio",
    "load_rul_muchomusic_native",
    "load_muchomusic_native",
]

#: The rate :func:`doc_to_audio` hands the harness (the Whisper-based audio LMs' 16 kHz;
#: a model wanting another rate resamples, as ``lalm`` does).
NATIVE_SAMPLING_RATE = 16_000


def doc_to_audio(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The document's clip the harness's way: ``[{"array": mono float32 samples,
    "sampling_rate": 16000}]``, decoded once per clip and process (a document's window
    only, when it has one).

    Raises:
        MissingAudioError: The document has no clip (pass ``--metadata audio_dir`` or
            ``audio_hf_dataset``).
    """
    from ..audio import check_audio_available, cut_window, doc_window, load_clip

    check_audio_available([doc], "original")
    window = doc_window(doc)
    wave = load_clip(doc["audio_ref"], sampling_rate=NATIVE_SAMPLING_RATE, max_seconds=None)
    if window is not None:
        wave = cut_window(wave, NATIVE_SAMPLING_RATE, window)
    return [{"array": wave, "sampling_rate": NATIVE_SAMPLING_RATE}]


def _marked(dataset: dict[str, Any]) -> dict[str, Any]:
    return {
        split: docs.map(lambda _: {"audio_from": "doc_to_audio"})
        for split, docs in dataset.items()
    }


def load_rul_muchomusic_native(fold: int, **metadata: Any) -> dict[str, Any]:
    """``custom_dataset`` of ``rul_muchomusic_native_gen_fold{fold}``."""
    return _marked(load_rul_muchomusic(fold, **metadata))


def load_muchomusic_native(**metadata: Any) -> dict[str, Any]:
    """``custom_dataset`` of ``muchomusic_native_gen``."""
    return _marked(load_muchomusic(**metadata))
