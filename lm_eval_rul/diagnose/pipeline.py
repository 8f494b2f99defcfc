"""``diagnose`` end to end: read datasets, audit, embed, compare, judge, collect findings.

:func:`run_diagnose` returns a :class:`Diagnosis` (a JSON-ready summary, one finding per
question, and the raw similarity arrays for the figures);
:func:`~lm_eval_rul.diagnose.outputs.write_outputs` writes it out.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..questions import Question
from .audit import RULES, Flag, audit_question
from .cache import EmbeddingCache, Embeddings, default_cache_path, embed_texts
from .encoders import DEFAULT_CLAP, DEFAULT_T5, SPACES, make_encoder
from .inputs import DatasetInput, DiagnoseInputError, load_dataset_inputs
from .judge import AnswerabilityJudge, JudgeVerdict, verdict_counts
from .similarity import (
    DEFAULT_NEAR,
    find_duplicates,
    near_identical,
    option_similarities,
    summarize,
)

__all__ = ["DiagnoseConfig", "Diagnosis", "run_diagnose"]

logger = logging.getLogger(__name__)

#: A checkpoint value that turns a space off.
NO_SPACE = ("", "none", "off")


@dataclass
class DiagnoseConfig:
    """Options of one ``diagnose`` run (the CLI's flags).

    Attributes:
        datasets: ``[NAME=]PATH`` of each dataset.
        t5: T5 checkpoint (hub id or folder); ``"none"`` skips the space.
        clap: CLAP checkpoint; ``"none"`` skips the space.
        similarity: ``False`` skips both spaces (audit only; no model is loaded).
        near: Space -> cosine at or above which a distractor is near-identical.
        device: Torch device of the encoders (``None``: GPU when torch sees one).
        batch_size: Texts per encoder forward pass.
        max_length: Token limit per text (``None``: the model's).
        cache: Embedding cache file (``None``: :func:`default_cache_path`).
        use_cache: ``False`` encodes everything and stores nothing.
        judge: Harness model name of the LLM judge (``None``: no judge).
        judge_args: Its ``model_args``.
        judge_limit: Judge only the first N questions of each dataset.
        judge_max_gen_toks: Token budget of one judge reply.
        judge_retries: Retries of a failing judge call.
        progress: Show progress bars.
    """

    datasets: Sequence[str]
    t5: str = DEFAULT_T5
    clap: str = DEFAULT_CLAP
    similarity: bool = True
    near: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_NEAR))
    device: str | None = None
    batch_size: int = 64
    max_length: int | None = None
    cache: str | None = None
    use_cache: bool = True
    judge: str | None = None
    judge_args: str = ""
    judge_limit: int | None = None
    judge_max_gen_toks: int = 128
    judge_retries: int = 2
    progress: bool = True

    def __post_init__(self) -> None:
        for space, value in self.near.items():
            if not -1.0 <= value <= 1.0:
                raise DiagnoseInputError(f"--near_{space} {value}: a cosine is in [-1, 1]")
        for name in ("batch_size", "judge_limit", "max_length"):
            value = getattr(self, name)
            if value is not None and value < (2 if name == "max_length" else 1):
                raise DiagnoseInputError(f"--{name} {value}: must be a positive number")
        if self.judge_retries < 0:
            raise DiagnoseInputError(f"--judge_retries {self.judge_retries}: must be >= 0")

    def spaces(self) -> dict[str, str]:
        """Space -> checkpoint of the spaces this run computes."""
        if not self.similarity:
            return {}
        chosen = {"t5": self.t5, "clap": self.clap}
        return {s: c for s, c in chosen.items() if (c or "").strip().lower() not in NO_SPACE}


@dataclass
class Diagnosis:
    """What :func:`run_diagnose` found.

    Attributes:
        summary: Every aggregate number (written as ``diagnose.json``).
        findings: One dict per (dataset, question) (written as ``findings.jsonl``).
        similarities: ``(dataset, space) -> all distractor similarities``, for figures.
    """

    summary: dict[str, Any]
    findings: list[dict[str, Any]]
    similarities: dict[tuple[str, str], np.ndarray]


def _embed_all(
    datasets: list[DatasetInput], config: DiagnoseConfig
) -> tuple[dict[str, Embeddings], dict[str, Any]]:
    """Embeddings of every option of every dataset in each space (one pass per space)."""
    texts = [
        text for d in datasets for q in d.questions for text in (q.correct_answer, *q.distractors)
    ]
    embeddings: dict[str, Embeddings] = {}
    spaces = config.spaces()
    if not spaces:
        return embeddings, {}
    cache = None
    if config.use_cache:
        cache = EmbeddingCache(config.cache or default_cache_path())
    try:
        for space, checkpoint in spaces.items():
            encoder = make_encoder(
                space, checkpoint, device=config.device, max_length=config.max_length
            )
            embeddings[space] = embed_texts(
                texts,
                encoder,
                cache=cache,
                batch_size=config.batch_size,
                progress=config.progress,
            )
            stats = embeddings[space].stats
            if stats.n_truncated:
                logger.warning(
                    "%d text(s) were longer than the %s encoder's token limit and were cut",
                    stats.n_truncated,
                    space,
                )
    finally:
        if cache is not None:
            cache.close()
    info = {
        "cache": str(cache.path) if cache is not None else None,
        "spaces": {
            s: {"checkpoint": c, "near_threshold": config.near[s], "label": SPACES[s]}
            for s, c in spaces.items()
        },
        "stats": {s: e.stats.to_dict() for s, e in embeddings.items()},
    }
    return embeddings, info


def _judge(
    datasets: list[DatasetInput], config: DiagnoseConfig, judge_lm: Any
) -> dict[str, dict[str, JudgeVerdict]]:
    if judge_lm is None and not config.judge:
        return {}
    if judge_lm is None:
        from ..registration import create_lm

        judge_lm = create_lm(config.judge, config.judge_args, flag="--judge_args")
    judge = AnswerabilityJudge(
        judge_lm,
        name=config.judge or type(judge_lm).__name__,
        max_gen_toks=config.judge_max_gen_toks,
        retries=config.judge_retries,
    )
    verdicts = {}
    for d in datasets:
        questions = d.questions[: config.judge_limit] if config.judge_limit else d.questions
        verdicts[d.name] = judge.judge_all(questions, progress=config.progress)
    return verdicts


def _question_finding(
    d: DatasetInput,
    q: Question,
    flags: list[Flag],
    embeddings: dict[str, Embeddings],
    near: dict[str, float],
    verdict: JudgeVerdict | None,
) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    sims = {
        space: option_similarities(q.correct_answer, q.distractors, e.index, e.matrix)
        for space, e in embeddings.items()
    }
    near_flags = near_identical(sims, near) if sims else [False] * len(q.distractors)
    duplicates = {dup.index: dup for dup in find_duplicates(q.correct_answer, q.distractors)}
    options = []
    for i, text in enumerate(q.distractors):
        option: dict[str, Any] = {"text": text}
        option.update({space: round(float(s[i]), 6) for space, s in sims.items()})
        option["near_identical"] = near_flags[i]
        if i in duplicates:
            option["duplicate_of"] = duplicates[i].of
            option["duplicate_kind"] = duplicates[i].kind
        options.append(option)
    finding: dict[str, Any] = {
        "dataset": d.name,
        "id": q.id,
        "question": q.question,
        "correct_answer": q.correct_answer,
        "rules": sorted({f.rule for f in flags}, key=[r.name for r in RULES].index),
        "flags": [f.to_dict() for f in flags],
        "distractors": options,
    }
    if sims and len(q.distractors):
        finding["similarity"] = {
            space: {"mean": float(s.mean()), "max": float(s.max()), "std": float(s.std())}
            for space, s in sims.items()
        }
    if q.id in d.n_empty:
        finding["empty_candidates_dropped"] = d.n_empty[q.id]
    if verdict is not None:
        finding["judge"] = verdict.to_dict()
    return finding, sims


def _audit_summary(flagged: dict[str, list[str]], findings: list[dict]) -> dict[str, Any]:
    """Per rule: flagged questions, flags, questions per field (question / answer /
    distractors), ids; plus the questions any rule flagged."""
    n_flags = dict.fromkeys(flagged, 0)
    by_field = {
        rule: {"question": set(), "correct_answer": set(), "distractors": set()} for rule in flagged
    }
    for finding in findings:
        for f in finding["flags"]:
            n_flags[f["rule"]] += 1
            by_field[f["rule"]][f["field"].split("[")[0]].add(finding["id"])
    out: dict[str, Any] = {
        rule: {
            "questions": len(ids),
            "flags": n_flags[rule],
            "by_field": {field: len(v) for field, v in by_field[rule].items()},
            "ids": ids,
        }
        for rule, ids in flagged.items()
    }
    any_rule = sorted({i for ids in flagged.values() for i in ids}, key=_id_order)
    out["any_rule"] = {"questions": len(any_rule), "ids": any_rule}
    return out


def _id_order(qid: str) -> tuple[int, int | str]:
    return (0, int(qid)) if qid.isdigit() else (1, qid)


def _judge_summary(verdicts: dict[str, JudgeVerdict], flagged_any: set[str]) -> dict[str, Any]:
    counts = verdict_counts(verdicts)
    ok = {i: v.verdict for i, v in verdicts.items() if v.status == "ok"}
    flagged = [i for i in ok if i in flagged_any]
    clean = [i for i in ok if i not in flagged_any]
    return {
        "judged": len(verdicts),
        **counts,
        "unanswerable_among_flagged": sum(ok[i] == "unanswerable" for i in flagged),
        "n_flagged_judged": len(flagged),
        "unanswerable_among_unflagged": sum(ok[i] == "unanswerable" for i in clean),
        "n_unflagged_judged": len(clean),
        "judge_only_ids": sorted((i for i in clean if ok[i] == "unanswerable"), key=_id_order),
    }


def run_diagnose(config: DiagnoseConfig, *, judge_lm: Any = None) -> Diagnosis:
    """Run every check of ``config``; nothing is written (see ``write_outputs``).

    Args:
        config: The run's options.
        judge_lm: A ready harness LM for the judge (default: created from
            ``config.judge``/``config.judge_args`` when ``config.judge`` is set).
    """
    datasets = load_dataset_inputs(config.datasets)
    embeddings, embedding_info = _embed_all(datasets, config)
    verdicts = _judge(datasets, config, judge_lm)
    near = {s: config.near[s] for s in embeddings}

    findings: list[dict[str, Any]] = []
    similarities: dict[tuple[str, str], np.ndarray] = {}
    dataset_summaries = []
    for d in datasets:
        per_space: dict[str, list[np.ndarray]] = {s: [] for s in embeddings}
        rules_hit: dict[str, list[str]] = {r.name: [] for r in RULES}
        own = []
        for q in d.questions:
            flags = audit_question(q)
            finding, sims = _question_finding(
                d, q, flags, embeddings, near, verdicts.get(d.name, {}).get(q.id)
            )
            for rule in finding["rules"]:
                rules_hit[rule].append(q.id)
            for space, s in sims.items():
                per_space[space].append(s)
            own.append(finding)
        findings += own
        rules_hit = {rule: sorted(ids, key=_id_order) for rule, ids in rules_hit.items()}
        for space, arrays in per_space.items():
            similarities[(d.name, space)] = np.concatenate(arrays) if arrays else np.zeros(0)
        summary = _dataset_summary(d, own, per_space, similarities, near)
        summary["audit"] = _audit_summary(rules_hit, own)
        if d.name in verdicts:
            summary["judge"] = _judge_summary(
                verdicts[d.name], set(summary["audit"]["any_rule"]["ids"])
            )
        dataset_summaries.append(summary)
    result = {
        "datasets": dataset_summaries,
        "embedding": embedding_info,
        "rules": [{"name": r.name, "matches": r.matches, "why": r.why} for r in RULES],
        "judge": {"model": config.judge, "model_args": config.judge_args} if verdicts else None,
    }
    return Diagnosis(result, findings, similarities)


def _dataset_summary(
    d: DatasetInput,
    findings: list[dict[str, Any]],
    per_space: dict[str, list[np.ndarray]],
    similarities: dict[tuple[str, str], np.ndarray],
    near_thresholds: dict[str, float],
) -> dict[str, Any]:
    near = [
        {"id": f["id"], "index": i, "correct_answer": f["correct_answer"], **option}
        for f in findings
        for i, option in enumerate(f["distractors"])
        if option["near_identical"]
    ]
    duplicates = [
        {"id": f["id"], "index": i, "correct_answer": f["correct_answer"], **option}
        for f in findings
        for i, option in enumerate(f["distractors"])
        if "duplicate_of" in option
    ]
    similarity = {}
    for space, arrays in per_space.items():
        spreads = [s.std() for s in arrays if s.size > 1]
        similarity[space] = {
            **summarize(similarities[(d.name, space)]),
            "above_threshold": int(np.sum(similarities[(d.name, space)] >= near_thresholds[space])),
            "question_mean": summarize([s.mean() for s in arrays if s.size]),
            "question_spread": float(np.mean(spreads)) if spreads else None,
        }
    out: dict[str, Any] = {
        "name": d.name,
        "path": str(d.path),
        "kind": d.kind,
        "n_questions": len(d.questions),
        "n_distractors": d.n_distractors,
        "similarity": similarity,
        "checks": d.checks(),
        "near_identical": near,
        "duplicates": duplicates,
    }
    return out
