"""The bridge: a research audio LM (SALMONN, LTU...) served to ``lalm-api`` from its own
environment, in one place (docs/bridge.md).

Modules: :mod:`.server` (the single-file HTTP server ``lm-eval-rul bridge --write`` copies
into the model's environment: the standard library, numpy and soundfile only, importing
nothing of this package), :mod:`.command`
(``lm-eval-rul bridge --write FILE``: :func:`~.command.write_server`). The tests' tiny
research-shaped model and isolated interpreters are ``tests/doubles/bridge.py``, outside
the installed package. What ``lalm-api`` reads of a bridge (its declared window, chunking
and letter support, the cuts its replies report) is lalm-api's own, in
:mod:`lm_eval_rul.models.api_http`: the bridge never is imported by ``models``.

Public names: :func:`write_server`, :class:`BridgeWriteError` (from :mod:`.command`).
"""

from .command import BridgeWriteError, write_server

__all__ = ["write_server", "BridgeWriteError"]
