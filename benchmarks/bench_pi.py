"""PI under the released 16-prompt protocol: our one-forward-per-prompt path vs one call per letter.

The released RUListening code scores each option letter with its own model call. We
ask all letters of a prompt as continuations of one shared context in one
``loglikelihood`` call, so the harness's ``hf`` model serves them from one forward
pass. This script measures both in the same run, with the same model, on the same
prompts: forward passes (counted by a hook on the torch model, in sequences), wall
time, and the largest PI difference.

Usage::

    python benchmarks/bench_pi.py                       # 50 fixture questions, tiny model
    python benchmarks/bench_pi.py --data /path/RUL-MuchoMusic.json --n 100
    python benchmarks/bench_pi.py --model_args pretrained=Qwen/Qwen2.5-0.5B-Instruct --device cuda

Exit status 1 if the PI values differ by more than 1e-5 or the forward-pass ratio is
below 4.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from lm_eval_rul.distractors import compute_pi, release_prompts
from lm_eval_rul.mcqa import letter_instances, mean_perceptual_index, perceptual_index
from lm_eval_rul.questions import DEFAULT_SEED, load_questions
from lm_eval_rul.registration import create_lm
from lm_eval_rul.testing.counters import CallCounter
from lm_eval_rul.testing.fixtures import write_rul_json
from lm_eval_rul.testing.text import make_tiny_causal_lm


def per_letter_pi(lm, questions, seed: int) -> list[float]:
    """The released code's approach: every letter of every prompt in its own model call."""
    pis = []
    for q in questions:
        p_correct = []
        for prompt in release_prompts(q, seed=seed):
            instances = letter_instances([prompt.text], [len(prompt.options)])
            logliks = [lm.loglikelihood([inst], disable_tqdm=True)[0][0] for inst in instances]
            p_correct.append(1.0 - perceptual_index(logliks, prompt.gold))
        pis.append(mean_perceptual_index(p_correct))
    return pis


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=50, help="Questions (default 50)")
    parser.add_argument("--data", default=None, help="Question file (default: fixture rows)")
    parser.add_argument("--model_args", default=None, help="hf model_args (default: tiny model)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--batch_size", default="1", help="Batch size of our path (default 1)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        if args.model_args is None:
            model_dir = make_tiny_causal_lm(Path(tmp) / "lm")
            args.model_args = f"pretrained={model_dir},dtype=float32"
        data = Path(args.data) if args.data else write_rul_json(Path(tmp) / "q.json", n=args.n)
        questions = load_questions(data)[: args.n]
        lm = create_lm("hf", args.model_args, device=args.device, batch_size=args.batch_size)
        baseline_lm = create_lm("hf", args.model_args, device=args.device, batch_size=1)

        counter = CallCounter(lm.model)
        start = time.perf_counter()
        ours = compute_pi(questions, lm, protocol="release", seed=args.seed, progress=False)
        ours_time = time.perf_counter() - start
        ours_calls, ours_seqs = counter.reset()
        counter.close()

        counter = CallCounter(baseline_lm.model)
        start = time.perf_counter()
        baseline = per_letter_pi(baseline_lm, questions, args.seed)
        base_time = time.perf_counter() - start
        base_calls, base_seqs = counter.reset()
        counter.close()

    n_prompts = sum(r.n_prompts for r in ours)
    n_letters = sum(len(p["options"]) for r in ours for p in r.prompts)
    max_diff = float(np.max(np.abs(np.array([r.pi for r in ours]) - np.array(baseline))))
    ratio = base_seqs / max(ours_seqs, 1)
    print(f"questions: {len(questions)}  prompts: {n_prompts}  letter requests: {n_letters}")
    print(f"model: hf {args.model_args}  device: {args.device}  our batch size: {args.batch_size}")
    print(f"{'':24}{'ours':>12}{'per letter':>14}")
    print(f"{'forward sequences':24}{ours_seqs:>12}{base_seqs:>14}")
    print(f"{'forward calls':24}{ours_calls:>12}{base_calls:>14}")
    print(f"{'wall time (s)':24}{ours_time:>12.2f}{base_time:>14.2f}")
    print(f"forward-pass ratio: {ratio:.2f}x fewer  speed-up: {base_time / ours_time:.2f}x")
    print(f"max |PI difference|: {max_diff:.2e}")
    print(f"mean PI: ours {np.mean([r.pi for r in ours]):.6f}  per letter {np.mean(baseline):.6f}")
    ok = max_diff <= 1e-5 and ratio >= 4
    print("PASS" if ok else "FAIL: PI must agree to 1e-5 with >= 4x fewer forward passes")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
