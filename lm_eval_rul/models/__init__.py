"""Harness models of the plugin (``lalm``); imported lazily by the registry."""

from __future__ import annotations

__all__ = ["LALM"]


def __getattr__(name: str):
    if name == "LALM":
        from .lalm import LALM

        return LALM
    raise AttributeError(name)
