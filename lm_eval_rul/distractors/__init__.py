"""The distractor pipeline: PI over a dataset, distractors, filtering, resumable stages.

``lm-eval-rul pi`` and ``lm-eval-rul build`` run on this package. See ``docs/method.md``
("Perceptual Index", "Building a benchmark") for the method and its decisions.

Stages, each usable on its own (``--stage``):

1. ``generate``: candidate pools from an instruction LLM (any harness model with
   ``generate_until``), several sampled batches per question, parsed from XML tags;
   writes pools in the released ``distractors.json`` layout.
2. ``clean``: normalise, de-duplicate, drop candidates equal to the correct answer;
   writes cleaned pools and counts.
3. ``filter``: pick four distractors per question with the PI scorer (``paper``
   tournament or ``release`` chunks of six) and compute the new PI (and the PI of the
   original distractors when known).
4. ``write``: the dataset in the released RUL JSON schema, sorted by PI (highest
   first), and a build report (JSON and markdown).

``all`` (the default) runs every stage that applies to the input. ``generate`` and
``filter`` write one checkpoint line per finished question (``<output>.<stage>.ckpt.jsonl``);
a rerun with the same arguments skips what is there, and a checkpoint made with other
arguments is refused. A failing LLM call is retried with exponential backoff, then
recorded as a failure of that question (retried on the next run) without stopping the
others; an error no retry can fix (authentication, not found, a bug) or the same error
on the run's first few questions stops the run at once with one message. A question
with fewer than four clean candidates gets a failure record and is counted in the
report: nothing is dropped silently.

Run stage by stage, every question travels to the end in its original order: the pools
file of ``generate``/``clean`` keeps every question (an empty pool when nothing was
parsable; ``"build_failure": {stage, error}`` when its generator call failed) and its
``<stem>.report.json`` carries the generation and cleaning counts (used when the file's
digest still matches); ``filter`` writes ``<output>.filter.meta.json`` (question order,
upstream failures, counts) that ``write`` reads with the filter checkpoint.

Modules: :mod:`.pi` (PI protocols and :func:`compute_pi`), :mod:`.pi_summary`
(summaries and the ``pi`` output files), :mod:`.prompts` and :mod:`.distractors` (the
generator LLM), :mod:`.filtering` (the ``paper`` / ``release`` strategies),
:mod:`.config`, :mod:`.checkpoint`, :mod:`.stage_files`, :mod:`.stages`,
:mod:`.writing` and :mod:`.pipeline` (:func:`run_build`).

Public names: :class:`BuildConfig`, :class:`BuildInputError`, :data:`STAGES`,
:func:`run_build`, :class:`Checkpoint`, :class:`CheckpointMismatch`, :func:`with_retries`,
:func:`permanent_error`, :class:`GeneratorFailure`, :data:`FAIL_FAST_QUESTIONS`,
:func:`redact_args`, :func:`generate_stage`, :func:`filter_stage`, :func:`write_stage`;
:data:`PROTOCOLS`,
:class:`PIPrompt`, :class:`PIResult`, :class:`UndefinedPI`, :func:`compute_pi`,
:func:`protocol_prompts`, :func:`paper_prompts`, :func:`release_prompts`,
:func:`check_pi_questions`, :func:`long_prompt_questions`, :func:`aggregate_pi`,
:func:`summarize_pi`,
:func:`format_summary`, :func:`write_pi`; :data:`STRATEGIES`, :func:`filter_pool`,
:class:`TooFewCandidates`; :class:`DistractorGenerator`, :func:`parse_candidates`,
:func:`distractor_messages`, :class:`GenerationResult`.
"""

from .checkpoint import (
    Checkpoint,
    CheckpointMismatch,
    permanent_error,
    redact_args,
    with_retries,
)
from .config import STAGES, BuildConfig, BuildInputError
from .filtering import STRATEGIES, TooFewCandidates, filter_pool
from .generation import DistractorGenerator, GenerationResult, parse_candidates
from .pi import (
    PROTOCOLS,
    PIPrompt,
    PIResult,
    UndefinedPI,
    aggregate_pi,
    check_pi_questions,
    compute_pi,
    long_prompt_questions,
    paper_prompts,
    protocol_prompts,
    release_prompts,
)
from .pi_summary import format_summary, summarize_pi, write_pi
from .pipeline import run_build
from .prompts import distractor_messages
from .stages import FAIL_FAST_QUESTIONS, GeneratorFailure, filter_stage, generate_stage
from .writing import write_stage

__all__ = [
    "STAGES",
    "BuildConfig",
    "BuildInputError",
    "run_build",
    "Checkpoint",
    "CheckpointMismatch",
    "with_retries",
    "permanent_error",
    "GeneratorFailure",
    "FAIL_FAST_QUESTIONS",
    "redact_args",
    "generate_stage",
    "filter_stage",
    "write_stage",
    "PROTOCOLS",
    "PIPrompt",
    "PIResult",
    "UndefinedPI",
    "compute_pi",
    "protocol_prompts",
    "paper_prompts",
    "release_prompts",
    "check_pi_questions",
    "long_prompt_questions",
    "aggregate_pi",
    "summarize_pi",
    "format_summary",
    "write_pi",
    "STRATEGIES",
    "filter_pool",
    "TooFewCandidates",
    "DistractorGenerator",
    "GenerationResult",
    "parse_candidates",
    "distractor_messages",
]
