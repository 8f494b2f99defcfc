"""Voxtral's prompts, rendered by mistral-common through the processor's own chat template.

Voxtral's processor takes no prompt text with audio in it (its ``__call__`` refuses
``[AUDIO]``): its ``apply_chat_template`` renders a conversation holding real audio items
through mistral-common's Tekken tokenizer, ``<s>[INST][BEGIN_AUDIO][AUDIO]×n question[/INST]``
(n = 12.5 tokens per second, the audio padded to 30-second chunks). ``lalm`` keeps a
prompt as text, the special tokens written by name and one ``[AUDIO]`` per clip
(``<s>[INST][BEGIN_AUDIO][AUDIO]`` + question + ``[/INST]``), so the prefix cache and the
stored results work as for the other families. This module

- renders the parts around the question with the processor's ``apply_chat_template``
  (real audio items, the question a sentinel) and folds each clip's ``[AUDIO]`` run to one;
- encodes such a text: special tokens by name, the text between them with Tekken alone,
  as mistral-common encodes a text chunk;
- expands each ``[AUDIO]`` into the tokens the processor renders for its clip, with the
  processor's own input features.

Tests check the result token for token against the processor's full rendering.
"""

from __future__ import annotations

import base64
import io
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from .args import LALMArgumentError
from .common import chat_messages

__all__ = ["MistralPrompts", "MISSING_MISTRAL_COMMON"]

#: The one line ``lalm`` says when a mistral-common family is asked for without it.
MISSING_MISTRAL_COMMON = (
    "lalm: {family} needs mistral-common (its processor renders prompts with the Tekken "
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
        family: Family name, for messages.
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
                f"lalm: {self.family}: its processor's apply_chat_template refuses the "
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
                f"lalm: {self.family}: the processor's rendering does not hold the question "
                f"as its own text chunk; rendered: {self.decode(ids)!r}."
            )
        before = self._fold_audio(ids[:start])
        after = ids[start + len(marker) :]
        if before.count(self.audio_id) != clips:
            raise LALMArgumentError(
                f"lalm: {self.family}: the processor rendered {before.count(self.audio_id)} "
                f"audio spans before the question for {clips} clip(s); rendered: "
                f"{self.decode(ids)!r}."
            )
        texts = self.decode(before), self.decode(after)
        if self.encode(texts[0]) != before or self.encode(texts[1]) != after:
            raise LALMArgumentError(
                f"lalm: {self.family}: the rendered prompt {self.decode(ids)!r} does not "
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
                f"lalm: {self.family}: {slots} audio slot(s) in the prompts for "
                f"{len(waves)} clip(s)."
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
