"""Quiet, honest logs: the harness's lines that say nothing about the plugin's tasks go.

* lm-eval warns once per task whose data comes from a ``custom_dataset`` function that
  "Custom kwargs can be passed to `--metadata`" (8 times for ``rul_muchomusic`` +
  ``rul_muchomusic_gen``); the plugin's tasks document their ``--metadata`` keys, so the
  warning is dropped for them (other tasks keep it) by
  :class:`lm_eval_rul.logs.PluginTaskWarningFilter`, which the task folders install too.
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
from ..logs import PluginTaskWarningFilter

__all__ = [
    "HeldLogs",
    "HELD_LOGS",
    "quiet_git_hash",
    "quiet_harness_logs",
]

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



@contextlib.contextmanager
def quiet_harness_logs() -> Iterator[None]:
    """While a ``run`` executes: the filter on the harness's task logger, the quiet git."""
    import lm_eval.evaluator as evaluator

    from ..catalogue import plugin_task_names

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
