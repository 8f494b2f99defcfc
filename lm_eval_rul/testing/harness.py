"""Run the ``lm-eval-rul`` CLI (in a subprocess, or in-process for its one-line errors) and
read back the harness's output folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["OFFLINE_ENV", "run_cli", "cli_error_line", "text_run_args", "read_output"]

#: The environment of test subprocesses: nothing may reach the Hugging Face hub.
OFFLINE_ENV: dict[str, str] = {
    **os.environ,
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
}


_OFFLINE_KEYS = (
    "HF_HUB_OFFLINE",
    "HF_DATASETS_OFFLINE",
    "TRANSFORMERS_OFFLINE",
    "TOKENIZERS_PARALLELISM",
)


def run_cli(
    args: Sequence[str],
    *,
    program: Sequence[str] | None = None,
    check: bool = True,
    timeout: float = 600,
    cwd: str | os.PathLike[str] | None = None,
) -> subprocess.CompletedProcess:
    """Run ``python -m lm_eval_rul ARGS`` (or ``program ARGS``) offline, capturing output.

    With ``check`` a non-zero exit raises ``AssertionError`` holding the output's tail;
    ``cwd`` runs it from another folder (e.g. outside any git clone).
    """
    command = [*(program or [sys.executable, "-m", "lm_eval_rul"]), *map(str, args)]
    env = {**os.environ, **{k: OFFLINE_ENV[k] for k in _OFFLINE_KEYS}}  # env at call time
    done = subprocess.run(
        command, capture_output=True, text=True, env=env, timeout=timeout, cwd=cwd
    )
    if check:
        assert done.returncode == 0, (
            f"{command} failed:\n{done.stdout[-3000:]}\n{done.stderr[-5000:]}"
        )
    return done


def cli_error_line(argv: Sequence[Any], capsys: Any) -> str:
    """Run ``lm-eval-rul ARGV`` in-process; it must exit with 2 and print one error line.

    ``capsys`` is pytest's capture fixture (anything with ``readouterr()``). Returns that
    line; raises ``AssertionError`` when the command succeeds, exits otherwise, or prints
    more than one error line.
    """
    from ..cli import main

    try:
        main([str(a) for a in argv])
    except SystemExit as exited:
        assert exited.code == 2, f"exit status {exited.code}, not 2"
    else:
        raise AssertionError(f"lm-eval-rul {' '.join(map(str, argv))} did not fail")
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "error:" in line]
    assert len(lines) == 1, err
    tail = err[err.index(lines[0]) :].strip()
    assert tail == lines[0], f"the error is more than one line:\n{tail}"
    return lines[0]


def text_run_args(
    model: str | os.PathLike[str],
    data_dir: str | os.PathLike[str],
    out: str | os.PathLike[str],
    tasks: str,
    *extra: str,
    batch_size: int = 8,
) -> list[str]:
    """``run`` arguments for the ``hf`` model on the fixture files of ``data_dir``.

    ``data_dir`` holds ``rul.json`` and ``muchomusic.csv`` (see :mod:`.fixtures`).
    """
    data_dir = Path(data_dir)
    metadata = {
        "rul_data_path": str(data_dir / "rul.json"),
        "muchomusic_data_path": str(data_dir / "muchomusic.csv"),
    }
    return [
        "run",
        "--model",
        "hf",
        "--model_args",
        f"pretrained={model},dtype=float32",
        "--tasks",
        tasks,
        "--metadata",
        json.dumps(metadata),
        "--device",
        "cpu",
        "--batch_size",
        str(batch_size),
        "--output_path",
        str(out),
        *extra,
    ]


def read_output(out: str | os.PathLike[str]) -> tuple[dict[str, Any], dict[str, list[dict]]]:
    """The one results JSON below ``out`` and the logged samples per task, by the tasks' own
    names on either harness release (lm-eval 0.5's ``group::task`` read as ``task``)."""
    from ..harness_compat import plain_results, plain_task_name

    results_files = sorted(Path(out).rglob("results_*.json"))
    assert len(results_files) == 1, f"expected one results file below {out}: {results_files}"
    samples = {}
    for path in Path(out).rglob("samples_*.jsonl"):
        task = path.name[len("samples_") :].rsplit("_", 1)[0]
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        samples[plain_task_name(task)] = rows
    results, _ = plain_results(json.loads(results_files[0].read_text()))
    return results, samples
