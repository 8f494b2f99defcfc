"""Letter log-likelihoods from any harness model: many prompts, one ``loglikelihood`` call.

Every prompt's option letters are asked as one-token continuations (`` A``, `` B``, ...)
of the same context, consecutively, so lm-eval's ``hf`` model (and ``lalm``) serve all
letters of a prompt from one forward pass (their logits cache groups requests that share
a context). :class:`LetterScorer` is the scorer callable the build's filtering takes.

A prompt longer than the model's context would be cut from the left by the harness's
``hf``/``vllm`` models (the model would not see the start of the question, and the
score would silently mean something else). :func:`letter_logliks` measures every prompt
with the model's own tokenizer first and raises :class:`PromptTooLongError` naming the
questions instead; callers that were asked to skip such questions catch it.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import UserInputError
from .prompts import letters_for, pi_prompt
from .scoring import choice_probabilities

__all__ = [
    "LONG_PROMPT_CHOICES",
    "PromptTooLongError",
    "context_limit",
    "overlong_prompts",
    "letter_instances",
    "letter_logliks",
    "LetterScorer",
]

#: ``--long_prompts``: stop with an error naming the questions, or skip and count them.
LONG_PROMPT_CHOICES: tuple[str, ...] = ("error", "skip")
_SHOWN = 10


class PromptTooLongError(UserInputError, ValueError):
    """Scoring prompts longer than the model's context (the harness would cut their start).

    Attributes:
        lengths: ``{question id: tokens of its first prompt found too long}``.
        limit: Tokens the model can read (its ``max_length``), or may read of a prompt.

    Args:
        lengths, limit: The attributes.
        fix: What to do (default: a longer context, or ``--long_prompts skip``).
        room: What ``limit`` is, in the message (default: "the model's context of
            ``limit`` tokens"); the generation check names the room left after the tokens
            to generate.
        prompt: What was measured (default: "a scoring prompt").
    """

    def __init__(
        self,
        lengths: Mapping[str, int],
        limit: int,
        *,
        fix: str = "",
        room: str = "",
        prompt: str = "a scoring prompt",
    ) -> None:
        self.lengths = dict(lengths)
        self.limit = limit
        items = list(self.lengths.items())
        shown = ", ".join(f"{qid} ({n} tokens)" for qid, n in items[:_SHOWN])
        more = f" and {len(items) - _SHOWN} more" if len(items) > _SHOWN else ""
        fix = fix or (
            "Use a model with a longer context, or pass --long_prompts skip to leave these "
            "questions out (they are counted in the output)."
        )
        room = room or f"the model's context of {limit} tokens"
        super().__init__(
            f"{len(items)} question(s) have {prompt} longer than {room}: ids {shown}{more}. "
            "The harness would cut them from the left, so the model would not see the start "
            f"of the question. {fix}"
        )


def context_limit(lm: Any) -> int | None:
    """Tokens ``lm`` can score without cutting (``None`` when it cannot be told)."""
    limit = getattr(lm, "max_length", None)
    if not isinstance(limit, int) or getattr(lm, "tokenizer", None) is None:
        return None
    if not callable(getattr(lm, "_encode_pair", None)):
        return None
    return limit


#: Tokens a tokenizer may add to a text (BOS, EOS, a prefix space...), beyond one per byte.
_SPECIAL_TOKENS_MARGIN = 8


def fits_surely(text: str, limit: int) -> bool:
    """Whether ``text`` fits ``limit`` tokens whatever the tokenizer: no tokenizer makes more
    tokens than the text has UTF-8 bytes (byte-level BPE at worst) plus a few special
    ones, so short prompts need no tokenizing at all."""
    return len(text.encode("utf-8")) + _SPECIAL_TOKENS_MARGIN <= limit + 1


def request_tokens(lm: Any, context: str, continuation: str) -> int:
    """Tokens of a ``loglikelihood`` request as the harness encodes it (``_encode_pair``)."""
    return sum(len(part) for part in lm._encode_pair(context, continuation))


def longest_request_tokens(lm: Any, context: str, continuations: Sequence[str], limit: int) -> int:
    """Tokens of the longest ``(context, continuation)`` request, as :func:`request_tokens`
    counts them when that decides whether it fits ``limit``.

    The context is tokenised once; when that alone is past ``limit + 1`` by more than a
    continuation's few tokens could take back (a tokenizer may merge across the join),
    the request is surely cut and its count is the context's plus the continuation's.
    Only a context near the limit is encoded with each continuation as the harness does
    (a 1 MB question was tokenised 128 times before its error, taking minutes).
    """
    context_tokens = len(lm.tok_encode(context))
    if context_tokens > limit + 1 + _SPECIAL_TOKENS_MARGIN:
        return context_tokens + max(len(lm.tok_encode(c)) for c in continuations)
    return max(request_tokens(lm, context, c) for c in continuations)


def overlong_prompts(
    lm: Any,
    contexts: Sequence[str],
    n_options: Sequence[int],
    *,
    groups: Sequence[Hashable] | None = None,
) -> tuple[dict[int, int], int | None]:
    """``({prompt index: tokens}, limit)`` of the prompts ``lm`` would have to cut.

    A prompt's length is its context plus its longest option letter, encoded as the
    harness encodes a ``loglikelihood`` request (``_encode_pair``); the harness keeps the
    last ``max_length + 1`` tokens of that, so anything longer is cut.

    Args:
        groups: One key per prompt (its question): once a prompt of a group is found too
            long, the group's other prompts are not measured (the question is refused or
            skipped whole), so a huge question is tokenised once, not once per prompt.
    """
    limit = context_limit(lm)
    if limit is None:
        return {}, None
    too_long: dict[int, int] = {}
    refused: set[Hashable] = set()
    for index, (context, n) in enumerate(zip(contexts, n_options, strict=True)):
        group = groups[index] if groups is not None else index
        if group in refused or fits_surely(context + " " + letters_for(n)[-1], limit):
            continue
        tokens = longest_request_tokens(lm, context, [f" {x}" for x in letters_for(n)], limit)
        if tokens > limit + 1:
            too_long[index] = tokens
            refused.add(group)
    return too_long, limit


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


def letter_logliks(
    lm: Any,
    contexts: Sequence[str],
    n_options: Sequence[int],
    *,
    labels: Sequence[str] | None = None,
) -> list[np.ndarray]:
    """Log-likelihood of each option letter after each context, in one model call.

    Args:
        lm: Any lm-eval ``LM`` with ``loglikelihood``.
        contexts: Prompts whose next token is the answer letter.
        n_options: Number of options (letters A, B, ...) of each prompt.
        labels: The question id of each prompt, for :class:`PromptTooLongError`.

    Raises:
        PromptTooLongError: Some prompts are longer than ``lm``'s context (checked with its
            own tokenizer before anything is scored).
    """
    too_long, limit = overlong_prompts(lm, contexts, n_options)
    if too_long:
        lengths: dict[str, int] = {}
        for index, tokens in too_long.items():
            label = str(labels[index]) if labels is not None else f"prompt {index}"
            lengths[label] = max(tokens, lengths.get(label, 0))
        raise PromptTooLongError(lengths, int(limit))
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

    def __call__(
        self, question: str, option_sets: Sequence[Sequence[str]], *, label: str | None = None
    ) -> list[np.ndarray]:
        """Option probabilities of each option list; ``label`` (the question id) names
        the question in :class:`PromptTooLongError`."""
        self.n_calls += 1
        self.n_prompts += len(option_sets)
        contexts = [pi_prompt(question, list(opts), style=self.style) for opts in option_sets]
        labels = None if label is None else [label] * len(contexts)
        logliks = letter_logliks(self.lm, contexts, [len(o) for o in option_sets], labels=labels)
        return [choice_probabilities(ll) for ll in logliks]
