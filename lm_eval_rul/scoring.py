"""The Perceptual Index and letter-choice maths, as small pure functions.

PI (RUListening, §3 of DESIGN.md): for a question with correct option c,
``PI = 1 - p̂(c)`` where ``p̂`` renormalises a text-only model's probabilities of
the offered option letters. PI is 0 when the model is sure of the right answer
without audio, and ``1 - 1/n`` (0.75 for four options) at chance.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from scipy.special import softmax

__all__ = [
    "choice_probabilities",
    "perceptual_index",
    "is_correct",
    "mean_perceptual_index",
    "sample_answer",
    "majority_from_answers",
    "majority_from_samples",
]


def _as_logits(logliks: Sequence[float] | np.ndarray) -> np.ndarray:
    values = np.asarray(logliks, dtype=np.float64)
    if values.ndim != 1 or values.size == 0:
        raise ValueError(f"logliks must be a non-empty 1-D sequence, got shape {values.shape}")
    if np.isnan(values).any():
        raise ValueError(f"logliks contain NaN: {values.tolist()}")
    return values


def choice_probabilities(logliks: Sequence[float] | np.ndarray) -> np.ndarray:
    """Probabilities of the offered choices: softmax of their log-likelihoods.

    Examples
    --------
    >>> choice_probabilities([0.0, 0.0]).tolist()
    [0.5, 0.5]
    """
    return softmax(_as_logits(logliks))


def perceptual_index(logliks: Sequence[float] | np.ndarray, gold: int) -> float:
    """``1 - p̂(gold)`` for one prompt.

    Args:
        logliks: Log-likelihood (or log-probability) of each offered choice.
        gold: Index of the correct choice.

    Examples
    --------
    >>> round(perceptual_index([0.0, 0.0, 0.0, 0.0], 2), 6)
    0.75
    >>> perceptual_index([0.0, -1e9], 0) < 1e-12
    True
    """
    probs = choice_probabilities(logliks)
    if not 0 <= gold < probs.size:
        raise ValueError(f"gold must index one of the {probs.size} choices, got {gold}")
    return float(1.0 - probs[gold])


def is_correct(logliks: Sequence[float] | np.ndarray, gold: int) -> bool:
    """Whether the highest log-likelihood choice is the gold one (ties: first wins)."""
    return int(np.argmax(_as_logits(logliks))) == gold


def mean_perceptual_index(p_correct: Sequence[float]) -> float:
    """PI over several prompts of one question: ``1 - mean(p̂(correct))``.

    The released code averages the correct answer's probability over its 16 prompts
    and subtracts from one; this is the same as averaging the per-prompt PIs.
    """
    values = np.asarray(p_correct, dtype=np.float64)
    if values.size == 0:
        raise ValueError("p_correct must not be empty")
    if ((values < 0) | (values > 1)).any():
        raise ValueError(f"p_correct must be probabilities in [0, 1], got {values.tolist()}")
    return float(1.0 - values.mean())


# ----------------------------------------------------------------------------- majority vote
# RUL-MuChoMusic shows each question in four leave-one-out folds with its options in a
# different order, so folds vote with the chosen option's TEXT, not its letter. The vote
# itself is lm_eval_rul.stats.majority_vote (a tie is wrong; unparsed casts no vote);
# majority_from_answers is the one place that groups the answers by question for it.


def sample_answer(sample: Mapping[str, Any]) -> str | None:
    """The option text a logged harness sample (``--log_samples``) chose.

    Generation samples (one generated string) are read with
    :func:`lm_eval_rul.parsing.parse_answer`; multiple-choice samples (one
    log-likelihood per letter) choose the highest one. ``None`` when unparsed.
    """
    from .parsing import parse_answer

    doc = sample["doc"]
    options, letters = list(doc["options"]), list(doc["letters"])
    responses = sample["filtered_resps"]
    if len(responses) == 1 and isinstance(responses[0], str):
        letter = parse_answer(responses[0], options, letters).letter
        return None if letter is None else options[letters.index(letter)]
    if len(responses) != len(options):
        raise ValueError(
            f"sample of item {doc.get('id')!r}: {len(responses)} responses for "
            f"{len(options)} options; expected one generation or one log-likelihood per option"
        )
    logliks = [float(r[0] if isinstance(r, (list, tuple)) else r) for r in responses]
    return options[int(np.argmax(logliks))]


def majority_from_answers(
    answers: Iterable[tuple[str, str | None, str | None]],
) -> dict[str, Any]:
    """Majority-vote accuracy over folds from ``(question id, chosen, correct)`` triples.

    Args:
        answers: One triple per (question, fold): the question id, the option text the
            model chose (None: unparsed, casts no vote) and the correct option's text.

    Returns:
        ``{"majority_acc": float, "n_items": int, "max_folds": int}``: the share of
        questions :func:`lm_eval_rul.stats.majority_vote` calls right, the number of
        questions, and the most folds any question was answered in.

    >>> majority_from_answers([("1", "x", "x"), ("1", "y", "x"), ("1", "x", "x")])
    {'majority_acc': 1.0, 'n_items': 1, 'max_folds': 3}
    """
    from .stats import majority_vote_accuracy

    by_item: dict[str, list[str | None]] = {}
    correct: dict[str, str] = {}
    for item, answer, right in answers:
        by_item.setdefault(str(item), []).append(answer)
        correct[str(item)] = str(right)
    return {
        "majority_acc": majority_vote_accuracy(by_item, correct),
        "n_items": len(by_item),
        "max_folds": max(len(v) for v in by_item.values()),
    }


def majority_from_samples(fold_samples: Iterable[Sequence[Mapping[str, Any]]]) -> dict[str, Any]:
    """Majority-vote accuracy over folds from the harness's logged samples.

    Args:
        fold_samples: For each fold task, its logged samples (``results["samples"][task]``
            or the rows of its ``samples_*.jsonl`` file).

    Returns:
        ``{"majority_acc": float, "n_items": int, "n_folds": int}``
        (:func:`majority_from_answers`); items missing from some folds vote with the
        folds they have.
    """
    triples: list[tuple[str, str | None, str]] = []
    n_folds = 0
    for samples in fold_samples:
        n_folds += 1
        for sample in samples:
            doc = sample["doc"]
            triples.append((str(doc["id"]), sample_answer(sample), str(doc["correct_answer"])))
    vote = majority_from_answers(triples)
    return {"majority_acc": vote["majority_acc"], "n_items": vote["n_items"], "n_folds": n_folds}
