"""Re-score finished factual runs with another parser, without running the audio model again.

:func:`reparse_runs` reads harness output folders (``--output_path ... --log_samples``),
sends every logged answer of the label-set tasks (open, list, phrasings) to an
:class:`~lm_eval_rul.factual.reading.llm_parser.LLMParser`, and writes a harness-shaped copy:
per results file, ``results_<time>.json`` with the re-parsed tasks' item-level figures
and ``samples_<task>_<time>.jsonl`` whose window records hold the new labels (the raw
answers, documents and everything else unchanged; ``doc.parsed`` is the parser's
reading). The copy's ``config.factual_parser`` names the parser, so ``lm-eval-rul report
RUN_DIR... --parsed NAME=COPY`` reads it beside the lexicon's runs.

A window whose reply stayed malformed has no reading (``labels`` None, ``parse_status``
``malformed``): it is left out of the figures, and an item with no read window is left out
too (never scored as an empty prediction). Both are counted, in the summary and in the
copy's ``configs[task]["factual_parser"]`` (``windows``, ``malformed_windows``,
``items_left_out``).
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...files import write_text_atomic
from ...paths import contained_path
from ..errors import FactualInputError
from ..records import figure_names, item_figures, unread_counts
from ..tasks import add_item_predictions, is_factual_doc
from .genres import GenreTree, read_genre_tree
from .labels import out_of_vocabulary
from .lexicon import lexicon_for
from .llm_parser import LLMParser, ParserQuery, ParserStats

__all__ = ["ReparseError", "ReparseSummary", "reparse_runs", "logged_response"]


#: Keys of a harness results file that map task names to something.
_PER_TASK = (
    "results",
    "configs",
    "versions",
    "n-shot",
    "higher_is_better",
    "n-samples",
    "task_hashes",
)


class ReparseError(FactualInputError):
    """A run folder that cannot be re-parsed (no results, no logged samples, no genre table)."""


@dataclass
class ReparseSummary:
    """What :func:`reparse_runs` did.

    Attributes:
        written: The results files written.
        windows: Re-parsed windows per task name.
        malformed_windows: Windows whose reply stayed malformed, per task name (left out of
            the figures).
        items_left_out: Items none of whose windows was read, per task name.
        stats: The parser's counts.
    """

    written: list[Path] = field(default_factory=list)
    windows: dict[str, int] = field(default_factory=dict)
    malformed_windows: dict[str, int] = field(default_factory=dict)
    items_left_out: dict[str, int] = field(default_factory=dict)
    stats: ParserStats = field(default_factory=ParserStats)


def logged_response(row: Mapping[str, Any]) -> str:
    """The model's answer in a logged sample (the filtered response when there is one)."""
    responses = row.get("filtered_resps") or row.get("resps") or [""]
    first = responses[0]
    while isinstance(first, list | tuple) and first:
        first = first[0]
    return str(first)


def _results_files(run_dirs: Iterable[str | Path]) -> list[tuple[Path, Path]]:
    """(results file, its folder relative to the output root) of every run folder."""
    out = []
    for index, run_dir in enumerate(run_dirs):
        root = Path(run_dir)
        found = [root] if root.is_file() else sorted(root.rglob("results_*.json"))
        if not found:
            raise ReparseError(
                f"no results_*.json under {str(root)!r}: give the harness's --output_path "
                "folder of a run made with --log_samples"
            )
        base = Path(f"{index:02d}_{root.resolve().name or 'run'}")
        for path in found:
            inner = path.parent.relative_to(root) if root.is_dir() else Path()
            out.append((path, base / inner))
    return out


def _read_rows(path: Path) -> list[dict[str, Any]]:
    try:
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    except (OSError, json.JSONDecodeError) as error:
        raise ReparseError(f"{path}: cannot read the logged samples ({error})") from None


def _tree(rows: list[dict[str, Any]], genres_csv: str | Path | None) -> GenreTree:
    path = genres_csv or rows[0]["doc"].get("genres_csv")
    if not path or not os.path.isfile(str(path)):
        raise ReparseError(
            f"the genre answers are read with FMA's genre tree, but {path!r} is not a file; "
            "pass --genres_csv PATH (genres.csv of fma_metadata)"
        )
    return read_genre_tree(path)


@dataclass
class _Task:
    name: str
    samples_file: Path
    rows: list[dict[str, Any]]
    queries: list[ParserQuery]
    tree: GenreTree | None


def _tasks_of(results_file: Path, results: dict[str, Any], genres_csv) -> list[_Task]:
    stamp = results_file.stem[len("results_") :]
    groups = set(results.get("group_subtasks") or {}) | set(results.get("groups") or {})
    found = []
    for name in results.get("results") or {}:
        samples_file = contained_path(  # the name comes from the results file
            results_file.parent, f"samples_{name}_{stamp}.jsonl", item=f"task {name!r}",
            option=f"the run folder of {results_file.name}",
            fix="the results file names a task that is no file name; check the run folder.",
        )
        if name in groups:
            continue
        if not samples_file.is_file():
            kwargs = ((results.get("configs") or {}).get(name) or {}).get("dataset_kwargs") or {}
            if kwargs.get("factual_task") and "scoring" not in kwargs:  # a label-set task
                raise ReparseError(
                    f"{results_file}: factual task {name!r} has no logged samples (looked for "
                    f"{samples_file.name}); rerun it with --log_samples"
                )
            continue
        rows = [r for r in _read_rows(samples_file) if is_factual_doc(r.get("doc") or {})]
        if not rows:
            continue
        task = str(rows[0]["doc"]["factual_task"])
        tree = _tree(rows, genres_csv) if task == "genre" else None
        lexicon = lexicon_for(task, tree)
        queries = [ParserQuery(task, logged_response(row), lexicon) for row in rows]
        found.append(_Task(name, samples_file, rows, queries, tree))
    return found


def _relabel(row: dict[str, Any], task: _Task, reading, parser: str) -> dict[str, Any]:
    new = copy.deepcopy(row)
    metric = figure_names(str(new["doc"]["factual_task"]))[0]
    record = dict(new[metric])
    read = reading.status != "malformed" and reading.labels is not None
    record["labels"] = list(reading.labels) if read else None  # no reading, not "none named"
    record["parser"] = parser
    record["parse_status"] = reading.status
    titles = task.tree.all_titles if task.tree is not None else None
    task_key = str(new["doc"]["factual_task"])
    record["oov"] = out_of_vocabulary(task_key, reading.labels, titles) if read else []
    if task.tree is not None:
        labels = dict.fromkeys([*(reading.labels if read else ()), *record["gold"]])
        record["roots"] = {label: task.tree.to_roots([label])[0] for label in labels}
    for name in figure_names(str(new["doc"]["factual_task"])):
        new[name] = record
    new["doc"]["parsed"] = reading.to_log(parser)
    new.pop("item_prediction", None)
    return new


def reparse_runs(
    run_dirs: Iterable[str | Path],
    parser: LLMParser,
    out: str | Path,
    *,
    parser_info: Mapping[str, Any],
    genres_csv: str | Path | None = None,
    progress: bool = True,
) -> ReparseSummary:
    """Re-parse every label-set factual task of ``run_dirs`` into ``out`` (module docstring).

    Args:
        run_dirs: Harness output folders (or results files).
        parser: The parser to apply.
        out: Folder to write (one subfolder per run folder, ``NN_<name>``).
        parser_info: Written as ``config.factual_parser`` (name, model, prompt version).
        genres_csv: FMA's ``genres.csv`` when the logged path is not on this machine.
        progress: Show the parser's progress bar.

    Raises:
        ReparseError: A folder without results, unreadable samples, no genre table.
        ParserCallError: The parser model cannot be called.
    """
    summary = ReparseSummary(stats=parser.stats)
    plan = []
    for results_file, relative in _results_files(run_dirs):
        try:
            results = json.loads(results_file.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as error:
            raise ReparseError(f"{results_file}: cannot read it as JSON ({error})") from None
        tasks = _tasks_of(results_file, results, genres_csv)
        if tasks:
            plan.append((results_file, relative, results, tasks))
    if not plan:
        raise ReparseError(
            "no logged factual label-set task (open, list, phrasings) in the given folders; "
            "were they run with --log_samples?"
        )
    queries = [q for *_, tasks in plan for task in tasks for q in task.queries]
    readings = iter(parser.parse_many(queries, progress=progress))
    name = str(parser_info.get("name", parser.name))
    for results_file, relative, results, tasks in plan:
        folder = Path(out) / relative
        folder.mkdir(parents=True, exist_ok=True)
        kept = {task.name for task in tasks}
        new_results = {
            key: (
                {k: v for k, v in value.items() if k in kept}
                if key in _PER_TASK and isinstance(value, dict)
                else value
            )
            for key, value in results.items()
        }
        new_results["groups"], new_results["group_subtasks"] = {}, {}
        new_results["config"] = {**results.get("config", {}), "factual_parser": dict(parser_info)}
        for task in tasks:
            rows = [_relabel(row, task, next(readings), name) for row in task.rows]
            add_item_predictions({task.name: rows})
            filter_key = str(rows[0].get("filter", "none"))
            metric = figure_names(str(rows[0]["doc"]["factual_task"]))[0]
            figures = item_figures(row[metric] for row in rows)
            unread = unread_counts(row[metric] for row in rows)
            counts = {
                "windows": len(rows),
                "malformed_windows": unread["windows"],
                "items_left_out": unread["items"],
            }
            config = dict((results.get("configs") or {}).get(task.name) or {})
            config["factual_parser"] = {**dict(parser_info), **counts}
            new_results.setdefault("configs", {})[task.name] = config
            row_out = {"alias": results["results"][task.name].get("alias", task.name)}
            for key, value in figures.items():
                row_out[f"{key},{filter_key}"] = value
                row_out[f"{key}_stderr,{filter_key}"] = "N/A"
            new_results["results"][task.name] = row_out
            for total, value in (
                (summary.windows, len(rows)),
                (summary.malformed_windows, unread["windows"]),
                (summary.items_left_out, unread["items"]),
            ):
                total[task.name] = total.get(task.name, 0) + value
            target = folder / task.samples_file.name
            write_text_atomic(
                target, "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
            )
        path = folder / results_file.name
        write_text_atomic(
            path, json.dumps(new_results, indent=2, ensure_ascii=False, default=str)
        )
        summary.written.append(path)
    return summary
