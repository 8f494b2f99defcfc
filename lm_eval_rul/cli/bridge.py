"""``lm-eval-rul bridge``: the subcommand of :mod:`lm_eval_rul.bridge.command` (the bridge's
server file, client and command live together in :mod:`lm_eval_rul.bridge`)."""

from ..bridge.command import add_parser

__all__ = ["add_parser"]
