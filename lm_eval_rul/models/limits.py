"""The longest audio a ``lalm`` checkpoint hears, known before its weights load.

``lm-eval-rul run`` sets the window length of the factual tasks (``chunk_seconds``)
from it, so that a long recording is asked about in windows the model hears whole
instead of being trimmed. Only the checkpoint's config and processor are read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .families import family_for, family_max_seconds
from .processors import load_processor

__all__ = ["audio_limit_seconds"]


def audio_limit_seconds(model_args: Mapping[str, Any]) -> float | None:
    """The audio model's limit in seconds for these ``--model_args``, or None.

    ``max_audio_seconds`` wins when given; otherwise the family's limit is read from the
    checkpoint's processor (e.g. Qwen2-Audio's ``feature_extractor.chunk_length``, 30 s).

    Args:
        model_args: ``lalm``'s checked ``--model_args`` (``pretrained`` required).

    Raises:
        UnknownFamilyError: The checkpoint is not a supported audio LM.
        OSError: The checkpoint cannot be found.
    """
    override = model_args.get("max_audio_seconds")
    if override is not None:
        return float(override)
    if not model_args.get("pretrained"):  # a served model (lalm-api): told, or a bridge's
        from ..bridge.client import read_declaration
        from .api_http import HTTPSettings

        base_url = model_args.get("base_url")
        if not base_url:
            return None
        settings = HTTPSettings.of(model_args)
        declared = read_declaration(str(base_url), model_args.get("model"), settings)
        return None if declared is None else declared.max_audio_seconds
    import transformers

    pretrained = str(model_args["pretrained"])
    options = {k: model_args[k] for k in ("revision", "trust_remote_code") if model_args.get(k)}
    config = transformers.AutoConfig.from_pretrained(pretrained, **options)
    family = family_for(getattr(config, "model_type", None), where=pretrained)
    return family_max_seconds(family, load_processor(family, pretrained, options))
