"""Where the audio sits in a prompt's tokens, before and after the processor expands it.

The prefix cache encodes the system + audio prefix once with the processor (placeholder
expanded) and scores each question's own tokens after it. That is the processor's own
rendering only when the processor changed nothing but the audio span. The span is the
audio tokens and the markers the processor writes around them (Gemma 3n's
``<start_of_audio>``/``<end_of_audio>``), widened, for a family whose processor also
writes blank lines around the audio (Gemma 3n's ``"\\n\\n"`` on each side), over the
newline tokens next to it: the template's own newline and the processor's merge into
one token there, so only their text can be compared, and it must be the template's plus
the processor's padding, nothing else.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .args import LALMArgumentError
from .families import Family

__all__ = [
    "AudioSpan",
    "SpanMismatch",
    "audio_span",
    "audio_token_ids",
    "blank_token_ids",
    "family_blank_ids",
    "match_spans",
]


class SpanMismatch(ValueError):
    """The processor changed text outside the audio span (the message says where)."""


@dataclass(frozen=True)
class AudioSpan:
    """``ids[start:end]`` is the audio span; ``ids[first:last]`` its audio and marker tokens."""

    start: int
    first: int
    last: int
    end: int


def audio_span(ids: Sequence[int], audio_ids: set[int], blank_ids: set[int]) -> AudioSpan | None:
    """The span from the first to the last token of ``audio_ids``, widened over the
    ``blank_ids`` tokens next to it; None when ``ids`` hold no audio token."""
    hits = [i for i, token in enumerate(ids) if token in audio_ids]
    if not hits:
        return None
    first, last = hits[0], hits[-1] + 1
    start, end = first, last
    while start > 0 and ids[start - 1] in blank_ids:
        start -= 1
    while end < len(ids) and ids[end] in blank_ids:
        end += 1
    return AudioSpan(start, first, last, end)


def match_spans(
    plain: Sequence[int],
    expanded: Sequence[int],
    audio_ids: set[int],
    blank_ids: set[int],
    padding: str,
    decode: Callable[[Sequence[int]], str],
) -> AudioSpan | None:
    """The audio span of ``plain`` (the tokenizer's ids of the prompt, placeholder
    unexpanded), checked against ``expanded`` (the processor's ids of the same prompt).

    Outside the spans the ids must be equal; the blank lines inside them must read as the
    template's own followed (left) or preceded (right) by the processor's ``padding``.

    Raises:
        SpanMismatch: naming what differs.
    """
    ours = audio_span(plain, audio_ids, blank_ids)
    theirs = audio_span(expanded, audio_ids, blank_ids)
    if ours is None or theirs is None:
        if list(plain) != list(expanded):
            raise SpanMismatch("no audio token in the prompt, yet the processor changed its ids")
        return ours
    if list(plain[: ours.start]) != list(expanded[: theirs.start]):
        raise SpanMismatch(
            f"the text before the audio differs: {_tail(decode(plain[: ours.start]))} "
            f"(template) vs {_tail(decode(expanded[: theirs.start]))} (processor)"
        )
    if list(plain[ours.end :]) != list(expanded[theirs.end :]):
        raise SpanMismatch(
            f"the text after the audio differs: {_head(decode(plain[ours.end :]))} "
            f"(template) vs {_head(decode(expanded[theirs.end :]))} (processor)"
        )
    left = (decode(plain[ours.start : ours.first]), decode(expanded[theirs.start : theirs.first]))
    right = (decode(plain[ours.last : ours.end]), decode(expanded[theirs.last : theirs.end]))
    if left[1] != left[0] + padding or right[1] != padding + right[0]:
        raise SpanMismatch(
            f"the blank lines around the audio are {left[1]!r}/{right[1]!r} after the processor, "
            f"expected the template's {left[0]!r}/{right[0]!r} with {padding!r} added"
        )
    return ours


def _tail(text: str, width: int = 60) -> str:
    """The end of ``text`` (where it meets the audio), quoted."""
    return repr(text if len(text) <= width else "..." + text[-width:])


def _head(text: str, width: int = 60) -> str:
    """The start of ``text`` (where it leaves the audio), quoted."""
    return repr(text if len(text) <= width else text[:width] + "...")


def blank_token_ids(vocab: dict[str, int], decode: Callable[[Sequence[int]], str]) -> set[int]:
    """The ids of ``vocab`` whose text is newlines only (``"\\n"``, ``"\\n\\n"``, ...).

    Tokens are first screened by their stored form (a raw newline, byte-level ``Ċ``, a
    byte-fallback ``<0x0A>``), then confirmed by decoding, so a 262k vocabulary costs one
    pass over its strings and a decode of the few candidates.
    """
    stored = {"\n", "\u010a"}
    candidates = [i for tok, i in vocab.items() if tok == "<0x0A>" or (tok and set(tok) <= stored)]
    return {i for i in candidates if (text := decode([i])) and set(text) == {"\n"}}


def family_blank_ids(tokenizer: Any, family: Family) -> set[int]:
    """:func:`blank_token_ids` of ``tokenizer`` for a family whose processor pads the audio
    with blank lines; empty for the others (nothing is widened)."""
    if not family.audio_padding:
        return set()
    return blank_token_ids(tokenizer.get_vocab(), tokenizer.decode)


def audio_token_ids(processor: Any, family: Family, placeholder: str, *, where: str) -> set[int]:
    """The ids of the audio span's tokens: the processor's audio token (and its begin/end
    tokens where it names them), the family's markers, and the placeholder's pieces.

    Raises:
        LALMArgumentError: the processor (or its tokenizer) names no token for one of the
            family's markers, so its rendering could not be checked.
    """
    tokenizer = processor.tokenizer
    ids = set()
    for name in ("audio_token", "audio_bos_token", "audio_eos_token"):
        token = getattr(processor, name, None)
        if isinstance(token, str):
            ids.add(tokenizer.convert_tokens_to_ids(token))
    for name in family.audio_markers:
        token = getattr(processor, name, None) or getattr(tokenizer, name, None)
        if not isinstance(token, str):
            raise LALMArgumentError(
                f"lalm: {family.name}: the processor of {where} names no {name}, which "
                "its processor writes around the audio; load the checkpoint's own processor."
            )
        ids.add(tokenizer.convert_tokens_to_ids(token))
    ids.update(tokenizer.convert_tokens_to_ids(tokenizer.tokenize(placeholder)))
    ids.discard(tokenizer.unk_token_id)
    return ids
