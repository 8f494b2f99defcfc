"""A tiny Phi-4-multimodal as its published checkpoint ships it: template, tokens, processor.

Where each convention comes from:

- the chat template is the ``chat_template`` of ``microsoft/Phi-4-multimodal-instruct``'s
  ``tokenizer_config.json`` (the Phi-4-mini one: ``<|role|>content<|end|>`` turns, then
  ``<|assistant|>``); the audio goes inline as ``<|audio|>`` before the question, as the
  model card's prompts write it;
- the tokenizer is byte-level BPE (the released one is tiktoken's o200k converted to a
  ``GPT2TokenizerFast``) with the released special tokens: ``<|endoftext|>`` (BOS, EOS and
  pad), ``<|system|>``, ``<|user|>``, ``<|assistant|>``, ``<|end|>`` and the
  ``extra_special_tokens`` of the transformers conversion, ``<|image|>`` (released id
  200010) and ``<|audio|>`` (200011);
- the audio processor is ``Phi4MultimodalFeatureExtractor()`` at its defaults (80 mel
  bins, 16 kHz, 25 ms windows, 10 ms hop, compression rate 8), the image processor
  ``Phi4MultimodalImageProcessor()`` (it needs torchvision), the processor
  ``Phi4MultimodalProcessor``. Without torchvision the processor is built audio-only
  (:func:`~lm_eval_rul.models.families.audio_only_class`) and saved under the real class
  name, as ``lalm`` loads it then; the model itself needs no torchvision, so CI runs it.
"""

from __future__ import annotations

from pathlib import Path

from .text import tiny_text_kwargs, train_tokenizer

__all__ = ["PHI4_CHAT_TEMPLATE", "PHI4_TOKENS", "PHI4_FEATURES", "make_tiny_phi4_multimodal"]

#: ``chat_template`` of the released tokenizer_config.json.
PHI4_CHAT_TEMPLATE = (
    "{% for message in messages %}{% if message['role'] == 'system' and 'tools' in message "
    "and message['tools'] is not none %}{{ '<|' + message['role'] + '|>' + message['content'] "
    "+ '<|tool|>' + message['tools'] + '<|/tool|>' + '<|end|>' }}{% else %}{{ '<|' + "
    "message['role'] + '|>' + message['content'] + '<|end|>' }}{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|assistant|>' }}{% else %}{{ eos_token }}{% endif %}"
)

_TURNS = ("<|system|>", "<|user|>", "<|assistant|>", "<|end|>", "<|tool|>", "<|/tool|>")
_EXTRA = {"image_token": "<|image|>", "audio_token": "<|audio|>"}
#: The special tokens of the released tokenizer (turns, then the image and audio tokens).
PHI4_TOKENS: tuple[str, ...] = (*_TURNS, *_EXTRA.values())
#: ``Phi4MultimodalFeatureExtractor()`` at its defaults, as the checkpoint's.
PHI4_FEATURES: dict = {
    "feature_extractor": "Phi4MultimodalFeatureExtractor",
    "feature_size": 80,
    "sampling_rate": 16_000,
    "hop_length": 160,
    "win_length": 400,
    "audio_compression_rate": 8,
}


def _tokenizer(directory: Path):
    from transformers import PreTrainedTokenizerFast

    tokenizer = train_tokenizer(directory)
    tokenizer.add_special_tokens({"additional_special_tokens": list(PHI4_TOKENS)})
    tokenizer.chat_template = PHI4_CHAT_TEMPLATE
    tokenizer.save_pretrained(directory)
    return PreTrainedTokenizerFast.from_pretrained(directory, extra_special_tokens=_EXTRA)


def make_tiny_phi4_multimodal(directory: str | Path, *, seed: int = 0) -> Path:
    """Save a random-weight ``Phi4MultimodalForCausalLM`` with its real processor.

    The processor is the full one where torchvision is installed, else audio-only.
    """
    import json

    import torch
    import transformers as tf

    from ..models.families import audio_only_class

    directory = Path(directory)
    tokenizer = _tokenizer(directory / "_tokenizer")
    audio = tf.Phi4MultimodalFeatureExtractor()
    if tf.utils.is_torchvision_available():
        processor = tf.Phi4MultimodalProcessor(
            image_processor=tf.Phi4MultimodalImageProcessor(),
            audio_processor=audio,
            tokenizer=tokenizer,
            chat_template=PHI4_CHAT_TEMPLATE,
        )
    else:
        processor = audio_only_class(tf.Phi4MultimodalProcessor)(
            audio_processor=audio, tokenizer=tokenizer, chat_template=PHI4_CHAT_TEMPLATE
        )
    ids = tokenizer.convert_tokens_to_ids
    torch.manual_seed(seed)
    text = tiny_text_kwargs(
        tokenizer, hidden_size=32, num_hidden_layers=1, max_position_embeddings=2048
    )
    text.pop("model_type", None)
    config = tf.Phi4MultimodalConfig(
        **text,
        audio_config=tf.Phi4MultimodalAudioConfig(
            hidden_size=32,
            num_attention_heads=2,
            intermediate_size=64,
            num_blocks=1,
            nemo_conv_channels=32,
            depthwise_separable_out_channel=32,
            ext_pw_out_channel=32,
            audio_token_id=ids(_EXTRA["audio_token"]),
        ),
        vision_config=tf.Phi4MultimodalVisionConfig(
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=1,
            num_attention_heads=2,
            image_token_id=ids(_EXTRA["image_token"]),
        ),
    )
    model = tf.Phi4MultimodalForCausalLM(config)
    model.eval()
    model.save_pretrained(directory)
    processor.save_pretrained(directory)
    path = directory / "processor_config.json"
    saved = json.loads(path.read_text())
    saved["processor_class"] = "Phi4MultimodalProcessor"  # as the released checkpoint says
    path.write_text(json.dumps(saved, indent=2))
    return directory
