"""``lm-eval-rul pi``: the Perceptual Index of every question of a dataset."""

from __future__ import annotations

import argparse
import logging
import textwrap

from ._harness_args import add_harness_model_arguments, add_seed_argument, seed_of

logger = logging.getLogger(__name__)

_NOTHING_LEFT = (
    "--long_prompts skip would leave no question to score: every prompt is too long. Use a "
    "model with a longer context (or model_args max_length=N, if the model was trained for "
    "more)."
)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "pi",
        help="Perceptual Index of every question under a text-only harness model",
        description=(
            "Compute the Perceptual Index (PI = 1 - p(correct) of a text-only model, option "
            "letters read from one next-token distribution) of every question of a dataset: "
            "the released RUL JSON, the MuChoMusic CSV, or a JSONL/CSV/parquet of id, question, "
            "correct_answer, distractors[, caption]. Writes one JSONL row per question and "
            "<output stem>.summary.json."
        ),
        epilog=textwrap.dedent(
            """\
            examples:
              lm-eval-rul pi --data RUL-MuchoMusic.json --model hf \\
                  --model_args pretrained=Qwen/Qwen2.5-0.5B-Instruct --output pi.jsonl
              lm-eval-rul pi --data muchomusic.csv --protocol paper --model vllm \\
                  --model_args pretrained=meta-llama/Llama-3.1-8B-Instruct --output pi.jsonl
            """
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--data", required=True, help="Question file (1-4 distractors each)")
    add_harness_model_arguments(parser)
    parser.add_argument(
        "--protocol",
        choices=("paper", "release"),
        default="release",
        help="release: the authors' released PI code, its prompt exactly ('A. x; ...; D. w. "
        "Answer without the parenthesis.'); paper: the paper's wording, '(A) x' options. Both "
        "score 16 four-option prompts per question (4 repeats x leave each of 4 distractors "
        "out; 16 shuffles of a 3-distractor item's 4 options). Default: release",
    )
    add_seed_argument(parser, "option orders and the --limit sample")
    parser.add_argument("--output", required=True, help="Output JSONL (one row per question)")
    parser.add_argument(
        "--chunk_size", type=int, default=16, help="Questions per model call (default 16)"
    )
    parser.add_argument(
        "--limit",
        type=int,
        default=None,
        help="Only N questions: the seeded sample of --seed that a task's --limit N runs "
        "(the same questions as `run --limit N` with the same seed), rows in the file's order",
    )
    parser.add_argument(
        "--long_prompts",
        choices=("error", "skip"),
        default="error",
        help="A prompt longer than the model's context: error (default: stop before "
        "scoring, naming the questions) or skip (leave them out, listed in the summary). "
        "Never cut from the left",
    )
    parser.set_defaults(func=_execute)


def _load(path: str) -> list:
    """The questions of ``path``; a pools file is refused as such (``UndefinedPI``, naming
    the ids and pointing to ``build``), even when its pools also hold repeats or the
    correct answer that the question readers reject first."""
    from ..distractors import check_pi_questions
    from ..questions import DataValidationError, load_questions, read_pools

    try:
        return load_questions(path)
    except DataValidationError as error:
        try:
            pools, _ = read_pools(path, allow_empty=True)
        except (DataValidationError, UnicodeDecodeError):
            raise error from None
        check_pi_questions(pools, source=path)
        raise


def _check_outputs(output: str) -> None:
    """The rows and the summary can be written: checked before the model loads."""
    from pathlib import Path

    from ..distractors.pi_summary import summary_path
    from ..files import check_output_file

    check_output_file(output, flag="--output")
    check_output_file(summary_path(Path(output)), flag="--output's summary")


def _execute(args: argparse.Namespace) -> None:
    from ..distractors import (
        check_pi_questions,
        compute_pi,
        format_summary,
        long_prompt_questions,
        write_pi,
    )
    from ..mcqa import PromptTooLongError
    from ..questions import limited_sample
    from ..registration import create_lm
    from .limits import check_count_limit
    from .preflight import check_text_scorer

    check_count_limit(args.limit)
    check_text_scorer("pi", args.model, args.model_args, device=args.device)
    _check_outputs(args.output)
    seed = seed_of(args)
    # --limit: the tasks' seeded sample (not the file's first N: the released file is
    # sorted by PI), so `pi --limit N` and `run --limit N` score the same questions
    questions = limited_sample(
        _load(args.data), limit=args.limit, seed=seed, item_id=lambda q: q.id
    )
    check_pi_questions(questions, source=args.data)  # before loading the model
    lm = create_lm(args.model, args.model_args, device=args.device, batch_size=args.batch_size)
    too_long, limit = long_prompt_questions(lm, questions, protocol=args.protocol, seed=seed)
    skipped = None
    if too_long and (args.long_prompts == "error" or len(too_long) == len(questions)):
        # with skip, nothing would be left to score: say so before writing anything
        fix = _NOTHING_LEFT if args.long_prompts == "skip" else ""
        raise PromptTooLongError(too_long, int(limit), fix=fix)
    if too_long:
        logger.warning(
            "skipping %d question(s) whose prompts are longer than the model's context of %d "
            "tokens (--long_prompts skip; listed in the summary): %s",
            len(too_long),
            limit,
            ", ".join(list(too_long)[:10]),
        )
        questions = [q for q in questions if q.id not in too_long]
        skipped = {"long_prompts": {"limit": limit, "n": len(too_long), "tokens": too_long}}
    results = compute_pi(
        questions, lm, protocol=args.protocol, seed=seed, chunk_size=args.chunk_size
    )
    summary_path, summary = write_pi(results, args.output, skipped=skipped)
    print(format_summary(summary, title=f"PI ({args.protocol}) of {args.data}"))
    if skipped:
        print(f"skipped {len(too_long)} question(s) with prompts over {limit} tokens")
    print(f"wrote {args.output} and {summary_path}")
