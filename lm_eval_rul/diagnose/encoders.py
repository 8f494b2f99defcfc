"""Sentence embeddings of short texts in two spaces: T5 (plain text) and CLAP (music-aware).

* ``t5``: ``T5EncoderModel``; a text's embedding is the mean of the encoder's last hidden
  states over its tokens, padding masked out (:func:`masked_mean`). A full seq2seq
  checkpoint such as ``google-t5/t5-base`` loads its encoder only.
* ``clap``: ``ClapTextModelWithProjection``; the projected text embedding
  (``text_embeds``, the same vector ``ClapModel.get_text_features`` returns before
  normalising). A full ``ClapModel`` checkpoint such as ``laion/larger_clap_music``
  loads its text tower only.

Models load lazily, on the first :meth:`TextEncoder.encode_batch`, so a run whose
embeddings are all cached never loads one. :attr:`TextEncoder.key` names the embedding
space for the cache without loading anything.
"""

from __future__ import annotations

import hashlib
import logging
import os
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import UserInputError

__all__ = [
    "DEFAULT_T5",
    "DEFAULT_CLAP",
    "SPACES",
    "EncoderLoadError",
    "TextEncoder",
    "T5Encoder",
    "ClapTextEncoder",
    "make_encoder",
    "masked_mean",
    "checkpoint_identity",
]

logger = logging.getLogger(__name__)

#: Default T5 checkpoint (Google's T5-base; only its encoder is loaded).
DEFAULT_T5 = "google-t5/t5-base"
#: Default CLAP checkpoint: LAION's CLAP trained on music (only its text tower is loaded).
DEFAULT_CLAP = "laion/larger_clap_music"
#: Space name -> what it measures, in display order.
SPACES: dict[str, str] = {
    "t5": "T5 (text)",
    "clap": "CLAP text (music)",
}
#: Bumped when the way an embedding is computed changes, so old cache rows are not reused.
_EMBEDDING_VERSION = 1
_FINGERPRINTED = (".safetensors", ".bin", ".json", ".model", ".txt")


class EncoderLoadError(UserInputError, RuntimeError):
    """A checkpoint could not be loaded as the requested encoder."""


def masked_mean(hidden: Any, mask: Any) -> Any:
    """Mean of ``hidden`` (batch, tokens, dim) over the tokens where ``mask`` is 1.

    Padding positions do not count, so a text's embedding does not depend on how much
    padding its batch needed. Rows with an all-zero mask give zeros.
    """
    weights = mask.to(hidden.dtype).unsqueeze(-1)
    return (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1.0)


def checkpoint_identity(checkpoint: str) -> str:
    """What the cache calls a checkpoint: a hub id as given, or a local folder's absolute
    path plus a fingerprint of its files (names, sizes, modification times), so re-saving
    different weights into the same folder does not reuse stale embeddings."""
    path = Path(checkpoint).expanduser()
    if not path.is_dir():
        return checkpoint
    digest = hashlib.sha256()
    for file in sorted(path.rglob("*")):
        if file.is_file() and file.suffix in _FINGERPRINTED:
            stat = file.stat()
            digest.update(f"{file.relative_to(path)}|{stat.st_size}|{stat.st_mtime_ns}\n".encode())
    return f"{path.resolve()}#{digest.hexdigest()[:16]}"


class TextEncoder(ABC):
    """One embedding space: a checkpoint, its tokenizer and a pooling rule.

    Args:
        checkpoint: Hub id or local folder (``save_pretrained`` layout).
        device: Torch device (``None``: ``cuda`` when torch sees a GPU, else ``cpu``).
        max_length: Token limit per text (``None``: the tokenizer's, capped by the model's
            positions and 512). Longer texts are truncated and counted.

    Attributes:
        n_forward: Forward passes run so far (one per :meth:`encode_batch`).
        n_truncated: Texts cut at ``max_length`` so far.
    """

    #: Space name (a key of :data:`SPACES`).
    space = ""

    def __init__(
        self, checkpoint: str, *, device: str | None = None, max_length: int | None = None
    ) -> None:
        if max_length is not None and max_length < 2:
            raise ValueError(f"max_length must be at least 2 tokens, got {max_length}")
        self.checkpoint = str(checkpoint)
        self.device = device
        self.max_length = max_length
        self.n_forward = 0
        self.n_truncated = 0
        self._model: Any = None
        self._tokenizer: Any = None
        self._limit = 0

    @property
    def key(self) -> str:
        """Cache identity of this space (no model is loaded to compute it)."""
        limit = self.max_length if self.max_length is not None else "default"
        return (
            f"{self.space}|{checkpoint_identity(self.checkpoint)}|max_length={limit}"
            f"|float32|v{_EMBEDDING_VERSION}"
        )

    # -- loading -------------------------------------------------------------------------

    @abstractmethod
    def _load_model(self, checkpoint: str) -> Any:
        """The transformers model of this space, loaded from ``checkpoint``."""

    def _model_limit(self, model: Any, tokenizer: Any) -> int:
        return 512

    def load(self) -> None:
        """Load tokenizer and model (done by the first :meth:`encode_batch`).

        Raises:
            ModelUnavailableError: The checkpoint is neither a local folder, nor cached,
                nor reachable on the hub (asked once, never retried).
            EncoderLoadError: It is there but does not load as this encoder.
        """
        if self._model is not None:
            return
        import torch
        import transformers
        from transformers import AutoTokenizer

        from ..hub import check_checkpoint_available

        # without network transformers retries each file for about a minute: ask first
        # (here, not earlier: texts all in the embedding cache need no model)
        if not Path(self.checkpoint).expanduser().exists():  # a folder loads (or not) at once
            check_checkpoint_available(self.checkpoint, f"--{self.space}")
        device = self.device or ("cuda" if torch.cuda.is_available() else "cpu")
        verbosity = transformers.logging.get_verbosity()
        # A full checkpoint holds weights this tower does not use (T5's decoder, CLAP's
        # audio tower): the loader's long report of unused keys is expected, so hide it.
        transformers.logging.set_verbosity_error()
        try:
            tokenizer = AutoTokenizer.from_pretrained(self.checkpoint)
            model = self._load_model(self.checkpoint)
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise EncoderLoadError(
                f"could not load {self.checkpoint!r} as the {SPACES[self.space]} encoder: "
                f"{err}\nPass a hub id or a local folder with --{self.space} (e.g. --t5 "
                f"{DEFAULT_T5} --clap {DEFAULT_CLAP}), or skip similarity with --no_similarity."
            ) from err
        finally:
            transformers.logging.set_verbosity(verbosity)
        model.to(device=device, dtype=torch.float32).eval()
        model_limit = self._model_limit(model, tokenizer)
        tokenizer_limit = getattr(tokenizer, "model_max_length", None) or model_limit
        self._limit = min(self.max_length or tokenizer_limit, tokenizer_limit, model_limit)
        self._tokenizer, self._model, self.device = tokenizer, model, device
        logger.info(
            "Loaded %s encoder %s on %s (max %d tokens)",
            self.space,
            self.checkpoint,
            device,
            self._limit,
        )

    # -- encoding ------------------------------------------------------------------------

    @abstractmethod
    def _pool(self, batch: Any) -> Any:
        """One embedding per row of a tokenized ``batch`` (a torch tensor)."""

    def encode_batch(self, texts: list[str]) -> np.ndarray:
        """Embeddings of ``texts`` (one row each, float32) from one forward pass."""
        import torch

        if not texts:
            raise ValueError("encode_batch needs at least one text")
        self.load()
        # Only texts long enough to possibly exceed the limit are tokenized twice (a token
        # covers at least one byte, bar a few specials and word-start markers).
        long = [t for t in texts if 2 * len(t.encode("utf-8")) + 8 >= self._limit]
        if long:
            lengths = self._tokenizer(long, padding=False, truncation=False)["input_ids"]
            self.n_truncated += sum(len(ids) > self._limit for ids in lengths)
        batch = self._tokenizer(
            list(texts),
            padding=True,
            truncation=True,
            max_length=self._limit,
            return_tensors="pt",
        )
        batch = {
            k: v.to(self.device) for k, v in batch.items() if k in ("input_ids", "attention_mask")
        }
        with torch.inference_mode():
            pooled = self._pool(batch)
        self.n_forward += 1
        return pooled.float().cpu().numpy()


class T5Encoder(TextEncoder):
    """T5 encoder, mean-pooled over tokens with padding masked (``t5`` space)."""

    space = "t5"

    def _load_model(self, checkpoint: str) -> Any:
        from transformers import T5EncoderModel

        return T5EncoderModel.from_pretrained(checkpoint)

    def _pool(self, batch: Any) -> Any:
        hidden = self._model(**batch).last_hidden_state
        return masked_mean(hidden, batch["attention_mask"])


class ClapTextEncoder(TextEncoder):
    """CLAP's text tower with its projection (``clap`` space)."""

    space = "clap"

    def _load_model(self, checkpoint: str) -> Any:
        from transformers import ClapTextModelWithProjection

        return ClapTextModelWithProjection.from_pretrained(checkpoint)

    def _model_limit(self, model: Any, tokenizer: Any) -> int:
        # RoBERTa positions start after the padding index: 514 positions hold 512 tokens.
        config = model.config
        return int(config.max_position_embeddings) - int(config.pad_token_id or 0) - 1

    def _pool(self, batch: Any) -> Any:
        return self._model(**batch).text_embeds


_ENCODERS: dict[str, type[TextEncoder]] = {"t5": T5Encoder, "clap": ClapTextEncoder}


def make_encoder(space: str, checkpoint: str, **kwargs: Any) -> TextEncoder:
    """The encoder of ``space`` (``t5`` / ``clap``) for ``checkpoint``; see :class:`TextEncoder`."""
    if space not in _ENCODERS:
        raise ValueError(f"space must be one of {', '.join(_ENCODERS)}, got {space!r}")
    if not checkpoint:
        raise ValueError(f"no checkpoint given for the {space} space")
    looks_local = checkpoint.startswith((os.sep, ".", "~")) or checkpoint.count("/") > 1
    if looks_local and not Path(checkpoint).expanduser().exists():
        raise EncoderLoadError(
            f"--{space} {checkpoint!r}: no such folder. Pass a local folder saved with "
            "save_pretrained or a hub id (e.g. "
            f"{DEFAULT_T5 if space == 't5' else DEFAULT_CLAP})."
        )
    return _ENCODERS[space](checkpoint, **kwargs)
