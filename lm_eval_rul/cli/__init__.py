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
import importlib
import sys

from lm_eval._cli import HarnessCLI

from .. import registration
from .help import DESCRIPTION, EPILOG, add_run_help

__all__ = ["main", "PluginCLI", "SUBCOMMAND_MODULES"]

#: Modules under ``lm_eval_rul.cli`` that each define ``add_parser(subparsers)``.
SUBCOMMAND_MODULES: tuple[str, ...] = ("tasks_dir", "report", "pi", "build", "diagnose", "reparse")

#: Harness subcommands that read task folders.
_TASK_COMMANDS = ("run", "ls", "validate")


class PluginCLI(HarnessCLI):
    """lm-eval's ``HarnessCLI`` plus the plugin's subcommands, help and pre-run checks."""

    def __init__(self) -> None:
        super().__init__()
        self._parser.prog = "lm-eval-rul"
        self._parser.description = DESCRIPTION
        self._parser.epilog = EPILOG
        # Subparsers copy the program name when created: rename the harness's own ones and
        # make ours start from the plugin's name.
        self._subparsers._prog_prefix = "lm-eval-rul"
        for name, parser in self._subparsers.choices.items():
            parser.prog = f"lm-eval-rul {name}"
        add_run_help(self._subparsers.choices["run"])
        for name in SUBCOMMAND_MODULES:
            module = importlib.import_module(f"{__name__}.{name}")
            module.add_parser(self._subparsers)

    def parse_args(self) -> argparse.Namespace:
        """The harness's parsing, but a bad flag is reported with its subcommand's usage."""
        argv = sys.argv[1:]
        if len(argv) > 1 and argv[0] not in self._subparsers.choices and argv[0] not in (
            "-h",
            "--help",
        ):
            argv.insert(0, "run")  # the harness's legacy form: lm-eval-rul --model ...
        elif argv == ["run"]:
            self._subparsers.choices["run"].print_help()
            raise SystemExit(0)
        from .run_inputs import check_metadata_json

        check_metadata_json(argv)  # before argparse: the harness raises a bare ValueError
        args, extra = self._parser.parse_known_args(argv)
        if extra:
            parser = self._subparsers.choices.get(getattr(args, "command", None), self._parser)
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        return args

    def execute(self, args: argparse.Namespace) -> None:
        command = getattr(args, "command", None)
        if command in _TASK_COMMANDS:
            args.include_path = _with_plugin_tasks(getattr(args, "include_path", None))
        if command != "run":
            super().execute(args)
            return
        from .run import check_command_line, run_hooks  # checks before the model; votes after

        check_command_line(args)
        audio_check = vars(args).pop("audio_check", "header")
        with run_hooks(args, audio_check=audio_check):
            super().execute(args)


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
    from ..questions.reading import read_once

    setup_logging()
    _share_harness_logging()
    registration.register_models()
    cli = PluginCLI()
    args = argparse.Namespace(command="run")  # what a failed parse of the run line names
    try:
        args = cli.parse_args()
        with read_once():  # each data file is read and parsed once per command
            cli.execute(args)
    except (UserInputError, FileNotFoundError) as error:
        # Bad input, not a bug: the message names what is wrong and the fix.
        command = getattr(args, "command", None) or ""
        print(f"lm-eval-rul {command}: error: {type(error).__name__}: {error}", file=sys.stderr)
        raise SystemExit(2) from None
