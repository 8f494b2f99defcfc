"""Cost of the binary-choice and true/false studies: forward passes per item and per label.

Builds a tiny random-weight audio LM of a real class (default Qwen2-Audio, which hears
2 s, so the fixture's 9 s recordings are asked about in 5 windows) and the factual
fixtures (MusicNet, FMA), then runs through the harness:

* ``factual_instrument_binary`` and ``factual_genre_binary`` (log-likelihood of A/B);
* ``factual_instrument_truefalse`` and ``factual_genre_truefalse`` (" true" vs " false"
  for every label of the vocabulary: 11 instruments, 15 fixture genres);
* ``factual_instrument_truefalse_gen`` (generation, one document per label);

each log-likelihood task with ``lalm``'s audio prefix cache and without it
(``prefix_cache=false``: one full forward per continuation, the audio encoded every time).
Forward passes are counted with hooks on the real audio encoder and language model
(:class:`lm_eval_rul.testing.counters.ForwardCounter`). The script prints, per task and
path, audio encodes per window, LM calls and LM rows per item (binary) or per (window,
label) (true/false), and whether both paths give the same log-likelihoods.

Usage:
    python benchmarks/bench_factual_studies.py
    python benchmarks/bench_factual_studies.py --batch-size 16
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

TASKS = (
    "factual_instrument_binary",
    "factual_genre_binary",
    "factual_instrument_truefalse",
    "factual_genre_truefalse",
)
GEN_TASK = "factual_instrument_truefalse_gen"


def run(model_dir: Path, metadata: dict, task: str, *, prefix_cache: bool, batch_size: int):
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    from lm_eval_rul.models.lalm import LALM
    from lm_eval_rul.registration import tasks_dir
    from lm_eval_rul.testing.counters import ForwardCounter

    lm = LALM(
        pretrained=str(model_dir),
        dtype="float32",
        device="cpu",
        batch_size=batch_size,
        prefix_cache=prefix_cache,
        max_gen_toks=4,
    )
    manager = TaskManager(include_path=str(tasks_dir()), include_defaults=False, metadata=metadata)
    with ForwardCounter(lm.model) as counts:
        start = time.perf_counter()
        out = simple_evaluate(model=lm, tasks=[task], task_manager=manager, log_samples=True)
        seconds = time.perf_counter() - start
    rows = out["samples"][task]
    windows = {(r["doc"]["id"], r["doc"]["chunk"]) for r in rows}
    logliks = {}
    for row in rows:
        key = (row["doc"]["id"], row["doc"]["chunk"], row["doc"].get("label"))
        if row["doc"]["scoring"] == "loglikelihood":
            logliks[key] = [float(r[0][0]) for r in row["resps"]]
    return {
        "docs": len(rows),
        "items": len({r["doc"]["id"] for r in rows}),
        "windows": len(windows),
        "audio": counts.audio_rows,
        "lm_calls": counts.language,
        "lm_rows": counts.language_rows,
        "seconds": seconds,
        "logliks": logliks,
        "metrics": out["results"][task],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", default="qwen2_audio", help="tiny model family")
    parser.add_argument("--batch-size", type=int, default=8, help="rows per forward")
    args = parser.parse_args()

    from lm_eval_rul.testing.audio import make_tiny_audio_lm
    from lm_eval_rul.testing.factual import write_factual_datasets

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        model_dir = make_tiny_audio_lm(root / "model", args.family)
        metadata = {**write_factual_datasets(root / "data"), "chunk_seconds": 2}
        run(model_dir, metadata, TASKS[0], prefix_cache=True, batch_size=args.batch_size)
        results = {}
        for task in TASKS:
            for cached in (True, False):
                results[(task, cached)] = run(
                    model_dir, metadata, task, prefix_cache=cached, batch_size=args.batch_size
                )
        gen = run(model_dir, metadata, GEN_TASK, prefix_cache=True, batch_size=args.batch_size)

    print(f"tiny {args.family}, batch_size={args.batch_size}, CPU; windows of 2 s")
    print(
        f"{'task':<34}{'path':<7}{'items':>6}{'docs':>6}{'audio/window':>13}"
        f"{'LM calls/doc':>13}{'LM rows/doc':>12}{'LM calls/item':>14}{'seconds':>9}"
    )
    for (task, cached), r in [*results.items(), ((GEN_TASK, None), gen)]:
        path = "gen" if cached is None else ("cached" if cached else "naive")
        print(
            f"{task:<34}{path:<7}{r['items']:>6}{r['docs']:>6}{r['audio'] / r['windows']:>13.2f}"
            f"{r['lm_calls'] / r['docs']:>13.3f}{r['lm_rows'] / r['docs']:>12.3f}"
            f"{r['lm_calls'] / r['items']:>14.2f}{r['seconds']:>9.2f}"
        )
    print(
        "doc = one window of an item (binary) or one window and label (true/false); "
        "audio/window = clips encoded per window; the cached path's LM calls and rows "
        "include one prefix forward (one row) per window"
    )
    for task in TASKS:
        cached, naive = results[(task, True)], results[(task, False)]
        diff = max(
            abs(a - b)
            for key in cached["logliks"]
            for a, b in zip(cached["logliks"][key], naive["logliks"][key], strict=True)
        )
        print(
            f"{task}: same log-likelihoods {diff < 1e-4} (max |cached - naive| = {diff:.1e}); "
            f"speed-up {naive['seconds'] / cached['seconds']:.1f}x; audio encodes "
            f"{cached['audio']} vs {naive['audio']}"
        )


if __name__ == "__main__":
    main()
