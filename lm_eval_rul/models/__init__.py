"""The plugin's harness models: one audio-LM core and three thin engines.

:mod:`.core`, the checkpoint engines' flow :mod:`.checkpoint` and its :mod:`.prompts`;
the engines :mod:`.lalm`, :mod:`.lalm_vllm` and :mod:`.api` (its transport and a bridge's
declaration :mod:`.api_http`, payloads :mod:`.api_payload`);
:mod:`.families` and :mod:`.args`. Each engine is one row of
:data:`lm_eval_rul.adapters.ADAPTERS` (``docs/architecture.md``). Public names:
:class:`LALM`, :class:`LALMAPI`, :class:`LALMVLLM`, imported on first access (torch loads
only when a model is built).
"""

from __future__ import annotations

import importlib

__all__ = ["LALM", "LALMAPI", "LALMVLLM"]


_MODULES = {"LALM": ".lalm", "LALMVLLM": ".lalm_vllm", "LALMAPI": ".api"}


def __getattr__(name: str):
    if name not in _MODULES:
        raise AttributeError(name)
    return getattr(importlib.import_module(_MODULES[name], __name__), name)
