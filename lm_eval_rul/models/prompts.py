"""The prompt pieces of ``lalm`` and ``lalm-vllm`` (:class:`~.checkpoint.CheckpointLM`).

Whether the template trims the question (Gemma 3n), where the audio sits in a prompt's
tokens before and after the processor expands it (:func:`match_spans`, for the prefix
cache), and Voxtral's mistral-common prompts (:class:`MistralPrompts`).
"""

from __future__ import annotations

import base64
import copy
import io
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from .args import LALMArgumentError
from .core import chat_messages
from .families import Family

#: Whitespace put around the sentinel: a newline and a space on each side.
_LEFT, _RIGHT = "\n ", " \n"


def template_trims_question(
    render: Callable[[list[dict[str, Any]]], str | list[str]],
    messages: list[dict[str, Any]],
    rendered: str,
    sentinel: str,
    where: str,
) -> bool:
    """``True`` if the template strips the whitespace around the question (as ``str.strip``,
    which Jinja's ``trim`` is), ``False`` if it writes the question verbatim.

    Args:
        render: The template rendering of a chat (``apply_chat_template`` with
            ``tokenize=False`` and the generation prompt).
        messages: The chat ``rendered`` came from; the user turn's text is ``sentinel``.
        rendered: ``render(messages)``.
        sentinel: The question's stand-in, written once in ``rendered``.
        where: The engine, family and checkpoint, for the error line.

    Raises:
        LALMArgumentError: The template changes that whitespace some other way (one side
            only, or rewritten), so no single rule gives the processor's own rendering.
    """
    padded = _LEFT + sentinel + _RIGHT
    probe = render(_with_question(messages, sentinel, padded))
    probe = probe[0] if isinstance(probe, list) else probe
    if probe == rendered.replace(sentinel, padded):
        return False
    if probe == rendered:
        return True
    raise LALMArgumentError(
        f"{where}: the chat template changes the whitespace around the question other "
        f"than by trimming it (question {padded!r} rendered as {probe!r}); pass model_args "
        "chat_template=false to write the question without it."
    )


def _with_question(
    messages: list[dict[str, Any]], sentinel: str, text: str
) -> list[dict[str, Any]]:
    """A copy of ``messages`` with ``text`` where the user turn says ``sentinel``."""
    changed = copy.deepcopy(messages)
    turn = changed[-1]
    if isinstance(turn["content"], str):
        turn["content"] = turn["content"].replace(sentinel, text)
    else:
        for part in turn["content"]:
            if part.get("type") == "text":
                part["text"] = part["text"].replace(sentinel, text)
    return changed


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


def audio_token_ids(
    processor: Any, family: Family, placeholder: str, *, where: str, who: str
) -> set[int]:
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
                f"{who}: {family.name}: the processor of {where} names no {name}, which "
                "its processor writes around the audio; load the checkpoint's own processor."
            )
        ids.add(tokenizer.convert_tokens_to_ids(token))
    ids.update(tokenizer.convert_tokens_to_ids(tokenizer.tokenize(placeholder)))
    ids.discard(tokenizer.unk_token_id)
    return ids


#: The one line an engine (``who``) says when a mistral-common family is asked for without it.
MISSING_MISTRAL_COMMON = (
    "{who}: {family} needs mistral-common (its processor renders prompts with the Tekken "
    "tokenizer); install it with pip install 'lm-eval-rul[voxtral]'."
)


def audio_item(wave: np.ndarray, sampling_rate: int) -> dict[str, str]:
    """A chat audio item carrying ``wave`` itself (float WAV, base64: no rounding)."""
    import soundfile as sf

    buffer = io.BytesIO()
    samples = np.asarray(wave, dtype=np.float32)
    sf.write(buffer, samples, sampling_rate, format="WAV", subtype="FLOAT")
    return {"type": "audio", "base64": base64.b64encode(buffer.getvalue()).decode("ascii")}


class MistralPrompts:
    """Prompt text <-> ids of a processor whose tokenizer is mistral-common's Tekken.

    Args:
        processor: The loaded ``VoxtralProcessor`` (its tokenizer a ``MistralCommonBackend``).
        family: The engine and family name (``lalm: Voxtral``), starting its messages.
        sampling_rate: Sampling rate of the waves given to :meth:`model_inputs`.
    """

    def __init__(self, processor: Any, family: str, sampling_rate: int) -> None:
        self.processor = processor
        self.family = family
        self.sampling_rate = sampling_rate
        self.tekken = processor.tokenizer.tokenizer.instruct_tokenizer.tokenizer
        self.special_ids = {
            token["token_str"]: token["rank"] for token in self.tekken._all_special_tokens
        }
        names = sorted(self.special_ids, key=len, reverse=True)
        self._special = re.compile("(" + "|".join(re.escape(n) for n in names) + ")")
        self.audio_token = processor.audio_token
        self.audio_id = self.special_ids[self.audio_token]
        self.begin_audio_id = self.special_ids.get("[BEGIN_AUDIO]")
        self.pad_id = processor.tokenizer.pad_token_id or 0

    @property
    def audio_ids(self) -> set[int]:
        """``[AUDIO]`` and ``[BEGIN_AUDIO]``: the ids of an audio span."""
        begin = {self.begin_audio_id} if self.begin_audio_id is not None else set()
        return {self.audio_id} | begin

    def encode(self, text: str) -> list[int]:
        """Ids of ``text``: special tokens by name, the rest encoded by Tekken."""
        ids: list[int] = []
        for piece in self._special.split(text):
            if piece in self.special_ids:
                ids.append(self.special_ids[piece])
            elif piece:
                ids.extend(self.tekken.encode(piece, bos=False, eos=False))
        return ids

    def decode(self, ids: Sequence[int]) -> str:
        """The text of ``ids`` with special tokens written by name."""
        from mistral_common.tokens.tokenizers.base import SpecialTokenPolicy

        return self.tekken.decode(list(ids), special_token_policy=SpecialTokenPolicy.KEEP)

    def render(self, messages: list[dict[str, Any]]) -> Any:
        """The processor's own full rendering of ``messages`` (ids and input features)."""
        try:
            return self.processor.apply_chat_template(messages, add_generation_prompt=True)
        except (ValueError, TypeError) as error:
            raise LALMArgumentError(
                f"{self.family}: its processor's apply_chat_template refuses the "
                f"prompt ({' '.join(str(error).split())})"
                + (
                    "; drop system_prompt (this tokenizer takes no system prompt with audio)."
                    if messages[0]["role"] == "system"
                    else "."
                )
            ) from error

    def template_parts(
        self, *, clips: int, sentinel: str, system_prompt: str | None
    ) -> tuple[str, str]:
        """(text before the question, text after it) with one ``[AUDIO]`` per clip."""
        silence = np.zeros(self.sampling_rate // 10, dtype=np.float32)
        items = [audio_item(silence, self.sampling_rate) for _ in range(clips)]
        messages = chat_messages(sentinel, audio_parts=items, system_prompt=system_prompt)
        ids = self.render(messages)["input_ids"][0].tolist()
        marker = self.encode(sentinel)
        start = _find(ids, marker)
        if start < 0:
            raise LALMArgumentError(
                f"{self.family}: the processor's rendering does not hold the question "
                f"as its own text chunk; rendered: {self.decode(ids)!r}."
            )
        before = self._fold_audio(ids[:start])
        after = ids[start + len(marker) :]
        if before.count(self.audio_id) != clips:
            raise LALMArgumentError(
                f"{self.family}: the processor rendered {before.count(self.audio_id)} "
                f"audio spans before the question for {clips} clip(s); rendered: "
                f"{self.decode(ids)!r}."
            )
        texts = self.decode(before), self.decode(after)
        if self.encode(texts[0]) != before or self.encode(texts[1]) != after:
            raise LALMArgumentError(
                f"{self.family}: the rendered prompt {self.decode(ids)!r} does not "
                "encode back to the processor's tokens."
            )
        return texts

    def _fold_audio(self, ids: Sequence[int]) -> list[int]:
        """``ids`` with each run of audio tokens folded to one ``[AUDIO]``."""
        folded: list[int] = []
        for token in ids:
            if not (token == self.audio_id and folded and folded[-1] == self.audio_id):
                folded.append(token)
        return folded

    def model_inputs(self, texts: Sequence[str], waves: Sequence[Any] | None) -> dict[str, Any]:
        """Padded (left) ids, mask and the processor's input features for ``texts``.

        Each ``[AUDIO]`` of the texts, in order, becomes the audio tokens the processor
        renders for the next wave of ``waves``.
        """
        rows = [self.encode(text) for text in texts]
        slots = sum(row.count(self.audio_id) for row in rows)
        waves = list(waves or [])
        if slots != len(waves):
            raise LALMArgumentError(
                f"{self.family}: {slots} audio slot(s) in the prompts for {len(waves)} clip(s)."
            )
        features = None
        if waves:
            items = [audio_item(wave, self.sampling_rate) for wave in waves]
            rendered = self.processor.apply_chat_template([{"role": "user", "content": items}])
            runs = _runs(rendered["input_ids"][0].tolist(), self.audio_id)
            features = rendered["input_features"]
            rows = self._expand(rows, iter(runs))
        width = max(len(row) for row in rows)
        input_ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for index, row in enumerate(rows):
            input_ids[index, width - len(row) :] = torch.tensor(row, dtype=torch.long)
            mask[index, width - len(row) :] = 1
        inputs: dict[str, Any] = {"input_ids": input_ids, "attention_mask": mask}
        if features is not None:
            inputs["input_features"] = features
        return inputs

    def _expand(self, rows: list[list[int]], runs: Any) -> list[list[int]]:
        expanded = []
        for row in rows:
            out: list[int] = []
            for token in row:
                out.extend([token] * next(runs) if token == self.audio_id else [token])
            expanded.append(out)
        return expanded


def _find(ids: Sequence[int], part: Sequence[int]) -> int:
    """Index of the first occurrence of ``part`` in ``ids`` (-1 if none)."""
    for start in range(len(ids) - len(part) + 1):
        if list(ids[start : start + len(part)]) == list(part):
            return start
    return -1


def _runs(ids: Sequence[int], token: int) -> list[int]:
    """Lengths of the runs of ``token`` in ``ids``, in order."""
    runs: list[int] = []
    previous = None
    for value in ids:
        if value == token:
            if previous == token:
                runs[-1] += 1
            else:
                runs.append(1)
        previous = value
    return runs
