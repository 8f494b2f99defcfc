"""Harness documents of a factual task: one per window of each item's recording.

A recording longer than ``chunk_seconds`` is cut into the equal windows of
:func:`~lm_eval_rul.factual.chunks.chunk_windows`; each window is one document carrying
``audio_window: [start_s, end_s]``, so the audio layer plays only that stretch to any
model (:mod:`lm_eval_rul.audio.windows`). Our decisions:

* ``original`` cuts the item's recording; ``random`` cuts the recording that plays
  instead (the item's partner, :func:`~lm_eval_rul.factual.items.assign_random_clips`),
  so the model hears the whole unrelated recording, window by window;
* ``noise``, ``silence`` and ``none`` play no recording: one document per item, no
  window.

Every document also carries what the pre-flight audio check and the report read:
``benchmark`` (the harness task name), ``id``, the clip fields ``audio_ref``,
``audio_track``, ``audio_tried``, ``audio_pool``, and for every condition the random
partner (``random_partner``, ``random_disjoint``; ``audio_random_ref`` under ``random``),
and ``items_dropped``: the task's items left out and why
(:attr:`~lm_eval_rul.factual.sources.PreparedTask.dropped`), so that the sample log, and
the report read from it, say what the run did not evaluate.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..audio import AUDIO_CONDITIONS, UnknownConditionError, register_clip_pool
from ..audio.sources import file_ref
from .chunks import AGGREGATIONS, chunk_windows, effective_chunk_seconds
from .errors import FactualInputError
from .items import Item
from .prompts import prompt
from .sources import PreparedTask

__all__ = ["PLAYS_RECORDING", "run_options", "RunOptions", "make_documents"]

#: Conditions that play a recording (and so are cut into windows).
PLAYS_RECORDING: tuple[str, ...] = ("original", "random")


@dataclass(frozen=True)
class RunOptions:
    """The ``--metadata`` options of a factual run that shape its documents.

    Attributes:
        condition: The audio condition (``audio`` of ``--model_args``, merged into the
            metadata by the harness; absent = ``original``, ``none`` parsed to None).
        chunk_seconds: Longest window (default 60; ``lm-eval-rul run`` lowers it to the
            model's limit when not given).
        chunk_rule: ``union`` or ``majority``.
    """

    condition: str
    chunk_seconds: float
    chunk_rule: str


def run_options(metadata: Mapping[str, Any]) -> RunOptions:
    """Read and check the condition, ``chunk_seconds`` and ``chunk_rule`` of ``metadata``.

    Raises:
        FactualInputError: ``chunk_seconds`` is not a positive number, or ``chunk_rule``
            is neither ``union`` nor ``majority``.
        UnknownConditionError: ``audio`` names no condition.
    """
    audio = metadata.get("audio", "original")
    condition = "none" if audio in (None, "", "None") else str(audio)
    if condition not in AUDIO_CONDITIONS:
        raise UnknownConditionError(audio)
    seconds = effective_chunk_seconds(metadata.get("chunk_seconds"))
    rule = str(metadata.get("chunk_rule") or "union")
    if rule not in AGGREGATIONS:
        raise FactualInputError(
            f"--metadata chunk_rule must be one of {', '.join(AGGREGATIONS)}, got {rule!r}"
        )
    return RunOptions(condition, seconds, rule)


def _windows(item: Item, options: RunOptions) -> list[tuple[float, float] | None]:
    if options.condition not in PLAYS_RECORDING:
        return [None]
    if item.duration is None:  # the audio check reads every played file's header
        raise FactualInputError(f"item {item.id}: the duration of {item.audio} is unknown")
    return list(chunk_windows(item.duration, options.chunk_seconds))


def make_documents(
    prepared: PreparedTask,
    *,
    task_name: str,
    variant: str,
    options: RunOptions,
    question: str | None = None,
) -> list[dict[str, Any]]:
    """The documents of ``prepared`` for one prompt variant, in item then window order.

    Args:
        prepared: From :func:`~lm_eval_rul.factual.sources.prepare_task` (called with the
            same condition, so the played files were checked and their durations read).
        task_name: The harness task name, written as ``benchmark``.
        variant: Prompt variant (``open``, ``list``, ...).
        options: From :func:`run_options`.
        question: The prompt, when it is not the variant's label-set question (the
            binary and true/false studies write their own per document).
    """
    task, tree = prepared.task, prepared.genre_tree
    if question is None:
        question = prompt(task, variant, genre_tree=tree)
    clips = (*prepared.items, *prepared.partners.values())
    pool = register_clip_pool([(file_ref(it.audio), str(it.audio)) for it in clips])
    docs: list[dict[str, Any]] = []
    for item in prepared.items:
        partner = prepared.partners[item.id]
        played = partner if options.condition == "random" else item
        windows = _windows(played, options)
        base = {
            "benchmark": task_name,
            "id": item.id,
            "factual_task": task,
            "variant": variant,
            "dataset": item.dataset,
            "prompt": question,
            "gold": list(item.gold),
            "gold_text": ", ".join(item.gold),
            "chunk_rule": options.chunk_rule,
            "condition": options.condition,
            "audio": str(item.audio),
            "audio_ref": file_ref(item.audio),
            "audio_track": str(item.audio),
            "audio_tried": [],
            "audio_pool": pool,
            "random_partner": partner.id,
            "random_disjoint": item.id not in prepared.random.no_disjoint,
            "audio_random_ref": file_ref(partner.audio) if options.condition == "random" else None,
            "played_seconds": played.duration if windows[0] is not None else None,
            "n_chunks": len(windows),
            "items_dropped": dict(prepared.dropped),
        }
        for index, window in enumerate(windows):
            docs.append(
                {**base, "chunk": index, "audio_window": None if window is None else list(window)}
            )
    return docs
