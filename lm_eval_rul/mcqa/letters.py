"""Check how a tokenizer spells the option letters that the MC tasks score.

The tasks' continuations are `` A`` .. `` D``. When each is one token, lm-eval's ``hf``
model (and ``lalm``) read all of them from one next-token distribution: one forward pass
per question. When a letter takes several tokens the score is still exact (the summed
log-probability of its tokens) but costs more, so we say so once, before the run.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from .prompts import letters_for

__all__ = [
    "letter_token_ids",
    "multi_token_message",
    "multi_token_letter_warnings",
    "warn_for_model_args",
]

logger = logging.getLogger("lm_eval_rul")

#: Harness model names whose tokenizer we can load from ``pretrained``/``tokenizer``.
_HF_MODELS = ("hf", "huggingface", "hf-auto", "lalm")


def letter_token_ids(
    tokenizer: Any, letters: Sequence[str] = letters_for(4), *, delimiter: str = " "
) -> dict[str, list[int]]:
    """Token ids of ``delimiter + letter`` for each letter (no special tokens)."""
    return {
        letter: list(tokenizer.encode(delimiter + letter, add_special_tokens=False))
        for letter in letters
    }


def multi_token_message(
    continuation: str, pieces: Sequence[str], *, what: str = "option letter"
) -> str:
    """The one warning for a continuation (an option letter) that is several tokens.

    ``what`` names it as the caller knows it (``lalm`` sees only continuations).
    """
    return (
        f"{what} {continuation!r} is {len(pieces)} tokens for this tokenizer "
        f"({list(pieces)}); it is scored exactly as the sum of their log-probabilities, "
        "but letters no longer share a single forward pass"
    )


def multi_token_letter_warnings(
    tokenizer: Any, letters: Sequence[str] = letters_for(4), *, delimiter: str = " "
) -> list[str]:
    """One message per letter that is not a single token; empty when all are."""
    messages = []
    for letter, ids in letter_token_ids(tokenizer, letters, delimiter=delimiter).items():
        if len(ids) != 1:
            pieces = tokenizer.convert_ids_to_tokens(ids)
            messages.append(multi_token_message(delimiter + letter, pieces))
    return messages


def warn_for_model_args(model: str | None, model_args: dict[str, Any] | None) -> list[str]:
    """Log (and return) the multi-token letter warnings for a harness model, if checkable."""
    if model not in _HF_MODELS or not model_args:
        return []
    source = model_args.get("tokenizer") or model_args.get("pretrained")
    if not isinstance(source, str):
        return []
    try:
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(
            source, trust_remote_code=bool(model_args.get("trust_remote_code", False))
        )
    except Exception as err:  # noqa: BLE001 - the harness reports load errors itself
        logger.debug("letter check skipped: could not load tokenizer %s: %s", source, err)
        return []
    messages = multi_token_letter_warnings(tokenizer)
    for message in messages:
        logger.warning("%s: %s", source, message)
    return messages
