"""The results files of a RUN_DIR given to ``lm-eval-rul report``, and what such a path
holds when it is not harness output, so the error names it and the flag or command that
takes it."""

from __future__ import annotations

import re
from pathlib import Path

from ..questions.file_kinds import CSV, PI, POOLS, QUESTIONS, sniff_data_file
from .samples import RunReadError

__all__ = ["find_results_files", "not_a_run"]

#: Files ``build`` keeps beside its output (checkpoints, stage metadata, its report).
_BOOKKEEPING = re.compile(r"\.(ckpt|meta|report)\.jsonl?$")
_RUN_HINT = "lm-eval-rul run ... --output_path DIR --log_samples, then report on DIR"
#: The run of a question file of any layout (music_mc reads every one the readers accept:
#: 2 to 26 options per item, where rul_muchomusic wants exactly 4 distractors).
_QUESTION_RUN = (
    "a question file is evaluated first: lm-eval-rul run --model hf --model_args "
    "pretrained=MODEL --tasks music_mc --metadata '{\"mc_data_path\": \"FILE\"}' "
    "--output_path DIR --log_samples, then report on DIR"
)
#: What to do with each kind of data file instead of passing it as RUN_DIR.
_INSTEAD = {
    PI: "PI files go to the report as --pi NAME=FILE (NAME: its benchmark, e.g. rul_muchomusic)",
    QUESTIONS: _QUESTION_RUN,
    POOLS: "pools are the input of lm-eval-rul build --pools; evaluate what it writes with "
    + _QUESTION_RUN.removeprefix("a question file is evaluated first: ").replace(
        "music_mc", "rul_music_mc"),
    CSV: _QUESTION_RUN,
}


def _instead(kind: str, file: Path) -> str:
    """What to do with ``file`` of ``kind`` (its path in place of ``FILE``)."""
    return _INSTEAD.get(kind, f"give the folder passed to {_RUN_HINT}").replace("FILE", str(file))


def _describe_file(path: Path) -> str:
    found = sniff_data_file(path)
    return f"{path} is {found.description}, not harness output; {_instead(found.kind, path)}"


def not_a_run(path: Path) -> str:
    """Why ``path`` (a file, or a folder without ``results_*.json``) is not a run, in words.

    A folder is described by what it holds: logged samples without their results (a run
    that stopped), ``lm-eval-rul pi`` or ``build`` output, or nothing of ours.
    """
    if path.is_file():
        return _describe_file(path)
    files = [p for p in path.rglob("*") if p.is_file()]
    where = f"no results_*.json under {str(path)!r}"
    if any(p.name.startswith("samples_") and p.suffix == ".jsonl" for p in files):
        return (
            f"{where}, but it holds samples_*.jsonl: the harness writes results_*.json when a "
            "run ends, so this run stopped early; rerun it (same --output_path)"
        )
    data = [
        p
        for p in sorted(files)
        if p.suffix in (".json", ".jsonl", ".csv") and not _BOOKKEEPING.search(p.name)
    ]
    kinds = {p: sniff_data_file(p) for p in data}
    for wanted in (PI, QUESTIONS, POOLS, CSV):
        for file, found in kinds.items():
            if found.kind == wanted:
                return (
                    f"{where}; it holds {file.name}, {found.description}: {_instead(wanted, file)}"
                )
    held = f"{len(files)} file" + ("s" if len(files) > 1 else "")
    contents = f"it holds {held}, none of ours" if files else "it is empty"
    return (
        f"{where} ({contents}): give the folder passed to the harness as --output_path "
        "(e.g. lm-eval-rul run ... --output_path DIR --log_samples)"
    )


def find_results_files(run_dir: str | Path) -> list[Path]:
    """Every ``results_*.json`` under ``run_dir`` (or ``run_dir`` itself if it is one).

    Raises:
        RunReadError: The folder does not exist or holds no results file.
    """
    path = Path(run_dir)
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise RunReadError(f"run folder {str(path)!r} does not exist")
    found = sorted(path.rglob("results_*.json"))
    if not found:
        raise RunReadError(not_a_run(path))
    return found
