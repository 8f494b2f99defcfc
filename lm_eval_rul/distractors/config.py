"""What ``lm-eval-rul build`` was asked to do: :class:`BuildConfig` and its checks."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import UserInputError
from ..questions import DEFAULT_SEED
from .filtering import STRATEGIES
from .pi import PROTOCOLS

__all__ = ["STAGES", "BuildConfig", "BuildInputError"]

STAGES: tuple[str, ...] = ("all", "generate", "clean", "filter", "write")


@dataclass
class BuildConfig:
    """Everything ``lm-eval-rul build`` was asked to do.

    Attributes:
        output: The dataset file (``generate``/``clean`` alone: the pools file).
        pools: Existing pools (released ``distractors.json`` layout) to start from.
        data: Questions with correct answers (and captions) to generate pools for.
        generator: Harness model name of the instruction LLM.
        generator_args: Its ``model_args`` string.
        model: Harness model name of the text-only scorer.
        model_args: Its ``model_args`` string.
        device: ``--device`` of the scorer.
        batch_size: ``--batch_size`` of the scorer.
        strategy: Filtering strategy, ``paper`` or ``release``.
        prompt_style: Option style of the filter prompts (``paper``: ``(A) x``,
            ``release``: ``A. x;``); ``None`` (default) uses the strategy's own, as the
            paper and the released code do.
        protocol: PI protocol of the new (and original) distractors.
        seed: Base seed of every random choice.
        reference: Questions with the original distractors, for PI before (optional;
            ``--data`` with 1-4 distractors serves as its own reference).
        n_batches: Sampled generator replies per question.
        n_per_batch: Candidates asked for per reply.
        temperature: Generator sampling temperature.
        max_gen_toks: Generator token budget per reply.
        retries: Retries of a failing generator call.
        backoff: First retry delay in seconds (doubles each retry).
        stage: One of :data:`STAGES`.
        progress: Show tqdm bars.
        limit: Only ``limit`` questions (pools or ``--data`` rows): the seeded sample of
            ``seed`` that a task's ``--limit`` runs with ``shuffle_seed`` = ``seed``
            (:func:`~lm_eval_rul.questions.limited_sample`), in the file's order.
        long_prompts: A scoring prompt longer than the scorer's context: ``error``
            (default: stop, naming the questions) or ``skip`` (a failure record each).
    """

    output: Path
    pools: Path | None = None
    data: Path | None = None
    generator: str | None = None
    generator_args: str | None = None
    model: str | None = None
    model_args: str | None = None
    device: str | None = None
    batch_size: int | str | None = None
    strategy: str = "release"
    prompt_style: str | None = None
    protocol: str = "release"
    seed: int = DEFAULT_SEED
    reference: Path | None = None
    n_batches: int = 3
    n_per_batch: int = 10
    temperature: float = 1.0
    max_gen_toks: int = 512
    retries: int = 3
    backoff: float = 2.0
    stage: str = "all"
    progress: bool = True
    limit: int | None = None
    long_prompts: str = "error"

    def __post_init__(self) -> None:
        self.output = Path(self.output)
        for name in ("pools", "data", "reference"):
            value = getattr(self, name)
            if value is not None:
                setattr(self, name, Path(value))
        if self.stage not in STAGES:
            raise BuildInputError(f"--stage must be one of {STAGES}, got {self.stage!r}")
        if self.strategy not in STRATEGIES:
            raise BuildInputError(f"--strategy must be one of {STRATEGIES}, got {self.strategy!r}")
        if self.prompt_style is None:
            self.prompt_style = self.strategy
        if self.prompt_style not in STRATEGIES:
            raise BuildInputError(
                f"--prompt_style must be one of {STRATEGIES}, got {self.prompt_style!r}"
            )
        if self.protocol not in PROTOCOLS:
            raise BuildInputError(f"--protocol must be one of {PROTOCOLS}, got {self.protocol!r}")
        if self.limit is not None and self.limit < 1:
            raise BuildInputError(f"--limit must be at least 1, got {self.limit}")
        if self.long_prompts not in ("error", "skip"):
            raise BuildInputError(
                f"--long_prompts must be error or skip, got {self.long_prompts!r}"
            )

    def checkpoint_path(self, stage: str) -> Path:
        return self.output.with_name(f"{self.output.name}.{stage}.ckpt.jsonl")

    def meta_path(self) -> Path:
        """Question order, upstream failures and counts of the filter stage, for ``write``."""
        return self.output.with_name(f"{self.output.name}.filter.meta.json")


class BuildInputError(UserInputError, ValueError):
    """``lm-eval-rul build`` was given inputs it cannot build from."""

