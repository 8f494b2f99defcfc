"""``lm-eval-rul tasks-dir``: print the installed task folder (for plain ``lm_eval``)."""

from __future__ import annotations

import argparse
import textwrap


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "tasks-dir",
        help="Print the folder of this plugin's task YAMLs",
        description="Print the folder holding lm-eval-rul's task YAMLs.",
        epilog=textwrap.dedent(
            """\
            example:
              lm_eval --include_path "$(lm-eval-rul tasks-dir)" --tasks rul_muchomusic \\
                  --model hf --model_args pretrained=Qwen/Qwen2.5-0.5B-Instruct
            """
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.set_defaults(func=_execute)


def _execute(args: argparse.Namespace) -> None:
    from ..registration import tasks_dir

    print(tasks_dir())
