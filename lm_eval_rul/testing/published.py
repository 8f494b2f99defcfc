"""Tiny random-weight audio LMs that carry what each family's published checkpoint ships.

:mod:`.audio` builds every family with one generic chat template and a short window (fast
fixtures for the scoring machinery). The models here keep, per family, what a user's real
checkpoint brings: its chat template, its audio special tokens, its processor and its
feature-extractor settings (128 mel bins, the real window); only the weights, the widths
and the regular vocabulary are small. Where each convention comes from is said beside it.

``make_published_lm(directory, family)`` builds one of :data:`PUBLISHED_TEMPLATES`' families;
:data:`lm_eval_rul.testing.families.FAMILY_BUILDERS` is the one mapping from each row of
``FAMILIES`` to its builder.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..models.families import audio_only_class
from .audio import omni_rope, qwen2_5_omni_thinker_config
from .text import tiny_text_kwargs, train_tokenizer
from .voxtral import VOXTRAL_FEATURES, VOXTRAL_TOKENS

__all__ = ["PUBLISHED_TEMPLATES", "PUBLISHED_TOKENS", "PUBLISHED_FEATURES", "make_published_lm"]

_HIDDEN = 32

# Qwen/Qwen2.5-Omni-7B chat_template.json, character for character as transformers' processor
# test copied it from the checkpoint (huggingface/transformers,
# tests/models/qwen2_5_omni/test_processor_qwen2_5_omni.py, ``prepare_processor_dict``): the
# Qwen2-VL layout with audio items, "<|audio_bos|><|AUDIO|><|audio_eos|>" per item. Its own
# system turn, written when the chat has none, is "You are a helpful assistant."; the long
# "You are Qwen, a virtual human developed by the Qwen Team, ..." is the system message the
# Qwen2.5-Omni README tells users to pass for audio output (QwenLM/Qwen2.5-Omni, README.md,
# "Prompt for audio output"): neither the template nor the processor adds it.
_QWEN2_5_OMNI = (
    "{% set audio_count = namespace(value=0) %}{% set image_count = namespace(value=0) %}"
    "{% set video_count = namespace(value=0) %}{% for message in messages %}"
    "{% if loop.first and message['role'] != 'system' %}<|im_start|>system\n"
    "You are a helpful assistant.<|im_end|>\n{% endif %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}<|im_end|>\n"
    "{% else %}{% for content in message['content'] %}"
    "{% if content['type'] == 'image' or 'image' in content or 'image_url' in content %}"
    "{% set image_count.value = image_count.value + 1 %}"
    "{% if add_vision_id %}Picture {{ image_count.value }}: {% endif %}"
    "<|vision_bos|><|IMAGE|><|vision_eos|>"
    "{% elif content['type'] == 'audio' or 'audio' in content or 'audio_url' in content %}"
    "{% set audio_count.value = audio_count.value + 1 %}"
    "{% if add_audio_id %}Audio {{ audio_count.value }}: {% endif %}"
    "<|audio_bos|><|AUDIO|><|audio_eos|>"
    "{% elif content['type'] == 'video' or 'video' in content %}"
    "{% set video_count.value = video_count.value + 1 %}"
    "{% if add_vision_id %}Video {{ video_count.value }}: {% endif %}"
    "<|vision_bos|><|VIDEO|><|vision_eos|>"
    "{% elif 'text' in content %}{{ content['text'] }}{% endif %}{% endfor %}<|im_end|>\n"
    "{% endif %}{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

# Qwen/Qwen3-Omni-30B-A3B-Instruct chat_template.json, reduced to the branches lalm's chats
# reach: a system turn only when the chat has one, the user turn with each audio item as
# "<|audio_start|><|audio_pad|><|audio_end|>" where it stands in the content, and the bare
# generation prompt. The published file itself is not in any public copy the tools reach; it
# also has the Qwen3 tools preamble, the assistant/<think> history handling and an
# enable_thinking=false branch ("<think>\n\n</think>\n\n" after the generation prompt), none
# of which a chat without tools, history or enable_thinking renders. What the real file
# renders for such a chat is printed, from the Thinking checkpoint's file (same user turn), in
# sujitnoronha/audio_reasoning_interspeech, docs/QWEN3_OMNI_CHAT_TEMPLATE_BUG_REPORT.md:
# "<|im_start|>system\n...<|im_end|>\n<|im_start|>user\n<|audio_start|><|audio_pad|>
# <|audio_end|>What sound is this?<|im_end|>\n<|im_start|>assistant\n"; a test run on the
# Instruct file (swedishembedded/brain,
# crates/qwen3omnimoe/tests/real_chat_template_multimodal_splice.rs) quotes its audio test,
# "content.type == 'audio' or 'audio' in content or 'audio_url' in content", and checks each
# placeholder sits where its content part stands.
_QWEN3_OMNI = (
    "{%- for message in messages %}"
    "{%- if message['role'] == 'system' or message['role'] == 'user' %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' }}"
    "{%- if message['content'] is string %}{{- message['content'] }}"
    "{%- else %}{%- for content in message['content'] %}"
    "{%- if content['type'] == 'image' or 'image' in content or 'image_url' in content %}"
    "{{- '<|vision_start|><|image_pad|><|vision_end|>' }}"
    "{%- elif content['type'] == 'audio' or 'audio' in content or 'audio_url' in content %}"
    "{{- '<|audio_start|><|audio_pad|><|audio_end|>' }}"
    "{%- elif content['type'] == 'video' or 'video' in content %}"
    "{{- '<|vision_start|><|video_pad|><|vision_end|>' }}"
    "{%- elif content['type'] == 'text' %}{{- content['text'] }}{%- endif %}"
    "{%- endfor %}{%- endif %}{{- '<|im_end|>\\n' }}"
    "{%- endif %}{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)

# convert_audioflamingo3_to_hf.py / convert_musicflamingo_to_hf.py: the processor template
# (a default system turn, "<sound>" once before the text when the turn has audio).
_FLAMINGO = (
    "{% if messages[0]['role'] != 'system' %}<|im_start|>system\nSYSTEM<|im_end|>\n{% endif %}"
    "{% for m in messages if m['content'] is not none %}<|im_start|>{{ m['role'] }}\n"
    "{% if m['content'] is string %}{{ m['content'] }}{% else %}"
    "{% set audio = namespace(found=False) %}{% set text_buf = namespace(v='') %}"
    "{% for c in m['content'] %}{% if c.get('type') == 'audio' or 'audio' in c %}"
    "{% set audio.found = True %}{% elif c.get('type') == 'text' or 'text' in c %}"
    "{% set text_buf.v = text_buf.v + c['text'] %}{% endif %}{% endfor %}"
    "{% if audio.found %}{{ '<sound>' }}{% endif %}{{ text_buf.v }}{% endif %}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
_AF3_SYSTEM = "You are a helpful assistant."
_MF_SYSTEM = (
    "You are Music Flamingo, a multimodal assistant for language and music. "
    "On each turn you receive an audio clip which contains music and optional text, "
    "you will receive at least one or both; use your world knowledge and reasoning "
    "to help the user with any task. Interpret the entirety of the content any input music"
    "--regardlenss of whether the user calls it audio, music, or sound."
)

#: The published chat template of each family (Qwen2-Audio: the processor's own
#: ``default_chat_template``; Voxtral: none, mistral-common renders the prompt).
PUBLISHED_TEMPLATES: dict[str, str | None] = {
    "qwen2_audio": None,
    "qwen2_5_omni_thinker": _QWEN2_5_OMNI,
    "audioflamingo3": _FLAMINGO.replace("SYSTEM", _AF3_SYSTEM),
    "musicflamingo": _FLAMINGO.replace("SYSTEM", _MF_SYSTEM),
    "qwen3_omni_moe_thinker": _QWEN3_OMNI,
    "voxtral": None,
}

# The named tokens each Qwen Omni tokenizer carries (tokenizer_config.json of the
# checkpoints; the Omni processors read them from the tokenizer).
_OMNI_TOKENS = {
    "qwen2_5_omni_thinker": {
        "image_token": "<|IMAGE|>",
        "video_token": "<|VIDEO|>",
        "audio_token": "<|AUDIO|>",
        "vision_bos_token": "<|vision_bos|>",
        "vision_eos_token": "<|vision_eos|>",
        "audio_bos_token": "<|audio_bos|>",
        "audio_eos_token": "<|audio_eos|>",
    },
    "qwen3_omni_moe_thinker": {
        "image_token": "<|image_pad|>",
        "video_token": "<|video_pad|>",
        "audio_token": "<|audio_pad|>",
        "vision_bos_token": "<|vision_start|>",
        "vision_eos_token": "<|vision_end|>",
        "audio_bos_token": "<|audio_start|>",
        "audio_eos_token": "<|audio_end|>",
    },
}

#: The audio special tokens each family's published tokenizer carries (one id each).
PUBLISHED_TOKENS: dict[str, tuple[str, ...]] = {
    # Qwen2AudioProcessor's defaults, which the checkpoint's tokenizer has
    "qwen2_audio": ("<|AUDIO|>", "<|audio_bos|>", "<|audio_eos|>"),
    "qwen2_5_omni_thinker": tuple(_OMNI_TOKENS["qwen2_5_omni_thinker"].values()),
    "audioflamingo3": ("<sound>",),
    # Music Flamingo's vocabulary has <|sound_bos|>/<|sound_eos|> around the audio
    "musicflamingo": ("<sound>", "<|sound_bos|>", "<|sound_eos|>"),
    "qwen3_omni_moe_thinker": tuple(_OMNI_TOKENS["qwen3_omni_moe_thinker"].values()),
    "voxtral": VOXTRAL_TOKENS,
}

# Whisper large-v3's front end, which all of these use: 128 mel bins, 16 kHz, hop 160,
# n_fft 400; the window is the checkpoint's (Qwen Omni: 300 s).
_WHISPER = {
    "feature_extractor": "WhisperFeatureExtractor",
    "feature_size": 128,
    "sampling_rate": 16_000,
    "hop_length": 160,
    "n_fft": 400,
}
#: The feature-extractor settings of each family's published processor.
PUBLISHED_FEATURES: dict[str, dict] = {
    "qwen2_audio": {**_WHISPER, "chunk_length": 30},
    "qwen2_5_omni_thinker": {**_WHISPER, "chunk_length": 300},
    # the conversion scripts: WhisperFeatureExtractor(feature_size=128, return_attention_mask=True)
    "audioflamingo3": {**_WHISPER, "chunk_length": 30, "return_attention_mask": True},
    "musicflamingo": {**_WHISPER, "chunk_length": 30, "return_attention_mask": True},
    "qwen3_omni_moe_thinker": {**_WHISPER, "chunk_length": 300},
    "voxtral": VOXTRAL_FEATURES,
}


def _whisper_features(family: str):
    """The family's published ``WhisperFeatureExtractor`` (:data:`PUBLISHED_FEATURES`)."""
    from transformers import WhisperFeatureExtractor

    settings = dict(PUBLISHED_FEATURES[family])
    settings.pop("feature_extractor")
    return WhisperFeatureExtractor(**settings)


def _tokenizer(directory: Path, extra_tokens: dict[str, str] | None = None):
    from transformers import PreTrainedTokenizerFast

    tokenizer = train_tokenizer(directory)
    if not extra_tokens:
        return tokenizer
    tokenizer.add_special_tokens({"additional_special_tokens": list(extra_tokens.values())})
    tokenizer.save_pretrained(directory)
    return PreTrainedTokenizerFast.from_pretrained(directory, extra_special_tokens=extra_tokens)


def _encoder(**extra) -> dict:
    """A one-layer Whisper-like encoder over the 30-second window (1500 positions)."""
    return dict(
        num_mel_bins=128,
        encoder_layers=1,
        encoder_attention_heads=2,
        encoder_ffn_dim=2 * _HIDDEN,
        d_model=_HIDDEN,
        max_source_positions=1500,
        **extra,
    )


def _text(tokenizer, **extra) -> dict:
    return tiny_text_kwargs(
        tokenizer, hidden_size=_HIDDEN, num_hidden_layers=1, max_position_embeddings=4096, **extra
    )


def make_published_lm(directory: str | Path, family: str, *, seed: int = 0) -> Path:
    """Save a random-weight audio LM of ``family`` with its published conventions.

    Args:
        directory: Target folder, loadable with ``pretrained=directory``.
        family: One of :data:`PUBLISHED_TEMPLATES`' keys.
        seed: Torch seed of the random weights.
    """
    import torch
    import transformers as tf

    if family not in PUBLISHED_TEMPLATES:
        raise ValueError(f"family must be one of {', '.join(PUBLISHED_TEMPLATES)}, got {family!r}")
    directory = Path(directory)
    if family == "voxtral":
        from .voxtral import make_tiny_voxtral

        return make_tiny_voxtral(directory, seed=seed)
    torch.manual_seed(seed)
    template = PUBLISHED_TEMPLATES[family]
    processor_class_name = None
    if family == "qwen2_audio":
        # Qwen2-Audio-7B-Instruct: 128 mel bins, a 30 s window; the processor's defaults
        # (audio tokens, default_chat_template) as the checkpoint loads them
        tokenizer = _tokenizer(directory / "_tokenizer")
        processor = tf.Qwen2AudioProcessor(
            feature_extractor=_whisper_features(family), tokenizer=tokenizer
        )
        config = tf.Qwen2AudioConfig(
            audio_config=_encoder(),
            text_config=_text(tokenizer, model_type="qwen2"),
            audio_token_index=tokenizer.convert_tokens_to_ids("<|AUDIO|>"),
        )
        model = tf.Qwen2AudioForConditionalGeneration(config)
    elif family in ("audioflamingo3", "musicflamingo"):
        # the conversion scripts: WhisperFeatureExtractor(feature_size=128,
        # return_attention_mask=True) (30 s window), the processor template above
        tokenizer = _tokenizer(directory / "_tokenizer")
        encoder = dict(
            num_mel_bins=128,
            num_hidden_layers=1,
            num_attention_heads=2,
            intermediate_size=2 * _HIDDEN,
            hidden_size=_HIDDEN,
            max_source_positions=1500,
        )
        common: dict = dict(
            audio_config=encoder, audio_token_id=tokenizer.convert_tokens_to_ids("<sound>")
        )
        if family == "audioflamingo3":
            common["text_config"] = _text(tokenizer, model_type="qwen2")
            classes = tf.AudioFlamingo3Processor, tf.AudioFlamingo3Config
            model_class = tf.AudioFlamingo3ForConditionalGeneration
        else:
            tokenizer.add_special_tokens(
                {"additional_special_tokens": list(PUBLISHED_TOKENS[family][1:])}
            )
            ids = tokenizer.convert_tokens_to_ids
            common["text_config"] = _text(tokenizer, model_type="qwen2")
            common["audio_config"]["model_type"] = "audioflamingo3_encoder"
            common.update(
                audio_bos_token_id=ids("<|sound_bos|>"), audio_eos_token_id=ids("<|sound_eos|>")
            )
            classes = tf.MusicFlamingoProcessor, tf.MusicFlamingoConfig
            model_class = tf.MusicFlamingoForConditionalGeneration
        processor = classes[0](
            feature_extractor=_whisper_features(family),
            tokenizer=tokenizer,
            chat_template=template,
        )
        model = model_class(classes[1](**common))
    elif family == "qwen2_5_omni_thinker":
        # Qwen2.5-Omni-7B: 128 mel bins, a 300 s window, its named tokens and template
        tokenizer = _tokenizer(directory / "_tokenizer", _OMNI_TOKENS[family])
        processor = audio_only_class(tf.Qwen2_5OmniProcessor)(
            feature_extractor=_whisper_features(family), tokenizer=tokenizer, chat_template=template
        )
        processor_class_name = "Qwen2_5OmniProcessor"
        config = qwen2_5_omni_thinker_config(
            tokenizer,
            audio_config=_encoder(n_window=100, output_dim=_HIDDEN),
            text_config=_text(tokenizer, rope_parameters=omni_rope(1000000.0)),
        )
        model = tf.Qwen2_5OmniThinkerForConditionalGeneration(config)
    else:  # qwen3_omni_moe_thinker
        # Qwen3-Omni-30B-A3B-Instruct: 128 mel bins, a 300 s window, its named tokens and
        # template; a mixture-of-experts text model (4 experts, 2 per token here)
        tokenizer = _tokenizer(directory / "_tokenizer", _OMNI_TOKENS[family])
        processor = audio_only_class(tf.Qwen3OmniMoeProcessor)(
            feature_extractor=_whisper_features(family), tokenizer=tokenizer, chat_template=template
        )
        processor_class_name = "Qwen3OmniMoeProcessor"
        ids = tokenizer.convert_tokens_to_ids
        head_dim = _HIDDEN // 4
        text = _text(
            tokenizer,
            head_dim=head_dim,
            num_experts=4,
            num_experts_per_tok=2,
            moe_intermediate_size=_HIDDEN,
            decoder_sparse_step=1,
            rope_parameters={
                "rope_type": "default",
                "rope_theta": 1000000.0,
                "mrope_section": [2, 1, 1],
                "mrope_interleaved": True,
            },
        )
        config = tf.Qwen3OmniMoeThinkerConfig(
            audio_config=dict(
                num_mel_bins=128,
                encoder_layers=1,
                encoder_attention_heads=2,
                encoder_ffn_dim=2 * _HIDDEN,
                d_model=_HIDDEN,
                max_source_positions=1500,
                n_window=50,
                output_dim=_HIDDEN,
                downsample_hidden_size=16,
            ),
            vision_config=dict(
                depth=1,
                hidden_size=_HIDDEN,
                intermediate_size=2 * _HIDDEN,
                num_heads=2,
                out_hidden_size=_HIDDEN,
                deepstack_visual_indexes=[0],
            ),
            text_config=text,
            audio_token_id=ids("<|audio_pad|>"),
            image_token_id=ids("<|image_pad|>"),
            video_token_id=ids("<|video_pad|>"),
            audio_start_token_id=ids("<|audio_start|>"),
        )
        config.vision_start_token_id = ids("<|vision_start|>")
        model = tf.Qwen3OmniMoeThinkerForConditionalGeneration(config)
    model.eval()
    model.save_pretrained(directory)
    processor.save_pretrained(directory)
    if processor_class_name:
        # the real class name, as the released checkpoint has it (loading falls back to the
        # audio-only variant when torchvision is missing)
        path = directory / "processor_config.json"
        saved = json.loads(path.read_text())
        saved["processor_class"] = processor_class_name
        path.write_text(json.dumps(saved, indent=2))
    return directory
