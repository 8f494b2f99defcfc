"""Loading a checkpoint's processor, audio-only where its video processor cannot load."""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import transformers

from .families import Family, UnknownFamilyError, audio_only_class

__all__ = ["load_processor", "audio_only_processor", "fallback_chat_template", "template_renderer"]

logger = logging.getLogger(__name__)


def load_processor(family: Family, pretrained: str, kwargs: dict[str, Any]) -> Any:
    """The checkpoint's processor; audio-only when its video processor cannot load."""
    options = {
        k: kwargs[k] for k in ("revision", "trust_remote_code", "subfolder") if kwargs.get(k)
    }
    try:
        return transformers.AutoProcessor.from_pretrained(pretrained, **options)
    except (ImportError, AttributeError, ValueError, OSError) as error:
        if not family.needs_video_processor:
            raise
        logger.warning(
            "lalm: the full processor of %s could not load (%s: %s); using its audio-only part "
            "(install torchvision to load its image/video processor; lalm never uses it).",
            pretrained,
            type(error).__name__,
            error,
        )
        return audio_only_processor(pretrained, **options)


def audio_only_processor(pretrained: str, **options: Any) -> Any:
    """The checkpoint's processor class without its image/video processors.

    Qwen Omni processors want a video processor, Phi-4-multimodal's an image processor,
    both needing torchvision; audio
    evaluation does not use it. See :func:`~lm_eval_rul.models.families.audio_only_class`.
    """
    from transformers.utils import cached_file

    config_file = cached_file(pretrained, "processor_config.json", **options)
    name = json.loads(Path(config_file).read_text()).get("processor_class") if config_file else None
    base = getattr(transformers, str(name), None)
    if base is None:
        raise UnknownFamilyError(f"lalm: no processor class {name!r} in {pretrained}.")
    return audio_only_class(base).from_pretrained(pretrained, **options)


def fallback_chat_template(processor: Any, tokenizer: Any) -> str | None:
    """None (the processor resolves its own template) where the processor has one, else
    its tokenizer's (a Phi-4-multimodal processor loads with its template on the
    tokenizer only)."""
    if getattr(processor, "chat_template", None):
        return None
    return getattr(tokenizer, "chat_template", None)


def template_renderer(processor: Any, tokenizer: Any) -> Callable[..., Any]:
    """The checkpoint's chat template as lalm renders it: a chat to its prompt text, with
    the generation prompt, untokenized (the template as :func:`fallback_chat_template`)."""
    return functools.partial(
        processor.apply_chat_template,
        chat_template=fallback_chat_template(processor, tokenizer),
        tokenize=False,
        add_generation_prompt=True,
    )
