"""The plugin's harness models: one audio-LM core and three thin engines.

:mod:`.core` (:class:`~.core.AudioLM`: audio arguments, requests grouped by clip, stored
results, model info, refusals) and :mod:`.prompts` (the checkpoint's chat template, shared
by ``lalm`` and ``lalm-vllm``); the engines :mod:`.lalm` (transformers, prefix KV cache),
:mod:`.lalm_vllm` (vLLM's in-process engine) and :mod:`.api` (an OpenAI-compatible
endpoint; its transport :mod:`.api_http`, payloads and log-probabilities
:mod:`.api_payload`, numbers :mod:`.api_numbers`); :mod:`.families` (the per-family table,
processors, audio limits), :mod:`.args` (``model_args`` checks). Each engine has one row
in :data:`lm_eval_rul.adapters.ADAPTERS`, which registration reads (lazily: torch loads
only when a model is built). The bridge (its server file and client) is :mod:`lm_eval_rul.bridge`.

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
