"""The plugin's filter on the harness's log: its per-task "Custom kwargs" warning dropped
for the plugin's own tasks.

lm-eval warns once per task whose data comes from a ``custom_dataset`` function that
"Custom kwargs can be passed to `--metadata`" (8 times for ``rul_muchomusic`` +
``rul_muchomusic_gen``); the plugin's tasks document their ``--metadata`` keys, so the
warning is dropped for them (other tasks keep it), on the logger of the harness's task
module on either release (:func:`~lm_eval_rul.harness_compat.task_logger_name`).

The task folders' ``utils.py`` install it when the harness imports them (plain ``lm_eval``
runs too: :func:`quiet_plugin_task_warnings`); ``lm-eval-rul run`` installs its own for the
run (:func:`lm_eval_rul.cli.quiet.quiet_harness_logs`). It lives below both, so task code
imports nothing from the CLI.
"""

from __future__ import annotations

import logging

from .harness_compat import task_logger_name

__all__ = ["PluginTaskWarningFilter", "quiet_plugin_task_warnings"]

_CUSTOM_KWARGS = ": Custom kwargs can be passed to `--metadata`"


class PluginTaskWarningFilter(logging.Filter):
    """Drop the harness's per-task "Custom kwargs" warning for the plugin's tasks."""

    def __init__(self, task_names: set[str] | None = None) -> None:
        super().__init__()
        self._names = task_names  # None: the plugin's task folder, read at the first warning

    @property
    def task_names(self) -> set[str]:
        if self._names is None:
            from .catalogue import plugin_task_names

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
