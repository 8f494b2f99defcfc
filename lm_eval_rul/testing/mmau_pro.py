"""A small MMAU-Pro fixture in the released layout (``test.parquet``; our own items, not
the release's text): closed-form music items with one clip and with two, a music item
without choices, open-ended, instruction-following and sound items (never asked), clips at
``data/<uuid>.wav``; and the authors' closed-form matching rule written out independently
of the package (the tests' oracle)."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

__all__ = [
    "MMAU_PRO_ITEMS",
    "mmau_pro_rows",
    "write_mmau_pro_parquet",
    "write_mmau_pro_audio",
    "authors_closed_form_accuracy",
    "write_tiny_embedder",
]

#: (category, question, choices, answer index, number of clips)
MMAU_PRO_ITEMS: tuple[tuple[str, str, tuple[str, ...], int, int], ...] = (
    ("music", "Which instrument plays the melody?", ("Piano", "Violin", "Flute", "Drums"), 1, 1),
    ("music", "Is the second recording faster than the first?", ("Yes", "No"), 0, 2),
    ("music", "What is the metre?", ("Duple", "Triple", "Quadruple"), 2, 1),
    ("music", "Which clip is in a minor key?", ("The first", "The second", "Neither"), 1, 2),
    ("music", "Describe the mood.", (), -1, 1),  # no choices: not closed-form
    ("open", "What happens in the recording?", (), -1, 1),
    ("instruction following", "Describe the piece in three words.", (), -1, 1),
    ("sound", "What makes the sound?", ("A door", "A bird"), 1, 1),
)


def _uuid(index: int, clip: int) -> str:
    return str(uuid.UUID(int=(index + 1) * 1000 + clip))


def mmau_pro_rows() -> list[dict[str, Any]]:
    """The fixture's rows as the release writes them (``answer``: the option's text; the
    open-ended ones a reference answer)."""
    return [
        {
            "id": f"mmaupro-{index:03d}",
            "audio_path": [f"data/{_uuid(index, c)}.wav" for c in range(clips)],
            "question": question,
            "choices": list(choices),
            "answer": choices[gold] if gold >= 0 else "A calm, slow piece.",
            "category": category,
            "perceptual_skills": ["timbre"],
            "reasoning_skills": ["comparison"] if clips > 1 else [],
        }
        for index, (category, question, choices, gold, clips) in enumerate(MMAU_PRO_ITEMS)
    ]


def write_mmau_pro_parquet(path: str | Path, rows: list[dict[str, Any]] | None = None) -> Path:
    """Write ``rows`` (default :func:`mmau_pro_rows`) as the release's ``test.parquet``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(mmau_pro_rows() if rows is None else rows), str(path))
    return path


def write_mmau_pro_audio(directory: str | Path, *, seconds: float = 1.0) -> Path:
    """One distinct synthesised clip per ``audio_path`` entry inside ``directory``."""
    from .audio import synth_clip, write_clip

    directory = Path(directory)
    kinds = ("tone", "chord", "clicks", "sweep")
    for index, row in enumerate(mmau_pro_rows()):
        for clip, path in enumerate(row["audio_path"]):
            wave = synth_clip(kinds[(index + clip) % 4], seconds=seconds, seed=index + 5 * clip)
            write_clip(directory / path, wave)
    return directory


def authors_closed_form_accuracy(
    rows: list[dict[str, Any]], predictions: dict[str, str], embed: Any
) -> float:
    """``evaluate_mmau_pro_comprehensive.py``'s closed-form accuracy on the music rows,
    as its ``evaluate_closedended_with_nvembed`` and ``calculate_metrics`` read them:
    rows whose category is neither ``open`` nor ``instruction following`` with more than
    one choice; prediction and choices embedded (``embed(texts)`` -> normalised rows),
    ``100 * p @ C.T``, argmax; ``accuracy_score`` of the matched texts against ``answer``."""
    import numpy as np

    closed = [r for r in rows if r["category"] == "music" and len(r["choices"]) > 1]
    right = 0
    for row in closed:
        said = np.asarray(embed([predictions.get(row["id"], "")]))
        options = np.asarray(embed(row["choices"]))
        scores = (said @ options.T * 100).squeeze(0)
        right += row["choices"][int(np.argmax(scores))] == row["answer"]
    return right / len(closed)


def write_tiny_embedder(directory: str | Path) -> Path:
    """A tiny random-weight BERT sentence encoder with a word-level tokenizer over the
    fixture's words, saved with ``save_pretrained`` (a stand-in for NV-Embed-v2)."""
    import re

    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

    directory = Path(directory)
    words = set()
    for category, question, choices, _, _ in MMAU_PRO_ITEMS:
        words.update(re.findall(r"\w+|[^\w\s]", f"{category} {question} {' '.join(choices)}"))
    words.update(["the", "answer", "is", "i", "think", "it", "a", "b", "c", "d", "maybe"])
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
    vocab = {tok: i for i, tok in enumerate([*specials, *sorted({w.lower() for w in words})])}
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    from tokenizers import normalizers

    backend.normalizer = normalizers.Lowercase()
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    # [CLS] text [SEP], as BERT's tokenizer writes it: an empty answer is still encoded
    backend.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend, pad_token="[PAD]", unk_token="[UNK]"
    )
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
    )
    BertModel(config).eval().save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory
