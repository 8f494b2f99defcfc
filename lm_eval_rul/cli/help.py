"""What ``lm-eval-rul --help`` and ``lm-eval-rul run --help`` say: this tool, its examples.

The harness's parsers are reused (same flags as ``lm_eval``); only their texts change,
and ``run`` gains ``--audio_check``.
"""

from __future__ import annotations

import argparse
import re
import textwrap

from .limits import RUN_LIMIT_HELP

__all__ = ["DESCRIPTION", "EPILOG", "RUN_USAGE", "RUN_EPILOG", "add_run_help"]

DESCRIPTION = textwrap.fill(
    "lm-eval-rul: is your audio language model really listening to the music, or answering "
    "from text priors? The lm-evaluation-harness CLI (same run / ls / validate, same flags) "
    "with the RUL-MuChoMusic, MuChoMusic and factual-comprehension tasks and the `lalm`, "
    "`lalm-vllm` and `lalm-api` audio models registered, plus pi, build, report, diagnose, "
    "reparse, parse (how the factual parser reads an answer), bridge (research audio LMs "
    "in their own environment, behind lalm-api), subset (the items audio models needed the "
    "audio for, as a question file) and tasks-dir.",
    width=88,
)

EPILOG = textwrap.dedent(
    """\
    examples:
      # a text-only model on RUL-MuChoMusic's four folds: accuracy and Perceptual Index
      lm-eval-rul run --model hf --model_args pretrained=Qwen/Qwen2.5-0.5B-Instruct \\
          --tasks rul_muchomusic --batch_size 8

      # an audio LM hearing noise instead of its clips (audio=original: the clips)
      lm-eval-rul run --model lalm \\
          --model_args pretrained=Qwen/Qwen2-Audio-7B-Instruct,audio=noise \\
          --tasks rul_muchomusic --metadata '{"audio_dir": "clips/"}' \\
          --output_path out/noise --log_samples

      lm-eval-rul pi --data RUL-MuchoMusic.json --model hf \\
          --model_args pretrained=Qwen/Qwen2.5-0.5B-Instruct --output pi.jsonl
      lm-eval-rul report out/text out/original out/noise --out report/
      lm-eval-rul ls tasks          # every task; this plugin's are muchomusic*, rul_muchomusic*

    `lm-eval-rul COMMAND --help` shows each command's options. Offline: give local folders
    (--model_args pretrained=/path --metadata '{"data_path": "RUL-MuchoMusic.json"}').
    """
)

RUN_USAGE = (
    "lm-eval-rul run --model hf|lalm|... --model_args pretrained=NAME_OR_PATH[,k=v...] "
    "--tasks TASK[,TASK...] [--metadata JSON] [options]"
)

RUN_EPILOG = textwrap.dedent(
    """\
    examples:
      # text-only baseline and Perceptual Index on the four leave-one-out folds
      lm-eval-rul run --model hf --model_args pretrained=Qwen/Qwen2.5-0.5B-Instruct \\
          --tasks rul_muchomusic --batch_size 8

      # both benchmarks from local files (no network needed)
      lm-eval-rul run --model hf --model_args pretrained=/models/qwen2.5-0.5b \\
          --tasks rul_muchomusic,muchomusic \\
          --metadata '{"rul_data_path": "RUL-MuchoMusic.json",
                       "muchomusic_data_path": "muchomusic.csv"}'

      # an audio LM: original clips, then noise (same command, audio=noise)
      lm-eval-rul run --model lalm \\
          --model_args pretrained=Qwen/Qwen2-Audio-7B-Instruct,audio=original,dtype=bfloat16 \\
          --tasks rul_muchomusic --metadata '{"audio_dir": "clips/"}' \\
          --output_path out/original --log_samples

    Before any model loads, the run checks the model_args, that the model can be loaded
    (local folder, cache, or one request to the hub), the question files and --metadata,
    and for --model lalm every clip (--audio_check). `lm-eval-rul ls tasks` lists every
    task. lalm keeps its results in a resumable cache (model_args results_cache=PATH|none).
    See the README and docs/ (your own benchmark: docs/your_own_benchmark.md).
    """
)
#: A task or group a YAML declares at its top level, and the members a group lists.
_TASK = re.compile(r"^task:\s*([A-Za-z0-9_.-]+)\s*$", re.MULTILINE)
_GROUP = re.compile(r"^group:\s*([A-Za-z0-9_.-]+)\s*$", re.MULTILINE)
_MEMBER = re.compile(r"^\s+-\s+([A-Za-z0-9_.-]+)\s*$", re.MULTILINE)


def catalogue_tasks() -> list[tuple[str, list[str]]]:
    """(benchmark name, its groups, the tasks no group holds and those its descriptor's
    ``report_names`` name) for every benchmark of the catalogue, read from its folder's
    YAMLs, so a new task folder is listed without touching this module."""
    from ..catalogue import benchmarks, tasks_dir

    root = tasks_dir()
    listed = []
    for benchmark in benchmarks():
        yamls = sorted((root / benchmark.folder).glob("*.yaml"))
        texts = [path.read_text(encoding="utf-8") for path in yamls]
        groups = {m.group(1) for text in texts for m in _GROUP.finditer(text)}
        members = {
            m.group(1) for text in texts if _GROUP.search(text) for m in _MEMBER.finditer(text)
        }
        tasks = {m.group(1) for text in texts for m in _TASK.finditer(text)}
        named = set(benchmark.report_names) & tasks  # the question sets report names
        shown = sorted(groups | (tasks - members) | named)
        if shown:
            listed.append((benchmark.name, shown))
    return listed


def run_epilog() -> str:
    """``run --help``'s epilog: the examples, then the plugin's tasks by benchmark."""
    lines = ["tasks of this plugin, by benchmark (rul_* groups run the four folds):"]
    for name, tasks in catalogue_tasks():
        lines.append(
            textwrap.fill(
                ", ".join(tasks), width=88, initial_indent=f"  {name}: ", subsequent_indent="      "
            )
        )
    return RUN_EPILOG + "\n" + "\n".join(lines) + "\n"



def add_run_help(parser: argparse.ArgumentParser) -> None:
    """Give the harness's ``run`` parser this tool's usage and examples, and ``--audio_check``."""
    parser.usage = RUN_USAGE
    parser.description = textwrap.fill(
        "Evaluate a model on lm-eval tasks, the plugin's music-QA tasks included (the "
        "harness's run, with checks before the model loads).",
        width=88,
    )
    parser.epilog = run_epilog()
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    for action in parser._actions:  # the harness's --limit: its 1.0 is one document
        if action.dest == "limit":
            action.help = RUN_LIMIT_HELP
    group = parser.add_argument_group("lm-eval-rul")
    group.add_argument(
        "--audio_check",
        choices=("header", "decode", "none"),
        default="header",
        help="Before an audio model loads, check every clip: header (read each file's "
        "header, default), decode (decode each clip fully), none",
    )
