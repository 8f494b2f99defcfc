"""A tiny byte-level BPE tokenizer and random-weight causal LMs of real classes."""

from __future__ import annotations

from pathlib import Path

from ..mcqa.prompts import LETTERS

__all__ = ["train_tokenizer", "tiny_text_kwargs", "make_tiny_causal_lm", "CORPUS"]

CORPUS: tuple[str, ...] = (
    "Provide your best guess of this question. The question is: What instrument plays "
    "the melody? The answer candidates are: (A) piano (B) violin (C) guitar (D) flute "
    "Answer without the parenthesis. The most likely answer is A",
    "What is the tempo of the song? The mood is melancholic and the bass is slow.",
    "Think step by step. Question: Options: Write out your guess in the format of "
    "[[Letter]], such as [[A]], [[B]], [[C]], [[D]]. The answer is B.",
    "A. drums; B. synthesizer; C. vocals; D. acoustic guitar; electric guitar riff.",
    "user assistant system audio music genre rock jazz pop classical folk electronic",
    "True or false: the piano can be heard. Answer with true or false. The answer is true, "
    "the answer is false.",
)


def train_tokenizer(directory: str | Path, *, vocab_size: int = 600, merge_letters: bool = True):
    """Train a byte-level BPE tokenizer on a small music-QA corpus and save it.

    Args:
        directory: Where ``tokenizer.json`` and its config are written.
        vocab_size: Target vocabulary size.
        merge_letters: If True, `` A`` .. `` D`` become single tokens (as in real
            LLM vocabularies); if False, ``Ġ`` + letter stay apart, so letters cost two
            tokens (the case the plugin must warn about and still score correctly).

    Returns:
        The ``PreTrainedTokenizerFast`` loaded back from ``directory``.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    tokenizer = Tokenizer(models.BPE(unk_token=None))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    letters = " ".join(f"({x}) {x}" for x in LETTERS[:8])
    corpus = list(CORPUS) * 20 + [letters] * 50
    specials = [
        "<|endoftext|>",
        "<|im_start|>",
        "<|im_end|>",
        "<|AUDIO|>",
        "<|audio_bos|>",
        "<|audio_eos|>",
        "<sound>",
    ]
    if not merge_letters:
        vocab_size = len(pre_tokenizers.ByteLevel.alphabet()) + len(specials)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(corpus, trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        bos_token="<|endoftext|>",
        eos_token="<|endoftext|>",
        unk_token="<|endoftext|>",
        pad_token="<|endoftext|>",
    )
    fast.chat_template = (
        "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
        "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    )
    fast.save_pretrained(directory)
    return PreTrainedTokenizerFast.from_pretrained(directory)


def tiny_text_kwargs(
    tokenizer,
    *,
    hidden_size: int = 32,
    num_hidden_layers: int = 2,
    max_position_embeddings: int = 1024,
    **extra,
) -> dict:
    """Config keywords of a tiny Qwen2-style decoder sized for ``tokenizer``.

    Used for the text-only models here and the language models of the tiny audio LMs.
    """
    return dict(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=2 * hidden_size,
        num_hidden_layers=num_hidden_layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=max_position_embeddings,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        **extra,
    )


def make_tiny_causal_lm(
    directory: str | Path,
    *,
    family: str = "qwen2",
    seed: int = 0,
    merge_letters: bool = True,
) -> Path:
    """Save a random-weight causal LM of a real class with a trained tokenizer.

    Args:
        directory: Target folder (loadable with ``pretrained=directory``).
        family: ``qwen2`` (``Qwen2ForCausalLM``) or ``gpt2`` (``GPT2LMHeadModel``).
        seed: Torch seed of the random weights.
        merge_letters: See :func:`train_tokenizer`.
    """
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, Qwen2Config, Qwen2ForCausalLM

    directory = Path(directory)
    tokenizer = train_tokenizer(directory, merge_letters=merge_letters)
    torch.manual_seed(seed)
    vocab = len(tokenizer)
    if family == "qwen2":
        config = Qwen2Config(**tiny_text_kwargs(tokenizer), tie_word_embeddings=True)
        model = Qwen2ForCausalLM(config)
    elif family == "gpt2":
        config = GPT2Config(
            vocab_size=vocab,
            n_embd=32,
            n_layer=2,
            n_head=4,
            n_positions=1024,
            bos_token_id=tokenizer.bos_token_id,
            eos_token_id=tokenizer.eos_token_id,
        )
        model = GPT2LMHeadModel(config)
    else:
        raise ValueError(f"family must be 'qwen2' or 'gpt2', got {family!r}")
    model.eval()
    model.save_pretrained(directory)
    return directory
