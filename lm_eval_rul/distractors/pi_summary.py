"""Summaries of per-question PI: statistics, a text histogram, and the ``pi`` output files."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..files import atomic_write, write_text_atomic

if TYPE_CHECKING:
    from .pi import PIResult

__all__ = ["N_BINS", "summarize_pi", "format_summary", "summary_path", "write_pi"]

#: Bins of the PI histogram over [0, 1].
N_BINS = 10


def summarize_pi(pis: Sequence[float], chances: Sequence[float] | float = 0.75) -> dict[str, Any]:
    """Mean, median, a 10-bin histogram over [0, 1] and the share above chance.

    Args:
        pis: PI per question.
        chances: Chance-level PI (``1 - 1/n_options``) per question, or one value for all.

    Examples
    --------
    >>> s = summarize_pi([0.1, 0.8, 0.9], 0.75)
    >>> s["n"], round(s["mean"], 4), s["share_above_chance"] == 2 / 3, sum(s["histogram"])
    (3, 0.6, True, 3)
    """
    values = np.asarray(pis, dtype=np.float64)
    if values.size == 0:
        raise ValueError("no PI values to summarise")
    chance = np.broadcast_to(np.asarray(chances, dtype=np.float64), values.shape)
    counts, edges = np.histogram(np.clip(values, 0.0, 1.0), bins=N_BINS, range=(0.0, 1.0))
    return {
        "n": int(values.size),
        "mean": float(values.mean()),
        "median": float(np.median(values)),
        "std": float(values.std(ddof=1)) if values.size > 1 else 0.0,
        "min": float(values.min()),
        "max": float(values.max()),
        "chance": float(chance.mean()),
        "share_above_chance": float(np.mean(values > chance + 1e-12)),
        "bin_edges": [round(float(e), 6) for e in edges],
        "histogram": [int(c) for c in counts],
    }


def format_summary(summary: dict[str, Any], *, title: str = "PI") -> str:
    """A few printable lines: statistics and a text histogram."""
    lines = [
        f"{title}: n={summary['n']} mean={summary['mean']:.4f} median={summary['median']:.4f} "
        f"share above chance ({summary['chance']:.3f})={summary['share_above_chance']:.3f}"
    ]
    peak = max(summary["histogram"]) or 1
    edges = summary["bin_edges"]
    for i, count in enumerate(summary["histogram"]):
        bar = "#" * math.ceil(40 * count / peak) if count else ""
        lines.append(
            f"  [{edges[i]:.1f}, {edges[i + 1]:.1f}{']' if i == N_BINS - 1 else ')'} "
            f"{count:6d} {bar}"
        )
    return "\n".join(lines)


def summary_path(output: Path) -> Path:
    """``<output stem>.summary.json``, beside the rows."""
    return output.with_name(output.stem + ".summary.json")


def write_pi(
    results: Sequence[PIResult],
    output: str | Path,
    *,
    skipped: dict[str, Any] | None = None,
) -> tuple[Path, dict[str, Any]]:
    """Write the JSONL rows and ``<output stem>.summary.json``; return (summary path, summary).

    ``skipped`` (questions left out, e.g. ``{"long_prompts": {"limit": ..., "ids": {...}}}``)
    goes into the summary as it is, so nothing is dropped without a trace.
    """
    output = Path(output)
    with atomic_write(output) as handle:  # a kill mid-write leaves no partial file
        for result in results:
            handle.write(json.dumps(result.to_row(), ensure_ascii=False) + "\n")
    summary = summarize_pi([r.pi for r in results], [r.chance for r in results])
    summary["protocol"] = sorted({r.protocol for r in results})
    with_source = [r for r in results if r.source_pi is not None]
    if with_source:
        summary["source_pi_mean"] = float(np.mean([r.source_pi for r in with_source]))
    if skipped:
        summary["skipped"] = skipped
    path = summary_path(output)
    write_text_atomic(path, json.dumps(summary, indent=2))
    return path, summary
