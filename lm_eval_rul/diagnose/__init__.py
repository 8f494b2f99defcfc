"""Benchmark diagnostics (``lm-eval-rul diagnose``): are the questions worth asking?

Two checks of a music multiple-choice benchmark, as in the RUListening paper:

1. **Distractor similarity.** Cosine similarity of every distractor to its correct
   answer in a plain text space (T5 encoder, mean-pooled) and a music-aware one (CLAP's
   text tower): good perception-hard distractors are close as text and spread in music.
   Distractors near-identical to the answer in both spaces, and exact or case-only
   duplicates, are listed. Embeddings are cached on disk by (model, text).
2. **QA audit.** Pattern rules flag questions a listener cannot answer from the audio
   ("Not specified in the description", "based on the description", "recorded in",
   answers too short for their question, gender-only answers to "who"); an optional
   LLM judge adds its verdict beside the rule flags.

Modules: :mod:`.encoders` (T5 / CLAP text embeddings), :mod:`.cache` (on-disk cache
and batched encoding), :mod:`.similarity` (cosines, summaries, duplicates),
:mod:`.audit` (rules), :mod:`.judge` (LLM judge), :mod:`.inputs` (datasets and
pools), :mod:`.pipeline` (the run), :mod:`.outputs` and :mod:`.figures` (files).

Public names: :class:`DiagnoseConfig`, :func:`run_diagnose`, :func:`write_outputs`,
:data:`RULES`, :func:`audit_question`, :class:`Flag`, :func:`find_duplicates`,
:func:`cosine_similarity`, :class:`EmbeddingCache`, :func:`embed_texts`,
:func:`make_encoder`, :class:`AnswerabilityJudge`, :class:`JudgeFailure`, :func:`parse_verdict`,
:data:`DEFAULT_T5`, :data:`DEFAULT_CLAP`.
"""

from __future__ import annotations

from .audit import RULES, Flag, audit_question
from .cache import EmbeddingCache, embed_texts
from .encoders import DEFAULT_CLAP, DEFAULT_T5, make_encoder
from .judge import AnswerabilityJudge, JudgeFailure, parse_verdict
from .outputs import write_outputs
from .pipeline import DiagnoseConfig, run_diagnose
from .similarity import cosine_similarity, find_duplicates

__all__ = [
    "DiagnoseConfig",
    "run_diagnose",
    "write_outputs",
    "RULES",
    "audit_question",
    "Flag",
    "find_duplicates",
    "cosine_similarity",
    "EmbeddingCache",
    "embed_texts",
    "make_encoder",
    "AnswerabilityJudge",
    "JudgeFailure",
    "parse_verdict",
    "DEFAULT_T5",
    "DEFAULT_CLAP",
]
