"""What ``lm-eval-rul --help`` and ``lm-eval-rul run --help`` say: this tool, its examples.

The harness's parsers are reused (same flags as ``lm_eval``); only their texts change,
and ``run`` gains ``--audio_check``.
"""

from __future__ import annotations

import argparse
import textwrap

from .limits import RUN_LIMIT_HELP

__all__ = ["DESCRIPTION", "EPILOG", "RUN_USAGE", "RUN_EPILOG", "add_run_help"]

DESCRIPTION = textwrap.fill(
    "lm-eval-rul: is your audio language model really listening to the music, or answering "
    "from text priors? The lm-evaluation-harness CLI (same run / ls / validate, same flags) "
    "with the RUL-MuChoMusic, MuChoMusic and factual-comprehension tasks and the `lalm`, "
    "`lalm-vllm` and `lalm-api` audio models registered, plus pi, build, report, diagnose, "
    "reparse, parse (how the factual parser reads an answer), bridge (research audio LMs "
    "in their own environment, behind lalm-api) and tasks-dir.",
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
    and for --model lalm every clip (--audio_check). Tasks: muchomusic, muchomusic_gen,
    rul_muchomusic, rul_muchomusic_gen (groups of _fold0.._fold3); factual
    comprehension: factual (every factual task), factual_instrument, factual_composer,
    factual_genre, factual_regional, factual_mood, factual_timesig, factual_binary,
    factual_truefalse (docs/factual.md). `lm-eval-rul ls tasks` lists every task. lalm
    keeps its results in a resumable cache (model_args results_cache=PATH|none). See the
    README and docs/.
    """
)


def add_run_help(parser: argparse.ArgumentParser) -> None:
    """Give the harness's ``run`` parser this tool's usage and examples, and ``--audio_check``."""
    parser.usage = RUN_USAGE
    parser.description = textwrap.fill(
        "Evaluate a model on lm-eval tasks, the plugin's music-QA tasks included (the "
        "harness's run, with checks before the model loads).",
        width=88,
    )
    parser.epilog = RUN_EPILOG
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
