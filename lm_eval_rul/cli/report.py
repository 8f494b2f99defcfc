"""``lm-eval-rul report``: tables, paired comparisons and figures from harness outputs."""

from __future__ import annotations

import argparse
import textwrap
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..report import PIFile


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "report",
        prog="lm-eval-rul report",
        help="Tables, confidence intervals and figures from harness output folders",
        description=(
            "Read the harness's output folders (--output_path ... --log_samples) of any "
            "number of runs and write REPORT_DIR/report.md, report.json and figures/*.png: "
            "accuracy per benchmark with bootstrap intervals, majority vote over folds, "
            "perception gain (original - noise/random/...), text leakage against a text "
            "backbone, per-question PI vs accuracy correlations, and accuracy by MuChoMusic's "
            "knowledge/reasoning categories, genre and source dataset."
        ),
        epilog=textwrap.dedent(
            """\
            examples:
              lm-eval-rul report runs/text runs/original runs/noise runs/none --out report
              lm-eval-rul report runs/* --out report --text-backbone Qwen2-7B-Instruct \\
                  --pi muchomusic=pi_mm.jsonl --pi rul_muchomusic=pi_rul.jsonl --by track \\
                  --muchomusic-csv muchomusic.csv
              lm-eval-rul report runs/original runs/random --parsed gpt=runs_gpt --out report
            """
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "run_dirs",
        nargs="+",
        metavar="RUN_DIR",
        help="a harness --output_path folder (or a model subfolder / results_*.json in it)",
    )
    parser.add_argument("--out", required=True, metavar="REPORT_DIR", help="folder to write")
    parser.add_argument(
        "--include_path",
        action="append",
        default=[],
        metavar="DIR",
        help="a folder of your own task folders (as given to run --include_path): their "
        "benchmark.py descriptors name your benchmarks in the report; repeatable",
    )
    parser.add_argument(
        "--pi",
        action="append",
        default=[],
        metavar="[NAME=]PI.jsonl",
        help=(
            'PI file from `lm-eval-rul pi` (rows {"id": ..., "pi": ..., "chance": ...}); '
            "repeatable. "
            "NAME (default: the file stem) labels its histogram; a NAME equal to a benchmark "
            "(muchomusic, rul_muchomusic) also gives that benchmark's PI for the correlations "
            "(otherwise the source_pi stored in the RUL data is used)"
        ),
    )
    parser.add_argument(
        "--text-backbone",
        metavar="NAME",
        help=(
            "model name or pretrained path of the text-only run to measure leakage against "
            "(default: the only text-only model, if there is exactly one)"
        ),
    )
    parser.add_argument(
        "--by",
        choices=("question", "track"),
        default="question",
        help="resampling unit of the bootstrap: question (default) or track (cluster bootstrap)",
    )
    parser.add_argument(
        "--muchomusic-csv",
        metavar="FILE",
        help=(
            "MuChoMusic's muchomusic.csv: break accuracy down by its knowledge and reasoning "
            "categories, genre and source dataset for every MuChoMusic and RUL-MuChoMusic run "
            "(RUL rows join it by question id). Default: the CSV the runs were given with "
            "--metadata (muchomusic_csv / muchomusic_data_path), if any"
        ),
    )
    parser.add_argument(
        "--parsed",
        action="append",
        default=[],
        metavar="NAME=DIR",
        help=(
            "a copy of the factual runs re-parsed by `lm-eval-rul reparse` (repeatable): the "
            "report compares each parser NAME with the runs' own lexicon parser and with the "
            "other NAMEs (label-set agreement, F1 difference, model ranking)"
        ),
    )
    parser.add_argument("--n-resamples", type=int, default=9999, help="bootstrap resamples")
    parser.add_argument("--seed", type=int, default=0, help="seed of every bootstrap (default 0)")
    parser.add_argument(
        "--confidence", type=float, default=0.95, help="confidence level (default 0.95)"
    )
    parser.add_argument(
        "--method",
        choices=("percentile", "basic", "BCa"),
        default="percentile",
        help="scipy.stats.bootstrap method (default percentile)",
    )
    parser.set_defaults(func=_execute)


def _pi_files(specs: list[str]) -> dict[str, PIFile]:
    """``--pi [NAME=]PATH`` options -> NAME -> the file's rows.

    Raises:
        ReportSettingsError: A NAME given twice.
        RunReadError: An unreadable PI file.
    """
    from pathlib import Path

    from ..report import ReportSettingsError, read_pi_file

    files: dict[str, PIFile] = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep:
            name, path = Path(spec).stem, spec
        if name in files:
            raise ReportSettingsError(
                f"--pi {spec}: the name {name!r} is given twice; use NAME=PATH with a "
                "different NAME for each file"
            )
        files[name] = read_pi_file(path)
    return files


def _parsed_runs(specs: list[str]) -> dict[str, list]:
    """``--parsed NAME=DIR`` options -> NAME -> the runs of DIR.

    Raises:
        ReportSettingsError: A spec without NAME=, or a NAME given twice.
        RunReadError: An unreadable folder.
    """
    from ..report import ReportSettingsError, load_runs

    parsed: dict[str, list] = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            raise ReportSettingsError(
                f"--parsed {spec}: give NAME=DIR (DIR written by lm-eval-rul reparse)"
            )
        if name in parsed or name == "lexicon":
            raise ReportSettingsError(
                f"--parsed {spec}: the name {name!r} is taken; give each parser its own NAME"
            )
        parsed[name] = load_runs([path])
    return parsed


def _execute(args: argparse.Namespace) -> None:
    """Run the report; bad input raises a ``UserInputError`` (printed by the CLI, exit 2)."""
    from ..files import check_output_folder
    from ..report import ReportSettings, build_report, load_runs, write_report
    from ..report.markdown import plural

    check_output_folder(args.out, flag="--out")  # before the runs are read

    settings = ReportSettings(
        confidence_level=args.confidence,
        n_resamples=args.n_resamples,
        seed=args.seed,
        by=args.by,
        method=args.method,
        text_backbone=args.text_backbone,
        pi_files=_pi_files(args.pi),
        muchomusic_csv=args.muchomusic_csv,
        parsed_runs=_parsed_runs(args.parsed),
    )
    from ..included import included

    with included(args.include_path):  # the user's descriptors: names, keys, categories
        runs = load_runs(args.run_dirs)
        report = build_report(runs, settings)
        paths = write_report(report, args.out)
    counts = (
        plural(len(runs), "run"),
        plural(len(report["benchmarks"]), "benchmark"),
        plural(len(report["factual"]["tasks"]), "factual task"),
        plural(len(report["tagging"]["tasks"]), "tagging task"),
    )
    print(", ".join(counts))
    for note in report["notes"]:
        print(f"note: {note}")
    print(f"wrote {paths['markdown']} and {paths['json']}")
    if "items" in paths:  # the section "Which items need the audio"
        print(f"wrote {paths['items']} (each item's listening class per model)")
