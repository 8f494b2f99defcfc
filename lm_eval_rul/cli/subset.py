"""``lm-eval-rul subset``: the listening subset of a benchmark, from a report folder.

Reads the report's section "Which items need the audio" (``report.json`` and
``items.csv``), keeps the items that the chosen models found ``needs_audio`` (all of them,
or at least ``--at-least`` of them), and writes them in the question file's own layout
(:func:`lm_eval_rul.questions.subsets.write_subset`) with a provenance record beside it
(``FILE.provenance.json``: the models, their runs, the rule, the source file).
"""

from __future__ import annotations

import argparse
import csv
import json
import textwrap
from pathlib import Path
from typing import Any

from ..errors import UserInputError

#: What the provenance record says of every subset.
CAUTION = (
    "chosen by the models that judged it: report results on it beside, never instead of, "
    "the full benchmark"
)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "subset",
        help="Write the items chosen models found to need the audio, as a question file",
        description=(
            "From a report folder (lm-eval-rul report with an original and a no-audio run "
            "of each model), write the question file of the items the chosen models found "
            "needs_audio (right with the clip, wrong in every no-audio run), in the layout "
            "of the file the runs read, with a provenance record FILE.provenance.json "
            "beside it. The file runs as a benchmark (--tasks music_mc --metadata "
            "mc_data_path=FILE)."
        ),
        epilog=textwrap.dedent(
            """\
            examples:
              lm-eval-rul subset report/ --benchmark rul_muchomusic --out listening.json
              lm-eval-rul subset report/ --benchmark My-Bench --models qwen2-audio,salmonn \\
                  --at-least 1 --out my_bench_listening.jsonl
            """
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("report_dir", metavar="REPORT_DIR", help="an lm-eval-rul report folder")
    parser.add_argument("--benchmark", required=True, help="the benchmark, as report names it")
    parser.add_argument(
        "--models",
        default=None,
        metavar="M1,M2",
        help="the models whose classes choose the items (default: every model of the section)",
    )
    parser.add_argument(
        "--at-least",
        type=int,
        default=None,
        metavar="K",
        dest="at_least",
        help="keep an item that at least K of the models found needs_audio (default: all)",
    )
    parser.add_argument("--out", required=True, metavar="FILE", help="the question file to write")
    parser.add_argument(
        "--source",
        default=None,
        metavar="FILE",
        help="the question file the runs read, when the report's path is not valid here",
    )
    parser.set_defaults(func=_execute)


def _section(report_dir: Path, benchmark: str) -> tuple[str, dict[str, Any]]:
    path = report_dir / "report.json"
    if not path.is_file():
        raise UserInputError(
            f"{report_dir} has no report.json; give a folder lm-eval-rul report wrote"
        )
    try:
        listening = json.loads(path.read_text(encoding="utf-8")).get("listening") or {}
    except (OSError, json.JSONDecodeError, AttributeError) as error:
        raise UserInputError(f"cannot read {path} ({error}); rerun the report") from None
    if not listening:
        raise UserInputError(
            f"{path} has no section 'Which items need the audio': it needs an original "
            "and a no-audio run (none, noise or silence) of each model; add them and rerun "
            "the report"
        )
    for key, data in listening.items():
        if benchmark in (key, data.get("name")):
            return key, data
    known = ", ".join(sorted(listening))
    raise UserInputError(f"--benchmark {benchmark!r} is not in the section; known: {known}")


def _needs_audio(report_dir: Path, benchmark: str, models: list[str]) -> dict[str, set[str]]:
    """Model -> its needs_audio ids, from ``items.csv``."""
    path = report_dir / "items.csv"
    if not path.is_file():
        raise UserInputError(f"{report_dir} has no items.csv; rerun lm-eval-rul report")
    found: dict[str, set[str]] = {model: set() for model in models}
    with path.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            if row.get("benchmark") == benchmark and row.get("model") in found:
                if row.get("class") == "needs_audio":
                    found[row["model"]].add(str(row["id"]))
    return found


def choose(needs: dict[str, set[str]], at_least: int) -> list[str]:
    """The ids at least ``at_least`` of the models found ``needs_audio``, sorted.

    >>> choose({"a": {"1", "2"}, "b": {"2", "3"}}, 2), choose({"a": {"1"}, "b": {"3"}}, 1)
    (['2'], ['1', '3'])
    """
    counts: dict[str, int] = {}
    for ids in needs.values():
        for qid in ids:
            counts[qid] = counts.get(qid, 0) + 1
    return sorted(qid for qid, n in counts.items() if n >= at_least)


def _execute(args: argparse.Namespace) -> None:
    from ..files import check_output_file, write_json_atomic
    from ..questions.subsets import write_subset

    report_dir = Path(args.report_dir)
    key, data = _section(report_dir, args.benchmark)
    by_model = {m["model"]: m for m in data["models"]}
    models = [m.strip() for m in args.models.split(",") if m.strip()] if args.models else []
    models = models or list(by_model)
    unknown = [m for m in models if m not in by_model]
    if unknown:
        raise UserInputError(
            f"--models {', '.join(unknown)}: no listening classes for them on {key}; "
            f"models with classes: {', '.join(by_model)}"
        )
    at_least = len(models) if args.at_least is None else args.at_least
    if not 1 <= at_least <= len(models):
        raise UserInputError(
            f"--at-least {at_least} must be from 1 to {len(models)} (the number of --models)"
        )
    chosen = choose(_needs_audio(report_dir, key, models), at_least)
    rule = (
        f"needs_audio for all of {', '.join(models)}"
        if at_least == len(models)
        else f"needs_audio for at least {at_least} of {', '.join(models)}"
    )
    if not chosen:
        raise UserInputError(f"no item of {key} is {rule}; nothing written")
    sources = {by_model[m].get("question_file") or "" for m in models}
    source = args.source or (sources.pop() if len(sources) == 1 else None)
    if not source:
        raise UserInputError(
            f"the runs of {key} read "
            + ("the public release" if sources == {""} else "different question files")
            + "; give the question file with --source FILE"
        )
    if not Path(source).expanduser().exists():
        raise UserInputError(f"the question file {source} is not here; give it with --source FILE")
    out = check_output_file(args.out, flag="--out")
    metadata = by_model[models[0]].get("task_metadata") or {}
    written = write_subset(
        source,
        chosen,
        out,
        columns=metadata.get("mc_columns"),
        split=str(metadata["mc_split"]) if metadata.get("mc_split") else None,
        subset=str(metadata["mc_subset"]) if metadata.get("mc_subset") else None,
        subset_key="mc_subset" if metadata.get("mc_subset") else None,
    )
    provenance = {
        "subset": str(written.path),
        "layout": written.layout,
        "kept_source_layout": written.kept_layout,
        "source": str(source),
        "benchmark": key,
        "report": str(report_dir),
        "rule": {"class": "needs_audio", "models": models, "at_least": at_least, "words": rule},
        "runs": {
            m: {
                "original": by_model[m]["original"],
                "no_audio": by_model[m]["no_audio"],
                "excerpts": by_model[m]["excerpts"],
            }
            for m in models
        },
        "n_items": len(written.ids),
        "ids": list(written.ids),
        "caution": CAUTION,
    }
    record = written.path.with_name(written.path.name + ".provenance.json")
    write_json_atomic(record, provenance, indent=2)
    layout = written.layout if written.kept_layout else (
        f"{written.layout}: the source's layout could not be kept, its ids are no field of it"
    )
    print(
        f"lm-eval-rul subset: {len(written.ids)} item(s) of {key} ({rule}) -> {written.path} "
        f"({layout}); provenance: {record.name}"
    )
