"""Generate candidate distractors with an instruction LLM (``docs/method.md``, "Distractors").

The LLM is any harness model with ``generate_until``: lm-eval's
``local-chat-completions`` (an OpenAI-compatible server; requests are chat messages) or
a local ``hf`` model (the chat template of its tokenizer is applied). Each question gets
several sampled batches of the prompt in
:func:`~lm_eval_rul.distractors.prompts.distractor_messages`;
candidates are read from ``<distractor>...</distractor>`` tags and cleaned by the
pools' one rule (:func:`~lm_eval_rul.questions.pools.clean_pool`). Replies with no
parsable candidate are counted, never guessed at.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..questions import DEFAULT_SEED, Question, clean_candidate
from ..questions.seeding import derive_seed
from .prompts import distractor_messages

__all__ = [
    "TAG",
    "parse_candidates",
    "GenerationResult",
    "DistractorGenerator",
]

logger = logging.getLogger(__name__)

TAG = "distractor"
_TAGGED = re.compile(rf"<\s*{TAG}\s*>(.*?)<\s*/\s*{TAG}\s*>", re.IGNORECASE | re.DOTALL)
_MAX_CHARS = 200


def parse_candidates(reply: str | None) -> list[str]:
    """Candidates inside ``<distractor>`` tags of one reply, cleaned, in order.

    Unclosed, empty or over-long (more than 200 characters) tags yield nothing.

    >>> parse_candidates("<distractor>Viola</distractor> junk <DISTRACTOR> oboe </distractor>")
    ['Viola', 'oboe']
    >>> parse_candidates("Viola, oboe")
    []
    """
    if not reply:
        return []
    found = []
    for match in _TAGGED.findall(reply):
        if re.search(rf"<\s*{TAG}\s*>", match, re.IGNORECASE):
            match = re.split(rf"<\s*{TAG}\s*>", match, flags=re.IGNORECASE)[-1]
        candidate = clean_candidate(match)
        if candidate and len(candidate) <= _MAX_CHARS:
            found.append(candidate)
    return found

@dataclass
class GenerationResult:
    """Raw output of generation for one question.

    Attributes:
        id: Question id.
        candidates: Every parsed candidate of every reply, in order (not yet cleaned).
        n_replies: Replies received.
        n_unparsable: Replies with no parsable candidate.
        replies: The raw replies (kept for the checkpoint and debugging).
    """

    id: str
    candidates: list[str]
    n_replies: int = 0
    n_unparsable: int = 0
    replies: list[str] = field(default_factory=list)


class DistractorGenerator:
    """Ask a harness LM for distractors, several sampled batches per question.

    Args:
        lm: An lm-eval ``LM`` with ``generate_until`` and ``apply_chat_template``
            (``local-chat-completions``, ``hf``, ``vllm``...).
        n_batches: Sampled replies per question.
        n_per_batch: Candidates asked for in each reply.
        temperature: Sampling temperature.
        max_gen_toks: Token budget of one reply.
        seed: Base seed; each batch's sampling seed is derived from (seed, id, batch).
    """

    def __init__(
        self,
        lm: Any,
        *,
        n_batches: int = 3,
        n_per_batch: int = 10,
        temperature: float = 1.0,
        max_gen_toks: int = 512,
        seed: int = DEFAULT_SEED,
    ) -> None:
        if n_batches < 1:
            raise ValueError(f"n_batches must be at least 1, got {n_batches}")
        self.lm = lm
        self.n_batches = n_batches
        self.n_per_batch = n_per_batch
        self.temperature = temperature
        self.max_gen_toks = max_gen_toks
        self.seed = seed
        self.n_calls = 0

    def _is_api(self) -> bool:
        from lm_eval.models.api_models import TemplateAPI

        return isinstance(self.lm, TemplateAPI)

    def request(self, question: Question, batch: int) -> Any:
        """The ``generate_until`` request of one sampled batch."""
        from lm_eval.api.instance import Instance

        messages = distractor_messages(
            question.question,
            question.correct_answer,
            question.caption,
            n_candidates=self.n_per_batch,
        )
        context = self.lm.apply_chat_template(messages, add_generation_prompt=True)
        gen_kwargs: dict[str, Any] = {
            "max_gen_toks": self.max_gen_toks,
            "temperature": self.temperature,
            "do_sample": self.temperature > 0,
            "until": [],
        }
        if self._is_api():
            # OpenAI-compatible servers take a per-request sampling seed.
            gen_kwargs["seed"] = derive_seed("generate", self.seed, question.id, batch) % 2**31
        return Instance(
            request_type="generate_until",
            doc={},
            arguments=(context, gen_kwargs),
            idx=batch,
            metadata=("lm_eval_rul_generate", 0, 1),
        )

    def reply(self, question: Question, batch: int) -> str:
        """One sampled reply (raises what the model raises; the caller retries)."""
        self.n_calls += 1
        if not self._is_api():
            import torch

            torch.manual_seed(derive_seed("generate", self.seed, question.id, batch) % 2**31)
        (text,) = self.lm.generate_until([self.request(question, batch)], disable_tqdm=True)
        return text if isinstance(text, str) else ""

    @staticmethod
    def collect(question_id: str, replies: Sequence[str]) -> GenerationResult:
        """Parse replies into a :class:`GenerationResult`."""
        result = GenerationResult(id=question_id, candidates=[], replies=list(replies))
        for text in replies:
            result.n_replies += 1
            found = parse_candidates(text)
            if not found:
                result.n_unparsable += 1
            result.candidates.extend(found)
        return result
