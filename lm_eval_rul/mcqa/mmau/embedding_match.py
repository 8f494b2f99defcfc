"""MMAU-Pro's official closed-form scorer: the model's free text is matched to the most
similar choice by sentence embeddings, as the authors' ``evaluate_mmau_pro_comprehensive.py``
does (``evaluate_closedended_with_nvembed``): the prediction and every choice encoded with
an empty instruction, L2-normalised, scored by ``100 * prediction @ choices.T``, and the
first choice of the highest score is the matched answer; an item is right when the matched
choice's text equals the released ``answer`` (``accuracy_score`` on the strings).

The embedder is ``--metadata mmau_pro_embedder`` (default the authors'
``nvidia/NV-Embed-v2``, loaded as they load it, ``trust_remote_code``, through its own
``encode``). A checkpoint without ``encode`` (a sentence-embedding model saved with
transformers) is read by the mean of its last hidden states over the attention mask.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence
from typing import Any

__all__ = ["DEFAULT_EMBEDDER", "matched_choice", "load_embedder"]

#: The authors' embedder (``load_nvembed_model``).
DEFAULT_EMBEDDER = "nvidia/NV-Embed-v2"
#: The authors' ``max_length`` of ``encode``.
MAX_LENGTH = 4096

logger = logging.getLogger(__name__)


@functools.lru_cache(maxsize=2)
def load_embedder(name: str) -> tuple[Any, Any]:
    """(model, tokenizer or None) of ``name``, loaded once per process."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    model = AutoModel.from_pretrained(name, trust_remote_code=True)  # as the authors do
    model.to("cuda" if torch.cuda.is_available() else "cpu").eval()
    tokenizer = None if hasattr(model, "encode") else AutoTokenizer.from_pretrained(name)
    logger.info("MMAU-Pro official scorer: embedder %s loaded", name)
    return model, tokenizer


def _encode(model: Any, tokenizer: Any, texts: Sequence[str]) -> Any:
    import torch
    import torch.nn.functional as F

    with torch.no_grad():
        if tokenizer is None:  # NV-Embed's own encode, with the authors' arguments
            vectors = model.encode(list(texts), instruction="", max_length=MAX_LENGTH)
        else:
            batch = tokenizer(list(texts), padding=True, truncation=True, return_tensors="pt").to(
                model.device
            )
            hidden = model(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            vectors = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
        return F.normalize(torch.as_tensor(vectors).float(), p=2, dim=1)


def matched_choice(embedder: str, prediction: str, choices: Sequence[str]) -> tuple[int, float]:
    """(index of the choice most similar to ``prediction``, its score ``100 * cos``)."""
    model, tokenizer = load_embedder(embedder)
    said = _encode(model, tokenizer, [prediction])
    options = _encode(model, tokenizer, choices)
    scores = (said @ options.T * 100).squeeze(0)
    best = int(scores.argmax().item())  # torch.argmax: the first of equal maxima
    return best, float(scores[best].item())
