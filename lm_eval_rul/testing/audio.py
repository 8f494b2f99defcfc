"""Tiny random-weight audio LMs of real transformers classes, and synthesised audio.

Everything here is built locally (no download): a byte-level BPE tokenizer from
:func:`lm_eval_rul.testing.text.train_tokenizer`, a real ``WhisperFeatureExtractor``
with a short window, the family's real processor class, and a 1-2 layer model of the
family's real class, all saved with ``save_pretrained`` so tests load them through the
same ``pretrained=/path`` code path a user takes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from ..models.families import audio_only_class
from .text import tiny_text_kwargs, train_tokenizer

__all__ = [
    "TINY_FAMILIES",
    "SAMPLING_RATE",
    "synth_clip",
    "write_clip",
    "write_audio_dir",
    "write_audio_benchmark",
    "make_tiny_audio_lm",
    "make_tiny_omni_full_checkpoint",
]

#: Sampling rate of the tiny models' feature extractors (Whisper's 16 kHz).
SAMPLING_RATE = 16_000
#: Seconds of audio per feature window of the tiny models (Whisper uses 30).
_CHUNK_SECONDS = 2
_MEL_BINS = 16
_HIDDEN = 32

#: Families :func:`make_tiny_audio_lm` can build.
TINY_FAMILIES: tuple[str, ...] = (
    "qwen2_audio",
    "audioflamingo3",
    "musicflamingo",
    "qwen2_5_omni_thinker",
)

#: A chat template for the tiny tokenizers: audio items render as ``{placeholder}``.
_AUDIO_CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n"
    "{% if m['content'] is string %}{{ m['content'] }}"
    "{% else %}{% for c in m['content'] %}"
    "{% if c['type'] == 'audio' %}PLACEHOLDER\n{% elif c['type'] == 'text' %}{{ c['text'] }}"
    "{% endif %}{% endfor %}{% endif %}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def synth_clip(kind: str, *, seconds: float = 1.5, sr: int = SAMPLING_RATE, seed: int = 0):
    """A short mono float32 waveform: ``tone``, ``chord``, ``clicks`` or ``sweep``.

    Args:
        kind: Which sound to make.
        seconds: Duration.
        sr: Sampling rate in Hz.
        seed: Varies pitch / click rate so that clips of one kind differ.
    """
    t = np.arange(int(seconds * sr), dtype=np.float64) / sr
    base = 220.0 * 2 ** (seed / 12)
    if kind == "tone":
        wave = np.sin(2 * np.pi * base * t)
    elif kind == "chord":
        wave = sum(np.sin(2 * np.pi * base * r * t) for r in (1.0, 1.26, 1.5)) / 3
    elif kind == "clicks":
        wave = np.zeros_like(t)
        period = int(sr / (4 + seed))
        wave[::period] = 1.0
    elif kind == "sweep":
        wave = np.sin(2 * np.pi * (base + 400 * t) * t)
    else:
        raise ValueError(f"kind must be tone, chord, clicks or sweep, got {kind!r}")
    return (0.5 * wave).astype(np.float32)


def write_clip(path: str | Path, wave: np.ndarray, sr: int = SAMPLING_RATE) -> Path:
    """Write ``wave`` with soundfile; the format follows the suffix (wav, flac, mp3, ogg)."""
    import soundfile as sf

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    sf.write(str(path), wave, sr)
    return path


def write_audio_dir(
    directory: str | Path,
    names: Iterable[str],
    *,
    exts: tuple[str, ...] = ("wav", "flac", "mp3"),
    sr: int = 22_050,
) -> dict[str, Path]:
    """One distinct synthesised clip per name, cycling through ``exts`` and sound kinds.

    The clips are written at ``sr`` (22.05 kHz by default, not the models' 16 kHz) so
    the resampling path is exercised.

    Returns:
        ``{name: path}``.
    """
    kinds = ("tone", "chord", "clicks", "sweep")
    out = {}
    for index, name in enumerate(names):
        wave = synth_clip(kinds[index % len(kinds)], sr=sr, seed=index)
        out[name] = write_clip(Path(directory) / f"{name}.{exts[index % len(exts)]}", wave, sr)
    return out


#: Whisper's own front end (128 mel bins, 30 s windows of 3000 frames) and attention heads
#: of 64: what vLLM's Qwen2-Audio requires (``make_tiny_audio_lm(..., whisper_front_end=True)``).
_WHISPER = {"mel_bins": 128, "seconds": 30, "hidden": 128, "text_hidden": 256}
_TINY = {
    "mel_bins": _MEL_BINS, "seconds": _CHUNK_SECONDS, "hidden": _HIDDEN, "text_hidden": _HIDDEN
}


def _feature_extractor(sizes: dict = _TINY):
    from transformers import WhisperFeatureExtractor

    return WhisperFeatureExtractor(
        feature_size=sizes["mel_bins"],
        sampling_rate=SAMPLING_RATE,
        chunk_length=sizes["seconds"],
        hop_length=160,
        n_fft=400,
    )


def _text_config(tokenizer, sizes: dict = _TINY, **extra) -> dict:
    return tiny_text_kwargs(
        tokenizer,
        hidden_size=sizes["text_hidden"],
        num_hidden_layers=1,
        max_position_embeddings=2048,
        **extra,
    )


def _whisper_like_encoder(sizes: dict = _TINY, **extra) -> dict:
    frames = sizes["seconds"] * 100  # 10 ms hop
    return dict(
        num_mel_bins=sizes["mel_bins"],
        encoder_layers=1,
        encoder_attention_heads=2,
        encoder_ffn_dim=2 * sizes["hidden"],
        d_model=sizes["hidden"],
        max_source_positions=frames // 2,
        **extra,
    )


def write_audio_benchmark(root: str | Path, n: int = 8) -> dict[str, str]:
    """``n`` RUL questions, their MuChoMusic CSV and one synthesised clip per track.

    The fixture questions share tracks in pairs, so ``n`` questions hear ``n / 2`` clips
    (each clip heard by 2 questions x 4 folds). Returns the run's ``--metadata``.
    """
    from ..mcqa.tasks import rul_questions
    from .fixtures import write_muchomusic_csv, write_rul_json

    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    rul = write_rul_json(root / "rul.json", n=n)
    csv = write_muchomusic_csv(root / "muchomusic.csv", n=n)
    questions = rul_questions(rul_data_path=str(rul), muchomusic_csv=str(csv))
    write_audio_dir(root / "audio", sorted({q.track for q in questions}))
    return {
        "rul_data_path": str(rul),
        "muchomusic_data_path": str(csv),
        "muchomusic_csv": str(csv),
        "audio_dir": str(root / "audio"),
    }


def make_tiny_audio_lm(
    directory: str | Path,
    family: str,
    *,
    seed: int = 0,
    merge_letters: bool = True,
    whisper_front_end: bool = False,
) -> Path:
    """Save a random-weight audio LM of ``family``'s real class with its real processor.

    Args:
        directory: Target folder, loadable with ``--model_args pretrained=directory``.
        family: One of :data:`TINY_FAMILIES`.
        seed: Torch seed of the random weights.
        merge_letters: See :func:`~lm_eval_rul.testing.text.train_tokenizer` (False makes
            `` A`` two tokens).
        whisper_front_end: Qwen2-Audio only: Whisper's own front end (128 mel bins, 30 s
            windows, encoder ``max_source_positions=1500``) and attention heads of 64, as
            vLLM's Qwen2-Audio requires (slower than the default 16-mel, 2 s one).

    Returns:
        ``directory``.
    """
    import torch
    import transformers as tf

    if family not in TINY_FAMILIES:
        raise ValueError(f"family must be one of {', '.join(TINY_FAMILIES)}, got {family!r}")
    directory = Path(directory)
    tokenizer = train_tokenizer(directory / "_tokenizer", merge_letters=merge_letters)
    if whisper_front_end and family != "qwen2_audio":
        raise ValueError(f"whisper_front_end=True is for qwen2_audio only, got {family!r}")
    torch.manual_seed(seed)
    if family == "qwen2_audio":
        sizes = _WHISPER if whisper_front_end else _TINY
        placeholder = "Audio 1: <|audio_bos|><|AUDIO|><|audio_eos|>"
        tokenizer.chat_template = _AUDIO_CHAT_TEMPLATE.replace("PLACEHOLDER", placeholder)
        processor = tf.Qwen2AudioProcessor(
            feature_extractor=_feature_extractor(sizes),
            tokenizer=tokenizer,
            chat_template=tokenizer.chat_template,
        )
        config = tf.Qwen2AudioConfig(
            audio_config=_whisper_like_encoder(sizes),
            text_config=_text_config(tokenizer, sizes, model_type="qwen2"),
            audio_token_index=tokenizer.convert_tokens_to_ids("<|AUDIO|>"),
        )
        model = tf.Qwen2AudioForConditionalGeneration(config)
    elif family in ("audioflamingo3", "musicflamingo"):
        tokenizer.chat_template = _AUDIO_CHAT_TEMPLATE.replace("PLACEHOLDER", "<sound>")
        encoder = dict(
            num_mel_bins=_MEL_BINS,
            num_hidden_layers=1,
            num_attention_heads=2,
            intermediate_size=2 * _HIDDEN,
            hidden_size=_HIDDEN,
            max_source_positions=_CHUNK_SECONDS * 50,
        )
        common = dict(
            audio_config=encoder,
            text_config=_text_config(tokenizer, model_type="qwen2"),
            audio_token_id=tokenizer.convert_tokens_to_ids("<sound>"),
        )
        if family == "audioflamingo3":
            processor_class, config_class = tf.AudioFlamingo3Processor, tf.AudioFlamingo3Config
            model_class = tf.AudioFlamingo3ForConditionalGeneration
        else:
            tokenizer.add_special_tokens(
                {"additional_special_tokens": ["<|sound_bos|>", "<|sound_eos|>"]}
            )
            ids = tokenizer.convert_tokens_to_ids
            common["text_config"]["vocab_size"] = len(tokenizer)
            common["audio_config"]["model_type"] = "audioflamingo3_encoder"
            common.update(
                audio_bos_token_id=ids("<|sound_bos|>"), audio_eos_token_id=ids("<|sound_eos|>")
            )
            processor_class, config_class = tf.MusicFlamingoProcessor, tf.MusicFlamingoConfig
            model_class = tf.MusicFlamingoForConditionalGeneration
        processor = processor_class(
            feature_extractor=_feature_extractor(),
            tokenizer=tokenizer,
            chat_template=tokenizer.chat_template,
            max_audio_len=4 * _CHUNK_SECONDS,
        )
        model = model_class(config_class(**common))
    else:  # qwen2_5_omni_thinker
        tokenizer = _omni_tokenizer(directory / "_tokenizer", merge_letters)
        placeholder = "<|audio_bos|><|AUDIO|><|audio_eos|>"
        tokenizer.chat_template = _AUDIO_CHAT_TEMPLATE.replace("PLACEHOLDER", placeholder)
        processor = audio_only_class(tf.Qwen2_5OmniProcessor)(
            feature_extractor=_feature_extractor(),
            tokenizer=tokenizer,
            chat_template=tokenizer.chat_template,
        )
        config = qwen2_5_omni_thinker_config(
            tokenizer,
            audio_config=_whisper_like_encoder(n_window=50, output_dim=_HIDDEN),
            text_config=_text_config(tokenizer, rope_parameters=omni_rope(10000.0)),
        )
        model = tf.Qwen2_5OmniThinkerForConditionalGeneration(config)
    model.eval()
    model.save_pretrained(directory)
    processor.save_pretrained(directory)
    if whisper_front_end:
        from .checkpoints import published_qwen2_audio_keys

        published_qwen2_audio_keys(directory)
    if family == "qwen2_5_omni_thinker":
        # the real class name, as a released checkpoint has it (loading falls back to the
        # audio-only variant when torchvision is missing)
        path = directory / "processor_config.json"
        saved = json.loads(path.read_text())
        saved["processor_class"] = "Qwen2_5OmniProcessor"
        path.write_text(json.dumps(saved, indent=2))
    return directory


def omni_rope(theta: float) -> dict:
    """The Omni thinkers' multimodal RoPE parameters for the tiny head size."""
    head_dim = _HIDDEN // 4
    return {
        "rope_type": "default",
        "rope_theta": theta,
        "mrope_section": [head_dim // 4, head_dim // 8, head_dim // 8],
    }


def qwen2_5_omni_thinker_config(tokenizer, *, audio_config: dict, text_config: dict):
    """A tiny ``Qwen2_5OmniThinkerConfig`` around ``audio_config`` and ``text_config``: a
    one-block vision tower (audio is all the tests use) and the named tokens' ids."""
    import transformers as tf

    ids = tokenizer.convert_tokens_to_ids
    config = tf.Qwen2_5OmniThinkerConfig(
        audio_config=audio_config,
        vision_config=dict(
            depth=1,
            hidden_size=_HIDDEN,
            intermediate_size=2 * _HIDDEN,
            num_heads=2,
            out_hidden_size=_HIDDEN,
            fullatt_block_indexes=[0],
        ),
        text_config=text_config,
        audio_token_index=ids("<|AUDIO|>"),
        image_token_index=ids("<|IMAGE|>"),
        video_token_index=ids("<|VIDEO|>"),
        audio_start_token_id=ids("<|audio_bos|>"),
        audio_end_token_id=ids("<|audio_eos|>"),
    )
    # read by the thinker's multimodal RoPE; released configs carry it
    config.vision_start_token_id = ids("<|vision_bos|>")
    return config


def _omni_tokenizer(directory: Path, merge_letters: bool):
    """The tiny tokenizer plus the extra named tokens ``Qwen2_5OmniProcessor`` reads."""
    from transformers import PreTrainedTokenizerFast

    tokenizer = train_tokenizer(directory, merge_letters=merge_letters)
    extra = {
        "image_token": "<|IMAGE|>",
        "video_token": "<|VIDEO|>",
        "audio_token": "<|AUDIO|>",
        "vision_bos_token": "<|vision_bos|>",
        "vision_eos_token": "<|vision_eos|>",
        "audio_bos_token": "<|audio_bos|>",
        "audio_eos_token": "<|audio_eos|>",
    }
    tokenizer.add_special_tokens({"additional_special_tokens": list(extra.values())})
    tokenizer.save_pretrained(directory)
    return PreTrainedTokenizerFast.from_pretrained(directory, extra_special_tokens=extra)


#: (full config class, thinker class) of each Qwen Omni thinker's ``model_type``.
_FULL_OMNI = {
    "qwen2_5_omni_thinker": ("Qwen2_5OmniConfig", "Qwen2_5OmniThinkerForConditionalGeneration"),
    "qwen3_omni_moe_thinker": ("Qwen3OmniMoeConfig", "Qwen3OmniMoeThinkerForConditionalGeneration"),
}


def make_tiny_omni_full_checkpoint(directory: str | Path, thinker_dir: str | Path) -> Path:
    """A full Qwen Omni checkpoint (``qwen2_5_omni``, ``qwen3_omni_moe``) around a tiny thinker.

    The config is the real full config class (talker and token2wav / code2wav configs at
    their defaults) and the weights are the thinker's under the ``thinker.`` prefix, as a
    released checkpoint stores them; no talker weights are written, since ``lalm`` loads
    only the thinker.

    Args:
        directory: Target folder.
        thinker_dir: A folder holding a tiny Qwen2.5-Omni or Qwen3-Omni thinker
            (``make_tiny_audio_lm(..., "qwen2_5_omni_thinker")``, or
            :func:`~lm_eval_rul.testing.published.make_published_lm`).
    """
    import shutil

    import transformers as tf
    from safetensors.torch import save_file

    directory, thinker_dir = Path(directory), Path(thinker_dir)
    directory.mkdir(parents=True, exist_ok=True)
    model_type = json.loads((thinker_dir / "config.json").read_text())["model_type"]
    config_class, thinker_class = (getattr(tf, name) for name in _FULL_OMNI[model_type])
    thinker = thinker_class.from_pretrained(thinker_dir)
    config_class(thinker_config=thinker.config.to_dict()).save_pretrained(directory)
    weights = {f"thinker.{k}": v.contiguous() for k, v in thinker.state_dict().items()}
    save_file(weights, str(directory / "model.safetensors"), metadata={"format": "pt"})
    for path in thinker_dir.iterdir():
        if path.is_file() and path.name not in ("config.json", "model.safetensors"):
            shutil.copy(path, directory / path.name)
    return directory
