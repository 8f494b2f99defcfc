"""Check how a tokenizer spells the option letters that the MC tasks score.

The tasks' continuations are `` A`` .. `` D``. When each is one token, lm-eval's ``hf``
model (and ``lalm``) read all of them from one next-token distribution: one forward pass
per question. When a letter takes several tokens the score is still exact (the summed
log-probability of its tokens) but costs more, so we say so once, before the run: one
line for every such letter (:func:`announce_multi_token`), which the model's own check
(``lalm``'s scoring) does not repeat.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from ..adapters import tokenizer_model_names
from .prompts import letters_for

__all__ = [
    "letter_token_ids",
    "multi_token_message",
    "multi_token_letter_warnings",
    "announce_multi_token",
    "warn_for_model_args",
]

logger = logging.getLogger("lm_eval_rul")



def letter_token_ids(
    tokenizer: Any, letters: Sequence[str] = letters_for(4), *, delimiter: str = " "
) -> dict[str, list[int]]:
    """Token ids of ``delimiter + letter`` for each letter (no special tokens)."""
    return {
        letter: list(tokenizer.encode(delimiter + letter, add_special_tokens=False))
        for letter in letters
    }


def multi_token_message(
    continuation: str | Mapping[str, Sequence[str]],
    pieces: Sequence[str] = (),
    *,
    what: str = "option letter",
) -> str:
    """The one warning for continuations (option letters) that are several tokens.

    Args:
        continuation: One continuation (with its ``pieces``), or ``{continuation:
            pieces}`` for several, named in one message.
        pieces: The tokens of a single ``continuation``.
        what: Names them as the caller knows them (``lalm`` sees only continuations).
    """
    found = {continuation: pieces} if isinstance(continuation, str) else dict(continuation)
    if len(found) == 1:
        (text, parts), = found.items()
        return (
            f"{what} {text!r} is {len(parts)} tokens for this tokenizer ({list(parts)}); it "
            "is scored exactly as the sum of their log-probabilities, but letters no longer "
            "share a single forward pass"
        )
    spelled = ", ".join(f"{text!r} = {list(parts)}" for text, parts in found.items())
    return (
        f"{what}s {', '.join(repr(t) for t in found)} are several tokens for this tokenizer "
        f"({spelled}); each is scored exactly as the sum of its tokens' log-probabilities, "
        "but letters no longer share a single forward pass"
    )


def multi_token_letter_warnings(
    tokenizer: Any, letters: Sequence[str] = letters_for(4), *, delimiter: str = " "
) -> list[str]:
    """The one message naming every letter that is not a single token; empty when all are."""
    found = {
        delimiter + letter: tokenizer.convert_ids_to_tokens(ids)
        for letter, ids in letter_token_ids(tokenizer, letters, delimiter=delimiter).items()
        if len(ids) != 1
    }
    return [multi_token_message(found)] if found else []


#: (continuation, its tokens) already announced in this process: a run's pre-flight
#: check and its model see the same tokenizer, and the same fact is said once.
_ANNOUNCED: set[tuple[str, tuple[str, ...]]] = set()


def announce_multi_token(
    source: str,
    found: Mapping[str, Sequence[str]],
    *,
    what: str = "option letter",
    log: logging.Logger | None = None,
) -> str | None:
    """Log, in one line, the multi-token continuations of ``found`` not announced before.

    Args:
        source: Prefix of the line (the tokenizer's path, or the model name).
        found: ``{continuation: tokens}`` of continuations that are several tokens.
        what: How the caller names them.
        log: The caller's logger (default: this package's).

    Returns:
        The message logged, or None when every one was announced already.
    """
    new = {t: p for t, p in found.items() if (t, tuple(p)) not in _ANNOUNCED}
    if not new:
        return None
    _ANNOUNCED.update((t, tuple(p)) for t, p in new.items())
    message = multi_token_message(new, what=what)
    (log or logger).warning("%s: %s", source, message)
    return message


def warn_for_model_args(model: str | None, model_args: dict[str, Any] | None) -> list[str]:
    """Log (and return) the multi-token letter warnings for a harness model, if checkable."""
    if model not in tokenizer_model_names() or not model_args:
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
    found = {
        " " + letter: tokenizer.convert_ids_to_tokens(ids)
        for letter, ids in letter_token_ids(tokenizer).items()
        if len(ids) != 1
    }
    message = announce_multi_token(source, found) if found else None
    return [message] if message else []
