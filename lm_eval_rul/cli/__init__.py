"""``lm-eval-rul``: the harness's own CLI with this plugin's tasks and models registered.

``run``, ``ls`` and ``validate`` are lm-eval's, with the plugin's task folder added
to ``--include_path``; the plugin's own subcommands (one module each in this
package) are added beside them. Heavy imports happen inside each command, so
``--help`` stays instant. While a command runs, every log line (the harness's too) and
its one-line error have the credentials of its model arguments and environment masked
(:mod:`lm_eval_rul.masking`).

A first word that is no command (``lm-eval-rul reprot runs/``) is refused with
:class:`UnknownCommandError` (the nearest command and the list); the harness's own form
without a command (``lm-eval-rul --model hf --tasks ...``) still means ``run``.

Public names: :func:`main` (the console script), :class:`PluginCLI`,
:class:`UnknownCommandError`, :data:`SUBCOMMAND_MODULES`.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Any

from lm_eval._cli import HarnessCLI

from .. import registration
from ..errors import UserInputError
from ..masking import mask, mask_logs, mask_url, url_has_credentials, url_secrets
from .help import DESCRIPTION, EPILOG, add_run_help
from .interrupted import RunInterrupted
from .quiet import HELD_LOGS

__all__ = ["main", "PluginCLI", "UnknownCommandError", "SUBCOMMAND_MODULES"]

#: Modules under ``lm_eval_rul.cli`` that each define ``add_parser(subparsers)``.
SUBCOMMAND_MODULES: tuple[str, ...] = (
    "tasks_dir",
    "report",
    "pi",
    "build",
    "diagnose",
    "reparse",
    "parse",
    "bridge",
    "subset",
)

#: Harness subcommands that read task folders.
_TASK_COMMANDS = ("run", "ls", "validate")


class UnknownCommandError(UserInputError):
    """The first word of the command line is not one of ``lm-eval-rul``'s commands."""


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
        commands = list(self._subparsers.choices)
        if argv and argv[0] not in commands and not argv[0].startswith("-"):
            import difflib

            near = difflib.get_close_matches(argv[0], commands, n=1, cutoff=0.5)
            raise UnknownCommandError(
                f"unknown command {argv[0]!r}"
                + (f" (did you mean {near[0]}?)" if near else "")
                + f". The commands: {', '.join(commands)}; see lm-eval-rul --help."
            )
        if len(argv) > 1 and argv[0] not in commands and argv[0] not in ("-h", "--help"):
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
        from ..included import included

        command = getattr(args, "command", None)
        if command not in _TASK_COMMANDS:
            self._execute(args, command)
            return
        # the user's folders checked, their descriptors the catalogue's for the command
        with included(getattr(args, "include_path", None)):
            args.include_path = _with_plugin_tasks(getattr(args, "include_path", None))
            self._execute(args, command)

    def _execute(self, args: argparse.Namespace, command: str | None) -> None:
        if command != "run":
            super().execute(args)
            return
        from .run import check_command_line, run_hooks  # checks before the model; votes after

        _settle_run_flags(args)
        check_command_line(args)
        audio_check = vars(args).pop("audio_check", "header")
        with run_hooks(args, audio_check=audio_check):
            super().execute(args)


def _settle_run_flags(args: argparse.Namespace) -> None:
    """``device=``/``batch_size=`` in ``--model_args`` taken as their flags (or refused when
    the flags say otherwise), so the harness does not pass them to the model twice."""
    from ..model_flags import MODEL_FLAGS, settle_model_flags

    # --batch_size is absent from the namespace when not given (argparse.SUPPRESS)
    flags = {name: vars(args).get(name) for name in MODEL_FLAGS}
    if not isinstance(args.model_args, dict) or not set(MODEL_FLAGS) & set(args.model_args):
        return
    args.model_args, chosen = settle_model_flags(args.model_args, flags)
    for name, value in chosen.items():
        if value is not None:
            setattr(args, name, value)


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
    from ..questions.reading import read_once

    setup_logging()
    _share_harness_logging()
    registration.register_models()
    cli = PluginCLI()
    args = argparse.Namespace(command="run")  # what a failed parse of the run line names
    HELD_LOGS.hold()  # run's setup lines wait for its checks (released in run_hooks)
    secrets: list[str] = []
    try:
        args = cli.parse_args()
        if getattr(args, "command", None) != "run":
            HELD_LOGS.release()
        given = [vars(args).get(name) for name in _ARGS_OPTIONS]
        _warn_url_credentials(given)
        # the harness's log lines masked too, and every URL's credentials, whatever the
        # option (--metadata audio_dir...) or the library quoting it; each file read once
        options = url_secrets(list(vars(args).values()))
        with mask_logs(*given, secrets=options) as secrets, read_once():
            cli.execute(args)
    except RunInterrupted as stopped:  # Ctrl-C: what was kept, not a traceback
        HELD_LOGS.drop()
        print(f"lm-eval-rul run: {stopped}", file=sys.stderr)
        raise SystemExit(130) from None
    except (UserInputError, FileNotFoundError) as error:
        # Bad input, not a bug: the message names what is wrong and the fix, on the first
        # line printed (the held setup lines of a run that does not happen are dropped).
        HELD_LOGS.drop()
        command = "" if isinstance(error, UnknownCommandError) else getattr(args, "command", "")
        where = " ".join(filter(None, ("lm-eval-rul", command)))
        text = mask(f"{type(error).__name__}: {error}", secrets)
        print(f"{where}: error: {text}", file=sys.stderr)
        raise SystemExit(2) from None
    finally:
        HELD_LOGS.release()


#: The options that hold a model's ``key=value`` arguments, in every subcommand.
_ARGS_OPTIONS = ("model_args", "generator_args", "judge_args", "parser_args")


def _warn_url_credentials(given: list[Any]) -> None:
    """Warn about a password or token written into a URL of the model arguments."""
    import logging

    for value in given:
        text = value if isinstance(value, str) else " ".join(map(str, (value or {}).values()))
        if url_has_credentials(text):
            logging.getLogger(__name__).warning(
                "a URL in the model arguments holds a password or token (%s): it is masked in logs "
                "and results files, but stays in your shell history; prefer an API key in "
                "an environment variable (api_key_env= for lalm-api, OPENAI_API_KEY for the "
                "harness's API models).",
                mask_url(text),
            )
