"""A tiny Granite Speech as its published checkpoints ship it: template, tokens, processor.

Where each convention comes from:

- the chat template is Granite 3.3's (the one ``ibm-granite/granite-speech-3.3-*`` ship),
  reduced to the branch a plain chat renders (no tools, documents or thinking controls):
  ``<|start_of_role|>role<|end_of_role|>content<|end_of_text|>\\n`` turns, the
  generation prompt ``<|start_of_role|>assistant<|end_of_role|>``, and without a system
  turn its default system message, which carries *today's date* (``strftime_now``);
- the audio goes inline as ``<|audio|>`` in the user's text, as the model cards write it;
- the tokenizer is byte-level BPE (the released one is a ``GPT2Tokenizer``) with the
  released special tokens ``<|end_of_text|>`` (BOS, EOS and pad), ``<|start_of_role|>``,
  ``<|end_of_role|>`` and ``<|audio|>``;
- the feature extractor is ``GraniteSpeechFeatureExtractor()`` at its defaults (80 mel
  bins, 16 kHz, 25 ms windows, 10 ms hop, projector window 15, downsampling 5); it needs
  torchaudio. The processor is ``GraniteSpeechProcessor``.
"""

from __future__ import annotations

from pathlib import Path

from .text import tiny_text_kwargs, train_tokenizer

__all__ = [
    "GRANITE_CHAT_TEMPLATE",
    "GRANITE_TOKENS",
    "GRANITE_FEATURES",
    "granite_tokenizer",
    "make_tiny_granite_speech",
]

#: Granite 3.3's chat template, the branch of a chat without tools, documents or controls.
GRANITE_CHAT_TEMPLATE = (
    "{%- if messages[0]['role'] == 'system' %}"
    "{%- set system_message = messages[0]['content'] %}"
    "{%- set loop_messages = messages[1:] %}"
    "{%- else %}"
    "{%- set system_message = \"Knowledge Cutoff Date: April 2024.\\nToday's Date: \" + "
    "strftime_now('%B %d, %Y') + \".\\nYou are Granite, developed by IBM. You are a helpful "
    'AI assistant." %}'
    "{%- set loop_messages = messages %}"
    "{%- endif %}"
    "{{- '<|start_of_role|>system<|end_of_role|>' + system_message + '<|end_of_text|>\\n' }}"
    "{%- for message in loop_messages %}"
    "{{- '<|start_of_role|>' + message['role'] + '<|end_of_role|>' + message['content'] + "
    "'<|end_of_text|>\\n' }}"
    "{%- if loop.last and add_generation_prompt %}"
    "{{- '<|start_of_role|>assistant<|end_of_role|>' }}"
    "{%- endif %}"
    "{%- endfor %}"
)

#: The released special tokens.
GRANITE_TOKENS: tuple[str, ...] = (
    "<|end_of_text|>",
    "<|start_of_role|>",
    "<|end_of_role|>",
    "<|audio|>",
)
#: ``GraniteSpeechFeatureExtractor()`` at its defaults (building it needs torchaudio).
GRANITE_FEATURES: dict = {
    "feature_extractor": "GraniteSpeechFeatureExtractor",
    "sampling_rate": 16_000,
    "n_fft": 512,
    "win_length": 400,
    "hop_length": 160,
    "n_mels": 80,
}


def granite_tokenizer(directory: str | Path):
    """Granite's byte-level BPE tokenizer with the released special tokens and template."""
    from transformers import PreTrainedTokenizerFast

    tokenizer = train_tokenizer(directory)
    tokenizer.add_special_tokens(
        {
            "bos_token": "<|end_of_text|>",
            "eos_token": "<|end_of_text|>",
            "pad_token": "<|end_of_text|>",
            "unk_token": "<|end_of_text|>",
            "additional_special_tokens": list(GRANITE_TOKENS),
        }
    )
    tokenizer.chat_template = GRANITE_CHAT_TEMPLATE
    tokenizer.save_pretrained(directory)
    return PreTrainedTokenizerFast.from_pretrained(directory)


def make_tiny_granite_speech(directory: str | Path, *, seed: int = 0) -> Path:
    """Save a random-weight ``GraniteSpeechForConditionalGeneration`` with its processor.

    Needs torchaudio (the feature extractor's mel spectrogram). No LoRA adapter (the
    released checkpoints load theirs with peft, for audio inputs only).
    """
    import torch
    import transformers as tf

    directory = Path(directory)
    tokenizer = granite_tokenizer(directory / "_tokenizer")
    processor = tf.GraniteSpeechProcessor(
        audio_processor=tf.GraniteSpeechFeatureExtractor(),
        tokenizer=tokenizer,
        chat_template=GRANITE_CHAT_TEMPLATE,
    )
    torch.manual_seed(seed)
    text = tiny_text_kwargs(
        tokenizer, hidden_size=32, num_hidden_layers=1, max_position_embeddings=2048
    )
    config = tf.GraniteSpeechConfig(
        text_config={"model_type": "granite", **text},
        encoder_config=tf.GraniteSpeechEncoderConfig(
            input_dim=160,
            num_layers=1,
            hidden_dim=32,
            num_heads=2,
            dim_head=16,
            output_dim=8,
        ),
        projector_config={
            "model_type": "blip_2_qformer",
            "hidden_size": 32,
            "num_hidden_layers": 1,
            "num_attention_heads": 2,
            "intermediate_size": 64,
            "encoder_hidden_size": 32,
            "cross_attention_frequency": 1,
        },
        audio_token_index=tokenizer.convert_tokens_to_ids("<|audio|>"),
        has_lora_adapter=False,
    )
    model = tf.GraniteSpeechForConditionalGeneration(config)
    model.eval()
    model.save_pretrained(directory)
    processor.save_pretrained(directory)
    return directory
