"""The prompts of ``lalm`` and ``lalm-vllm``: one rendering of the family's chat template.

Both models load the checkpoint's processor (:meth:`ChatPromptsMixin._load_processor`),
render the chat template once around a sentinel (audio first in the user turn, then the
question) and tokenize every request the same way (:meth:`~ChatPromptsMixin._encode_request`,
split as lm-eval's ``hf`` model splits context and continuation). ``lalm`` hands the
prompt to the processor, which expands the audio placeholder; ``lalm-vllm`` hands the same
token ids to vLLM, whose own processor expands it. One source of these prompts is what
makes the two models' letters comparable.
"""

from __future__ import annotations

from typing import Any

import jinja2

from ..audio import Condition
from .args import LALMArgumentError
from .audio_span import audio_token_ids, family_blank_ids
from .common import chat_messages
from .families import Family, family_max_seconds, resolve_attr
from .mistral_prompts import MISSING_MISTRAL_COMMON, MistralPrompts
from .processors import load_processor, template_renderer
from .question_whitespace import template_trims_question

__all__ = ["ChatPromptsMixin", "check_prompt_dependencies"]

#: Marks where the question text goes when the chat template is rendered once.
_SENTINEL = "\ue000LALM-TEXT\ue000"


def check_prompt_dependencies(family: Family) -> None:
    """The packages ``family``'s prompts need are installed (mistral-common for Voxtral)."""
    if family.prompts == "mistral":
        from transformers.utils import is_mistral_common_available

        if not is_mistral_common_available():
            raise LALMArgumentError(MISSING_MISTRAL_COMMON.format(family=family.name))


class ChatPromptsMixin:
    """Prompt text and token ids of requests (see the module doc).

    Uses ``family``, ``pretrained``, ``use_chat_template`` and ``system_prompt``; sets
    ``processor``, ``tokenizer`` and the rendered template parts.
    """

    family: Family
    pretrained: str
    use_chat_template: bool
    system_prompt: str | None

    def _load_processor(self, pretrained: str, kwargs: dict[str, Any]) -> None:
        """Load the checkpoint's processor and tokenizer (and Voxtral's Tekken prompts)."""
        self.processor = load_processor(self.family, pretrained, kwargs)
        self.tokenizer = self.processor.tokenizer
        self._mistral: MistralPrompts | None = None
        if self.family.prompts == "mistral":
            self._mistral = MistralPrompts(self.processor, self.family.name, self._sampling_rate())

    def _init_prompts(self, condition: Condition) -> None:
        """Render the template for ``condition`` (no audio slot where it has none)."""
        self._audio_ids = self._audio_token_ids()
        self._blank_ids = family_blank_ids(self.tokenizer, self.family)
        self._trims_question = False  # the template writes the question `| trim`med
        clips = 1 if condition.audio_slot else 0
        self._parts = self._template_parts(clips=clips)
        self._parts_by_clips = {clips: self._parts}

    def _sampling_rate(self) -> int:
        rate = resolve_attr(self.processor, "feature_extractor.sampling_rate")
        return int(rate or self.family.sampling_rate)

    def _max_seconds(self, override: float | None) -> float | None:
        if override is not None:
            return float(override)
        return family_max_seconds(self.family, self.processor)

    @property
    def placeholder(self) -> str:
        """The audio placeholder written into the prompt (before processor expansion)."""
        token = getattr(self.processor, "audio_token", None)
        if token and token not in self.family.placeholder:
            return token
        return self.family.placeholder

    def _audio_token_ids(self) -> set[int]:
        if self._mistral is not None:
            return self._mistral.audio_ids
        return audio_token_ids(self.processor, self.family, self.placeholder, where=self.pretrained)

    def _template_parts(self, *, clips: int) -> tuple[str, str]:
        """(text before the question, text after it) of the rendered prompt with ``clips``
        audio slots (0: a text-only prompt)."""
        with_audio = clips > 0
        if self._mistral is not None:
            if not self.use_chat_template:
                raise LALMArgumentError(
                    f"lalm: {self.family.name} prompts come only from its processor's "
                    "apply_chat_template with the audio (mistral-common); drop "
                    "chat_template=false."
                )
            return self._mistral.template_parts(
                clips=clips, sentinel=_SENTINEL, system_prompt=self.system_prompt
            )
        if not self.use_chat_template:
            return (f"{self.placeholder}\n" * clips), ""
        audio_parts = [{"type": "audio", "audio": f"clip{i}"} for i in range(clips)]
        messages = chat_messages(
            _SENTINEL, audio_parts=audio_parts, system_prompt=self.system_prompt
        )
        if self.family.content == "inline":
            messages[-1]["content"] = self.placeholder * clips + _SENTINEL
        render = template_renderer(self.processor, self.tokenizer)
        try:
            rendered = render(messages)
        except (ValueError, TypeError, KeyError, jinja2.TemplateError) as error:
            raise LALMArgumentError(
                f"lalm: {self.family.name}: the chat template of {self.pretrained} cannot "
                "render the prompt (audio items {'type': 'audio'} without the audio itself, "
                f"then the question): {' '.join(str(error).split())}; pass model_args "
                "chat_template=false to write the audio placeholder and the question without it."
            ) from error
        if isinstance(rendered, list):
            rendered = rendered[0]
        if rendered.count(_SENTINEL) != 1:
            raise LALMArgumentError(
                f"lalm: {self.family.name}: the chat template of {self.pretrained} does not "
                f"write the question text once; rendered: {rendered!r}."
            )
        before, after = rendered.split(_SENTINEL)
        where = f"{self.family.name} ({self.pretrained})"
        self._trims_question = template_trims_question(render, messages, rendered, _SENTINEL, where)
        if with_audio and not self._audio_ids.intersection(self._encode(before)):
            raise LALMArgumentError(
                f"lalm: {self.family.name}: the chat template of {self.pretrained} writes no "
                f"audio marker the processor expands ({self.placeholder!r}) before the "
                f"question; rendered: {before!r}. Pass model_args chat_template=false to "
                "write it without the template."
            )
        return before, after

    def parts_for(self, clips: int | None) -> tuple[str, str]:
        """The template parts around the question for ``clips`` audio slots (``None``: the
        condition's own, one clip or none)."""
        if clips is None:
            return self._parts
        if clips not in self._parts_by_clips:
            self._parts_by_clips[clips] = self._template_parts(clips=clips)
        return self._parts_by_clips[clips]

    def prompt_text(self, context: str, clips: int | None = None) -> str:
        """The full prompt (audio placeholder unexpanded) the model reads for ``context``."""
        before, after = self.parts_for(clips)
        return before + (context.strip() if self._trims_question else context) + after

    def _encode(self, text: str) -> list[int]:
        if self._mistral is not None:
            return self._mistral.encode(text)
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def _encode_request(
        self, context: str, continuation: str, clips: int | None = None
    ) -> tuple[str, list[int], list[int]]:
        """(full text, prompt ids, continuation ids) of a request, split as HFLM splits.

        The continuation's ids are those of the whole text after the prompt's ids, so
        a tokenizer that merges across the boundary is scored the way lm-eval's ``hf``
        model scores it.
        """
        n_spaces = len(context) - len(context.rstrip())
        if n_spaces and not self.parts_for(clips)[1]:
            continuation = context[-n_spaces:] + continuation
            context = context[:-n_spaces]
        prompt = self.prompt_text(context, clips)
        context_ids = self._encode(prompt)
        whole = self._encode(prompt + continuation)
        return prompt + continuation, context_ids, whole[len(context_ids) :]
