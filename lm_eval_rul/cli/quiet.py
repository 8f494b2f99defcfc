"""Quiet, honest logs: the harness's lines that say nothing about the plugin's tasks go.

* lm-eval warns once per task whose data comes from a ``custom_dataset`` function that
  "Custom kwargs can be passed to `--metadata`" (8 times for ``rul_muchomusic`` +
  ``rul_muchomusic_gen``); the plugin's tasks document their ``--metadata`` keys, so the
  warning is dropped for them (other tasks keep it), on the logger of the harness's task
  module on either release (:func:`~lm_eval_rul.harness_compat.task_logger_name`).
* ``run`` logs its setup ("Including path", "Selected Tasks", the ``--limit`` warning)
  before the plugin's checks: :class:`HeldLogs` keeps those records until the checks
  pass, so a wrong command's one-line error is the first line printed (and the held
  lines are dropped: they describe a run that does not happen).
* lm-eval records the git commit of the working directory by running ``git describe``,
  whose ``fatal: not a git repository`` reaches the terminal outside a clone; the same
  lookup runs here with git's error output captured.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

from ..harness_compat import (
    quiet_git_hash,  # noqa: F401  (re-exported)
    task_logger_name,
)

__all__ = [
    "HeldLogs",
    "HELD_LOGS",
    "PluginTaskWarningFilter",
    "quiet_plugin_task_warnings",
    "quiet_git_hash",
    "quiet_harness_logs",
]

_CUSTOM_KWARGS = ": Custom kwargs can be passed to `--metadata`"


class _Keep(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


class HeldLogs:
    """Hold the records of the harness's and the plugin's loggers, then print or drop them.

    >>> held = HeldLogs(("doctest_held",))
    >>> held.hold(); logging.getLogger("doctest_held").warning("later"); held.drop()
    >>> held.holding
    False
    """

    def __init__(self, names: tuple[str, ...] = ("lm_eval", "lm_eval_rul")) -> None:
        self.names = names
        self._saved: dict[str, tuple[list[logging.Handler], _Keep]] = {}

    @property
    def holding(self) -> bool:
        return bool(self._saved)

    def hold(self) -> None:
        """From now on, records of :attr:`names` wait instead of being printed."""
        for name in self.names:
            if name not in self._saved:
                logger, keep = logging.getLogger(name), _Keep()
                self._saved[name] = (list(logger.handlers), keep)
                logger.handlers = [keep]

    def _restore(self) -> dict[str, tuple[list[logging.Handler], _Keep]]:
        saved, self._saved = self._saved, {}
        for name, (handlers, _) in saved.items():
            logging.getLogger(name).handlers = handlers
        return saved

    def release(self) -> None:
        """Print the held records through the loggers' own handlers, then stop holding."""
        for handlers, keep in self._restore().values():
            for record in keep.records:
                for handler in handlers:
                    if record.levelno >= handler.level:
                        handler.handle(record)

    def drop(self) -> None:
        """Stop holding; the held records are not printed."""
        self._restore()


#: The held logs of one ``lm-eval-rul`` command (:func:`lm_eval_rul.cli.main`).
HELD_LOGS = HeldLogs()


class PluginTaskWarningFilter(logging.Filter):
    """Drop the harness's per-task "Custom kwargs" warning for the plugin's tasks."""

    def __init__(self, task_names: set[str] | None = None) -> None:
        super().__init__()
        self._names = task_names  # None: the plugin's task folder, read at the first warning

    @property
    def task_names(self) -> set[str]:
        if self._names is None:
            from .task_names import plugin_task_names

            self._names = set(plugin_task_names())
        return self._names

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if _CUSTOM_KWARGS not in message:
            return True
        return message.split(_CUSTOM_KWARGS, 1)[0] not in self.task_names


_PLAIN_HARNESS_FILTER: PluginTaskWarningFilter | None = None


def quiet_plugin_task_warnings() -> None:
    """Drop the "Custom kwargs" warning of the plugin's tasks under plain ``lm_eval`` too:
    the task folders' ``utils.py`` call this when the harness imports them (idempotent)."""
    global _PLAIN_HARNESS_FILTER
    if _PLAIN_HARNESS_FILTER is None:
        _PLAIN_HARNESS_FILTER = PluginTaskWarningFilter()
        logging.getLogger(task_logger_name()).addFilter(_PLAIN_HARNESS_FILTER)


@contextlib.contextmanager
def quiet_harness_logs() -> Iterator[None]:
    """While a ``run`` executes: the filter on the harness's task logger, the quiet git."""
    import lm_eval.evaluator as evaluator

    from .task_names import plugin_task_names

    task_logger = logging.getLogger(task_logger_name())
    warning_filter = PluginTaskWarningFilter(set(plugin_task_names()))
    task_logger.addFilter(warning_filter)
    original_hash = evaluator.get_git_commit_hash
    evaluator.get_git_commit_hash = quiet_git_hash
    try:
        yield
    finally:
        evaluator.get_git_commit_hash = original_hash
        task_logger.removeFilter(warning_filter)
