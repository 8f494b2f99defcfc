"""Generate candidate distractors with an instruction LLM and clean them (DESIGN.md §3).

The LLM is any harness model with ``generate_until``: lm-eval's
``local-chat-completions`` (an OpenAI-compatible server; requests are chat messages) or
a local ``hf`` model (the chat template of its tokenizer is applied). Each question gets
several sampled batches of the prompt in :func:`~lm_eval_rul.prompts.distractor_messages`;
candidates are read from ``<distractor>...</distractor>`` tags, normalised,
de-duplicated, and anything equal to the correct answer is dropped. Replies with no
parsable candidate are counted, never guessed at.
"""

from __future__ import annotations

import html
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .data import PoolCleaningReport, Question, normalize_answer
from .prompts import distractor_messages
from .seeding import derive_seed

__all__ = [
    "TAG",
    "parse_candidates",
    "clean_candidate",
    "CleanedPool",
    "clean_pool",
    "clean_pools",
    "GenerationResult",
    "DistractorGenerator",
]

logger = logging.getLogger(__name__)

TAG = "distractor"
_TAGGED = re.compile(rf"<\s*{TAG}\s*>(.*?)<\s*/\s*{TAG}\s*>", re.IGNORECASE | re.DOTALL)
_MAX_CHARS = 200


def clean_candidate(text: str) -> str:
    """Normalise one extracted candidate for display: unescape, collapse spaces, strip
    list markers and wrapping quotes.

    >>> clean_candidate('  1.  "Solo   violin"  ')
    'Solo violin'
    """
    text = html.unescape(str(text))
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"^(?:[-*\u2022]|\(?\d{1,2}[.)])\s+", "", text)
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'`":
        text = text[1:-1].strip()
    return text


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
class CleanedPool:
    """A question's candidates after cleaning, with what was dropped."""

    candidates: list[str]
    n_in: int = 0
    equal_to_correct: int = 0
    duplicates: int = 0
    empty: int = 0


def clean_pool(candidates: Sequence[str], correct_answer: str, *, tidy: bool = True) -> CleanedPool:
    """The one cleaning rule of distractor pools (generated ones and ``read_pools``).

    De-duplicate (after :func:`~lm_eval_rul.data.normalize_answer`, keeping the first),
    drop empty candidates and those equal to the correct answer.

    Args:
        candidates: The pool, in order.
        correct_answer: The question's correct answer.
        tidy: Also tidy each kept candidate's text with :func:`clean_candidate`
            (generated candidates). ``False`` keeps the text as given, only stripped
            (released pools: removing quotes there would set distractors apart from a
            quoted correct answer).

    >>> clean_pool(["Oboe", "oboe.", "Cello", ""], "cello").candidates
    ['Oboe']
    >>> clean_pool(['"Oboe"', "oboe"], "cello", tidy=False).candidates
    ['"Oboe"', 'oboe']
    """
    correct = normalize_answer(correct_answer)
    out = CleanedPool(candidates=[], n_in=len(candidates))
    seen: set[str] = set()
    for candidate in candidates:
        text = clean_candidate(candidate) if tidy else str(candidate).strip()
        norm = normalize_answer(text)
        if not norm:
            out.empty += 1
        elif norm == correct:
            out.equal_to_correct += 1
        elif norm in seen:
            out.duplicates += 1
        else:
            seen.add(norm)
            out.candidates.append(text)
    return out


def clean_pools(
    questions: Sequence[Question], *, tidy: bool = True
) -> tuple[list[Question], PoolCleaningReport]:
    """:func:`clean_pool` on every question's distractors, with the counts per id.

    Args:
        questions: Questions whose ``distractors`` are candidate pools.
        tidy: See :func:`clean_pool`.

    Returns:
        The questions with cleaned pools (in the given order, empty pools kept) and a
        :class:`~lm_eval_rul.data.PoolCleaningReport`.
    """
    report = PoolCleaningReport(n_questions=len(questions))
    cleaned = []
    for q in questions:
        result = clean_pool(q.distractors, q.correct_answer, tidy=tidy)
        report.n_candidates_in += result.n_in
        report.n_candidates_out += len(result.candidates)
        for name in ("equal_to_correct", "duplicates", "empty"):
            if getattr(result, name):
                getattr(report, name)[q.id] = getattr(result, name)
        cleaned.append(replace(q, distractors=tuple(result.candidates)))
    return cleaned, report


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
        seed: int = 1234,
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
