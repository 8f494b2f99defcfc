"""Options of a report and the small rules shared by its tables: names, order, grouping."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..audio import Condition, UnknownConditionError, condition_named, condition_names
from ..audio.conditions import REFERENCE_CONDITION
from ..catalogue import report_names
from ..errors import UserInputError
from .pi_files import PIFile
from .run_keys import base_benchmark
from .runs import TEXT_CONDITION, Run, RunReadError
from .samples import Sample
from .stats import CI_METHODS, DEFAULT_N_RESAMPLES

__all__ = [
    "CONDITION_ORDER",
    "BENCHMARK_NAMES",
    "ReportSettings",
    "ReportSettingsError",
    "condition_rank",
    "audio_condition_of",
    "plays_no_audio",
    "condition_colour",
    "REFERENCE_CONDITION",
    "TEXT_COLOUR",
    "sort_runs",
    "resample_groups",
    "id_sort_key",
    "covered_share",
    "mean_or_none",
    "base_benchmark",
]

#: The colour of text-only runs in every figure (audio conditions: their ``colour``).
TEXT_COLOUR = "#4C72B0"
#: Conditions in display order (text-only runs, then the audio conditions' ``report_order``);
#: others (a condition this process has not registered) follow alphabetically.
CONDITION_ORDER = (TEXT_CONDITION, *condition_names())


class _BenchmarkNames(Mapping[str, str]):
    """Question set -> display name, read from the catalogue at each look-up (so the
    descriptors of ``--include_path`` folders count while a command includes them)."""

    def __getitem__(self, key: str) -> str:
        return report_names()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(report_names())

    def __len__(self) -> int:
        return len(report_names())


#: Question set -> display name: each benchmark's ``report_names`` (:mod:`lm_eval_rul.catalogue`).
BENCHMARK_NAMES: Mapping[str, str] = _BenchmarkNames()


class ReportSettingsError(UserInputError, ValueError):
    """An option of the report that cannot be used (confidence level, resamples, ...)."""



@dataclass
class ReportSettings:
    """Options of a report.

    Attributes:
        confidence_level: Coverage of every interval.
        n_resamples: Bootstrap resamples.
        seed: Base seed; each interval's generator is derived from it and the comparison.
        by: ``"question"`` or ``"track"``: the unit the bootstrap resamples.
        method: scipy bootstrap method (``percentile``, ``basic``, ``BCa``).
        text_backbone: Model name (or ``pretrained``) of the text run used for leakage.
        pi_files: Label -> :class:`~lm_eval_rul.report.pi_files.PIFile` (from ``--pi``); a
            label equal to a benchmark name supplies that benchmark's PI for the correlations.
        muchomusic_csv: MuChoMusic's CSV for the category breakdowns (default: the one
            the runs' ``--metadata`` named, if any).
        parsed_runs: Parser name -> the runs of an ``lm-eval-rul reparse`` copy (from
            ``--parsed``), compared with the runs' own lexicon parser.

    Raises:
        ReportSettingsError: An option out of range; the message names it and the fix.
    """

    confidence_level: float = 0.95
    n_resamples: int = DEFAULT_N_RESAMPLES
    seed: int = 0
    by: str = "question"
    method: str = "percentile"
    text_backbone: str | None = None
    pi_files: dict[str, PIFile] = field(default_factory=dict)
    muchomusic_csv: str | None = None
    parsed_runs: dict[str, list[Run]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.by not in ("question", "track"):
            raise ReportSettingsError(f"by must be 'question' or 'track', got {self.by!r}")
        if not 0.0 < self.confidence_level < 1.0:
            raise ReportSettingsError(
                f"--confidence {self.confidence_level!r} is not a level in (0, 1); e.g. 0.95"
            )
        if int(self.n_resamples) < 1:
            raise ReportSettingsError(
                f"--n-resamples {self.n_resamples!r} must be a positive number; e.g. 9999"
            )
        if self.method not in CI_METHODS:
            raise ReportSettingsError(f"--method {self.method!r} is not one of {CI_METHODS}")


def condition_rank(condition: str) -> tuple[int, str]:
    order = (TEXT_CONDITION, *condition_names())  # live: conditions registered since import
    if condition in order:
        return order.index(condition), condition
    return len(order), condition


def audio_condition_of(condition: str) -> Condition | None:
    """The registered audio condition a run's ``condition`` names (``None``: a text-only
    run, or a condition this process does not know)."""
    try:
        return None if condition == TEXT_CONDITION else condition_named(condition)
    except UnknownConditionError:
        return None


def plays_no_audio(condition: str) -> bool:
    """The run's prompts had no audio slot (``none``): the text-leakage comparison's side."""
    found = audio_condition_of(condition)
    return found is not None and not found.audio_slot


def condition_colour(condition: str) -> str | None:
    """The condition's colour in every figure (``None``: not a registered condition)."""
    if condition == TEXT_CONDITION:
        return TEXT_COLOUR
    found = audio_condition_of(condition)
    return None if found is None else found.colour


def sort_runs(runs: Sequence[Run]) -> list[Run]:
    return sorted(
        runs, key=lambda r: (not r.is_text, r.model, condition_rank(r.condition), r.variant)
    )


def resample_groups(samples: Sequence[Sample], by: str, where: str) -> list[str]:
    if by == "question":
        return [s.id for s in samples]
    missing = sorted({s.id for s in samples if s.track is None}, key=id_sort_key)
    if missing:
        raise RunReadError(
            f"--by track: {where} has no track for {len(missing)} question(s) (e.g. ids "
            f"{missing[:5]}); rerun with --metadata muchomusic_csv=PATH so the documents "
            "carry their track, or resample by question (leave out --by)"
        )
    return [str(s.track) for s in samples]


def id_sort_key(qid: str) -> tuple[int, int | str]:
    return (0, int(qid)) if qid.isdigit() else (1, qid)


def mean_or_none(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return float(np.mean(present)) if present else None


def covered_share(row: dict[str, Any]) -> str:
    """``"150 of 1,187"`` for a row that covered part of its benchmark, else ``"150"``."""
    total = row.get("n_questions_total")
    if total is not None and row["n_questions"] < total:
        return f"{row['n_questions']:,} of {total:,}"
    return f"{row['n_questions']:,}"
