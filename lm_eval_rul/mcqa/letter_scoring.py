"""Letter log-likelihoods from any harness model: many prompts, one ``loglikelihood`` call.

Every prompt's option letters are asked as one-token continuations (`` A``, `` B``, ...)
of the same context, consecutively, so lm-eval's ``hf`` model (and ``lalm``) serve all
letters of a prompt from one forward pass (their logits cache groups requests that share
a context). :class:`LetterScorer` is the scorer callable the build's filtering takes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .prompts import letters_for, pi_prompt
from .scoring import choice_probabilities

__all__ = ["letter_instances", "letter_logliks", "LetterScorer"]


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


class LetterScorer:
    """Option probabilities of prompts built from a question and option lists.

    The scorer callable the filtering strategies take: ``scorer(question, option_sets)``
    returns one probability vector per option list; all of them come from one model call.

    Args:
        lm: Any lm-eval ``LM`` with ``loglikelihood``.
        style: Prompt style (``paper`` or ``release``) of
            :func:`~lm_eval_rul.mcqa.prompts.pi_prompt`.
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
