"""A tiny random-weight Voxtral with a locally built Tekken tokenizer (mistral-common's format).

The checkpoint is laid out as ``mistralai/Voxtral-Mini-3B-2507`` ships it: ``tekken.json``
(the tokenizer, read by transformers' ``MistralCommonBackend``), the processor's feature
extractor and ``config.json``. What is kept from the real checkpoint, and where it comes from:

- special tokens: the Tekken v7 layout (``<unk>`` 0, ``<s>`` 1, ``</s>`` 2, ``[INST]`` 3,
  ``[/INST]`` 4, ... ``[SYSTEM_PROMPT]`` 17, ``[/SYSTEM_PROMPT]`` 18, ``[TOOL_CONTENT]`` 19:
  mistral-common's ``Tekkenizer.DEPRECATED_SPECIAL_TOKENS``), then ``[AUDIO]`` 24,
  ``[BEGIN_AUDIO]`` 25 and ``[TRANSCRIBE]`` 34 as in the audio tokenizers of
  mistral-common's own test helpers; transformers' ``VoxtralProcessor`` hard-codes
  ``audio_token_id = 24``;
- the split pattern: read from the Tekken file mistral-common bundles
  (``tekken_240911.json``), the pattern every released Tekken tokenizer carries;
- the ``audio`` section: 16 kHz, 12.5 audio tokens per second, 128 mel bins, hop 160,
  window 400, 30-second chunks (Voxtral's ``tekken.json``);
- the feature extractor: ``WhisperFeatureExtractor`` with 128 mel bins, 30-second window,
  hop 160, n_fft 400 (Voxtral's ``preprocessor_config.json``, Whisper large-v3's);
- the encoder: 128 mel bins, 1500 source positions (``VoxtralEncoderConfig`` defaults),
  intermediate size 4 x hidden (the projector reads 4 frames at once).

Only the regular vocabulary is small: byte-level BPE merges learnt from the music-QA
corpus of :mod:`.text`, as Tekken ranks (256 single bytes first, then the merges).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

from .text import train_tokenizer

__all__ = ["VOXTRAL_FEATURES", "VOXTRAL_TOKENS", "make_tiny_voxtral", "write_tekken"]

#: The audio special tokens of the Tekken file (``[AUDIO]`` is 24, ``[BEGIN_AUDIO]`` 25).
VOXTRAL_TOKENS: tuple[str, ...] = ("[AUDIO]", "[BEGIN_AUDIO]", "[TRANSCRIBE]")
#: Voxtral's ``preprocessor_config.json`` (Whisper large-v3's front end).
VOXTRAL_FEATURES: dict = {
    "feature_extractor": "WhisperFeatureExtractor",
    "feature_size": 128,
    "sampling_rate": 16_000,
    "chunk_length": 30,
    "hop_length": 160,
    "n_fft": 400,
}

#: Special-token slots before the regular vocabulary (the real file has 1000).
_NUM_SPECIAL = 100
_HIDDEN = 32


def _special_tokens(count: int = _NUM_SPECIAL) -> list[dict]:
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer

    names = [str(t["token_str"]) for t in Tekkenizer.DEPRECATED_SPECIAL_TOKENS]
    audio, begin, transcribe = VOXTRAL_TOKENS
    names += [f"<SPECIAL_{i}>" for i in range(len(names), 24)] + [audio, begin]
    names += [f"<SPECIAL_{i}>" for i in range(len(names), 34)] + [transcribe]
    names += [f"<SPECIAL_{i}>" for i in range(len(names), count)]
    return [{"rank": i, "token_str": name, "is_control": True} for i, name in enumerate(names)]


def _ranks(directory: Path) -> list[bytes]:
    """256 single bytes, then the byte strings of a small trained BPE's merges, in order."""
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    trained = train_tokenizer(directory)
    merges = json.loads(trained.backend_tokenizer.to_str())["model"]["merges"]
    to_byte = {char: byte for byte, char in bytes_to_unicode().items()}
    ranks = [bytes([i]) for i in range(256)]
    known = set(ranks)
    for merge in merges:
        left, right = merge if isinstance(merge, list) else merge.split(" ")
        token = bytes(to_byte[c] for c in left + right)
        if token not in known:
            known.add(token)
            ranks.append(token)
    return ranks


def write_tekken(path: Path, *, released_vocabulary: bool = False) -> Path:
    """Write a ``tekken.json`` in mistral-common's format (see the module doc).

    ``released_vocabulary``: the regular vocabulary of the Tekken file mistral-common
    bundles (``tekken_240911.json``: 131,072 tokens of which 1,000 special, the layout of
    Voxtral's ``tekken.json``), so that prompts count the tokens a released Tekken model
    reads; default the small music-QA BPE.
    """
    from mistral_common.tokens.tokenizers.mistral import MistralTokenizer

    bundled = json.loads(
        (MistralTokenizer._data_path() / "tekken_240911.json").read_text(encoding="utf-8")
    )
    pattern = bundled["config"]["pattern"]
    if released_vocabulary:
        specials = int(bundled["config"]["default_num_special_tokens"])
        size = int(bundled["config"]["default_vocab_size"])
        vocab = bundled["vocab"][: size - specials]
    else:
        specials = _NUM_SPECIAL
        vocab = [
            {
                "rank": i,
                "token_bytes": base64.b64encode(token).decode("ascii"),
                "token_str": token.decode("utf-8", "replace"),
            }
            for i, token in enumerate(_ranks(path.parent / "_bpe"))
        ]
    model = {
        "config": {
            "pattern": pattern,
            "num_vocab_tokens": len(vocab),
            "default_vocab_size": len(vocab) + specials,
            "default_num_special_tokens": specials,
            "version": "v7",
        },
        "vocab": vocab,
        "special_tokens": _special_tokens(specials),
        "audio": {
            "sampling_rate": 16_000,
            "frame_rate": 12.5,
            "audio_encoding_config": {"num_mel_bins": 128, "hop_length": 160, "window_size": 400},
            "chunk_length_s": 30.0,
        },
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(model), encoding="utf-8")
    return path


def make_tiny_voxtral(
    directory: str | Path, *, seed: int = 0, released_vocabulary: bool = False
) -> Path:
    """Save a random-weight ``VoxtralForConditionalGeneration`` with its real processor
    (``released_vocabulary``: see :func:`write_tekken`).

    Returns:
        ``directory`` (loadable with ``pretrained=directory``).
    """
    import torch
    import transformers as tf

    directory = Path(directory)
    tekken = write_tekken(
        directory / "_tekken" / "tekken.json", released_vocabulary=released_vocabulary
    )
    tokenizer = tf.MistralCommonBackend(tokenizer_path=str(tekken))
    features = {k: v for k, v in VOXTRAL_FEATURES.items() if k != "feature_extractor"}
    processor = tf.VoxtralProcessor(
        feature_extractor=tf.WhisperFeatureExtractor(**features), tokenizer=tokenizer
    )
    torch.manual_seed(seed)
    config = tf.VoxtralConfig(
        audio_config=dict(
            hidden_size=_HIDDEN,
            intermediate_size=4 * _HIDDEN,
            num_hidden_layers=1,
            num_attention_heads=2,
            num_mel_bins=128,
            max_source_positions=1500,
        ),
        text_config=dict(
            vocab_size=len(tokenizer),
            hidden_size=_HIDDEN,
            intermediate_size=2 * _HIDDEN,
            num_hidden_layers=1,
            num_attention_heads=4,
            num_key_value_heads=2,
            head_dim=_HIDDEN // 4,
            max_position_embeddings=4096,
            bos_token_id=tokenizer.bos_token_id,
            eos_token_id=tokenizer.eos_token_id,
            pad_token_id=tokenizer.pad_token_id,
        ),
        audio_token_id=processor.audio_token_id,
    )
    model = tf.VoxtralForConditionalGeneration(config).eval()
    model.save_pretrained(directory)
    processor.save_pretrained(directory)
    return directory
