"""``run_build``: the stages in order, each resumable, with inputs checked first."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..files import OutputLock
from ..questions import clean_pools, limited_sample, load_questions_without_distractors
from ..questions.file_kinds import CSV, PI, POOLS, QUESTIONS, RELEASE, RESULTS, sniff_data_file
from ..registration import create_lm
from .checkpoint import Checkpoint, file_digest, fingerprint_digest, write_json
from .config import BuildConfig, BuildInputError
from .stage_files import failure_record, read_stage_pools, write_pools
from .stages import (
    filter_stage,
    generate_stage,
    reference_questions,
)
from .writing import write_stage

__all__ = ["run_build"]

logger = logging.getLogger(__name__)


def run_build(
    config: BuildConfig,
    *,
    lm: Any | None = None,
    generator_lm: Any | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> dict[str, Any]:
    """Run the stages ``config.stage`` asks for; returns a summary of what was written.

    Args:
        config: The build configuration.
        lm: A ready scorer LM (default: created from ``config.model``/``model_args``).
        generator_lm: A ready generator LM (default: created from ``config.generator``).
        sleep: Called between retries (tests pass a no-op).

    Raises:
        OutputBusyError: Another process is building the same ``--output`` (it holds
            ``<output>.lock``).
    """
    with OutputLock(config.output, command="lm-eval-rul build"):
        return _run_build(config, lm=lm, generator_lm=generator_lm, sleep=sleep)


def _run_build(
    config: BuildConfig,
    *,
    lm: Any | None,
    generator_lm: Any | None,
    sleep: Callable[[float], None],
) -> dict[str, Any]:
    stage = config.stage
    if stage == "write":
        return _write_from_checkpoint(config)
    _check_inputs(config)

    failures: dict[str, dict[str, Any]]
    if config.pools is None:
        questions = limited_sample(
            load_questions_without_distractors(config.data),
            limit=config.limit,
            seed=config.seed,
            item_id=lambda q: q.id,
        )
        if generator_lm is None:
            generator_lm = create_lm(
                config.generator, config.generator_args, flag="--generator_args"
            )
        pools, generation = generate_stage(config, questions, generator_lm, sleep=sleep)
        extra: dict[str, Any] = {"generation": generation}
        by_id = {q.id: q for q in questions}
        failures = {
            qid: failure_record(by_id[qid], "generate", err)
            for qid, err in generation["failed_calls"].items()
        }
        if stage == "generate":
            return write_pools(config, pools, failures, extra)
        pools, cleaning = clean_pools(pools)
        source = fingerprint_digest(generation["fingerprint"])
    else:
        # with --limit: the seeded sample of N questions, as `pi --limit` and the tasks'
        # --limit with the same seed, and counts of those alone
        pools, cleaning, failures, extra = read_stage_pools(
            config.pools, limit=config.limit, seed=config.seed
        )
        source = file_digest(config.pools)
    extra["cleaning"] = asdict(cleaning)
    if config.limit is not None:
        extra["limit"] = config.limit
    order = [q.id for q in pools]
    if stage == "clean":
        return write_pools(config, pools, failures, extra)

    reference = reference_questions(config)  # before loading the scorer: bad input fails fast
    if lm is None:
        lm = create_lm(
            config.model, config.model_args, device=config.device, batch_size=config.batch_size
        )
    checkpoint = filter_stage(
        config,
        pools,
        lm,
        reference=reference,
        source_fingerprint=source,
        skip=failures,
    )
    write_json(config.meta_path(), {"order": order, "failures": failures, "extra": extra})
    if stage == "filter":
        return {
            "checkpoint": str(checkpoint.path),
            "meta": str(config.meta_path()),
            "n_records": len(checkpoint.records),
            "n_upstream_failures": len(failures),
        }
    return write_stage(config, {**checkpoint.records, **failures}, extra=extra, order=order)


def _check_inputs(config: BuildConfig) -> None:
    """Refuse combinations of inputs and ``--stage`` that cannot build anything."""
    stage = config.stage
    if config.pools is not None and config.data is not None:
        raise BuildInputError(
            "give either --pools POOLS.json (existing pools) or --data QUESTIONS with "
            "--generator (generate pools), not both"
        )
    if stage == "clean" and config.pools is None:
        raise BuildInputError(
            "--stage clean reads --pools (a file written by --stage generate, or released "
            "pools); to generate and clean in one go, use --stage all"
        )
    if stage == "generate" and config.pools is not None:
        raise BuildInputError(
            "--stage generate makes pools from --data QUESTIONS with --generator MODEL; "
            "--pools already are pools (use --stage clean or filter on them)"
        )
    if config.pools is None and (config.data is None or not config.generator):
        raise BuildInputError(
            "nothing to build from: give --pools POOLS.json, or --data QUESTIONS with "
            "--generator MODEL --generator_args ..."
        )
    if stage in ("all", "filter") and not config.model:
        raise BuildInputError(
            "the filter stage needs the scorer: --model hf --model_args pretrained=..."
        )
    _check_file_kinds(config)


#: What each file flag reads, and the kinds of file it refuses.
_FILE_FLAGS = {
    "pools": (
        "distractor pools to pick four from (more than 4 candidates per question, e.g. the "
        "released distractors.json, or a file written by --stage generate/clean)",
        (QUESTIONS, CSV, PI, RESULTS, RELEASE),
    ),
    "data": ("questions with captions to generate pools for", (POOLS, PI, RESULTS)),
    "reference": (
        "the questions with their original 1-4 distractors (for the PI before), e.g. "
        "RUL-MuChoMusic.json or muchomusic.csv",
        (POOLS, PI, RESULTS),
    ),
}
#: What to do instead, per (flag, kind found).
_INSTEAD = {
    ("pools", QUESTIONS): "for its PI run lm-eval-rul pi --data {path}; to rebuild its "
    "questions, give their pools",
    ("data", POOLS): "to pick four distractors from these pools, give the file as --pools",
    ("pools", RELEASE): "to build a file with 4 distractors per question from its items, "
    "give it as --data {path}",
    ("reference", POOLS): "give the question file the pools were made for",
}


def _check_file_kinds(config: BuildConfig) -> None:
    """A file given to the wrong flag (pools as --data, a question file as --pools, ...)."""
    for flag, (wants, refused) in _FILE_FLAGS.items():
        path = getattr(config, flag)
        if path is None or not Path(path).is_file():
            continue
        found = sniff_data_file(path)
        if found.kind not in refused:
            continue
        instead = _INSTEAD.get((flag, found.kind), "").format(path=path)
        raise BuildInputError(
            f"--{flag} {str(path)!r} is {found.description}, but --{flag} expects {wants}"
            + (f"; {instead}" if instead else "")
        )


def _write_from_checkpoint(config: BuildConfig) -> dict[str, Any]:
    """``--stage write``: the filter checkpoint plus the order, upstream failures and counts
    that the filter stage left in ``<output>.filter.meta.json``."""
    checkpoint_path = config.checkpoint_path("filter")
    if not checkpoint_path.is_file():
        raise FileNotFoundError(
            f"--stage write reads {checkpoint_path}, which does not exist: run the filter "
            "stage with the same --output first."
        )
    try:
        header = json.loads(checkpoint_path.read_text(encoding="utf-8").splitlines()[0])
    except (json.JSONDecodeError, IndexError):
        header = {}
    checkpoint = Checkpoint(checkpoint_path, header.get("fingerprint", {}))
    meta_path = config.meta_path()
    if not meta_path.is_file():
        logger.warning(
            "%s is missing (a checkpoint from an older version): the report lists the "
            "checkpoint's questions only, without upstream failures or counts",
            meta_path,
        )
        return write_stage(config, checkpoint.records)
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    records = {**checkpoint.records, **meta["failures"]}
    return write_stage(config, records, extra=meta["extra"], order=meta["order"])
