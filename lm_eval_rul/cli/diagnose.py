"""``lm-eval-rul diagnose``: distractor similarity in text and music space, and a QA audit."""

from __future__ import annotations

import argparse
import textwrap


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "diagnose",
        help="Distractor similarity (T5 / CLAP) and a QA audit of a benchmark's questions",
        description=(
            "Check a music multiple-choice benchmark: the cosine similarity of every "
            "distractor to its correct answer under a T5 encoder and CLAP's text tower "
            "(close as text, spread in music is what perception-hard distractors look like), "
            "near-identical and duplicate options, and a QA audit of questions a listener "
            "cannot answer from the audio (rule flags, plus an optional LLM judge). DATASET "
            "is any question file the other commands read, or a distractor-pools file; give "
            "several to compare them. Writes OUT/diagnose.md, diagnose.json, findings.jsonl "
            "and figures/*.png."
        ),
        epilog=textwrap.dedent(
            """\
            examples:
              lm-eval-rul diagnose RUL-MuchoMusic.json --out diag
              lm-eval-rul diagnose mc=muchomusic.csv rul=RUL-MuchoMusic.json --out diag \\
                  --t5 google-t5/t5-base --clap laion/larger_clap_music --device cuda
              lm-eval-rul diagnose distractors.json --out diag_pools --near_t5 0.9
              lm-eval-rul diagnose my_benchmark.jsonl --out diag --no_similarity \\
                  --judge local-chat-completions \\
                  --judge_args model=gpt-4.1-mini,base_url=$URL/v1/chat/completions
            """
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "datasets",
        nargs="+",
        metavar="[NAME=]DATASET",
        help="question file (RUL JSON, MuChoMusic CSV, JSONL/CSV/parquet) or pools file; "
        "NAME labels it in the report (default: the file stem)",
    )
    parser.add_argument("--out", required=True, metavar="DIR", help="folder to write")
    sim = parser.add_argument_group("similarity")
    sim.add_argument(
        "--t5",
        default=None,
        help="T5 checkpoint, hub id or folder (default google-t5/t5-base; 'none' skips the space)",
    )
    sim.add_argument(
        "--clap",
        default=None,
        help="CLAP checkpoint (default laion/larger_clap_music, LAION's "
        "music CLAP; 'none' skips the space)",
    )
    sim.add_argument("--no_similarity", action="store_true", help="audit only: load no encoder")
    sim.add_argument(
        "--near_t5", type=float, default=None, help="T5 cosine counted near-identical (0.95)"
    )
    sim.add_argument(
        "--near_clap", type=float, default=None, help="CLAP cosine counted near-identical (0.95)"
    )
    sim.add_argument("--device", default=None, help="torch device (default: cuda if available)")
    sim.add_argument("--batch_size", type=int, default=64, help="texts per forward pass (64)")
    sim.add_argument("--max_length", type=int, default=None, help="token limit per text")
    sim.add_argument(
        "--cache",
        default=None,
        metavar="FILE",
        help="embedding cache (default $LM_EVAL_RUL_CACHE/embeddings.sqlite)",
    )
    sim.add_argument("--no_cache", action="store_true", help="neither read nor write the cache")
    judge = parser.add_argument_group("LLM judge (optional)")
    judge.add_argument("--judge", default=None, help="harness model name of the judge")
    judge.add_argument("--judge_args", default="", help="its model_args, k=v,k=v")
    judge.add_argument("--judge_limit", type=int, default=None, help="judge the first N only")
    judge.add_argument("--judge_max_gen_toks", type=int, default=128, help="tokens per reply")
    judge.add_argument("--judge_retries", type=int, default=2, help="retries of a failing call")
    parser.add_argument("--examples", type=int, default=5, help="examples per rule in the .md")
    parser.add_argument("--no_progress", action="store_true", help="hide progress bars")
    parser.set_defaults(func=_execute)


def _execute(args: argparse.Namespace) -> None:
    from ..diagnose import DiagnoseConfig, run_diagnose, write_outputs
    from ..diagnose.encoders import DEFAULT_CLAP, DEFAULT_T5
    from ..diagnose.similarity import DEFAULT_NEAR

    near = dict(DEFAULT_NEAR)
    given = {"t5": args.near_t5, "clap": args.near_clap}
    near.update({space: value for space, value in given.items() if value is not None})
    config = DiagnoseConfig(
        datasets=args.datasets,
        t5=args.t5 if args.t5 is not None else DEFAULT_T5,
        clap=args.clap if args.clap is not None else DEFAULT_CLAP,
        similarity=not args.no_similarity,
        near=near,
        device=args.device,
        batch_size=args.batch_size,
        max_length=args.max_length,
        cache=args.cache,
        use_cache=not args.no_cache,
        judge=args.judge,
        judge_args=args.judge_args,
        judge_limit=args.judge_limit,
        judge_max_gen_toks=args.judge_max_gen_toks,
        judge_retries=args.judge_retries,
        progress=not args.no_progress,
    )
    diagnosis = run_diagnose(config)
    paths = write_outputs(diagnosis, args.out, n_examples=args.examples)
    for d in diagnosis.summary["datasets"]:
        audit = d["audit"]
        counts = ", ".join(
            f"{rule} {audit[rule]['questions']}" for rule in audit if rule != "any_rule"
        )
        line = f"{d['name']}: {d['n_questions']} questions; flagged {counts}"
        for space, s in d["similarity"].items():
            if s.get("n"):
                line += f"; {space} mean similarity {s['mean']:.3f}"
        print(line)
    print(f"wrote {paths['markdown']}, {paths['json']} and {paths['findings']}")
