"""MMAU's released JSON (``Sakshi113/MMAU``): one member of the MMAU layout
(:mod:`.layout`, which reads it).

The file (``mmau-test-mini.json``, ``mmau-test.json``) is a JSON list of objects with
``id``, ``audio_id`` (``./test-mini-audios/{id}.wav``), ``question``, ``choices`` (a
list), ``answer`` (the text of one choice; absent from the ``test`` split, which the
authors score from a predictions file), ``dataset``, ``task`` (``sound`` | ``music`` |
``speech``), ``split``, ``category``, ``sub-category`` and ``difficulty`` (``easy`` |
``medium`` | ``hard``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .layout import (
    Layout,
    LayoutItem,
    describe_layout,
    describe_layout_file,
    is_layout_file,
    looks_like,
    read_layout,
)
from .layout import select_subset as select_layout_subset
from .layout_questions import layout_questions
from .reading import reads_once
from .schema import Question

__all__ = [
    "describe_mmau_file",
    "MMAU",
    "MMAU_SUBSETS",
    "MMAUItem",
    "read_mmau_json",
    "looks_like_mmau",
    "describe_mmau",
    "is_mmau_file",
    "select_subset",
    "read_mmau_questions",
    "DEFAULT_QUESTION_SUBSET",
]

#: The ``task`` values of MMAU (``--metadata mmau_subset``; ``all`` keeps every item).
MMAU_SUBSETS: tuple[str, ...] = ("music", "sound", "speech")
#: The subset ``pi`` and ``build`` read from an MMAU file (RUL-MMAU-music).
DEFAULT_QUESTION_SUBSET = "music"

MMAU = Layout(
    name="mmau",
    display="MMAU",
    subset_field="task",
    audio_field="audio_id",
    source_field="dataset",
    subsets=MMAU_SUBSETS,
    allowed=MMAU_SUBSETS,
    release_fields=("split", "category", "sub-category", "difficulty"),
    extra_fields=(),
    output_key="model_output",
    breakdowns=("sub_category", "difficulty"),
    hint="Give MMAU's mmau-test-mini.json (github.com/Sakshi113/MMAU), or leave "
    "mmau_data_path out to download it.",
    repository="Sakshi113/MMAU",
    files=(("test-mini", "mmau-test-mini.json"), ("test", "mmau-test.json")),
)
#: One MMAU item (the layout's record).
MMAUItem = LayoutItem


def describe_mmau_file(path: str | os.PathLike[str]) -> str:
    """The file in words (the ``describe`` of MMAU's reader in the benchmark catalogue)."""
    return describe_layout_file(path, MMAU)


def is_mmau_file(path: str | os.PathLike[str]) -> bool:
    """Whether the file at ``path`` is MMAU's release (decided from its content): the
    ``detect`` of MMAU's reader in the benchmark catalogue (``tasks/mmau/benchmark.py``)."""
    return is_layout_file(path, MMAU)


def looks_like_mmau(raw: Any) -> bool:
    """Whether a parsed JSON value is MMAU's layout (:func:`.layout.looks_like`)."""
    return looks_like(raw, MMAU)


def describe_mmau(raw: list[Any]) -> str:
    """MMAU's layout in words, with its item and music counts (``raw``: the parsed list)."""
    return describe_layout(raw, MMAU)


@reads_once
def read_mmau_json(path: str | os.PathLike[str]) -> list[LayoutItem]:
    """Read MMAU's JSON (test-mini with answers, or test without), validating every item
    (:func:`.layout.read_layout`)."""
    return read_layout(path, MMAU)


def select_subset(items: Sequence[LayoutItem], subset: str, path: str | Path) -> list[LayoutItem]:
    """The items of ``subset`` (a ``task`` value, or ``all``), in the file's order."""
    return select_layout_subset(items, subset, path, MMAU)


@reads_once
def read_mmau_questions(
    path: str | os.PathLike[str],
    *,
    subset: str = DEFAULT_QUESTION_SUBSET,
    n_distractors: int | None = None,
    subset_key: str | None = None,
) -> list[Question]:
    """The answered items of one MMAU ``subset`` as questions for ``pi`` and ``build``.

    Raises:
        DataValidationError: not MMAU's layout, a malformed item, the unanswered ``test``
            split, or no item of ``subset``.
    """
    path = Path(path)
    items = select_layout_subset(read_mmau_json(path), subset, path, MMAU, subset_key)
    return layout_questions(path, items, MMAU, subset, n_distractors)
