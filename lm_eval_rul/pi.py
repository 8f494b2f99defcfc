"""The Perceptual Index (PI) of a dataset under any harness model that gives log-likelihoods.

Two protocols (DESIGN.md §3):

* ``paper``: one prompt per question, the paper's wording with ``(A) x`` options, the
  correct answer and every distractor in a seeded order; ``PI = 1 - p̂(correct)``.
* ``release``: the released code's 16 prompts, 4 repeats x leave each of the 4
  distractors out, options shuffled each time (seed from (seed, id, repeat, left-out)),
  ``A. x;`` options; ``PI = 1 - mean p̂(correct)``. A question with three distractors
  (MuChoMusic) leaves nothing out: its 16 prompts are 16 seeded shuffles of its 4 options.

Option orders come from :func:`~lm_eval_rul.folds.shuffled_options` (the same shuffle as
the harness documents) with the key ``("pi-paper", id)`` for the paper prompt and
``("pi-release", id, repeat, slot)`` for each release prompt, so the stream is
``item_rng("options", seed, "pi-paper" | "pi-release", id[, repeat, slot])``: it never
coincides with a harness document's ``(benchmark, id, fold)`` key.

Every prompt's option letters are asked as one-token continuations of the same context,
all in one ``loglikelihood`` call, so the harness's ``hf`` model serves all letters of a
prompt from one forward pass (its logits cache groups requests that share a context).
The prompt builders and the aggregation are pure functions; :func:`compute_pi` is the
only part that talks to a model.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .data import Question
from .errors import UserInputError
from .folds import shuffled_options
from .prompts import letters_for, pi_prompt
from .scoring import choice_probabilities, mean_perceptual_index

__all__ = [
    "PROTOCOLS",
    "DEFAULT_SEED",
    "RELEASE_REPEATS",
    "PIPrompt",
    "PIResult",
    "UndefinedPI",
    "paper_prompts",
    "release_prompts",
    "protocol_prompts",
    "check_pi_questions",
    "letter_instances",
    "letter_logliks",
    "option_probabilities",
    "aggregate_pi",
    "compute_pi",
    "summarize_pi",
    "format_summary",
    "write_pi",
    "create_lm",
    "LetterScorer",
]

logger = logging.getLogger(__name__)

PROTOCOLS: tuple[str, ...] = ("paper", "release")
DEFAULT_SEED = 1234
RELEASE_REPEATS = 4
#: Number of distractors the release protocol leaves out one at a time.
RELEASE_DISTRACTORS = 4
N_BINS = 10


@dataclass(frozen=True)
class PIPrompt:
    """One text-only prompt of a question.

    Attributes:
        text: The prompt whose next token is read as the answer letter.
        options: Option texts in the order shown (A, B, ...).
        gold: Index of the correct answer in ``options``.
        repeat: Repeat number (0 for the paper protocol).
        left_out: Index (into the question's distractors) of the distractor left out, or
            ``None`` when all are shown.
    """

    text: str
    options: tuple[str, ...]
    gold: int
    repeat: int = 0
    left_out: int | None = None


@dataclass
class PIResult:
    """The PI of one question and the prompts it came from."""

    id: str
    pi: float
    p_correct: list[float]
    n_prompts: int
    protocol: str
    chance: float
    prompts: list[dict[str, Any]] = field(default_factory=list)
    source_pi: float | None = None

    def to_row(self) -> dict[str, Any]:
        """The JSONL row written by ``lm-eval-rul pi``."""
        return asdict(self)


class UndefinedPI(UserInputError, ValueError):
    """Questions whose PI is undefined (a distractor pool, or no distractor at all)."""


def _shuffled(
    correct: str, distractors: Sequence[str], *, seed: int, key: Sequence[object]
) -> tuple[tuple[str, ...], int]:
    """:func:`~lm_eval_rul.folds.shuffled_options` as a tuple (prompts are frozen)."""
    options, gold = shuffled_options(correct, distractors, seed=seed, key=key)
    return tuple(options), gold


def paper_prompts(question: Question, *, seed: int = DEFAULT_SEED) -> list[PIPrompt]:
    """The paper protocol: one prompt, all options in a seeded order, ``(A) x`` style.

    Examples
    --------
    >>> q = Question("7", "Which instrument?", "piano", ("violin", "flute", "drums"))
    >>> [p.options[p.gold] for p in paper_prompts(q)]
    ['piano']
    """
    options, gold = _shuffled(
        question.correct_answer, question.distractors, seed=seed, key=("pi-paper", question.id)
    )
    return [PIPrompt(pi_prompt(question.question, options, style="paper"), options, gold)]


def release_prompts(
    question: Question, *, seed: int = DEFAULT_SEED, repeats: int = RELEASE_REPEATS
) -> list[PIPrompt]:
    """The release protocol: ``repeats`` x leave each distractor out, ``A. x;`` style.

    With 4 distractors this gives the released code's 16 prompts of 4 options. With
    fewer than 4 distractors nothing is left out and each of the ``repeats * 4`` prompts
    is another seeded shuffle of all options.

    Args:
        question: A question with at most 4 distractors.
        seed: Base seed; each prompt's order comes from (seed, id, repeat, left-out).
        repeats: Number of repeats (4 in the release).
    """
    n = len(question.distractors)
    if n > RELEASE_DISTRACTORS:
        raise ValueError(
            f"question {question.id!r} has {n} distractors; the release protocol needs at most "
            f"{RELEASE_DISTRACTORS}"
        )
    prompts = []
    for repeat in range(repeats):
        for slot in range(RELEASE_DISTRACTORS):
            left_out = slot if n == RELEASE_DISTRACTORS else None
            kept = [d for j, d in enumerate(question.distractors) if j != left_out]
            options, gold = _shuffled(
                question.correct_answer,
                kept,
                seed=seed,
                key=("pi-release", question.id, repeat, slot),
            )
            prompts.append(
                PIPrompt(
                    pi_prompt(question.question, options, style="release"),
                    options,
                    gold,
                    repeat=repeat,
                    left_out=left_out,
                )
            )
    return prompts


def protocol_prompts(
    question: Question, *, protocol: str = "release", seed: int = DEFAULT_SEED
) -> list[PIPrompt]:
    """The prompts of ``question`` under ``protocol`` (``paper`` or ``release``)."""
    if protocol == "paper":
        return paper_prompts(question, seed=seed)
    if protocol == "release":
        return release_prompts(question, seed=seed)
    raise ValueError(f"protocol must be one of {PROTOCOLS}, got {protocol!r}")


def check_pi_questions(questions: Sequence[Question], *, source: str = "the data") -> None:
    """Reject questions whose PI is undefined: more than 4 distractors (a pool), or none.

    Raises:
        UndefinedPI: naming the ids, the counts and what to do instead.
    """
    bad = [q for q in questions if not 1 <= len(q.distractors) <= RELEASE_DISTRACTORS]
    if bad:
        listed = ", ".join(f"{q.id!r} ({len(q.distractors)})" for q in bad[:10])
        more = f" and {len(bad) - 10} more" if len(bad) > 10 else ""
        raise UndefinedPI(
            f"{len(bad)} question(s) in {source} do not have 1-{RELEASE_DISTRACTORS} "
            f"distractors (id (count)): {listed}{more}. The PI of a distractor pool is "
            "undefined: pick 4 distractors first with `lm-eval-rul build --pools ...`."
        )


# ----------------------------------------------------------------------------- model


def letter_instances(contexts: Sequence[str], n_options: Sequence[int]) -> list[Any]:
    """``loglikelihood`` requests: each context with each of its option letters.

    The letters of one context are consecutive and share the context exactly, so the
    harness's ``hf`` model answers them from one forward pass.
    """
    from lm_eval.api.instance import Instance

    instances = []
    for index, (context, n) in enumerate(zip(contexts, n_options, strict=True)):
        for letter in letters_for(n):
            instances.append(
                Instance(
                    request_type="loglikelihood",
                    doc={},
                    arguments=(context, f" {letter}"),
                    idx=len(instances),
                    metadata=("lm_eval_rul_pi", index, 1),
                )
            )
    return instances


def letter_logliks(lm: Any, contexts: Sequence[str], n_options: Sequence[int]) -> list[np.ndarray]:
    """Log-likelihood of each option letter after each context, in one model call.

    Args:
        lm: Any lm-eval ``LM`` with ``loglikelihood``.
        contexts: Prompts whose next token is the answer letter.
        n_options: Number of options (letters A, B, ...) of each prompt.
    """
    instances = letter_instances(contexts, n_options)
    if not instances:
        return []
    results = lm.loglikelihood(instances, disable_tqdm=True)
    if len(results) != len(instances):
        raise RuntimeError(
            f"model returned {len(results)} log-likelihoods for {len(instances)} requests"
        )
    out, start = [], 0
    for n in n_options:
        out.append(np.array([float(r[0]) for r in results[start : start + n]]))
        start += n
    return out


def option_probabilities(lm: Any, prompts: Sequence[PIPrompt]) -> list[np.ndarray]:
    """p̂ over each prompt's offered letters (softmax of the letters' log-likelihoods)."""
    logliks = letter_logliks(lm, [p.text for p in prompts], [len(p.options) for p in prompts])
    return [choice_probabilities(ll) for ll in logliks]


def aggregate_pi(
    question_id: str,
    prompts: Sequence[PIPrompt],
    probabilities: Sequence[np.ndarray],
    *,
    protocol: str,
    source_pi: float | None = None,
) -> PIResult:
    """PI of one question from its prompts' option probabilities: ``1 - mean p̂(correct)``.

    Examples
    --------
    >>> p = [PIPrompt("", ("a", "b"), 0), PIPrompt("", ("b", "a"), 1)]
    >>> r = aggregate_pi("1", p, [np.array([0.9, 0.1]), np.array([0.3, 0.7])], protocol="x")
    >>> round(r.pi, 6), r.n_prompts
    (0.2, 2)
    """
    if not prompts or len(prompts) != len(probabilities):
        raise ValueError(
            f"question {question_id!r}: {len(prompts)} prompts but {len(probabilities)} "
            "probability vectors"
        )
    p_correct = [float(probs[p.gold]) for p, probs in zip(prompts, probabilities, strict=True)]
    chance = float(np.mean([1.0 - 1.0 / len(p.options) for p in prompts]))
    return PIResult(
        id=question_id,
        pi=mean_perceptual_index(p_correct),
        p_correct=p_correct,
        n_prompts=len(prompts),
        protocol=protocol,
        chance=chance,
        prompts=[
            {
                "options": list(p.options),
                "gold": p.gold,
                "repeat": p.repeat,
                "left_out": p.left_out,
            }
            for p in prompts
        ],
        source_pi=source_pi,
    )


def compute_pi(
    questions: Sequence[Question],
    lm: Any,
    *,
    protocol: str = "release",
    seed: int = DEFAULT_SEED,
    chunk_size: int = 16,
    progress: bool = True,
    on_result: Callable[[PIResult], None] | None = None,
) -> list[PIResult]:
    """PI of every question under ``protocol`` with a harness model.

    Args:
        questions: Questions with 1-4 distractors.
        lm: Any lm-eval ``LM`` with ``loglikelihood``.
        protocol: ``paper`` or ``release``.
        seed: Base seed of the option orders.
        chunk_size: Questions sent to the model per ``loglikelihood`` call.
        progress: Show a tqdm bar.
        on_result: Called with each finished question's result (e.g. to stream rows).
    """
    from tqdm.auto import tqdm

    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {PROTOCOLS}, got {protocol!r}")
    check_pi_questions(questions)
    results: list[PIResult] = []
    bar = tqdm(total=len(questions), desc=f"PI ({protocol})", unit="q", disable=not progress)
    for start in range(0, len(questions), max(1, chunk_size)):
        chunk = questions[start : start + max(1, chunk_size)]
        per_question = [protocol_prompts(q, protocol=protocol, seed=seed) for q in chunk]
        flat = [p for prompts in per_question for p in prompts]
        probabilities = option_probabilities(lm, flat)
        offset = 0
        for q, prompts in zip(chunk, per_question, strict=True):
            probs = probabilities[offset : offset + len(prompts)]
            offset += len(prompts)
            result = aggregate_pi(q.id, prompts, probs, protocol=protocol, source_pi=q.pi)
            results.append(result)
            if on_result is not None:
                on_result(result)
        bar.update(len(chunk))
    bar.close()
    return results


# ----------------------------------------------------------------------------- summary


def summarize_pi(pis: Sequence[float], chances: Sequence[float] | float = 0.75) -> dict[str, Any]:
    """Mean, median, a 10-bin histogram over [0, 1] and the share above chance.

    Args:
        pis: PI per question.
        chances: Chance-level PI (``1 - 1/n_options``) per question, or one value for all.

    Examples
    --------
    >>> s = summarize_pi([0.1, 0.8, 0.9], 0.75)
    >>> s["n"], round(s["mean"], 4), s["share_above_chance"] == 2 / 3, sum(s["histogram"])
    (3, 0.6, True, 3)
    """
    values = np.asarray(pis, dtype=np.float64)
    if values.size == 0:
        raise ValueError("no PI values to summarise")
    chance = np.broadcast_to(np.asarray(chances, dtype=np.float64), values.shape)
    counts, edges = np.histogram(np.clip(values, 0.0, 1.0), bins=N_BINS, range=(0.0, 1.0))
    return {
        "n": int(values.size),
        "mean": float(values.mean()),
        "median": float(np.median(values)),
        "std": float(values.std(ddof=1)) if values.size > 1 else 0.0,
        "min": float(values.min()),
        "max": float(values.max()),
        "chance": float(chance.mean()),
        "share_above_chance": float(np.mean(values > chance + 1e-12)),
        "bin_edges": [round(float(e), 6) for e in edges],
        "histogram": [int(c) for c in counts],
    }


def format_summary(summary: dict[str, Any], *, title: str = "PI") -> str:
    """A few printable lines: statistics and a text histogram."""
    lines = [
        f"{title}: n={summary['n']} mean={summary['mean']:.4f} median={summary['median']:.4f} "
        f"share above chance ({summary['chance']:.3f})={summary['share_above_chance']:.3f}"
    ]
    peak = max(summary["histogram"]) or 1
    edges = summary["bin_edges"]
    for i, count in enumerate(summary["histogram"]):
        bar = "#" * math.ceil(40 * count / peak) if count else ""
        lines.append(
            f"  [{edges[i]:.1f}, {edges[i + 1]:.1f}{']' if i == N_BINS - 1 else ')'} "
            f"{count:6d} {bar}"
        )
    return "\n".join(lines)


def write_pi(results: Sequence[PIResult], output: str | Path) -> tuple[Path, dict[str, Any]]:
    """Write the JSONL rows and ``<output stem>.summary.json``; return (summary path, summary)."""
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    with output.open("w", encoding="utf-8") as handle:
        for result in results:
            handle.write(json.dumps(result.to_row(), ensure_ascii=False) + "\n")
    summary = summarize_pi([r.pi for r in results], [r.chance for r in results])
    summary["protocol"] = sorted({r.protocol for r in results})
    with_source = [r for r in results if r.source_pi is not None]
    if with_source:
        summary["source_pi_mean"] = float(np.mean([r.source_pi for r in with_source]))
    path = output.with_name(output.stem + ".summary.json")
    path.write_text(json.dumps(summary, indent=2))
    return path, summary


# ----------------------------------------------------------------------------- models


def create_lm(
    model: str,
    model_args: str | None = None,
    *,
    device: str | None = None,
    batch_size: int | str | None = None,
) -> Any:
    """Create a harness LM exactly as ``lm_eval --model ... --model_args ...`` does.

    Args:
        model: Registered model name (``hf``, ``vllm``, ``local-completions``, ``lalm``...).
        model_args: The ``key=value,...`` string of ``--model_args``.
        device: ``--device`` (``None``: ``cuda`` when torch sees a GPU, else ``cpu``, as
            ``lm_eval run`` does for the ``hf`` model).
        batch_size: ``--batch_size`` (an int, or ``auto``).
    """
    from lm_eval.api.registry import get_model

    from .registration import register_models

    register_models()
    config: dict[str, Any] = {}
    if batch_size is not None:
        config["batch_size"] = batch_size
    if device is None:
        import torch

        device = "cuda" if torch.cuda.is_available() else "cpu"
    config["device"] = device
    return get_model(model).create_from_arg_string(model_args or "", config)


class LetterScorer:
    """Option probabilities of prompts built from a question and option lists.

    The scorer callable the filtering strategies take: ``scorer(question, option_sets)``
    returns one probability vector per option list; all of them come from one model call.

    Args:
        lm: Any lm-eval ``LM`` with ``loglikelihood``.
        style: Prompt style (``paper`` or ``release``) of :func:`~lm_eval_rul.prompts.pi_prompt`.
    """

    def __init__(self, lm: Any, *, style: str = "release") -> None:
        self.lm = lm
        self.style = style
        self.n_calls = 0
        self.n_prompts = 0

    def __call__(self, question: str, option_sets: Sequence[Sequence[str]]) -> list[np.ndarray]:
        self.n_calls += 1
        self.n_prompts += len(option_sets)
        contexts = [pi_prompt(question, list(opts), style=self.style) for opts in option_sets]
        logliks = letter_logliks(self.lm, contexts, [len(o) for o in option_sets])
        return [choice_probabilities(ll) for ll in logliks]
