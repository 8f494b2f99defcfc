"""``lm-eval-rul build``: perception-boosted distractors for any music MCQA benchmark."""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path

from ..errors import UserInputError
from ._harness_args import add_harness_model_arguments, add_seed_argument, seed_of


class NothingBuiltError(UserInputError, RuntimeError):
    """``build`` finished with none of its questions written (each failed a stage)."""


def _nothing_built(report: dict, output: str) -> str:
    """One line for a build that wrote no question: the count, the first failure, the report."""
    from ..distractors.stage_files import report_path

    first = (report.get("failures") or [{}])[0]
    reason = (
        f" (e.g. question {first['id']!r} at {first.get('stage')}: {first.get('error')})"
        if first.get("id") is not None
        else ""
    )
    return (
        f"wrote 0 of {report['n_questions']} questions to {output}: all failed{reason}; each "
        f"question's reason is in {report_path(Path(output)).with_suffix('.md')}"
    )


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "build",
        help="Replace distractors with the ones a text-only model finds most tempting",
        description=(
            "Build a perception-hard benchmark (RUListening): generate candidate distractors "
            "with an instruction LLM (or start from existing pools), clean them, keep the four a "
            "text-only scorer finds most tempting, and write the released RUL JSON schema "
            "sorted by PI plus a build report. Finished questions go to "
            "<output>.<stage>.ckpt.jsonl; rerun the same command to resume."
        ),
        epilog=textwrap.dedent(
            """\
            examples:
              lm-eval-rul build --pools distractors.json --model hf \\
                  --model_args pretrained=Qwen/Qwen2.5-0.5B-Instruct --output rul.json
              lm-eval-rul build --data muchomusic.csv --generator local-chat-completions \\
                  --generator_args model=deepseek-chat,base_url=$URL/v1/chat/completions \\
                  --model hf --model_args pretrained=Qwen/Qwen2.5-0.5B-Instruct \\
                  --strategy paper --seed 0 --output rul_new.json
              lm-eval-rul build --data questions.jsonl --generator local-chat-completions \\
                  --generator_args ... --stage generate --output pools.json
            """
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    source = parser.add_argument_group("input")
    source.add_argument("--pools", default=None, help="Existing pools (released distractors.json)")
    source.add_argument("--data", default=None, help="Questions to generate pools for")
    source.add_argument(
        "--reference",
        default=None,
        help="Questions with their original distractors, for the PI before (with --pools)",
    )
    gen = parser.add_argument_group("generator (stage generate)")
    gen.add_argument("--generator", default=None, help="Harness model name of the LLM")
    gen.add_argument("--generator_args", default="", help="Its model_args, k=v,k=v")
    gen.add_argument("--n_batches", type=int, default=3, help="Sampled replies per question")
    gen.add_argument("--n_per_batch", type=int, default=10, help="Distractors asked per reply")
    gen.add_argument("--temperature", type=float, default=1.0, help="Sampling temperature")
    gen.add_argument("--max_gen_toks", type=int, default=512, help="Tokens per reply")
    gen.add_argument("--retries", type=int, default=3, help="Retries of a failing call")
    gen.add_argument("--backoff", type=float, default=2.0, help="First retry delay (s), doubles")
    scorer = parser.add_argument_group("scorer (stage filter)")
    add_harness_model_arguments(scorer)
    scorer.add_argument(
        "--strategy",
        choices=("paper", "release"),
        default="release",
        help="paper: tournament of random triples; release: chunks of six (default)",
    )
    scorer.add_argument(
        "--prompt_style",
        choices=("paper", "release"),
        default=None,
        help="Option style of the filter prompts: paper '(A) x', release 'A. x;' "
        "(default: the --strategy's own, as in the paper and the released code)",
    )
    scorer.add_argument(
        "--protocol",
        choices=("paper", "release"),
        default="release",
        help="PI protocol of the written PI (default: release, 16 prompts)",
    )
    add_seed_argument(parser, "every choice and the --limit sample")
    parser.add_argument(
        "--stage",
        choices=("all", "generate", "clean", "filter", "write"),
        default="all",
        help="Run one stage only (default: all that apply). generate: --data + --generator -> "
        "pools file (every question kept, failures marked); clean/filter: --pools; write: the "
        "filter checkpoint and <output>.filter.meta.json of the same --output",
    )
    parser.add_argument("--output", required=True, help="Output JSON (released RUL schema)")
    parser.add_argument(
        "--limit",
        type=int,
        default=None,
        help="Only N questions: the seeded sample of --seed, as in pi and a task's --limit "
        "(output in the file's order; a rerun with a larger or no --limit resumes them)",
    )
    parser.add_argument(
        "--long_prompts",
        choices=("error", "skip"),
        default="error",
        help="A scoring prompt longer than the scorer's context: error (default: stop and "
        "name the questions, after finishing the others) or skip (record them as failed, "
        "counted in the report). Never cut from the left",
    )
    parser.add_argument("--no_progress", action="store_true", help="Hide progress bars")
    parser.set_defaults(func=_execute)


def _execute(args: argparse.Namespace) -> None:
    from ..distractors import BuildConfig, run_build
    from ..files import check_output_file
    from .limits import check_count_limit
    from .preflight import check_text_scorer
    from .run_inputs import check_model_name

    check_count_limit(args.limit)
    check_output_file(args.output, flag="--output")  # before any model loads
    if args.stage in ("all", "filter"):  # the stages that load the scorer
        check_text_scorer("build", args.model, args.model_args, device=args.device)
    if args.generator and args.pools is None and args.stage in ("all", "generate"):
        check_model_name(args.generator)

    config = BuildConfig(
        output=args.output,
        pools=args.pools,
        data=args.data,
        reference=args.reference,
        generator=args.generator,
        generator_args=args.generator_args,
        model=args.model,
        model_args=args.model_args,
        device=args.device,
        batch_size=args.batch_size,
        strategy=args.strategy,
        prompt_style=args.prompt_style,
        protocol=args.protocol,
        seed=seed_of(args),
        n_batches=args.n_batches,
        n_per_batch=args.n_per_batch,
        temperature=args.temperature,
        max_gen_toks=args.max_gen_toks,
        retries=args.retries,
        backoff=args.backoff,
        stage=args.stage,
        progress=not args.no_progress,
        limit=args.limit,
        long_prompts=args.long_prompts,
    )
    report = run_build(config)
    if report.get("n_written") == 0 and report.get("n_questions"):
        raise NothingBuiltError(_nothing_built(report, args.output))
    if "n_written" in report:
        line = (
            f"wrote {report['n_written']} of {report['n_questions']} questions to {args.output}; "
            f"{report['n_failed']} failed (see the build report)"
        )
        if "pi_after" in report:
            line += f"; mean PI {report['pi_after']['mean']:.4f}"
        if "pi_change" in report:
            line += f" (before {report['pi_change']['mean_before']:.4f})"
        print(line)
    else:
        print(f"stage {args.stage}: wrote {args.output}")
