"""The one table of per-family facts the audio models need, read before weights load.

:data:`FAMILIES` holds what the processor does not say, recognised by the config's
``model_type``.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import transformers

from ..errors import UserInputError

logger = logging.getLogger(__name__)


class UnknownFamilyError(UserInputError, ValueError):
    """The checkpoint's ``model_type`` is not in :data:`FAMILIES`."""


class ModelKindError(UserInputError, ValueError):
    """The checkpoint is an audio LM given to a text model, or text-only given to ``lalm``."""


@dataclass(frozen=True)
class Family:
    """How to load and prompt one family of transformers audio LMs.

    Args:
        name: Human-readable family name (README, logs, results JSON).
        model_types: ``config.model_type`` values that select this family.
        model_class: transformers class that holds the audio encoder and the LM.
        thinker_config: For a full speech-out checkpoint (Qwen Omni): the config attribute
            holding the thinker's config; the thinker's weights are read under the
            ``thinker.`` prefix and the talker is never loaded. ``None`` otherwise.
        placeholder: Audio placeholder written into the prompt when the processor has no
            ``audio_token`` attribute (the processor's value wins when it has one).
        content: How the chat template wants the audio: ``"typed"`` (a
            ``{"type": "audio"}`` item before the text item) or ``"inline"`` (the
            placeholder string written before the text of a string content).
        sampling_rate: Fallback when the feature extractor has no ``sampling_rate``.
        max_seconds: Longest audio the family takes: a number of seconds, or a dotted
            attribute path on the processor (``"max_audio_len"``,
            ``"feature_extractor.chunk_length"``) read at load time; ``None`` = no limit.
        processor_kwargs: Extra keyword arguments of the processor's ``__call__``.
        needs_video_processor: The processor class also wants a video or image processor
            (which needs torchvision); without torchvision an audio-only variant is built.
        prompts: Who renders the prompt: ``"chat_template"`` (the processor's Jinja
            template, then the processor expands the placeholder in the text) or
            ``"mistral"`` (mistral-common's Tekken tokenizer through the processor's
            ``apply_chat_template`` with the audio: :mod:`.prompts`).
        audio_markers: Names of the processor's (or its tokenizer's) tokens the processor
            writes around the expanded audio; they belong to the audio span
            (:mod:`~lm_eval_rul.models.prompts`).
        audio_padding: Text the processor writes on each side of the expanded audio, outside
            the markers (Gemma 3n: a blank line); it belongs to the audio span too.
        max_clips: The most clips one prompt may carry (``None``: any number): a family
            whose published chat template writes one audio marker a turn however many
            audio items it is given takes one, and a document over several is refused.
    """

    name: str
    model_types: tuple[str, ...]
    model_class: str
    thinker_config: str | None = None
    placeholder: str = "<|AUDIO|>"
    content: str = "typed"
    sampling_rate: int = 16_000
    max_seconds: float | str | None = None
    processor_kwargs: dict[str, Any] = field(default_factory=dict)
    needs_video_processor: bool = False
    prompts: str = "chat_template"
    audio_markers: tuple[str, ...] = ()
    audio_padding: str = ""
    max_clips: int | None = None


FAMILIES: tuple[Family, ...] = (
    Family(
        name="Qwen2-Audio",
        model_types=("qwen2_audio",),
        model_class="Qwen2AudioForConditionalGeneration",
        placeholder="<|audio_bos|><|AUDIO|><|audio_eos|>",
        max_seconds="feature_extractor.chunk_length",
    ),
    Family(
        name="Qwen2.5-Omni (thinker)",
        model_types=("qwen2_5_omni", "qwen2_5_omni_thinker"),
        model_class="Qwen2_5OmniThinkerForConditionalGeneration",
        thinker_config="thinker_config",
        placeholder="<|audio_bos|><|AUDIO|><|audio_eos|>",
        max_seconds="feature_extractor.chunk_length",
        needs_video_processor=True,
    ),
    Family(
        name="Qwen3-Omni (thinker)",
        model_types=("qwen3_omni_moe", "qwen3_omni_moe_thinker"),
        model_class="Qwen3OmniMoeThinkerForConditionalGeneration",
        thinker_config="thinker_config",
        placeholder="<|audio_start|><|audio_pad|><|audio_end|>",
        max_seconds=None,
        needs_video_processor=True,
    ),
    Family(
        name="Audio Flamingo 3",
        model_types=("audioflamingo3",),
        model_class="AudioFlamingo3ForConditionalGeneration",
        placeholder="<sound>",
        max_seconds="max_audio_len",
        max_clips=1,  # its template writes one <sound> a turn, whatever it is given
    ),
    Family(
        name="Music Flamingo",
        model_types=("musicflamingo",),
        model_class="MusicFlamingoForConditionalGeneration",
        placeholder="<sound>",
        max_seconds="max_audio_len",
        max_clips=1,  # its template writes one <sound> a turn, whatever it is given
    ),
    Family(
        name="Gemma 3n",
        model_types=("gemma3n",),
        model_class="Gemma3nForConditionalGeneration",
        placeholder="<audio_soft_token>",
        max_seconds=30.0,
        # Gemma3nProcessor.full_audio_sequence: "\n\n<boa><audio>x188<eoa>\n\n"
        audio_markers=("boa_token", "eoa_token"),
        audio_padding="\n\n",
    ),
    Family(
        name="Voxtral",
        model_types=("voxtral",),
        model_class="VoxtralForConditionalGeneration",
        placeholder="[AUDIO]",
        max_seconds=1800.0,
        prompts="mistral",
    ),
    Family(
        name="Phi-4-multimodal",
        model_types=("phi4_multimodal",),
        model_class="Phi4MultimodalForCausalLM",
        placeholder="<|audio|>",
        content="inline",
        max_seconds=1800.0,
        needs_video_processor=True,  # its image processor needs torchvision
    ),
    Family(
        name="Granite Speech",
        model_types=("granite_speech",),
        model_class="GraniteSpeechForConditionalGeneration",
        placeholder="<|audio|>",
        content="inline",
        max_seconds=None,
    ),
)


def several_clips_refusal(where: str, family: Family, clips: int, items: str = "") -> str:
    """The one line refusing documents over more clips than ``family`` takes a prompt."""
    takers = ", ".join(f.name for f in FAMILIES if f.max_clips is None)
    return (
        f"{where}: {family.name} takes {family.max_clips} clip a prompt (its published chat "
        f"template writes one audio marker a turn), not the {clips} clips of "
        f"{items or 'this document'}; run those items with a family that hears several "
        f"({takers}), or leave them out"
    )


def family_for(model_type: str | None, *, where: str = "", who: str = "") -> Family:
    """The :class:`Family` of a config's ``model_type``.

    Args:
        model_type: ``config.model_type`` of the checkpoint.
        where: The checkpoint path, named in the error.
        who: The engine (``--model``) asking, which starts the error.

    Raises:
        UnknownFamilyError: naming the model type and listing the supported ones.
    """
    for family in FAMILIES:
        if model_type in family.model_types:
            return family
    names = ", ".join(f"{f.name} ({'/'.join(f.model_types)})" for f in FAMILIES)
    raise UnknownFamilyError(
        f"{who + ': ' if who else ''}unsupported audio LM family model_type={model_type!r}"
        f"{f' in {where}' if where else ''}. Supported families: {names}. "
        "For a text-only model use --model hf."
    )


def resolve_attr(obj: Any, dotted: str) -> Any:
    """``obj.a.b`` for ``dotted="a.b"``; ``None`` when any step is missing."""
    for part in dotted.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def family_max_seconds(family: Family, processor: Any) -> float | None:
    """The longest audio ``family`` takes, read from its loaded ``processor`` where it says.

    Returns:
        Seconds, or None for a family without a limit.
    """
    limit = family.max_seconds
    if isinstance(limit, str):
        limit = resolve_attr(processor, limit)
    return None if limit is None else float(limit)


def audio_only_class(base: type) -> type:
    """A subclass of processor class ``base`` built from its audio processor and tokenizer.

    Omni processors (Qwen2.5-Omni, Qwen3-Omni) also want image and video processors, and
    Phi-4-multimodal's an image processor; those need torchvision, which audio evaluation
    never uses. The subclass keeps ``base``'s own audio logic (placeholder expansion, chat
    template) unchanged; its audio part keeps ``base``'s name for it (``feature_extractor``,
    or ``audio_processor`` for Phi-4-multimodal), so the saved files load as they are.
    """
    import inspect

    import transformers

    def build(self, audio, tokenizer, chat_template):
        transformers.ProcessorMixin.__init__(self, audio, tokenizer, chat_template=chat_template)
        self.image_processor = self.video_processor = None
        for attr in ("audio_token", "audio_bos_token", "audio_eos_token", "image_token"):
            value = getattr(tokenizer, attr, None)
            if value is not None:
                setattr(self, attr, value)
        self.audio_token_id = tokenizer.convert_tokens_to_ids(self.audio_token)
        if getattr(self, "image_token", None) is not None:
            self.image_token_id = tokenizer.convert_tokens_to_ids(self.image_token)

    if "audio_processor" in inspect.signature(base.__init__).parameters:

        def __init__(self, audio_processor=None, tokenizer=None, chat_template=None):
            build(self, audio_processor, tokenizer, chat_template)

    else:

        def __init__(self, feature_extractor=None, tokenizer=None, chat_template=None):
            build(self, feature_extractor, tokenizer, chat_template)

    name = f"{base.__name__}AudioOnly"
    return type(name, (base,), {"__init__": __init__, "__qualname__": name})


def audio_family_of(config: Mapping[str, Any]) -> Family | None:
    """The family of a checkpoint's parsed ``config.json``; None when its ``model_type``
    is no audio LM of :data:`FAMILIES` (a text-only LM, or an unsupported family)."""
    model_type = config.get("model_type")
    return next((f for f in FAMILIES if model_type in f.model_types), None)


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
            "the full processor of %s could not load (%s: %s); using its audio-only part "
            "(install torchvision to load its image/video processor; no engine uses it).",
            pretrained,
            type(error).__name__,
            error,
        )
        return audio_only_processor(pretrained, **options)


def audio_only_processor(pretrained: str, **options: Any) -> Any:
    """The checkpoint's processor class without its image/video processors
    (:func:`audio_only_class`)."""
    from transformers.utils import cached_file

    config_file = cached_file(pretrained, "processor_config.json", **options)
    name = json.loads(Path(config_file).read_text()).get("processor_class") if config_file else None
    base = getattr(transformers, str(name), None)
    if base is None:
        raise UnknownFamilyError(f"no processor class {name!r} in {pretrained}.")
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
        from .api_http import HTTPSettings, read_declaration

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
