"""Thin bridge from the YAMLs to lm_eval_rul: MMAR is the second MMAU-layout benchmark, so
its tasks are MMAU's functions given MMAR's layout (:mod:`lm_eval_rul.questions.mmar`)."""

from typing import Any

from lm_eval_rul.logs import quiet_plugin_task_warnings
from lm_eval_rul.mcqa.mmau.tasks import (  # noqa: F401
    check_layout_data,
    doc_to_choice,
    doc_to_text,
    doc_to_text_gen,
    layout_metadata_keys,
    load_layout,
    load_rul_layout,
    process_results,
    process_results_gen,
)
from lm_eval_rul.mcqa.tasks import doc_to_choice as doc_to_choice_rul  # noqa: F401
from lm_eval_rul.mcqa.tasks import doc_to_text as doc_to_text_rul  # noqa: F401
from lm_eval_rul.mcqa.tasks import process_results as process_results_rul  # noqa: F401
from lm_eval_rul.questions.mmar import MMAR

#: The ``--metadata`` keys of MMAR's tasks (``benchmark.py`` names this tuple).
MMAR_METADATA_KEYS = layout_metadata_keys(MMAR)


def load_mmar(**metadata: Any) -> dict[str, Any]:
    """``custom_dataset`` of ``mmar_music`` and ``mmar_music_gen``."""
    return load_layout(MMAR, **metadata)


def check_mmar_data(metadata: dict[str, Any]) -> None:
    """MMAR's files named in ``metadata``, read now (its descriptor's check)."""
    check_layout_data(MMAR, metadata)


def load_rul_mmar_music(fold: int, **metadata: Any) -> dict[str, Any]:
    """``custom_dataset`` of ``rul_mmar_music_fold{fold}``."""
    return load_rul_layout(MMAR, fold, **metadata)


# plain `lm_eval`: the harness's per-task "Custom kwargs can be passed to --metadata"
# warning says nothing about these tasks (their keys are documented in docs/tasks.md)
quiet_plugin_task_warnings()
