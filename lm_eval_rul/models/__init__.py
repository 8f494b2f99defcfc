"""Harness models of the plugin: ``lalm``, any transformers-native audio LM, and
``lalm-api``, an audio LM behind an OpenAI-compatible chat endpoint (vLLM, OpenAI, Gemini).

Registered with the harness by :func:`lm_eval_rul.registration.register_models`, which
imports :mod:`.lalm` and :mod:`.api` lazily (torch and transformers load only when a model
is built).

Modules: :mod:`.lalm` (the model class and :func:`~.lalm.check_model_args`),
:mod:`.families` (the one per-family table), :mod:`.args` (``model_args`` checks),
:mod:`.lalm` (letter scoring with a per-clip prefix cache),
:mod:`.lalm` (``generate_until`` with audio), :mod:`.families`, :mod:`.families`
(the longest audio a checkpoint hears, read before its weights load),
:mod:`.core` (the chat layout and audio settings both models share),
:mod:`.core` (each request's audio source, the per-task condition in the run
log and results config, what each document heard); :mod:`.api`
(``lalm-api`` and its :func:`~.api.check_model_args`), :mod:`.api_http` (sending,
retries), :mod:`.api_http` (the one HTTP policy: deadlines, key origin, UTF-8 replies),
:mod:`.api_numbers` (the one reader of numbers in replies), :mod:`.api_http` (its
errors, what counts as a reply), :mod:`.api_payload`
(WAV parts, request bodies), :mod:`.api` (letter scoring), :mod:`.api_payload`
(reading log-probabilities), :mod:`.api_http`, :mod:`.api` (its ``--model_args``),
:mod:`.api_bridge` (what a bridge server declares: window, chunking, letter support);
:mod:`.bridge_server`, the single-file server ``lm-eval-rul bridge --write`` copies into a
research model's own environment (standard library, numpy and soundfile only).

``lalm-vllm`` (:mod:`.lalm_vllm`): the families vLLM serves on its in-process engine,
with ``lalm``'s prompts (:mod:`.prompts`, shared) and letters (:mod:`.lalm_vllm`).

Public names: :class:`LALM`, :class:`LALMAPI`, :class:`LALMVLLM` (imported on first access).
"""

from __future__ import annotations

__all__ = ["LALM", "LALMAPI", "LALMVLLM"]


def __getattr__(name: str):
    if name == "LALM":
        from .lalm import LALM

        return LALM
    if name == "LALMVLLM":
        from .lalm_vllm import LALMVLLM

        return LALMVLLM
    if name == "LALMAPI":
        from .api import LALMAPI

        return LALMAPI
    raise AttributeError(name)
