"""The Perceptual Index and letter-choice maths, as small pure functions.

PI (RUListening; ``docs/method.md``, "Perceptual Index"): for a question with correct option c,
``PI = 1 - p̂(c)`` where ``p̂`` renormalises a text-only model's probabilities of
the offered option letters. PI is 0 when the model is sure of the right answer
without audio, and ``1 - 1/n`` (0.75 for four options) at chance.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.special import softmax

__all__ = [
    "choice_probabilities",
    "perceptual_index",
    "is_correct",
    "mean_perceptual_index",
]


#: Rounding allowed above 0 (the readers of replies and the bridge allow the same).
_LOGPROB_SLACK = 1e-6


def _as_logits(logliks: Sequence[float] | np.ndarray) -> np.ndarray:
    values = np.asarray(logliks, dtype=np.float64)
    if values.ndim != 1 or values.size == 0:
        raise ValueError(f"logliks must be a non-empty 1-D sequence, got shape {values.shape}")
    if np.isnan(values).any() or np.isposinf(values).any():  # -inf is "no probability"
        raise ValueError(f"logliks contain NaN or +inf (not log-probabilities): {values.tolist()}")
    if (values > _LOGPROB_SLACK).any():  # whichever model or server gave them
        raise ValueError(
            f"logliks above 0 (a probability above 1, not log-probabilities): {values.tolist()}"
        )
    return values


def choice_probabilities(logliks: Sequence[float] | np.ndarray) -> np.ndarray:
    """Probabilities of the offered choices: softmax of their log-likelihoods.

    A choice with log-likelihood ``-inf`` (an API's top-k tokens did not contain its
    letter) gets probability 0. When no choice has any (no letter among the top-k), all
    are 0: the model chose none of them, which is never replaced by a uniform guess.

    Examples
    --------
    >>> choice_probabilities([0.0, 0.0]).tolist()
    [0.5, 0.5]
    >>> choice_probabilities([0.0, float("-inf")]).tolist()
    [1.0, 0.0]
    >>> choice_probabilities([float("-inf")] * 2).tolist()
    [0.0, 0.0]
    """
    values = _as_logits(logliks)
    if not np.isfinite(values).any():
        return np.zeros_like(values)
    return softmax(values)


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
    """Whether the highest log-likelihood choice is the gold one (ties: first wins).

    With no finite log-likelihood (no choice got any probability) nothing was chosen,
    so the answer is wrong.
    """
    values = _as_logits(logliks)
    return bool(np.isfinite(values).any()) and int(np.argmax(values)) == gold


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
