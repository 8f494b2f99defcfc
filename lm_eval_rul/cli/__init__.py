"""``lm-eval-rul``: the harness's own CLI with this plugin's tasks and models registered.

``run``, ``ls`` and ``validate`` are lm-eval's, with the plugin's task folder added
to ``--include_path``; the plugin's own subcommands (one module each in this
package) are added beside them. Heavy imports happen inside each command, so
``--help`` stays instant.

Public names: :func:`main` (the console script), :class:`PluginCLI`,
:data:`SUBCOMMAND_MODULES`.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import sys

from lm_eval._cli import HarnessCLI

from .. import registration

__all__ = ["main", "PluginCLI", "SUBCOMMAND_MODULES"]

#: Modules under ``lm_eval_rul.cli`` that each define ``add_parser(subparsers)``.
SUBCOMMAND_MODULES: tuple[str, ...] = ("tasks_dir", "report", "pi", "build", "diagnose", "reparse")

#: Harness subcommands that read task folders.
_TASK_COMMANDS = ("run", "ls", "validate")


class PluginCLI(HarnessCLI):
    """lm-eval's ``HarnessCLI`` plus the plugin's subcommands."""

    def __init__(self) -> None:
        super().__init__()
        self._parser.prog = "lm-eval-rul"
        # Subparsers copy the program name when created: rename the harness's own ones and
        # make ours start from the plugin's name.
        self._subparsers._prog_prefix = "lm-eval-rul"
        for name, parser in self._subparsers.choices.items():
            parser.prog = f"lm-eval-rul {name}"
        for name in SUBCOMMAND_MODULES:
            module = importlib.import_module(f"{__name__}.{name}")
            module.add_parser(self._subparsers)

    def execute(self, args: argparse.Namespace) -> None:
        command = getattr(args, "command", None)
        if command in _TASK_COMMANDS:
            args.include_path = _with_plugin_tasks(getattr(args, "include_path", None))
        if command == "run" and _uses_plugin_mc_tasks(args.tasks):
            from ..mcqa.letters import warn_for_model_args

            warn_for_model_args(args.model, args.model_args)
        from .run import run_hooks  # audio check before the model; majority vote after

        with run_hooks(args) if command == "run" else contextlib.nullcontext():
            super().execute(args)


def _uses_plugin_mc_tasks(tasks: list[str] | str | None) -> bool:
    names = tasks.split(",") if isinstance(tasks, str) else tasks or []
    return any("muchomusic" in name and "_gen" not in name for name in names)


def _with_plugin_tasks(include_path: str | list[str] | None) -> list[str] | str:
    ours = str(registration.tasks_dir())
    if not include_path:
        return ours
    paths = include_path if isinstance(include_path, list) else [include_path]
    return [ours, *[p for p in paths if p != ours]]


def _share_harness_logging() -> None:
    """Send the plugin's log records (``lm_eval_rul.*``) through the harness's handler."""
    import logging

    harness, plugin = logging.getLogger("lm_eval"), logging.getLogger("lm_eval_rul")
    plugin.setLevel(harness.level)
    for handler in harness.handlers:
        if handler not in plugin.handlers:
            plugin.addHandler(handler)
    plugin.propagate = False


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``lm-eval-rul`` console script and ``python -m lm_eval_rul``."""
    from lm_eval.utils import setup_logging

    if argv is not None:
        sys.argv = [sys.argv[0], *argv]
    from ..errors import UserInputError

    setup_logging()
    _share_harness_logging()
    registration.register_models()
    cli = PluginCLI()
    args = cli.parse_args()
    try:
        cli.execute(args)
    except (UserInputError, FileNotFoundError) as error:
        # Bad input, not a bug: the message names what is wrong and the fix.
        command = getattr(args, "command", None) or ""
        print(f"lm-eval-rul {command}: error: {type(error).__name__}: {error}", file=sys.stderr)
        raise SystemExit(2) from None
