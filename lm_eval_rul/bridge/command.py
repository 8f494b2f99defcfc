"""``lm-eval-rul bridge --write FILE``: write the single-file server for research audio LMs.

FILE is a copy of :mod:`lm_eval_rul.bridge.server` (Python >= 3.8, the standard
library, numpy and soundfile only), to run in the model's own environment behind
``lalm-api``; docs/bridge.md has a recipe per model.
"""

from __future__ import annotations

import argparse
import shutil
import textwrap
from pathlib import Path

from ..errors import UserInputError

__all__ = ["add_parser", "write_server", "BridgeWriteError"]


class BridgeWriteError(UserInputError):
    """``--write`` names a file that cannot be written."""


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "bridge",
        help="Write a one-file server that puts a research audio LM (SALMONN, LTU, ...) "
        "behind lalm-api",
        description=textwrap.fill(
            "Write a single-file HTTP server (Python >= 3.8, numpy and soundfile only) to copy "
            "into a research model's own environment. It loads your adapter file, which "
            "defines generate(audio, sampling_rate, prompt, max_new_tokens) -> str and, for "
            "letter scoring and the Perceptual Index, loglikelihood(audio, sampling_rate, "
            "context, continuation) -> float, plus optional MAX_AUDIO_SECONDS, CHUNKED, NAME, "
            "THREAD_SAFE, WORKDIR (the checkout to run from; or --chdir DIR) and "
            "TRANSIENT_ERRORS. lalm-api reads the window and chunking the server declares. "
            "An adapter failure stops the run at once with its message (HTTP 422); a "
            "transient one is retried (HTTP 503). Recipes per model: docs/bridge.md.",
            width=88,
        ),
        epilog=textwrap.dedent(
            """\
            example:
              lm-eval-rul bridge --write bridge.py
              # in the model's environment (binds 127.0.0.1; `python bridge.py --help`):
              python bridge.py --adapter salmonn_adapter.py --port 8000
              # here:
              lm-eval-rul run --model lalm-api \\
                  --model_args base_url=http://127.0.0.1:8000/v1,model=salmonn,audio=original \\
                  --tasks rul_muchomusic --metadata '{"audio_dir": "clips/"}' --output_path out/
            """
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--write", required=True, metavar="FILE", help="Where to write the server (a .py file)"
    )
    parser.add_argument("--force", action="store_true", help="Overwrite FILE if it exists")
    parser.set_defaults(func=_execute)


def write_server(path: str | Path, *, force: bool = False) -> Path:
    """Copy the bridge server to ``path``; returns it.

    Raises:
        BridgeWriteError: ``path`` exists (without ``force``) or is a folder, or its
            folder does not exist.
    """
    from . import server

    target = Path(path)
    if target.is_dir():
        raise BridgeWriteError(
            f"bridge --write {path}: is a folder; give a file name, e.g. {target / 'bridge.py'}"
        )
    if target.exists() and not force:
        raise BridgeWriteError(f"bridge --write {path}: the file exists; add --force to replace it")
    if not target.parent.is_dir():
        raise BridgeWriteError(f"bridge --write {path}: folder {target.parent} does not exist")
    shutil.copyfile(server.__file__, target)
    return target


def _execute(args: argparse.Namespace) -> None:
    target = write_server(args.write, force=args.force)
    print(
        f"wrote {target}: copy it into the model's environment and run\n"
        f"  python {target.name} --adapter my_adapter.py [--host 127.0.0.1] [--port 8000]\n"
        "(recipes per model: docs/bridge.md; `python "
        f"{target.name} --help` says what the adapter defines)"
    )
