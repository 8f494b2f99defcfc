"""The Perceptual Index (PI) of a dataset under any harness model that gives log-likelihoods.

Two protocols (``docs/method.md``, "Perceptual Index"), both with four options per prompt
and ``PI = 1 - mean p̂(correct)`` over a question's prompts:

* ``release``: the released code's 16 prompts, 4 repeats x leave each of the 4
  distractors out, options shuffled each time, its prompt character for character
  (``A. x; B. y; C. z; D. w. Answer without the parenthesis. ...``).
* ``paper``: the same 16 option sets and repeats with the paper's wording and ``(A) x``
  options (the paper scores (A)-(D)).

A question with three distractors (MuChoMusic) leaves nothing out: its 16 prompts are 16
seeded shuffles of its 4 options (ours; the released code refuses such questions).

Option orders come from :func:`~lm_eval_rul.mcqa.folds.shuffled_options` (the same shuffle as
the harness documents) with the key ``("pi-paper" | "pi-release", id, repeat, slot)``, so
the stream is ``item_rng("options", seed, "pi-paper" | "pi-release", id, repeat, slot)``:
it never coincides with a harness document's ``(benchmark, id, fold)`` key.

The letters of every prompt are scored in one ``loglikelihood`` call
(:func:`~lm_eval_rul.mcqa.letter_scoring.letter_logliks`). The prompt builders and the
aggregation are pure functions; :func:`compute_pi` is the only part that talks to a model.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ..errors import UserInputError
from ..mcqa.folds import shuffled_options
from ..mcqa.letter_scoring import letter_logliks
from ..mcqa.prompts import pi_prompt
from ..mcqa.scoring import choice_probabilities, mean_perceptual_index
from ..questions import DEFAULT_SEED, Question

__all__ = [
    "PROTOCOLS",
    "RELEASE_REPEATS",
    "RELEASE_DISTRACTORS",
    "PIPrompt",
    "PIResult",
    "UndefinedPI",
    "paper_prompts",
    "release_prompts",
    "protocol_prompts",
    "check_pi_questions",
    "option_probabilities",
    "long_prompt_questions",
    "aggregate_pi",
    "compute_pi",
]

logger = logging.getLogger(__name__)

PROTOCOLS: tuple[str, ...] = ("paper", "release")
RELEASE_REPEATS = 4
#: Number of distractors both protocols leave out one at a time.
RELEASE_DISTRACTORS = 4
#: The most distractors an item of a released benchmark has (MMAR: 6 options); more is a
#: distractor pool, whose PI is undefined.
MAX_ITEM_DISTRACTORS = 5


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


def _leave_one_out_prompts(
    question: Question, *, protocol: str, seed: int, repeats: int
) -> list[PIPrompt]:
    """``repeats`` x leave each distractor out, shuffled per prompt, in ``protocol``'s style."""
    n = len(question.distractors)
    if n > MAX_ITEM_DISTRACTORS:
        raise ValueError(
            f"question {question.id!r} has {n} distractors; the {protocol} protocol needs at "
            f"most {MAX_ITEM_DISTRACTORS}"
        )
    prompts = []
    for repeat in range(repeats):
        for slot in range(RELEASE_DISTRACTORS):
            left_out = slot if n == RELEASE_DISTRACTORS else None
            kept = [d for j, d in enumerate(question.distractors) if j != left_out]
            options, gold = shuffled_options(
                question.correct_answer,
                kept,
                seed=seed,
                key=(f"pi-{protocol}", question.id, repeat, slot),
            )
            prompts.append(
                PIPrompt(
                    pi_prompt(question.question, options, style=protocol),
                    tuple(options),
                    gold,
                    repeat=repeat,
                    left_out=left_out,
                )
            )
    return prompts


def paper_prompts(
    question: Question, *, seed: int = DEFAULT_SEED, repeats: int = RELEASE_REPEATS
) -> list[PIPrompt]:
    """The paper protocol: the release protocol's option sets in the paper's wording.

    Four options per prompt, ``(A) x`` style: ``repeats`` x leave each of 4 distractors
    out, or ``repeats * 4`` shuffles of the one set when there are fewer distractors.

    Examples
    --------
    >>> q = Question("7", "Which instrument?", "piano", ("violin", "flute", "drums", "harp"))
    >>> prompts = paper_prompts(q)
    >>> len(prompts), {len(p.options) for p in prompts}, prompts[0].text.count("(D)")
    (16, {4}, 1)
    """
    return _leave_one_out_prompts(question, protocol="paper", seed=seed, repeats=repeats)


def release_prompts(
    question: Question, *, seed: int = DEFAULT_SEED, repeats: int = RELEASE_REPEATS
) -> list[PIPrompt]:
    """The release protocol: ``repeats`` x leave each distractor out, the released prompt.

    With 4 distractors this gives the released code's 16 prompts of 4 options. With
    fewer than 4 distractors, or an item of 5 or 6 options (MMAR has a few), nothing is
    left out and each of the ``repeats * 4`` prompts is another seeded shuffle of all
    options.

    Args:
        question: A question with at most 5 distractors.
        seed: Base seed; each prompt's order comes from (seed, id, repeat, left-out).
        repeats: Number of repeats (4 in the release).
    """
    return _leave_one_out_prompts(question, protocol="release", seed=seed, repeats=repeats)


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
    """Reject questions whose PI is undefined: more than 5 distractors (a pool), or none.

    Raises:
        UndefinedPI: naming the ids, the counts and what to do instead.
    """
    bad = [q for q in questions if not 1 <= len(q.distractors) <= MAX_ITEM_DISTRACTORS]
    if bad:
        listed = ", ".join(f"{q.id!r} ({len(q.distractors)})" for q in bad[:10])
        more = f" and {len(bad) - 10} more" if len(bad) > 10 else ""
        raise UndefinedPI(
            f"{len(bad)} question(s) in {source} do not have 1-{MAX_ITEM_DISTRACTORS} "
            f"distractors (id (count)): {listed}{more}. The PI of a distractor pool is "
            "undefined: pick 4 distractors first with `lm-eval-rul build --pools ...`."
        )


def option_probabilities(
    lm: Any, prompts: Sequence[PIPrompt], labels: Sequence[str] | None = None
) -> list[np.ndarray]:
    """p̂ over each prompt's offered letters (softmax of the letters' log-likelihoods).

    ``labels`` (each prompt's question id) name the questions of a prompt too long for
    the model (:class:`~lm_eval_rul.mcqa.letter_scoring.PromptTooLongError`).
    """
    logliks = letter_logliks(
        lm, [p.text for p in prompts], [len(p.options) for p in prompts], labels=labels
    )
    return [choice_probabilities(ll) for ll in logliks]


def long_prompt_questions(
    lm: Any, questions: Sequence[Question], *, protocol: str = "release", seed: int = DEFAULT_SEED
) -> tuple[dict[str, int], int | None]:
    """``({question id: tokens of its first prompt found too long}, limit)`` for the
    questions whose prompts ``lm`` would have to cut (checked with its own tokenizer)."""
    from ..mcqa.letter_scoring import overlong_prompts

    prompts = [
        (q.id, p) for q in questions for p in protocol_prompts(q, protocol=protocol, seed=seed)
    ]
    too_long, limit = overlong_prompts(
        lm,
        [p.text for _, p in prompts],
        [len(p.options) for _, p in prompts],
        groups=[qid for qid, _ in prompts],  # one prompt too long refuses its question
    )
    lengths: dict[str, int] = {}
    for index, tokens in too_long.items():
        qid = prompts[index][0]
        lengths[qid] = max(tokens, lengths.get(qid, 0))
    return lengths, limit


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
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {PROTOCOLS}, got {protocol!r}")
    check_pi_questions(questions)
    results: list[PIResult] = []
    from ..progress import progress_bar

    bar = progress_bar(len(questions), f"PI ({protocol})", enabled=progress, unit="q")
    for start in range(0, len(questions), max(1, chunk_size)):
        chunk = questions[start : start + max(1, chunk_size)]
        per_question = [protocol_prompts(q, protocol=protocol, seed=seed) for q in chunk]
        flat = [p for prompts in per_question for p in prompts]
        labels = [q.id for q, prompts in zip(chunk, per_question, strict=True) for _ in prompts]
        probabilities = option_probabilities(lm, flat, labels)
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


