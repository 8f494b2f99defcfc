"""The build's generate, clean and filter stages (``write`` is :mod:`.writing`).

Each stage works question by question; ``generate`` and ``filter`` append one checkpoint
line per finished question, so an interrupted run resumes without recomputing.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, replace
from typing import Any

from ..mcqa.letter_scoring import LetterScorer, PromptTooLongError
from ..questions import (
    Question,
    load_questions,
    load_questions_without_distractors,
)
from ..retries import (
    FAIL_FAST_ITEMS,
    SameErrorFromStart,
    error_text,
    permanent_error,
    with_retries,
)
from .checkpoint import Checkpoint, file_digest, redact_args
from .config import BuildConfig, BuildInputError
from .filtering import RELEASE_OPTION_ORDER, TooFewCandidates, filter_pool
from .generation import DistractorGenerator, GenerationResult
from .pi import compute_pi
from .stage_files import progress_bar

__all__ = [
    "FAIL_FAST_QUESTIONS",
    "GeneratorFailure",
    "generate_stage",
    "filter_stage",
    "reference_questions",
]

logger = logging.getLogger(__name__)

#: A run stops when its first this-many questions all fail with the same error
#: (:data:`lm_eval_rul.retries.FAIL_FAST_ITEMS`).
FAIL_FAST_QUESTIONS = FAIL_FAST_ITEMS


class GeneratorFailure(BuildInputError):
    """The generator cannot work: an error no retry fixes, or the same error from the start."""


def _stop_message(config: BuildConfig, error: str, reason: str) -> str:
    return (
        f"build stopped: the generator ({config.generator} {redact_args(config.generator_args)}) "
        f"{reason}. Last error: {error}. Fix it and rerun the same command: finished "
        "questions are kept in the checkpoint and failed ones are retried."
    )


def generate_stage(
    config: BuildConfig,
    questions: Sequence[Question],
    generator_lm: Any,
    *,
    sleep: Callable[[float], None] = time.sleep,
) -> tuple[list[Question], dict[str, Any]]:
    """Generate candidate pools (stage 1); returns the pools and the generation counts.

    Each question's replies are written to the ``generate`` checkpoint as soon as they
    are in. A question whose call still fails after the retries gets a failure record
    (retried on the next run), listed in ``counts["failed_calls"]``; every question is
    returned, in order (an empty pool when its calls failed or nothing was parsable).

    Raises:
        GeneratorFailure: At once on an error no retry can fix (authentication, not
            found, a programming error: :func:`lm_eval_rul.retries.permanent_error`), or when the
            first :data:`FAIL_FAST_QUESTIONS` questions of the run fail with the same error
            (a wrong URL or model name), instead of sleeping through every question.
    """
    fingerprint = {
        "stage": "generate",
        "data": file_digest(config.data),
        "generator": config.generator,
        "generator_args": redact_args(config.generator_args),
        "n_batches": config.n_batches,
        "n_per_batch": config.n_per_batch,
        "temperature": config.temperature,
        "max_gen_toks": config.max_gen_toks,
        "seed": config.seed,
    }
    checkpoint = Checkpoint(config.checkpoint_path("generate"), fingerprint)
    generator = DistractorGenerator(
        generator_lm,
        n_batches=config.n_batches,
        n_per_batch=config.n_per_batch,
        temperature=config.temperature,
        max_gen_toks=config.max_gen_toks,
        seed=config.seed,
    )
    bar = progress_bar(len(questions), "generate", config.progress)
    from_start = SameErrorFromStart(FAIL_FAST_QUESTIONS)
    for q in questions:
        if checkpoint.done(q.id):
            bar.update(1)
            continue
        try:
            replies = [
                with_retries(
                    lambda q=q, b=batch: generator.reply(q, b),
                    retries=config.retries,
                    backoff=config.backoff,
                    what=f"generator call for question {q.id!r} (batch {batch})",
                    sleep=sleep,
                )
                for batch in range(config.n_batches)
            ]
        except Exception as err:  # noqa: BLE001 - recorded per question, others go on
            checkpoint.add(
                {
                    "id": q.id,
                    "status": "failed",
                    "stage": "generate",
                    "retryable": True,
                    "error": error_text(err),
                    "attempts": config.retries + 1,
                }
            )
            bar.update(1)
            reason = permanent_error(err, args_option="--generator_args")
            if reason is not None:
                bar.close()
                raise GeneratorFailure(
                    _stop_message(
                        config,
                        error_text(err),
                        f"failed with an error no retry can fix ({reason}) on question {q.id!r}",
                    )
                ) from err
            if from_start.failed(err):
                bar.close()
                raise GeneratorFailure(
                    _stop_message(
                        config,
                        error_text(err),
                        f"failed on each of the first {FAIL_FAST_QUESTIONS} questions with "
                        f"the same error ({config.retries} retries each)",
                    )
                ) from err
            continue
        from_start.succeeded()
        result = generator.collect(q.id, replies)
        checkpoint.add({"status": "ok", **asdict(result)})
        bar.update(1)
    bar.close()

    pools, counts = (
        [],
        {
            "questions": len(questions),
            "replies": 0,
            "replies_without_candidates": 0,
            "questions_without_candidates": [],
            "failed_calls": {},
            "candidates": 0,
            "generator_calls": generator.n_calls,
            "fingerprint": fingerprint,
        },
    )
    for q in questions:
        record = checkpoint.records[q.id]
        if record["status"] != "ok":
            counts["failed_calls"][q.id] = record["error"]
            pools.append(replace(q, distractors=(), pi=None))
            continue
        result = GenerationResult(**{k: v for k, v in record.items() if k != "status"})
        counts["replies"] += result.n_replies
        counts["replies_without_candidates"] += result.n_unparsable
        counts["candidates"] += len(result.candidates)
        if not result.candidates:
            counts["questions_without_candidates"].append(q.id)
        pools.append(replace(q, distractors=tuple(result.candidates), pi=None))
    return pools, counts


def reference_questions(config: BuildConfig) -> dict[str, Question]:
    """Questions with their original distractors (for PI before), by id."""
    if config.reference is not None:
        questions = load_questions(config.reference)
    elif config.data is not None and config.pools is None:
        questions = load_questions_without_distractors(config.data)
    else:
        return {}
    usable = {q.id: q for q in questions if 1 <= len(q.distractors) <= 4}
    if len(usable) < len(questions) and config.reference is not None:
        bad = [q.id for q in questions if q.id not in usable]
        listed = ", ".join(repr(i) for i in bad[:10]) + (" ..." if len(bad) > 10 else "")
        raise BuildInputError(
            f"--reference {config.reference}: {len(bad)} question(s) do not have 1-4 original "
            f"distractors, so their PI before is undefined (ids {listed}). Give the file with "
            "the original questions (e.g. RUL-MuchoMusic.json or muchomusic.csv), not a pools "
            "file, or leave --reference out."
        )
    return usable


def filter_stage(
    config: BuildConfig,
    pools: Sequence[Question],
    lm: Any,
    *,
    reference: dict[str, Question] | None = None,
    source_fingerprint: str | None = None,
    skip: Iterable[str] = (),
) -> Checkpoint:
    """Pick four distractors per question and compute PI (stage 3), one checkpoint line each.

    A pool with fewer than four candidates (empty ones included) gets a failure record
    naming the count. Each record stores the ``chance`` PI of its prompts (and
    ``chance_before`` with the original distractors): ``1 - 1/n_options``.

    A prompt longer than the scorer's context is never scored cut: with
    ``config.long_prompts == "skip"`` its question gets a failure record saying so;
    otherwise the other questions are finished (and checkpointed) and one
    :class:`~lm_eval_rul.mcqa.letter_scoring.PromptTooLongError` names them all.

    Args:
        config: The build configuration.
        pools: Clean pools.
        lm: The scorer (an lm-eval ``LM`` with ``loglikelihood``).
        reference: Questions with the original distractors, for PI before.
        source_fingerprint: Identifies the pools (a file digest), for the checkpoint.
        skip: Ids that already failed upstream (reported from their own records; not
            written to this checkpoint, so a later run that fixed them filters them).
    """
    reference = reference or {}
    skip = set(skip)
    fingerprint = {
        "stage": "filter",
        "pools": source_fingerprint,
        "model": config.model,
        "model_args": redact_args(config.model_args),
        "strategy": config.strategy,
        "prompt_style": config.prompt_style,
        "protocol": config.protocol,
        "seed": config.seed,
        "reference": file_digest(config.reference),
    }
    if config.strategy == "release":
        fingerprint["release_option_order"] = RELEASE_OPTION_ORDER
    checkpoint = Checkpoint(config.checkpoint_path("filter"), fingerprint)
    scorer = LetterScorer(lm, style=config.prompt_style)
    too_long: dict[str, int] = {}
    limit = 0
    bar = progress_bar(len(pools), f"filter ({config.strategy})", config.progress)
    for q in pools:
        if q.id in skip or checkpoint.done(q.id):
            bar.update(1)
            continue
        base = {
            "id": q.id,
            "question": q.question,
            "caption": q.caption,
            "correct_answer": q.correct_answer,
            "pool_size": len(q.distractors),
        }
        try:
            record = _filter_one(config, q, lm, scorer, base, reference.get(q.id))
        except TooFewCandidates as err:
            record = {**base, "status": "failed", "stage": "filter", "error": str(err)}
        except PromptTooLongError as err:  # never scored cut from the left
            if config.long_prompts != "skip":
                too_long.update(err.lengths)  # named together once the others are done
                limit = err.limit
                bar.update(1)
                continue
            tokens = max(err.lengths.values())
            record = {
                **base,
                "status": "failed",
                "stage": "filter",
                "error": f"a prompt of {tokens} tokens is longer than the scorer's context "
                f"of {err.limit} (skipped: --long_prompts skip)",
            }
        checkpoint.add(record)
        bar.update(1)
    bar.close()
    if too_long:
        raise PromptTooLongError(too_long, limit)
    return checkpoint


def _filter_one(
    config: BuildConfig,
    q: Question,
    lm: Any,
    scorer: LetterScorer,
    base: dict[str, Any],
    original: Question | None,
) -> dict[str, Any]:
    """The filter record of one pool: four distractors and the PI after (and before)."""
    chosen = filter_pool(
        q.distractors,
        q.correct_answer,
        lambda sets, text=q.question: scorer(text, sets, label=q.id),
        strategy=config.strategy,
        seed=config.seed,
        question_id=q.id,
    )
    final = Question(q.id, q.question, q.correct_answer, tuple(chosen.distractors), q.caption)
    (after,) = compute_pi([final], lm, protocol=config.protocol, seed=config.seed, progress=False)
    record = {
        **base,
        "status": "ok",
        "distractors": chosen.distractors,
        "n_filter_prompts": chosen.n_prompts,
        "pi": after.pi,
        "chance": after.chance,
        "p_correct": after.p_correct,
        "pi_before": None,
        "chance_before": None,
        "original_distractors": None,
    }
    if original is not None:
        (before,) = compute_pi(
            [original], lm, protocol=config.protocol, seed=config.seed, progress=False
        )
        record["pi_before"] = before.pi
        record["chance_before"] = before.chance
        record["original_distractors"] = list(original.distractors)
    return record
