"""MMAU-Pro as released on the Hugging Face hub (``gamma-lab-umd/MMAU-Pro``): read from
the user's ``datasets`` cache (the hub name), a ``save_to_disk`` folder, or its
``test.parquet`` (:func:`~.datasets_io.open_dataset`, the one opener).

Its columns, as the authors' ``evaluate_mmau_pro_comprehensive.py`` and NeMo-Skills'
``mmau-pro/prepare.py`` read them: ``id``, ``audio_path`` (a LIST of ``data/<uuid>.wav``,
inside the release's ``data.zip``: most items one clip, some several), ``question``,
``choices`` (a list; empty for open-ended items), ``answer`` (the right option's TEXT),
``category`` (``music``, ``sound``, ``speech``, mixes, ``open``, ``instruction
following``), and skill and length fields not read here.

Only the closed-form music items are asked: ``category`` ``music`` with at least two
choices (the authors' closed-form filter, ``len(choices) > 1``, on the music category).
Open-ended and instruction-following items, and the other categories, are counted and the
counts said in one line (:func:`describe_selection`); none is dropped silently.
"""

from __future__ import annotations

import logging
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .datasets_io import open_dataset
from .layout import Layout, LayoutItem
from .schema import DataValidationError, too_many_options

__all__ = [
    "MMAU_PRO",
    "MMAU_PRO_CATEGORY",
    "NOT_CLOSED_FORM",
    "ProItems",
    "read_mmau_pro",
    "describe_selection",
]

logger = logging.getLogger(__name__)

#: The category asked (the music table's column).
MMAU_PRO_CATEGORY = "music"
#: The categories the authors score without choices (an LLM judge, instruction checks).
NOT_CLOSED_FORM = ("open", "instruction following")

MMAU_PRO = Layout(
    name="mmau_pro",
    display="MMAU-Pro",
    subset_field="category",
    audio_field="audio_path",
    source_field="source",
    subsets=(MMAU_PRO_CATEGORY,),
    allowed=(),
    release_fields=("category",),
    extra_fields=(),
    output_key="model_output",  # the authors' script's --model_output_column default
    breakdowns=(),
    hint="Give MMAU-Pro's test.parquet, its save_to_disk folder, or the hub name "
    "gamma-lab-umd/MMAU-Pro when it is in your datasets cache.",
    repository="gamma-lab-umd/MMAU-Pro",
    files=(("test", "test.parquet"),),
)

_COLUMNS = ("id", "audio_path", "question", "choices", "answer", "category")


@dataclass(frozen=True)
class ProItems:
    """The closed-form music items of a release and what was left out.

    Attributes:
        items: The items asked, in the release's order (``audio_id``: the first clip).
        clips: Item id -> its clips' released paths (``data/<uuid>.wav``), in order.
        rows: How many rows the release has.
        left_out: (reason, count) of the rows not asked.
    """

    items: tuple[LayoutItem, ...]
    clips: dict[str, tuple[str, ...]]
    rows: int
    left_out: tuple[tuple[str, int], ...]


def _listed(value: Any) -> list[Any] | None:
    """A list cell as a Python list (parquet gives lists; numpy arrays too); None: absent."""
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    try:
        return list(value)
    except TypeError:
        return None


def read_mmau_pro(
    source: str | os.PathLike[str], *, key: str = "mmau_pro_data", split: str = "test"
) -> ProItems:
    """The closed-form music items of the release ``source`` names (module docstring).

    Raises:
        DataSourceError: ``source`` opens as no dataset.
        DataValidationError: a column is missing, or an asked item is malformed (each
            named by id, in one message; nothing is loaded then).
    """
    path = str(source)
    dataset = open_dataset(path, split, key=key, split_key="mmau_pro_split")
    missing = [c for c in _COLUMNS[1:] if c not in dataset.column_names]
    if missing:
        raise DataValidationError(
            path,
            [
                f"not MMAU-Pro's layout: no column(s) {', '.join(missing)} (has "
                f"{', '.join(dataset.column_names)})"
            ],
            hint=MMAU_PRO.hint,
        )
    kept = [c for c in _COLUMNS if c in dataset.column_names]
    rows = dataset.select_columns(kept).to_list()
    left: Counter[str] = Counter()
    problems: list[str] = []
    items: list[LayoutItem] = []
    clips: dict[str, tuple[str, ...]] = {}
    for position, row in enumerate(rows):
        category = str(row.get("category") or "").strip()
        choices = _listed(row.get("choices")) or []
        if category in NOT_CLOSED_FORM:
            left[category] += 1
            continue
        if category != MMAU_PRO_CATEGORY:
            left[f"category {category or '(none)'}"] += 1
            continue
        if len(choices) < 2:  # the authors' closed-form filter: len(choices) > 1
            left["music without 2 choices"] += 1
            continue
        qid = str(row.get("id") if row.get("id") not in (None, "") else f"row{position}")
        where = f"item {qid!r}"
        paths = [str(p).strip() for p in _listed(row.get("audio_path")) or [] if str(p).strip()]
        answer = row.get("answer")
        choices = [str(c) for c in choices]
        if not paths:
            problems.append(f"{where}: 'audio_path' lists no clip")
        elif answer not in choices:
            problems.append(
                f"{where}: answer {answer!r} is not one of its choices {choices!r:.120}"
            )
        elif too_many_options(where, len(choices)):
            problems.append(too_many_options(where, len(choices)) or "")
        elif qid in clips:
            problems.append(f"{where}: appears more than once")
        else:
            clips[qid] = tuple(paths)
            items.append(
                LayoutItem(
                    id=qid,
                    question=str(row.get("question") or ""),
                    choices=tuple(choices),
                    answer=str(answer),
                    task=category,
                    category=category,
                    audio_id=paths[0],
                )
            )
    if problems:
        raise DataValidationError(
            path, problems, hint="Fix or remove these items; nothing was loaded."
        )
    if not items:
        raise DataValidationError(
            path,
            [
                f"no closed-form music item (category 'music' with 2 or more choices) "
                f"among its {len(rows)} rows"
            ],
            hint=MMAU_PRO.hint,
        )
    return ProItems(tuple(items), clips, len(rows), tuple(sorted(left.items())))


def describe_selection(path: str | Path, read: ProItems) -> str:
    """The one line a run says of what it asks and what it leaves out."""
    several = sum(len(c) > 1 for c in read.clips.values())
    left = "; ".join(f"{reason}: {count}" for reason, count in read.left_out) or "none"
    return (
        f"{path}: asking MMAU-Pro's {len(read.items)} closed-form music items "
        f"({several} of them over several clips) of {read.rows} rows; not asked: {left}"
    )
