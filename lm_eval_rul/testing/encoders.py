"""Tiny random-weight text encoders of real classes for ``diagnose``: T5 and CLAP.

Nothing here downloads. Each builder trains a small BPE tokenizer with ``tokenizers``
(special tokens and post-processing laid out like the real checkpoint's), builds a 1-2
layer model of the real transformers class and saves both with ``save_pretrained``, so
tests load them through the same ``--t5 PATH`` / ``--clap PATH`` code path a user takes
with ``google-t5/t5-base`` or ``laion/larger_clap_music``:

* :func:`make_tiny_t5`: a full ``T5ForConditionalGeneration`` checkpoint (as ``t5-base``
  is), of which ``diagnose`` loads only the encoder with ``T5EncoderModel``;
* :func:`make_tiny_clap`: a full ``ClapModel`` checkpoint (text tower + a tiny HTSAT
  audio tower, as ``larger_clap_music`` is), of which ``diagnose`` loads only the text
  tower with ``ClapTextModelWithProjection``.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["ENCODER_CORPUS", "make_tiny_t5", "make_tiny_clap"]

#: Text the tiny tokenizers are trained on: music-QA words, both letter cases.
ENCODER_CORPUS: tuple[str, ...] = (
    "What instrument plays the melody? Piano, violin, electric guitar, flute, drums, cello.",
    "What is the mood of the song? Melancholic, joyful, tense, calm, playful, dark, dreamy.",
    "Who is the primary vocalist in the song? Male vocalist, female voice, choir, soprano.",
    "Not specified in the description. Based on the description, it was recorded in Europe.",
    "Which genre best describes this piece? Rock, jazz, pop, classical, folk, electronic.",
    "What effect makes the track sound vintage? Tape saturation, vinyl crackle, lo-fi hiss.",
    "fast slow tempo rhythm beat bass synthesizer trumpet harp saxophone organ banjo",
)


def _train_bpe(specials: list[str], *, vocab_size: int, template: str, directory: Path, **names):
    """A byte-level BPE tokenizer with ``template`` post-processing, saved to ``directory``."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE(unk_token=names["unk_token"]))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(list(ENCODER_CORPUS) * 10, trainer=trainer)
    pieces = template.split()
    tokenizer.post_processor = processors.TemplateProcessing(
        single=template,
        special_tokens=[(p, tokenizer.token_to_id(p)) for p in pieces if p != "$A"],
    )
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, model_max_length=512, **names)
    fast.save_pretrained(directory)
    return fast


def make_tiny_t5(directory: str | Path, *, seed: int = 0, vocab_size: int = 400) -> Path:
    """Save a random-weight ``T5ForConditionalGeneration`` (2 encoder layers, d_model 32).

    The tokenizer follows T5's layout: ``<pad>`` = 0, ``</s>`` = 1, ``<unk>`` = 2, and
    ``</s>`` appended to every text.

    Args:
        directory: Target folder, loadable with ``--t5 directory``.
        seed: Torch seed of the random weights.
        vocab_size: Target vocabulary size of the tokenizer.

    Returns:
        ``directory``.
    """
    import torch
    from transformers import T5Config, T5ForConditionalGeneration

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    tokenizer = _train_bpe(
        ["<pad>", "</s>", "<unk>"],
        vocab_size=vocab_size,
        template="$A </s>",
        directory=directory,
        pad_token="<pad>",
        eos_token="</s>",
        unk_token="<unk>",
    )
    torch.manual_seed(seed)
    config = T5Config(
        vocab_size=len(tokenizer),
        d_model=32,
        d_kv=8,
        d_ff=64,
        num_layers=2,
        num_decoder_layers=1,
        num_heads=4,
        relative_attention_num_buckets=8,
        relative_attention_max_distance=32,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.pad_token_id,
    )
    model = T5ForConditionalGeneration(config).eval()
    model.save_pretrained(directory)
    return directory


def make_tiny_clap(directory: str | Path, *, seed: int = 0, vocab_size: int = 400) -> Path:
    """Save a random-weight ``ClapModel`` (2-layer RoBERTa-style text tower, tiny HTSAT).

    The tokenizer follows RoBERTa's layout: ``<s>`` = 0, ``<pad>`` = 1, ``</s>`` = 2,
    ``<unk>`` = 3, ``<mask>`` = 4, and ``<s> text </s>``; the text config's
    ``pad_token_id`` matches, so padded positions get RoBERTa's padding position id.

    Args:
        directory: Target folder, loadable with ``--clap directory``.
        seed: Torch seed of the random weights.
        vocab_size: Target vocabulary size of the tokenizer.

    Returns:
        ``directory``.
    """
    import torch
    from transformers import ClapAudioConfig, ClapConfig, ClapModel, ClapTextConfig

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    tokenizer = _train_bpe(
        ["<s>", "<pad>", "</s>", "<unk>", "<mask>"],
        vocab_size=vocab_size,
        template="<s> $A </s>",
        directory=directory,
        bos_token="<s>",
        pad_token="<pad>",
        eos_token="</s>",
        unk_token="<unk>",
        mask_token="<mask>",
    )
    torch.manual_seed(seed)
    text = ClapTextConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
        max_position_embeddings=130,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    audio = ClapAudioConfig(
        spec_size=64,
        num_mel_bins=16,
        window_size=4,
        patch_size=4,
        patch_stride=(4, 4),
        hidden_size=32,
        patch_embeds_hidden_size=8,
        depths=[1, 1],
        num_attention_heads=[2, 2],
        num_hidden_layers=2,
    )
    config = ClapConfig(text_config=text.to_dict(), audio_config=audio.to_dict(), projection_dim=16)
    model = ClapModel(config).eval()
    model.save_pretrained(directory)
    return directory
