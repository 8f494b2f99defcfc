"""Saved tiny checkpoints brought to the layout of the published ones."""

from __future__ import annotations

from pathlib import Path

__all__ = ["published_qwen2_audio_keys"]


def published_qwen2_audio_keys(directory: Path) -> None:
    """Rename the saved weights to the published Qwen2-Audio layout
    (``language_model.model.layers...``, which vLLM reads and transformers loads alike)
    from transformers 5's ``language_model.model.model.layers...``."""
    import json

    from safetensors.torch import load_file, save_file

    def published(key: str) -> str:
        return key.replace("language_model.model.model.", "language_model.model.")

    for path in sorted(Path(directory).glob("*.safetensors")):  # one file, or the shards
        weights = load_file(str(path))
        save_file({published(k): v for k, v in weights.items()}, str(path), {"format": "pt"})
    index = Path(directory) / "model.safetensors.index.json"
    if index.is_file():
        saved = json.loads(index.read_text())
        saved["weight_map"] = {published(k): v for k, v in saved["weight_map"].items()}
        index.write_text(json.dumps(saved, indent=2))
