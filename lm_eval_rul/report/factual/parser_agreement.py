"""Parser agreement: do two parsers of the same answers tell the same story?

For two parsers (the lexicon parser of the runs themselves, and the LLM parsers of
``lm-eval-rul reparse`` copies given with ``report --parsed NAME=DIR``) over the same
runs and label-set tasks:

* per item, the Jaccard index of the two aggregated label sets (1 when both are empty),
  its mean and the share of items with identical sets;
* the mean F1 under each parser and their difference (B - A) with a paired bootstrap
  interval over items (:func:`~lm_eval_rul.report.stats.paired_difference_ci`);
* whether the ranking of models is preserved: Kendall's tau-b
  (:func:`scipy.stats.kendalltau`) between the models' F1 under A and under B, per task
  and audio setting (needs two models), and over every (model, setting, task) row;
* the windows whose LLM reply stayed malformed: no reading, so they are left out of the
  figures (an item none of whose windows was read by a parser is left out of the
  comparison, as it has no prediction to compare), counted separately per row
  (``malformed_windows``, ``items_left_out``), never scored as empty predictions.

Runs are matched by model, audio condition and audio settings; items by id.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from ...factual.records import ItemPrediction, item_predictions, unread_counts
from ...questions import derive_seed
from ..runs import Run
from ..settings import ReportSettings
from ..stats import paired_difference_ci

__all__ = ["LEXICON", "jaccard", "kendall_tau", "compare_items", "parser_agreement"]

#: The name of the runs' own (lexicon) parser in the agreement tables.
LEXICON = "lexicon"


def jaccard(a: Sequence[str], b: Sequence[str]) -> float:
    """``|a ∩ b| / |a ∪ b|``; 1.0 when both are empty (the parsers agree: nothing).

    Examples
    --------
    >>> jaccard(["piano", "violin"], ["violin"]), jaccard([], [])
    (0.5, 1.0)
    """
    x, y = set(a), set(b)
    return 1.0 if not (x or y) else len(x & y) / len(x | y)


def kendall_tau(a: Sequence[float], b: Sequence[float]) -> tuple[float, float]:
    """Kendall's tau-b of two rankings and its two-sided p-value (NaN when undefined:
    fewer than two values, or one side constant).

    Examples
    --------
    >>> kendall_tau([0.2, 0.5, 0.4], [0.1, 0.6, 0.3])[0]
    1.0
    """
    from scipy import stats

    if len(a) != len(b):
        raise ValueError(f"kendall_tau needs paired values, got {len(a)} and {len(b)}")
    if len(a) < 2 or len(set(a)) < 2 or len(set(b)) < 2:
        return math.nan, math.nan
    result = stats.kendalltau(a, b)
    return float(result.statistic), float(result.pvalue)


def compare_items(
    a: Sequence[ItemPrediction],
    b: Sequence[ItemPrediction],
    *,
    confidence_level: float = 0.95,
    n_resamples: int = 9999,
    seed: int = 0,
) -> dict[str, Any]:
    """Agreement of two parsers' item predictions, on the items both have.

    Returns:
        ``{"n", "mean_jaccard", "identical_share", "f1_a", "f1_b", "difference"}``
        (``difference``: F1 b - a with its paired bootstrap interval).

    Raises:
        ValueError: The two share no item.
    """
    by_id = {item.id: item for item in b}
    shared = [(item, by_id[item.id]) for item in a if item.id in by_id]
    if not shared:
        raise ValueError("the two parsers' runs share no item")
    f1_a = [x.scores()[2] for x, _ in shared]
    f1_b = [y.scores()[2] for _, y in shared]
    scores = [jaccard(x.labels, y.labels) for x, y in shared]
    difference = paired_difference_ci(
        f1_b, f1_a, confidence_level=confidence_level, n_resamples=n_resamples, seed=seed
    )
    return {
        "n": len(shared),
        "mean_jaccard": sum(scores) / len(scores),
        "identical_share": sum(set(x.labels) == set(y.labels) for x, y in shared) / len(shared),
        "f1_a": sum(f1_a) / len(f1_a),
        "f1_b": sum(f1_b) / len(f1_b),
        "difference": difference.to_dict(),
    }


def _predictions(runs: Sequence[Run]) -> dict[tuple, dict[str, Any]]:
    """(run merge key, task name) -> the run, task result and item predictions."""
    out = {}
    for run in runs:
        for result in run.factual_tasks():
            out[(run.merge_key, result.task)] = {
                "run": run,
                "result": result,
                "items": item_predictions(w.record for w in result.windows),
                "unread": unread_counts(w.record for w in result.windows),
                "ids": {w.id for w in result.windows},
            }
    return out


def _pair(
    name_a: str,
    name_b: str,
    a: dict[tuple, dict[str, Any]],
    b: dict[tuple, dict[str, Any]],
    settings: ReportSettings,
) -> dict[str, Any]:
    rows, unscored = [], []
    for key in sorted(a.keys() & b.keys(), key=lambda k: (k[1], str(k[0]))):
        run, result = a[key]["run"], a[key]["result"]
        both = a[key]["ids"] & b[key]["ids"]
        read = {it.id for it in a[key]["items"]} & {it.id for it in b[key]["items"]}
        row = {
            "task_name": result.task,
            "task": result.windows[0].task,
            "model": run.model,
            "pretrained": run.pretrained,
            "setting": run.setting,
            "malformed_windows": b[key]["unread"]["windows"] + a[key]["unread"]["windows"],
            # items a parser could not read at all: no prediction to compare (not "empty")
            "items_left_out": len(both - read),
        }
        if not read:  # every item of the run was left out by one parser
            unscored.append({**row, "n": 0})
            continue
        row.update(
            compare_items(
                a[key]["items"],
                b[key]["items"],
                confidence_level=settings.confidence_level,
                n_resamples=settings.n_resamples,
                seed=derive_seed(
                    "report", settings.seed, "parsers", name_a, name_b, run.label, key[1]
                ),
            )
        )
        rows.append(row)
    by_group: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_group[(row["task_name"], row["setting"])].append(row)
    rankings = []
    for (task_name, setting), members in by_group.items():
        tau, pvalue = kendall_tau([r["f1_a"] for r in members], [r["f1_b"] for r in members])
        rankings.append(
            {
                "task_name": task_name,
                "setting": setting,
                "n_models": len(members),
                "tau": tau,
                "pvalue": pvalue,
                "same_order": [r["model"] for r in sorted(members, key=lambda r: -r["f1_a"])]
                == [r["model"] for r in sorted(members, key=lambda r: -r["f1_b"])],
            }
        )
    overall = kendall_tau([r["f1_a"] for r in rows], [r["f1_b"] for r in rows])
    return {
        "a": name_a,
        "b": name_b,
        "rows": rows,
        "unscored": unscored,
        "rankings": rankings,
        "overall_tau": overall[0],
        "overall_pvalue": overall[1],
        "max_abs_difference": max((abs(r["difference"]["estimate"]) for r in rows), default=None),
    }


def parser_agreement(
    runs: Sequence[Run],
    parsed: Mapping[str, Sequence[Run]],
    settings: ReportSettings,
    notes: list[str],
) -> list[dict[str, Any]]:
    """Every pair among the lexicon (``runs``) and the ``parsed`` copies (module docstring).

    Args:
        runs: The runs as logged (lexicon parser).
        parsed: Parser name -> the runs of its ``reparse`` copy.
        settings: Confidence level, resamples, seed.
        notes: Collects what a reader should know (unmatched runs).
    """
    sets = {LEXICON: _predictions(runs)}
    for name, parsed_runs in parsed.items():
        sets[name] = _predictions(parsed_runs)
        unmatched = sets[name].keys() - sets[LEXICON].keys()
        if unmatched:
            notes.append(
                f"--parsed {name}: {len(unmatched)} task runs have no matching run among the "
                "report's run folders (same model, condition and audio settings); left out"
            )
    pairs = []
    for name_a, name_b in itertools.combinations(sets, 2):
        pair = _pair(name_a, name_b, sets[name_a], sets[name_b], settings)
        if pair["rows"] or pair["unscored"]:
            pairs.append(pair)
    return pairs
