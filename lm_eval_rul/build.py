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

from .data import DataValidationError, PoolCleaningReport, Question, load_questions, read_pools
from .distractors import DistractorGenerator, GenerationResult, clean_pool
from .errors import UserInputError
from .filtering import STRATEGIES, TooFewCandidates, filter_pool
from .pi import PROTOCOLS, LetterScorer, compute_pi, create_lm, summarize_pi

__all__ = [
    "STAGES",
    "BuildConfig",
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
            raise ValueError(f"--stage must be one of {STAGES}, got {self.stage!r}")
        if self.strategy not in STRATEGIES:
            raise ValueError(f"--strategy must be one of {STRATEGIES}, got {self.strategy!r}")
        if self.protocol not in PROTOCOLS:
            raise ValueError(f"--protocol must be one of {PROTOCOLS}, got {self.protocol!r}")

    def checkpoint_path(self, stage: str) -> Path:
        return self.output.with_name(f"{self.output.name}.{stage}.ckpt.jsonl")


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


def _pools_json(questions: Iterable[Question]) -> dict[str, dict[str, Any]]:
    return {
        q.id: {
            "question": q.question,
            "caption": q.caption or "",
            "correct_answer": q.correct_answer,
            "distractors": list(q.distractors),
        }
        for q in questions
    }


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
    (retried on the next run); its pool is left out of the returned pools and counted.
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
    """Clean generated pools (stage 2): normalise, de-duplicate, drop the correct answer."""
    report = PoolCleaningReport(n_questions=len(pools))
    cleaned = []
    for q in pools:
        result = clean_pool(q.distractors, q.correct_answer)
        report.n_candidates_in += result.n_in
        report.n_candidates_out += len(result.candidates)
        for name in ("equal_to_correct", "duplicates", "empty"):
            if getattr(result, name):
                getattr(report, name)[q.id] = getattr(result, name)
        cleaned.append(replace(q, distractors=tuple(result.candidates)))
    return cleaned, report


def load_generation_questions(path: Path) -> list[Question]:
    """Questions to generate distractors for; in JSON/JSONL, ``distractors`` may be absent.

    Files whose rows all carry distractors go through
    :func:`~lm_eval_rul.data.load_questions` (their distractors become the PI-before
    reference). Otherwise every row needs ``id``, ``question`` and ``correct_answer``.

    Raises:
        DataValidationError: listing every malformed row.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"--data {path}: no such file")
    if path.suffix.lower() not in (".json", ".jsonl"):
        return load_questions(path)
    text = path.read_text(encoding="utf-8")
    try:
        if path.suffix.lower() == ".jsonl":
            rows = [json.loads(line) for line in text.splitlines() if line.strip()]
        else:
            raw = json.loads(text)
            rows = [{"id": k, **v} for k, v in raw.items()] if isinstance(raw, dict) else raw
    except (json.JSONDecodeError, TypeError, AttributeError):
        return load_questions(path)  # reports the problem with the file's own reader
    if all(isinstance(r, dict) and r.get("distractors") for r in rows):
        return load_questions(path)
    problems, questions, seen = [], [], set()
    for position, row in enumerate(rows):
        row = row if isinstance(row, dict) else {}
        qid = str(row.get("id", "")).strip()
        missing = [
            f for f in ("id", "question", "correct_answer") if not str(row.get(f, "")).strip()
        ]
        if missing:
            problems.append(f"row {position} (id {qid!r}): missing field(s) {', '.join(missing)}")
        elif qid in seen:
            problems.append(f"id {qid!r}: appears more than once")
        else:
            seen.add(qid)
            questions.append(
                Question(
                    id=qid,
                    question=str(row["question"]).strip(),
                    correct_answer=str(row["correct_answer"]).strip(),
                    distractors=tuple(str(d).strip() for d in row.get("distractors") or ()),
                    caption=str(row.get("caption") or "").strip() or None,
                )
            )
    if problems or not questions:
        raise DataValidationError(path, problems or ["the file holds no questions"])
    return questions


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
        raise ValueError(
            f"--reference {config.reference}: {len(questions) - len(usable)} question(s) do not "
            "have 1-4 original distractors, so their PI before is undefined."
        )
    return usable


def filter_stage(
    config: BuildConfig,
    pools: Sequence[Question],
    lm: Any,
    *,
    reference: dict[str, Question] | None = None,
    source_fingerprint: str | None = None,
) -> Checkpoint:
    """Pick four distractors per question and compute PI (stage 3), one checkpoint line each.

    Args:
        config: The build configuration.
        pools: Clean pools.
        lm: The scorer (an lm-eval ``LM`` with ``loglikelihood``).
        reference: Questions with the original distractors, for PI before.
        source_fingerprint: Identifies the pools (a file digest), for the checkpoint.
    """
    reference = reference or {}
    fingerprint = {
        "stage": "filter",
        "pools": source_fingerprint,
        "model": config.model,
        "model_args": redact_args(config.model_args),
        "strategy": config.strategy,
        "protocol": config.protocol,
        "seed": config.seed,
        "reference": _file_digest(config.reference),
    }
    checkpoint = Checkpoint(config.checkpoint_path("filter"), fingerprint)
    scorer = LetterScorer(lm, style=config.strategy)
    bar = _bar(len(pools), f"filter ({config.strategy})", config.progress)
    for q in pools:
        if checkpoint.done(q.id):
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
            "p_correct": after.p_correct,
            "pi_before": None,
            "original_distractors": None,
        }
        original = reference.get(q.id)
        if original is not None:
            (before,) = compute_pi(
                [original], lm, protocol=config.protocol, seed=config.seed, progress=False
            )
            record["pi_before"] = before.pi
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
        report["pi_after"] = summarize_pi([r["pi"] for r in ok], 0.75)
    with_before = [r for r in ok if r.get("pi_before") is not None]
    if with_before:
        before = np.array([r["pi_before"] for r in with_before])
        after = np.array([r["pi"] for r in with_before])
        report["pi_before"] = summarize_pi(before.tolist(), 0.75)
        report["pi_change"] = {
            "n": len(with_before),
            "mean_before": float(before.mean()),
            "mean_after": float(after.mean()),
            "share_increased": float(np.mean(after > before)),
        }
    report["per_question"] = [
        {"id": r["id"], "pi_before": r.get("pi_before"), "pi_after": r["pi"]} for r in ok
    ]
    json_path = config.output.with_name(config.output.stem + ".report.json")
    _write_json(json_path, report)
    json_path.with_suffix(".md").write_text(_report_markdown(report), encoding="utf-8")
    return report


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
    extra: dict[str, Any] = {}
    if stage == "write":
        checkpoint_path = config.checkpoint_path("filter")
        if not checkpoint_path.is_file():
            raise FileNotFoundError(
                f"--stage write reads {checkpoint_path}, which does not exist: run the filter "
                "stage with the same --output first."
            )
        header = json.loads(checkpoint_path.read_text(encoding="utf-8").splitlines()[0])
        checkpoint = Checkpoint(checkpoint_path, header.get("fingerprint", {}))
        return write_stage(config, checkpoint.records)

    if config.pools is not None and config.data is not None and config.generator is not None:
        raise ValueError("give either --pools or --data with --generator, not both")
    if config.pools is None and (
        config.data is None or (stage != "clean" and not config.generator)
    ):
        raise ValueError(
            "nothing to build from: give --pools POOLS.json, or --data QUESTIONS with "
            "--generator MODEL --generator_args ..."
        )

    if config.pools is None:
        if stage == "clean":
            raise ValueError("--stage clean reads --pools (a file written by --stage generate)")
        questions = load_generation_questions(config.data)
        if generator_lm is None:
            generator_lm = create_lm(config.generator, config.generator_args)
        pools, generation = generate_stage(config, questions, generator_lm, sleep=sleep)
        extra["generation"] = generation
        order = [q.id for q in questions]
        if stage == "generate":
            _write_json(config.output, _pools_json(pools))
            _write_json(config.output.with_name(config.output.stem + ".report.json"), extra)
            return extra
        pools, cleaning = clean_stage(pools)
        source = _fingerprint_digest(generation["fingerprint"])
        raw_failures = {
            qid: {"id": qid, "status": "failed", "stage": "generate", "error": err}
            for qid, err in generation["failed_calls"].items()
        }
    else:
        pools, cleaning = read_pools(config.pools)
        order = [q.id for q in pools]
        source = _file_digest(config.pools)
        raw_failures = {}
        if stage == "clean":
            _write_json(config.output, _pools_json(pools))
            return {"cleaning": asdict(cleaning)}
    extra["cleaning"] = asdict(cleaning)
    if stage == "clean":
        _write_json(config.output, _pools_json(pools))
        return extra

    if config.model is None:
        raise ValueError(
            "the filter stage needs the scorer: --model hf --model_args pretrained=..."
        )
    if lm is None:
        lm = create_lm(
            config.model, config.model_args, device=config.device, batch_size=config.batch_size
        )
    checkpoint = filter_stage(
        config, pools, lm, reference=_reference(config), source_fingerprint=source
    )
    records = {**raw_failures, **checkpoint.records}
    if stage == "filter":
        return {"checkpoint": str(checkpoint.path), "n_records": len(checkpoint.records)}
    return write_stage(config, records, extra=extra, order=order)
