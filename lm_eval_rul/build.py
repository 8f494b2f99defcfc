"""``lm-eval-rul build``: make a music MCQA benchmark perception-hard (DESIGN.md §3).

Stages, each usable on its own (``--stage``):

1. ``generate``: candidate pools from an instruction LLM (any harness model with
   ``generate_until``), several sampled batches per question, parsed from XML tags;
   writes pools in the released ``distractors.json`` layout.
2. ``clean``: normalise, de-duplicate, drop candidates equal to the correct answer;
   writes cleaned pools and counts.
3. ``filter``: pick four distractors per question with the PI scorer (``paper``
   tournament or ``release`` chunks of six) and compute the new PI (and the PI of the
   original distractors when known).
4. ``write``: the dataset in the released RUL JSON schema, sorted by PI (highest
   first), and a build report (JSON and markdown).

``all`` (the default) runs every stage that applies to the input. ``generate`` and
``filter`` write one checkpoint line per finished question (``<output>.<stage>.ckpt.jsonl``);
a rerun with the same arguments skips what is there, and a checkpoint made with other
arguments is refused. A failing LLM call is retried with exponential backoff, then
recorded as a failure of that question (retried on the next run) without stopping the
others. A question with fewer than four clean candidates gets a failure record and is
counted in the report: nothing is dropped silently.

Run stage by stage, every question travels to the end in its original order: the pools
file of ``generate``/``clean`` keeps every question (an empty pool when nothing was
parsable; ``"build_failure": {stage, error}`` when its generator call failed) and its
``<stem>.report.json`` carries the generation and cleaning counts (used when the file's
digest still matches); ``filter`` writes ``<output>.filter.meta.json`` (question order,
upstream failures, counts) that ``write`` reads with the filter checkpoint.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from .data import (
    PoolCleaningReport,
    Question,
    load_questions,
    load_questions_without_distractors,
    read_pools,
)
from .distractors import DistractorGenerator, GenerationResult, clean_pools
from .errors import UserInputError
from .filtering import STRATEGIES, TooFewCandidates, filter_pool
from .pi import PROTOCOLS, LetterScorer, compute_pi, create_lm, summarize_pi

__all__ = [
    "STAGES",
    "BuildConfig",
    "BuildInputError",
    "CheckpointMismatch",
    "Checkpoint",
    "with_retries",
    "run_build",
    "generate_stage",
    "clean_stage",
    "filter_stage",
    "write_stage",
    "load_generation_questions",
]

logger = logging.getLogger(__name__)

STAGES: tuple[str, ...] = ("all", "generate", "clean", "filter", "write")
CHECKPOINT_FORMAT = "lm-eval-rul build checkpoint v1"


@dataclass
class BuildConfig:
    """Everything ``lm-eval-rul build`` was asked to do.

    Attributes:
        output: The dataset file (``generate``/``clean`` alone: the pools file).
        pools: Existing pools (released ``distractors.json`` layout) to start from.
        data: Questions with correct answers (and captions) to generate pools for.
        generator: Harness model name of the instruction LLM.
        generator_args: Its ``model_args`` string.
        model: Harness model name of the text-only scorer.
        model_args: Its ``model_args`` string.
        device: ``--device`` of the scorer.
        batch_size: ``--batch_size`` of the scorer.
        strategy: Filtering strategy, ``paper`` or ``release``.
        prompt_style: Option style of the filter prompts (``paper``: ``(A) x``,
            ``release``: ``A. x;``); ``None`` (default) uses the strategy's own, as the
            paper and the released code do.
        protocol: PI protocol of the new (and original) distractors.
        seed: Base seed of every random choice.
        reference: Questions with the original distractors, for PI before (optional;
            ``--data`` with 1-4 distractors serves as its own reference).
        n_batches: Sampled generator replies per question.
        n_per_batch: Candidates asked for per reply.
        temperature: Generator sampling temperature.
        max_gen_toks: Generator token budget per reply.
        retries: Retries of a failing generator call.
        backoff: First retry delay in seconds (doubles each retry).
        stage: One of :data:`STAGES`.
        progress: Show tqdm bars.
    """

    output: Path
    pools: Path | None = None
    data: Path | None = None
    generator: str | None = None
    generator_args: str | None = None
    model: str | None = None
    model_args: str | None = None
    device: str | None = None
    batch_size: int | str | None = None
    strategy: str = "release"
    prompt_style: str | None = None
    protocol: str = "release"
    seed: int = 1234
    reference: Path | None = None
    n_batches: int = 3
    n_per_batch: int = 10
    temperature: float = 1.0
    max_gen_toks: int = 512
    retries: int = 3
    backoff: float = 2.0
    stage: str = "all"
    progress: bool = True

    def __post_init__(self) -> None:
        self.output = Path(self.output)
        for name in ("pools", "data", "reference"):
            value = getattr(self, name)
            if value is not None:
                setattr(self, name, Path(value))
        if self.stage not in STAGES:
            raise BuildInputError(f"--stage must be one of {STAGES}, got {self.stage!r}")
        if self.strategy not in STRATEGIES:
            raise BuildInputError(f"--strategy must be one of {STRATEGIES}, got {self.strategy!r}")
        if self.prompt_style is None:
            self.prompt_style = self.strategy
        if self.prompt_style not in STRATEGIES:
            raise BuildInputError(
                f"--prompt_style must be one of {STRATEGIES}, got {self.prompt_style!r}"
            )
        if self.protocol not in PROTOCOLS:
            raise BuildInputError(f"--protocol must be one of {PROTOCOLS}, got {self.protocol!r}")

    def checkpoint_path(self, stage: str) -> Path:
        return self.output.with_name(f"{self.output.name}.{stage}.ckpt.jsonl")

    def meta_path(self) -> Path:
        """Question order, upstream failures and counts of the filter stage, for ``write``."""
        return self.output.with_name(f"{self.output.name}.filter.meta.json")


class BuildInputError(UserInputError, ValueError):
    """``lm-eval-rul build`` was given inputs it cannot build from."""


# ----------------------------------------------------------------------------- helpers


def _file_digest(path: Path | None) -> str | None:
    if path is None:
        return None
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:16]


_SECRET_KEYS = ("key", "token", "secret", "password")


def redact_args(args: str | None) -> str | None:
    """``model_args`` with secret-looking values (``api_key=``, ``auth_token=``...) masked.

    >>> redact_args("base_url=http://h/v1,auth_token=abc,model=m")
    'base_url=http://h/v1,auth_token=***,model=m'
    """
    if not args:
        return args
    parts = []
    for part in args.split(","):
        key, sep, _ = part.partition("=")
        secret = sep and any(word in key.lower() for word in _SECRET_KEYS)
        parts.append(f"{key}=***" if secret else part)
    return ",".join(parts)


def _fingerprint_digest(fingerprint: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(fingerprint, sort_keys=True).encode()).hexdigest()[:16]


class CheckpointMismatch(UserInputError, RuntimeError):
    """A checkpoint on disk was written by a run with other arguments."""


class Checkpoint:
    """One JSON line per finished question, after a header naming the run's arguments.

    Args:
        path: The ``.ckpt.jsonl`` file.
        fingerprint: The arguments that decide the results; a file with another
            fingerprint is refused with :class:`CheckpointMismatch`.
    """

    def __init__(self, path: Path, fingerprint: dict[str, Any]) -> None:
        self.path = Path(path)
        self.fingerprint = fingerprint
        self.records: dict[str, dict[str, Any]] = {}
        if self.path.is_file() and self.path.stat().st_size > 0:
            self._load()
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            header = {"format": CHECKPOINT_FORMAT, "fingerprint": fingerprint}
            self.path.write_text(json.dumps(header) + "\n", encoding="utf-8")

    def _load(self) -> None:
        lines = self.path.read_text(encoding="utf-8").splitlines()
        try:
            header = json.loads(lines[0])
        except (json.JSONDecodeError, IndexError):
            header = {}
        if header.get("format") != CHECKPOINT_FORMAT:
            raise CheckpointMismatch(
                f"{self.path} is not an lm-eval-rul build checkpoint; move it away or choose "
                "another --output."
            )
        theirs = header.get("fingerprint", {})
        mine = self.fingerprint
        differ = sorted(k for k in set(theirs) | set(mine) if theirs.get(k) != mine.get(k))
        if differ:
            shown = "; ".join(
                f"{k}: checkpoint {theirs.get(k)!r}, now {self.fingerprint.get(k)!r}"
                for k in differ
            )
            raise CheckpointMismatch(
                f"checkpoint {self.path} was made with other arguments ({shown}). Rerun with the "
                "same arguments to resume, or delete the checkpoint (or choose another --output) "
                "to start over."
            )
        for lineno, line in enumerate(lines[1:], start=2):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                # A line cut by an interruption: only the last line can be partial.
                if lineno == len(lines):
                    logger.warning("%s: ignoring a partial last line (interrupted run)", self.path)
                    continue
                raise CheckpointMismatch(f"{self.path}: line {lineno} is not valid JSON") from None
            if not isinstance(record, dict) or "id" not in record:
                raise CheckpointMismatch(
                    f'{self.path}: line {lineno} is not a question record (no "id"); the '
                    "file was edited or is not a build checkpoint. Remove that line, or delete "
                    "the checkpoint (or choose another --output) to start over."
                )
            self.records[str(record["id"])] = record

    def done(self, question_id: str) -> bool:
        """Whether the question needs no more work (finished, or failed for good)."""
        record = self.records.get(question_id)
        return record is not None and not record.get("retryable", False)

    def add(self, record: dict[str, Any]) -> None:
        """Append one question's record and flush it to disk."""
        self.records[str(record["id"])] = record
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
            handle.flush()
            os.fsync(handle.fileno())


def with_retries(
    fn: Callable[[], Any],
    *,
    retries: int,
    backoff: float,
    what: str,
    sleep: Callable[[float], None] = time.sleep,
) -> Any:
    """Call ``fn``; on an exception wait ``backoff * 2**k`` seconds and retry, ``retries`` times.

    Raises:
        The last exception, when every attempt failed.
    """
    for attempt in range(retries + 1):
        try:
            return fn()
        except Exception as err:  # noqa: BLE001 - any failure of a remote call is retried
            if attempt == retries:
                raise
            delay = backoff * 2**attempt
            logger.warning(
                "%s failed (%r); retry %d/%d in %.1fs", what, err, attempt + 1, retries, delay
            )
            sleep(delay)
    raise AssertionError("unreachable")


def _bar(total: int, desc: str, enabled: bool) -> Any:
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="q", disable=not enabled)


def _pools_json(
    questions: Iterable[Question], failures: dict[str, dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    """Pools in the released layout; a question that failed upstream keeps its row, with
    ``build_failure`` (stage, error) so that later stages report it."""
    out: dict[str, dict[str, Any]] = {}
    for q in questions:
        row: dict[str, Any] = {
            "question": q.question,
            "caption": q.caption or "",
            "correct_answer": q.correct_answer,
            "distractors": list(q.distractors),
        }
        if q.id in failures:
            failure = failures[q.id]
            row["build_failure"] = {"stage": failure["stage"], "error": failure["error"]}
        out[q.id] = row
    return out


def _failure(q: Question, stage: str, error: str) -> dict[str, Any]:
    return {
        "id": q.id,
        "question": q.question,
        "caption": q.caption,
        "correct_answer": q.correct_answer,
        "status": "failed",
        "stage": stage,
        "error": error,
    }


def _report_path(path: Path) -> Path:
    return path.with_name(path.stem + ".report.json")


def _write_pools(
    config: BuildConfig,
    pools: Sequence[Question],
    failures: dict[str, dict[str, Any]],
    extra: dict[str, Any],
) -> dict[str, Any]:
    """Write a stage's pools file and its ``<stem>.report.json`` (counts, failures)."""
    _write_json(config.output, _pools_json(pools, failures))
    report = {
        **extra,
        "pools_digest": _file_digest(config.output),
        "n_questions": len(pools),
        "failures": [
            {"id": f["id"], "stage": f["stage"], "error": f["error"]} for f in failures.values()
        ],
    }
    _write_json(_report_path(config.output), report)
    return report


def _read_stage_pools(
    path: Path,
) -> tuple[list[Question], PoolCleaningReport, dict[str, dict[str, Any]], dict[str, Any]]:
    """Read ``--pools``: cleaned pools (empty ones kept), their upstream failure records
    (``build_failure``), and the counts of the stage that wrote them (its report, when it
    still describes this very file)."""
    pools, cleaning = read_pools(path, allow_empty=True)
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    else:
        raw = json.loads(text)
        rows = [{"id": k, **v} for k, v in raw.items()] if isinstance(raw, dict) else raw
    marks = {str(r["id"]).strip(): r.get("build_failure") for r in rows}
    failures = {}
    for q in pools:
        mark = marks.get(q.id)
        if mark:
            failures[q.id] = _failure(q, str(mark.get("stage")), str(mark.get("error")))
    prior: dict[str, Any] = {}
    report_path = _report_path(path)
    if report_path.is_file():
        candidate = json.loads(report_path.read_text(encoding="utf-8"))
        if isinstance(candidate, dict) and candidate.get("pools_digest") == _file_digest(path):
            prior = candidate
    if prior.get("cleaning"):
        cleaning = _merge_cleaning(PoolCleaningReport(**prior["cleaning"]), cleaning)
    extra = {k: prior[k] for k in ("generation",) if k in prior}
    return pools, cleaning, failures, extra


def _merge_cleaning(first: PoolCleaningReport, then: PoolCleaningReport) -> PoolCleaningReport:
    """Counts of two cleaning passes over the same pools (a cleaned file read again)."""
    merged = PoolCleaningReport(
        n_questions=first.n_questions,
        n_candidates_in=first.n_candidates_in,
        n_candidates_out=then.n_candidates_out,
    )
    for name in ("equal_to_correct", "duplicates", "empty"):
        counts = dict(getattr(first, name))
        for qid, n in getattr(then, name).items():
            counts[qid] = counts.get(qid, 0) + n
        setattr(merged, name, counts)
    return merged


def _write_json(path: Path, payload: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".part")
    partial.write_text(json.dumps(payload, indent=1, ensure_ascii=False), encoding="utf-8")
    partial.replace(path)


# ----------------------------------------------------------------------------- stages


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
    """
    fingerprint = {
        "stage": "generate",
        "data": _file_digest(config.data),
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
    bar = _bar(len(questions), "generate", config.progress)
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
                    "error": f"{type(err).__name__}: {err}"[:500],
                    "attempts": config.retries + 1,
                }
            )
            bar.update(1)
            continue
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


def clean_stage(pools: Sequence[Question]) -> tuple[list[Question], PoolCleaningReport]:
    """Clean generated pools (stage 2): normalise, de-duplicate, drop the correct answer.

    Every question is kept, in order, even with an empty pool (the filter stage records
    it as a failure)."""
    return clean_pools(pools)


def load_generation_questions(path: Path) -> list[Question]:
    """Questions to generate distractors for; in JSON/JSONL, ``distractors`` may be absent.

    A thin alias of :func:`~lm_eval_rul.data.load_questions_without_distractors` (the
    same id / field / duplicate validation as every reader). Rows that carry 1-4
    distractors also serve as the PI-before reference.

    Raises:
        DataValidationError: listing every malformed row.
    """
    return load_questions_without_distractors(path)


def _reference(config: BuildConfig) -> dict[str, Question]:
    """Questions with their original distractors (for PI before), by id."""
    if config.reference is not None:
        questions = load_questions(config.reference)
    elif config.data is not None and config.pools is None:
        questions = load_generation_questions(config.data)
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
        "reference": _file_digest(config.reference),
    }
    checkpoint = Checkpoint(config.checkpoint_path("filter"), fingerprint)
    scorer = LetterScorer(lm, style=config.prompt_style)
    bar = _bar(len(pools), f"filter ({config.strategy})", config.progress)
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
            chosen = filter_pool(
                q.distractors,
                q.correct_answer,
                lambda sets, text=q.question: scorer(text, sets),
                strategy=config.strategy,
                seed=config.seed,
                question_id=q.id,
            )
        except TooFewCandidates as err:
            checkpoint.add({**base, "status": "failed", "stage": "filter", "error": str(err)})
            bar.update(1)
            continue
        final = Question(q.id, q.question, q.correct_answer, tuple(chosen.distractors), q.caption)
        (after,) = compute_pi(
            [final], lm, protocol=config.protocol, seed=config.seed, progress=False
        )
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
        original = reference.get(q.id)
        if original is not None:
            (before,) = compute_pi(
                [original], lm, protocol=config.protocol, seed=config.seed, progress=False
            )
            record["pi_before"] = before.pi
            record["chance_before"] = before.chance
            record["original_distractors"] = list(original.distractors)
        checkpoint.add(record)
        bar.update(1)
    bar.close()
    return checkpoint


def write_stage(
    config: BuildConfig,
    records: dict[str, dict[str, Any]],
    *,
    extra: dict[str, Any] | None = None,
    order: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Write the dataset (sorted by PI, highest first) and the build report (stage 4).

    Returns:
        The report dictionary (also written as ``<output>.report.json`` and ``.md``).
    """
    ids = list(order) if order is not None else list(records)
    ok = [records[i] for i in ids if records.get(i, {}).get("status") == "ok"]
    failed = [records[i] for i in ids if records.get(i, {}).get("status") == "failed"]
    ok.sort(key=lambda r: (-r["pi"], r["id"]))
    dataset = {
        r["id"]: {
            "question": r["question"],
            "caption": r["caption"] or "",
            "correct_answer": r["correct_answer"],
            "distractors": list(r["distractors"]),
            "PI": round(float(r["pi"]), 6),
        }
        for r in ok
    }
    _write_json(config.output, dataset)
    report: dict[str, Any] = {
        "output": str(config.output),
        "settings": {
            "strategy": config.strategy,
            "protocol": config.protocol,
            "seed": config.seed,
            "model": config.model,
            "model_args": redact_args(config.model_args),
            "generator": config.generator,
            "generator_args": redact_args(config.generator_args),
            "pools": str(config.pools) if config.pools else None,
            "data": str(config.data) if config.data else None,
        },
        "n_questions": len(ids),
        "n_written": len(ok),
        "n_failed": len(failed),
        "failures": [
            {"id": r["id"], "stage": r.get("stage"), "error": r.get("error")} for r in failed
        ],
        "missing": [i for i in ids if i not in records],
        **(extra or {}),
    }
    if ok:
        report["pi_after"] = summarize_pi(
            [r["pi"] for r in ok], [_chance(r, config.protocol) for r in ok]
        )
    with_before = [r for r in ok if r.get("pi_before") is not None]
    if with_before:
        before = np.array([r["pi_before"] for r in with_before])
        after = np.array([r["pi"] for r in with_before])
        chance_before = np.array([_chance(r, config.protocol, before=True) for r in with_before])
        chance_after = np.array([_chance(r, config.protocol) for r in with_before])
        report["pi_before"] = summarize_pi(before.tolist(), chance_before.tolist())
        change: dict[str, Any] = {
            "n": len(with_before),
            "mean_before": float(before.mean()),
            "mean_after": float(after.mean()),
            "share_increased": float(np.mean(after > before)),
            "mean_chance_before": float(chance_before.mean()),
            "mean_chance_after": float(chance_after.mean()),
            "mean_above_chance_before": float((before - chance_before).mean()),
            "mean_above_chance_after": float((after - chance_after).mean()),
            "same_option_count": bool(np.allclose(chance_before, chance_after)),
        }
        if not change["same_option_count"]:
            change["note"] = (
                f"PI before and after come from prompts with different option counts (protocol "
                f"{config.protocol!r}: the original questions have fewer distractors than the "
                "four kept), so their chance levels differ; compare the PI above chance "
                "(mean_above_chance_*), not the raw means or share_increased."
            )
        report["pi_change"] = change
    report["per_question"] = [
        {"id": r["id"], "pi_before": r.get("pi_before"), "pi_after": r["pi"]} for r in ok
    ]
    json_path = config.output.with_name(config.output.stem + ".report.json")
    _write_json(json_path, report)
    json_path.with_suffix(".md").write_text(_report_markdown(report), encoding="utf-8")
    return report


def _chance(record: dict[str, Any], protocol: str, *, before: bool = False) -> float:
    """A filter record's chance PI (``1 - 1/n_options``); computed for records written
    before it was stored."""
    stored = record.get("chance_before" if before else "chance")
    if stored is not None:
        return float(stored)
    n = len(record["original_distractors"] if before else record["distractors"])
    # release prompts leave one of 4 distractors out; otherwise every option is shown
    n_options = n if protocol == "release" and n == 4 else n + 1
    return 1.0 - 1.0 / n_options


def _report_markdown(report: dict[str, Any]) -> str:
    s = report["settings"]
    lines = [
        "# lm-eval-rul build report",
        "",
        f"- output: `{report['output']}`",
        f"- strategy `{s['strategy']}`, PI protocol `{s['protocol']}`, seed {s['seed']}",
        f"- scorer: `{s['model']}` `{s['model_args']}`",
    ]
    if s.get("generator"):
        lines.append(f"- generator: `{s['generator']}` `{s['generator_args']}`")
    lines += [
        f"- questions: {report['n_questions']}, written: {report['n_written']}, "
        f"failed: {report['n_failed']}, missing: {len(report['missing'])}",
    ]
    if "generation" in report:
        g = report["generation"]
        lines.append(
            f"- generation: {g['replies']} replies, {g['replies_without_candidates']} without a "
            f"parsable candidate, {len(g['failed_calls'])} question(s) whose calls failed, "
            f"{g['candidates']} candidates"
        )
    if "cleaning" in report:
        c = report["cleaning"]
        lines.append(
            f"- cleaning: {c['n_candidates_in']} candidates in, {c['n_candidates_out']} kept; "
            f"{sum(c['equal_to_correct'].values())} equal to the correct answer, "
            f"{sum(c['duplicates'].values())} duplicates, {sum(c['empty'].values())} empty"
        )
    for key, title in (("pi_before", "PI before"), ("pi_after", "PI after")):
        if key in report:
            p = report[key]
            lines += [
                "",
                f"## {title}",
                "",
                f"mean {p['mean']:.4f}, median {p['median']:.4f}, share above chance "
                f"{p['share_above_chance']:.3f} (n={p['n']})",
                "",
                "| bin | count |",
                "|---|---|",
            ]
            edges = p["bin_edges"]
            lines += [
                f"| {edges[i]:.1f}-{edges[i + 1]:.1f} | {c} |" for i, c in enumerate(p["histogram"])
            ]
    if "pi_change" in report:
        c = report["pi_change"]
        lines += [
            "",
            "## PI change",
            "",
            f"n={c['n']}: mean {c['mean_before']:.4f} before (chance "
            f"{c['mean_chance_before']:.3f}) -> {c['mean_after']:.4f} after (chance "
            f"{c['mean_chance_after']:.3f}); above chance {c['mean_above_chance_before']:+.4f} "
            f"-> {c['mean_above_chance_after']:+.4f}; share increased {c['share_increased']:.3f}",
        ]
        if "note" in c:
            lines += ["", f"Note: {c['note']}"]
    if report["failures"]:
        lines += ["", "## Failures", "", "| id | stage | error |", "|---|---|---|"]
        lines += [f"| {f['id']} | {f['stage']} | {f['error']} |" for f in report["failures"]]
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- driver


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
    """
    stage = config.stage
    if stage == "write":
        return _write_from_checkpoint(config)
    _check_inputs(config)

    failures: dict[str, dict[str, Any]]
    if config.pools is None:
        questions = load_generation_questions(config.data)
        if generator_lm is None:
            generator_lm = create_lm(config.generator, config.generator_args)
        pools, generation = generate_stage(config, questions, generator_lm, sleep=sleep)
        extra: dict[str, Any] = {"generation": generation}
        by_id = {q.id: q for q in questions}
        failures = {
            qid: _failure(by_id[qid], "generate", err)
            for qid, err in generation["failed_calls"].items()
        }
        if stage == "generate":
            return _write_pools(config, pools, failures, extra)
        pools, cleaning = clean_stage(pools)
        source = _fingerprint_digest(generation["fingerprint"])
    else:
        pools, cleaning, failures, extra = _read_stage_pools(config.pools)
        source = _file_digest(config.pools)
    extra["cleaning"] = asdict(cleaning)
    order = [q.id for q in pools]
    if stage == "clean":
        return _write_pools(config, pools, failures, extra)

    reference = _reference(config)  # before loading the scorer: bad input fails fast
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
    _write_json(config.meta_path(), {"order": order, "failures": failures, "extra": extra})
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
