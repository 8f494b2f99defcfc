"""A tiny Gemma 3n as its published checkpoints ship it: template, tokens, processor.

Where each convention comes from (transformers 5.24):

- the chat template is ``_CHAT_TEMPLATE`` of ``models/gemma3n/convert_gemma3n_weights.py``
  (the script that wrote the released ``google/gemma-3n-*`` checkpoints);
- the tokenizer is the real ``GemmaTokenizer`` class (BPE with byte fallback, spaces as
  ``▁``), ``add_bos_token=True``, with the ``extra_special_tokens`` of the same script
  (``<start_of_audio>``, ``<end_of_audio>``, ``<audio_soft_token>`` and the image ones);
  its vocabulary is trained here on a small music-QA corpus, and the special ids keep the
  released layout: ``<start_of_image>``/``<start_of_audio>`` in the text range, then 128
  vision ids from ``<end_of_image>`` (released: 262144) and 128 audio ids from
  ``<end_of_audio>`` (262272), which is where ``Gemma3nModel`` tells them apart;
- the feature extractor is ``Gemma3nAudioFeatureExtractor()`` at its defaults (128 mel
  bins, 16 kHz, 32 ms windows, 10 ms hop, 30 s), as the script builds it, and the
  processor ``Gemma3nProcessor`` at its default ``audio_seq_length=188``;
- the image processor is ``SiglipImageProcessorPil`` with the script's settings (the
  script's ``SiglipImageProcessorFast`` needs torchvision; audio never reaches it).

The model (:func:`make_tiny_gemma3n`) needs ``timm`` (its vision tower is a timm model), so
CI tests the processor and ``lalm``'s span logic on its rendering, and
``benchmarks/verify_families_by_hand.py`` builds the model in an environment with timm.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..mcqa.prompts import LETTERS
from .text import CORPUS

__all__ = [
    "GEMMA3N_CHAT_TEMPLATE",
    "GEMMA3N_SPECIAL_TOKENS",
    "GEMMA3N_FEATURES",
    "gemma3n_tokenizer",
    "gemma3n_processor",
    "make_tiny_gemma3n",
]

#: ``_CHAT_TEMPLATE`` of transformers' ``convert_gemma3n_weights.py``, verbatim.
GEMMA3N_CHAT_TEMPLATE = """{{ bos_token }}
{%- if messages[0]['role'] == 'system' -%}
    {%- if messages[0]['content'] is string -%}
        {%- set first_user_prefix = messages[0]['content'] + '\\n\\n' -%}
    {%- else -%}
        {%- set first_user_prefix = messages[0]['content'][0]['text'] + '\\n\\n' -%}
    {%- endif -%}
    {%- set loop_messages = messages[1:] -%}
{%- else -%}
    {%- set first_user_prefix = "" -%}
    {%- set loop_messages = messages -%}
{%- endif -%}
{%- for message in loop_messages -%}
    {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) -%}
        {{ raise_exception("Conversation roles must alternate user/assistant/user/assistant/...") }}
    {%- endif -%}
    {%- if (message['role'] == 'assistant') -%}
        {%- set role = "model" -%}
    {%- else -%}
        {%- set role = message['role'] -%}
    {%- endif -%}
    {{ '<start_of_turn>' + role + '\\n' + (first_user_prefix if loop.first else "") }}
    {%- if message['content'] is string -%}
        {{ message['content'] | trim }}
    {%- elif message['content'] is iterable -%}
        {%- for item in message['content'] -%}
            {%- if item['type'] == 'audio' -%}
                {{ '<audio_soft_token>' }}
            {%- elif item['type'] == 'image' -%}
                {{ '<image_soft_token>' }}
            {%- elif item['type'] == 'text' -%}
                {{ item['text'] | trim }}
            {%- endif -%}
        {%- endfor -%}
    {%- else -%}
        {{ raise_exception("Invalid content type") }}
    {%- endif -%}
    {{ '<end_of_turn>\\n' }}
{%- endfor -%}
{%- if add_generation_prompt -%}
    {{'<start_of_turn>model\\n'}}
{%- endif -%}
"""

#: ``extra_special_tokens`` of ``convert_gemma3n_weights.py``.
GEMMA3N_SPECIAL_TOKENS: dict[str, str] = {
    "image_token": "<image_soft_token>",
    "boi_token": "<start_of_image>",
    "eoi_token": "<end_of_image>",
    "audio_token": "<audio_soft_token>",
    "boa_token": "<start_of_audio>",
    "eoa_token": "<end_of_audio>",
}

#: ``Gemma3nAudioFeatureExtractor()`` at its defaults, as the conversion script builds it.
GEMMA3N_FEATURES: dict = {
    "feature_extractor": "Gemma3nAudioFeatureExtractor",
    "feature_size": 128,
    "sampling_rate": 16_000,
    "hop_length": 160,
    "frame_length": 512,
}

#: Ids per multimodal range (the released embed_vision / embed_audio vocabularies).
_MM_VOCAB = 128
#: Size of the text range (released: 262144); a multiple of 64 above the trained pieces.
_TEXT_VOCAB = 1024

#: Text with the blank lines and turns the template and the processor write, so the
#: tokenizer learns newline runs (Gemma's vocabulary has them as single tokens).
_NEWLINE_CORPUS = (
    "user\n\n\nWhat is the mood?\n\nmodel\n",
    "A question.\n\nAnother one.\n\n\nAnd one more\n",
)


def gemma3n_tokenizer(directory: str | Path):
    """A ``GemmaTokenizer`` with Gemma 3n's special tokens and chat template, saved there."""
    from tokenizers import (
        AddedToken,
        Regex,
        Tokenizer,
        models,
        normalizers,
        pre_tokenizers,
        trainers,
    )
    from transformers import GemmaTokenizer

    # train pieces that never cross a newline run or a word start, as SentencePiece's do;
    # the saved tokenizer is GemmaTokenizer's own pipeline (no pre-tokenizer split)
    trainer_side = Tokenizer(models.BPE())
    trainer_side.normalizer = normalizers.Replace(" ", "▁")
    trainer_side.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex("\n+"), "isolated"),
            pre_tokenizers.Split("▁", "merged_with_next"),
        ]
    )
    letters = " ".join(f"({x}) {x}" for x in LETTERS[:8])
    corpus = list(CORPUS) * 20 + [letters] * 50 + list(_NEWLINE_CORPUS) * 20
    trainer = trainers.BpeTrainer(vocab_size=600, show_progress=False)
    trainer_side.train_from_iterator(corpus, trainer=trainer)
    trained = json.loads(trainer_side.to_str())["model"]

    vocab: dict[str, int] = {}

    def add(token: str) -> None:
        vocab.setdefault(token, len(vocab))

    # released order: <pad> 0, <eos> 1, <bos> 2, <unk> 3, <mask> 4, turns, byte fallback
    for token in ("<pad>", "<eos>", "<bos>", "<unk>", "<mask>", "<start_of_turn>", "<end_of_turn>"):
        add(token)
    for byte in range(256):
        add(f"<0x{byte:02X}>")
    for token in sorted(trained["vocab"], key=trained["vocab"].get):
        add(token)
    add(GEMMA3N_SPECIAL_TOKENS["boi_token"])
    add(GEMMA3N_SPECIAL_TOKENS["boa_token"])
    if len(vocab) > _TEXT_VOCAB:
        raise RuntimeError(f"gemma3n_tokenizer: {len(vocab)} pieces exceed {_TEXT_VOCAB}")
    while len(vocab) < _TEXT_VOCAB:
        add(f"<unused{len(vocab)}>")
    for first, second in (("eoi_token", "image_token"), ("eoa_token", "audio_token")):
        start = len(vocab)
        add(GEMMA3N_SPECIAL_TOKENS[first])
        add(GEMMA3N_SPECIAL_TOKENS[second])
        while len(vocab) < start + _MM_VOCAB:
            add(f"<unused{len(vocab)}>")
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in trained["merges"]]
    tokenizer = GemmaTokenizer(
        vocab=vocab,
        merges=merges,
        add_bos_token=True,
        extra_special_tokens=dict(GEMMA3N_SPECIAL_TOKENS),
    )
    turns = ("<start_of_turn>", "<end_of_turn>")
    tokenizer.add_tokens([AddedToken(t, special=True, normalized=False) for t in turns])
    tokenizer.chat_template = GEMMA3N_CHAT_TEMPLATE
    directory = Path(directory)
    tokenizer.save_pretrained(directory)
    return GemmaTokenizer.from_pretrained(directory)


def gemma3n_processor(directory: str | Path):
    """The real ``Gemma3nProcessor`` (published settings), saved into ``directory``."""
    from transformers import Gemma3nAudioFeatureExtractor, Gemma3nProcessor
    from transformers.image_utils import PILImageResampling
    from transformers.models.siglip import SiglipImageProcessorPil

    directory = Path(directory)
    tokenizer = gemma3n_tokenizer(directory)
    image_processor = SiglipImageProcessorPil(
        image_seq_length=256,
        image_mean=(0.5,) * 3,
        image_std=(0.5,) * 3,
        size={"height": 768, "width": 768},
        resample=PILImageResampling.BILINEAR,
        do_normalize=False,
    )
    processor = Gemma3nProcessor(
        feature_extractor=Gemma3nAudioFeatureExtractor(),
        image_processor=image_processor,
        tokenizer=tokenizer,
        chat_template=GEMMA3N_CHAT_TEMPLATE,
    )
    processor.save_pretrained(directory)
    return processor


def make_tiny_gemma3n(directory: str | Path, *, seed: int = 0) -> Path:
    """Save a random-weight ``Gemma3nForConditionalGeneration`` with :func:`gemma3n_processor`.

    Needs ``timm`` (the vision tower). The text model keeps the released structure in
    small: altup, laurel, per-layer inputs, sliding and full attention layers, and a layer
    that shares its key/value cache with an earlier one. The vision tower is timm's
    ``test_efficientnet`` instead of the released ``mobilenetv5_300m_enc`` (1.2 GB of random
    weights), which no audio input reaches.
    """
    import torch
    import transformers as tf

    directory = Path(directory)
    processor = gemma3n_processor(directory)
    ids = processor.tokenizer.convert_tokens_to_ids
    torch.manual_seed(seed)
    text = tf.Gemma3nTextConfig(
        vocab_size=_TEXT_VOCAB + 2 * _MM_VOCAB,
        vocab_size_per_layer_input=_TEXT_VOCAB,
        hidden_size=32,
        hidden_size_per_layer_input=8,
        intermediate_size=64,
        num_hidden_layers=3,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=16,
        layer_types=["sliding_attention", "full_attention", "full_attention"],
        sliding_window=1024,
        num_kv_shared_layers=1,
        activation_sparsity_pattern=[0.0, 0.0, 0.0],
        laurel_rank=4,
        max_position_embeddings=2048,
        pad_token_id=ids("<pad>"),
        eos_token_id=ids("<eos>"),
        bos_token_id=ids("<bos>"),
    )
    audio = tf.Gemma3nAudioConfig(
        vocab_size=_MM_VOCAB,
        vocab_offset=_TEXT_VOCAB + _MM_VOCAB,
        hidden_size=32,
        conf_num_attention_heads=2,
        conf_num_hidden_layers=1,
        sscp_conv_channel_size=[8, 4],
        conf_attention_chunk_size=12,
        conf_attention_context_left=13,
        conf_attention_context_right=0,
    )
    vision = tf.Gemma3nVisionConfig(
        architecture="test_efficientnet",
        vocab_size=_MM_VOCAB,
        vocab_offset=_TEXT_VOCAB,
        hidden_size=32,
    )
    config = tf.Gemma3nConfig(
        text_config=text,
        audio_config=audio,
        vision_config=vision,
        audio_soft_tokens_per_image=processor.audio_seq_length,
        audio_token_id=ids(GEMMA3N_SPECIAL_TOKENS["audio_token"]),
        boa_token_id=ids(GEMMA3N_SPECIAL_TOKENS["boa_token"]),
        eoa_token_id=ids(GEMMA3N_SPECIAL_TOKENS["eoa_token"]),
        image_token_id=ids(GEMMA3N_SPECIAL_TOKENS["image_token"]),
        boi_token_id=ids(GEMMA3N_SPECIAL_TOKENS["boi_token"]),
        eoi_token_id=ids(GEMMA3N_SPECIAL_TOKENS["eoi_token"]),
    )
    model = tf.Gemma3nForConditionalGeneration(config)
    model.eval()
    model.save_pretrained(directory)
    return directory
