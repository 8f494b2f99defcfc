"""MMAR's released ``MMAR-meta.jsonl`` (``ddlBoJack/MMAR``): the second member of the MMAU
layout (:mod:`.layout`, which reads it).

JSON lines, one item each: ``id``, ``audio_path`` (``./audio/{id}.wav``), ``question``,
``choices`` (2 to 6), ``answer`` (the text of one choice), ``modality`` (``music``,
``sound``, ``speech`` or a mix such as ``mix-music-speech``), ``category`` (Signal /
Perception / Semantic / Cultural Layer), ``sub-category``, ``language``, ``source``, ``url``,
``timestamp`` and reasoning fields (``thinking``, ``cue``, ``rubric``; not read).
``--metadata mmar_subset``: ``music`` (modality ``music``: 206 items), ``music_any`` (any
modality naming music: 323), ``sound``, ``speech`` ... or ``all``.
"""

from __future__ import annotations

import os
from pathlib import Path

from .layout import Layout, describe_layout_file, is_layout_file, read_layout, select_subset
from .layout_questions import layout_questions
from .reading import reads_once
from .schema import Question

__all__ = ["MMAR", "describe_mmar_file", "MMAR_SUBSETS", "is_mmar_file", "read_mmar_questions"]

#: ``--metadata mmar_subset`` values (and ``all``).
MMAR_SUBSETS: tuple[str, ...] = ("music", "music_any", "sound", "sound_any", "speech", "speech_any")

MMAR = Layout(
    name="mmar",
    display="MMAR",
    subset_field="modality",
    audio_field="audio_path",
    source_field="source",
    subsets=MMAR_SUBSETS,
    allowed=(),
    release_fields=("category", "sub-category"),
    extra_fields=("language", "url", "timestamp"),
    output_key="answer_prediction",
    breakdowns=("category", "sub_category"),
    hint="Give MMAR's MMAR-meta.jsonl (github.com/ddlBoJack/MMAR), or leave mmar_data_path "
    "out to download it.",
    repository="ddlBoJack/MMAR",
    files=(("meta", "MMAR-meta.jsonl"),),
)


def describe_mmar_file(path: str | os.PathLike[str]) -> str:
    """The file in words (the ``describe`` of MMAR's reader in the benchmark catalogue)."""
    return describe_layout_file(path, MMAR)


def is_mmar_file(path: str | os.PathLike[str]) -> bool:
    """Whether the file at ``path`` is MMAR's release (decided from its content): the
    ``detect`` of MMAR's reader in the benchmark catalogue (``tasks/mmar/benchmark.py``)."""
    return is_layout_file(path, MMAR)


@reads_once
def read_mmar_questions(
    path: str | os.PathLike[str], *, subset: str = "music", n_distractors: int | None = None,
    subset_key: str | None = None,
) -> list[Question]:
    """The answered items of one MMAR ``subset`` as questions for ``pi`` and ``build``.

    Raises:
        DataValidationError: not MMAR's layout, a malformed item, no answers, or no item
            of ``subset``.
    """
    path = Path(path)
    items = select_subset(read_layout(path, MMAR), subset, path, MMAR, subset_key)
    return layout_questions(path, items, MMAR, subset, n_distractors)
