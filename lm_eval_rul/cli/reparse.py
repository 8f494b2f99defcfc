"""``lm-eval-rul reparse``: re-score factual runs with an LLM parser (no audio model rerun)."""

from __future__ import annotations

import argparse
import textwrap


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "reparse",
        help="Re-parse the answers of finished factual runs with an LLM parser",
        description=(
            "Read the logged answers of factual runs (harness --output_path folders made "
            "with --log_samples), have an LLM extract the labels under the paper's eight "
            "parsing rules (and, for mood and regional style, the closed label list), and "
            "write a copy of the runs with the new labels and item-level figures into OUT. "
            "The audio model is not run again. Replies are cached by (parser model, prompt "
            "version, answer), so a second pass costs no call; malformed replies are asked "
            "again a bounded number of times, then counted (never guessed). Compare the "
            "parsers with: lm-eval-rul report RUN_DIR... --parsed NAME=OUT."
        ),
        epilog=textwrap.dedent(
            """\
            examples:
              lm-eval-rul reparse runs/original runs/random --out runs_gpt \\
                  --parser_model local-chat-completions \\
                  --parser_args model=gpt-4.1-mini,base_url=https://api.openai.com/v1/chat/completions,num_concurrent=8
              lm-eval-rul reparse runs/* --out runs_qwen --parser_model vllm \\
                  --parser_args pretrained=Qwen/Qwen2.5-7B-Instruct
              lm-eval-rul report runs/original runs/random --parsed gpt=runs_gpt \\
                  --parsed qwen=runs_qwen --out report
            """
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "run_dirs", nargs="+", metavar="RUN_DIR", help="a harness --output_path folder"
    )
    parser.add_argument("--out", required=True, metavar="DIR", help="folder to write the copy to")
    parser.add_argument(
        "--parser_model",
        required=True,
        help="harness model name of the parser (local-chat-completions, hf, vllm, ...)",
    )
    parser.add_argument("--parser_args", default="", help="its model_args, k=v,k=v")
    parser.add_argument(
        "--name", default=None, help="the parser's name (default: its model= or pretrained=)"
    )
    parser.add_argument(
        "--retries",
        type=int,
        default=2,
        help="re-asks of a malformed reply, and retries of a failing call (default 2)",
    )
    parser.add_argument("--max_gen_toks", type=int, default=128, help="tokens per reply (128)")
    parser.add_argument(
        "--chunk_size", type=int, default=32, help="answers per generate_until call (32)"
    )
    parser.add_argument("--device", default=None, help="device of a local parser model")
    parser.add_argument("--batch_size", default=None, help="batch size of a local parser model")
    parser.add_argument(
        "--genres_csv",
        default=None,
        metavar="FILE",
        help="FMA genres.csv, when the path logged with the genre runs is not on this machine",
    )
    parser.add_argument(
        "--cache",
        default=None,
        metavar="FILE",
        help="parser cache (default $LM_EVAL_RUL_CACHE/factual_parser.sqlite)",
    )
    parser.add_argument("--no_cache", action="store_true", help="neither read nor write the cache")
    parser.add_argument("--no_progress", action="store_true", help="hide the progress bar")
    parser.set_defaults(func=_execute)


def _model_args(text: str) -> dict[str, str]:
    from lm_eval.utils import simple_parse_args_string

    return {k: str(v) for k, v in simple_parse_args_string(text or "").items()}


def _execute(args: argparse.Namespace) -> None:
    """Re-parse; bad input raises a ``UserInputError`` (printed by the CLI, exit 2)."""
    from pathlib import Path

    from ..cache import ResultCache
    from ..factual.prompts import PARSER_PROMPT_VERSION
    from ..factual.reading.llm_parser import LLMParser, parser_scope
    from ..factual.reading.reparse import reparse_runs
    from ..questions import cache_dir
    from ..registration import create_lm

    model_args = _model_args(args.parser_args)
    scope = parser_scope(args.parser_model, model_args)
    name = args.name or scope["model"] or args.parser_model
    cache = None
    if not args.no_cache:
        cache = ResultCache(args.cache or Path(cache_dir()) / "factual_parser.sqlite", scope=scope)
    lm = create_lm(
        args.parser_model,
        args.parser_args,
        device=args.device,
        batch_size=args.batch_size,
        flag="--parser_args",
    )
    parser = LLMParser(
        lm,
        name=name,
        cache=cache,
        retries=args.retries,
        chunk_size=args.chunk_size,
        max_gen_toks=args.max_gen_toks,
    )
    info = {**scope, "name": name}
    summary = reparse_runs(
        args.run_dirs,
        parser,
        args.out,
        parser_info=info,
        genres_csv=args.genres_csv,
        progress=not args.no_progress,
    )
    stats = summary.stats
    print(
        f"parser {name} ({PARSER_PROMPT_VERSION}): {stats.queries} answers, {stats.unique} "
        f"distinct; {stats.cache_hits} from the cache, {stats.requests} requests, "
        f"{stats.retried} re-asked, {stats.malformed} still malformed, {stats.empty} empty"
    )
    for task, count in sorted(summary.windows.items()):
        bad, items = summary.malformed_windows.get(task, 0), summary.items_left_out.get(task, 0)
        note = (
            f", {bad} malformed (left out of the figures, never scored as empty; "
            f"{items} item{'' if items == 1 else 's'} without any read window left out)"
            if bad
            else ""
        )
        print(f"  {task}: {count} windows{note}")
    print(f"wrote {len(summary.written)} results files under {args.out}")
    if cache is not None:
        cache.close()
