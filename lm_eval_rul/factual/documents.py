"""Harness documents of a factual task: one per window of each item's recording.

A recording is heard whole, up to the model's limit, unless windows are asked for
(:func:`~lm_eval_rul.factual.chunks.plan_windows`: ``chunk_seconds``, or a ``chunked``
model); each window is one document carrying ``audio_window: [start_s, end_s]``, so the
audio layer plays only that stretch to any model (:mod:`lm_eval_rul.audio.windows`). A
recording longer than the model's limit is cut there (under both protocols), one document
whose window is its first ``limit`` seconds.
Every document records ``recording_seconds``, ``heard_seconds`` and ``cut`` (what was
heard of the played recording and whether its end was not), and ``protocol``; the run
logs how many recordings were cut. Our decisions:

* a condition that reads the item's own clip (``original``, ``reversed``) cuts the
  item's recording; one that reads the clip pool (``random``) cuts the recording that plays
  instead (the item's partner, :func:`~lm_eval_rul.factual.items.assign_random_clips`),
  so the model hears the whole unrelated recording, window by window;
* those that read nothing (``noise``, ``silence``, ``none``) play no recording: one
  document per item, no window.

The condition's ``reads`` decides (:class:`~lm_eval_rul.audio.Condition`); the audio
layer then plays each window as the condition says (``reversed``: the window backwards).

Every document also carries what the pre-flight audio check and the report read:
``benchmark`` (the harness task name), ``id``, the clip fields ``audio_ref``,
``audio_track``, ``audio_tried``, ``audio_pool``, and for every condition the random
partner (``random_partner``, ``random_disjoint``; ``audio_random_ref`` under ``random``),
and ``items_dropped``: the task's items left out and why
(:attr:`~lm_eval_rul.factual.datasets.sources.PreparedTask.dropped`), so that the sample log, and
the report read from it, say what the run did not evaluate.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..audio import Condition, condition_named, register_clip_pool
from ..audio.conditions import CLIP_POOL, NOTHING
from ..audio.sources import file_ref
from .chunks import AGGREGATIONS, HeardPlan, effective_chunk_seconds, plan_windows
from .datasets.sources import PreparedTask
from .errors import FactualInputError
from .items import Item
from .prompts import prompt
from .protocol import is_chunked, protocol_of

__all__ = ["run_options", "RunOptions", "make_documents", "describe_windows"]

logger = logging.getLogger(__name__)
_CUT_LOGGED: set[tuple[str, str, float]] = set()


@dataclass(frozen=True)
class RunOptions:
    """The ``--metadata`` options of a factual run that shape its documents.

    Attributes:
        condition: The audio condition (``audio`` of ``--model_args``, merged into the
            metadata by the harness; absent = ``original``, ``none`` parsed to None).
        chunk_seconds: Window length when windows are asked for (``chunk_seconds``, or
            a ``chunked`` model: 60 s or its limit); None: each recording heard whole.
        chunk_rule: ``union`` or ``majority``.
        max_seconds: The model's audio limit (``max_audio_seconds``: a model argument
            the harness merges into the metadata, or set by ``lm-eval-rul run`` from the
            checkpoint); None: unknown or no limit.
        protocol: ``rul`` or ``paper`` (:mod:`~lm_eval_rul.factual.protocol`).
        chunked: The model hears long audio in windows (the bridge's ``CHUNKED``).
    """

    condition: str
    chunk_seconds: float | None
    chunk_rule: str
    max_seconds: float | None = None
    protocol: str = "rul"
    chunked: bool = False

    @property
    def audio_condition(self) -> Condition:
        """The :class:`~lm_eval_rul.audio.Condition` object of :attr:`condition`."""
        return condition_named(self.condition)


def _limit(value: Any) -> float | None:
    if value is None or str(value).strip().lower() in ("", "none"):
        return None
    try:
        limit = float(value)
    except (TypeError, ValueError):
        limit = -1.0
    if not limit > 0:
        raise FactualInputError(
            f"max_audio_seconds={value!r} must be a positive number of seconds (the model's "
            "audio limit)"
        )
    return limit


def run_options(metadata: Mapping[str, Any]) -> RunOptions:
    """Read and check the condition, windows, ``chunk_rule`` and ``protocol`` of ``metadata``.

    Raises:
        FactualInputError: ``chunk_seconds`` is not a positive number or exceeds
            ``max_audio_seconds``, ``chunk_rule`` is neither ``union`` nor ``majority``,
            ``protocol`` names no protocol, or ``chunked`` is not a boolean.
        UnknownConditionError: ``audio`` names no condition.
    """
    condition = condition_named(metadata.get("audio", "original")).name
    protocol = protocol_of(metadata)
    limit = _limit(metadata.get("max_audio_seconds"))
    chunked = is_chunked(metadata.get("chunked"))
    seconds = effective_chunk_seconds(metadata.get("chunk_seconds"), limit, chunked=chunked)
    rule = str(metadata.get("chunk_rule") or "union")
    if rule not in AGGREGATIONS:
        raise FactualInputError(
            f"--metadata chunk_rule must be one of {', '.join(AGGREGATIONS)}, got {rule!r}"
        )
    return RunOptions(condition, seconds, rule, limit, protocol, chunked)


def describe_windows(options: RunOptions) -> str:
    """How a run's recordings are heard, for its log lines.

    Examples
    --------
    >>> describe_windows(RunOptions("original", None, "union", 600.0))
    'each recording whole up to 600 s (longer: cut there, protocol=rul)'
    """
    if options.chunk_seconds is not None:
        layout = "fixed segments" if options.protocol == "paper" else "equal windows"
        return f"{layout} of at most {options.chunk_seconds:g} s (protocol={options.protocol})"
    if options.max_seconds is None:
        return f"each recording whole (no known limit; protocol={options.protocol})"
    return (
        f"each recording whole up to {options.max_seconds:g} s "
        f"(longer: cut there, protocol={options.protocol})"
    )


def _plan(item: Item, options: RunOptions) -> HeardPlan | None:
    """What is heard of ``item``'s recording; None when no recording plays."""
    if options.audio_condition.reads == NOTHING:
        return None
    if item.duration is None:  # the audio check reads every played file's header
        raise FactualInputError(f"item {item.id}: the duration of {item.audio} is unknown")
    return plan_windows(
        item.duration,
        chunk_seconds=options.chunk_seconds,
        max_seconds=options.max_seconds,
        protocol=options.protocol,
    )


def _log_cut(task_name: str, options: RunOptions, plans: list[HeardPlan]) -> None:
    """One warning per task and setting: how many recordings were cut at the limit."""
    cut = [plan for plan in plans if plan.cut]
    key = (task_name, options.condition, options.max_seconds or 0.0)
    if not cut or key in _CUT_LOGGED:
        return
    _CUT_LOGGED.add(key)
    unheard = sum(plan.recording_seconds - plan.heard_seconds for plan in cut)
    logger.warning(
        "%s: %d of %d recordings are longer than the model's %g s and are cut to their first "
        "%g s, as the model would cut them; %.0f s are not heard in all. Each document records "
        "recording_seconds, heard_seconds and cut. To ask about the rest too, ask for windows: "
        "--metadata chunk_seconds=S.",
        task_name,
        len(cut),
        len(plans),
        options.max_seconds,
        options.max_seconds,
        unheard,
    )


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
        prepared: From :func:`~lm_eval_rul.factual.datasets.sources.prepare_task` (called with the
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
    plans: list[HeardPlan] = []
    plays_partner = options.audio_condition.reads == CLIP_POOL
    for item in prepared.items:
        partner = prepared.partners[item.id]
        played = partner if plays_partner else item
        plan = _plan(played, options)
        windows = [None] if plan is None else list(plan.windows)
        plans += [] if plan is None else [plan]
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
            "audio_random_ref": file_ref(partner.audio) if plays_partner else None,
            "played_seconds": None if plan is None else played.duration,
            "recording_seconds": None if plan is None else plan.recording_seconds,
            "heard_seconds": None if plan is None else plan.heard_seconds,
            "cut": False if plan is None else plan.cut,
            "protocol": options.protocol,
            "n_chunks": len(windows),
            "items_dropped": dict(prepared.dropped),
        }
        for index, window in enumerate(windows):
            docs.append(
                {**base, "chunk": index, "audio_window": None if window is None else list(window)}
            )
    _log_cut(task_name, options, plans)
    return docs
