"""Harness models of the plugin: ``lalm``, any transformers-native audio LM.

Registered with the harness by :func:`lm_eval_rul.registration.register_models`, which
imports :mod:`.lalm` lazily (torch and transformers load only when a model is built).

Modules: :mod:`.lalm` (the model class and :func:`~.lalm.check_model_args`),
:mod:`.families` (the one per-family table), :mod:`.args` (``model_args`` checks),
:mod:`.prefix_scoring` (letter scoring with a per-clip prefix cache),
:mod:`.generation` (``generate_until`` with audio), :mod:`.processors`, :mod:`.limits`
(the longest audio a checkpoint hears, read before its weights load).

Public names: :class:`LALM` (imported on first access).
"""

from __future__ import annotations

__all__ = ["LALM"]


def __getattr__(name: str):
    if name == "LALM":
        from .lalm import LALM

        return LALM
    raise AttributeError(name)
