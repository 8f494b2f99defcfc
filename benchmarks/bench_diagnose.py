"""``diagnose``'s embedding step: encode throughput with the cache cold vs warm.

Every option text of the dataset (correct answers and distractors, repeats embedded
once) is embedded in each space, first into an empty cache (cold: model load, batched
forward passes, cache writes), then again with fresh encoders against the filled cache
(warm: cache reads only). Prints distinct texts per second, forward passes and the
largest difference between cold and warm embeddings.

Usage::

    python benchmarks/bench_diagnose.py                     # fixture rows, tiny encoders
    python benchmarks/bench_diagnose.py --data /path/RUL-MuchoMusic.json
    python benchmarks/bench_diagnose.py --data /path/distractors.json --batch_size 128
    python benchmarks/bench_diagnose.py --data rul.json --t5 google-t5/t5-base \\
        --clap laion/larger_clap_music --device cuda

Exit status 1 if the warm run runs any forward pass or its embeddings differ from the
cold run's.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from lm_eval_rul.diagnose.cache import EmbeddingCache, embed_texts
from lm_eval_rul.diagnose.encoders import make_encoder
from lm_eval_rul.diagnose.inputs import load_dataset_inputs
from lm_eval_rul.testing.encoders import make_tiny_clap, make_tiny_t5
from lm_eval_rul.testing.fixtures import write_rul_json


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=None, help="question or pools file (default: fixture)")
    parser.add_argument("--t5", default=None, help="T5 checkpoint (default: tiny local model)")
    parser.add_argument("--clap", default=None, help="CLAP checkpoint (default: tiny local model)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--batch_size", type=int, default=64)
    args = parser.parse_args(argv)

    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        checkpoints = {
            "t5": args.t5 or str(make_tiny_t5(tmp / "t5")),
            "clap": args.clap or str(make_tiny_clap(tmp / "clap")),
        }
        data = Path(args.data) if args.data else write_rul_json(tmp / "q.json", n=200)
        (dataset,) = load_dataset_inputs([str(data)])
        texts = [t for q in dataset.questions for t in (q.correct_answer, *q.distractors)]
        print(f"data: {data} ({dataset.kind}, {len(dataset.questions)} questions)")
        print(f"texts: {len(texts)} ({len(set(texts))} distinct)  batch size: {args.batch_size}"
              f"  device: {args.device}")  # fmt: skip
        header = f"{'space':6}{'run':6}{'load s':>8}{'encode s':>10}{'texts/s':>11}"
        print(f"{header}{'forward':>9}{'cached':>8}{'encoded':>9}")
        for space, checkpoint in checkpoints.items():
            cache_path = tmp / f"{space}.sqlite"
            results = {}
            for run in ("cold", "warm"):
                encoder = make_encoder(space, checkpoint, device=args.device)
                load = 0.0
                if run == "cold":
                    start = time.perf_counter()
                    encoder.load()
                    load = time.perf_counter() - start
                with EmbeddingCache(cache_path) as cache:
                    emb = embed_texts(
                        texts, encoder, cache=cache, batch_size=args.batch_size, progress=False
                    )
                s = emb.stats
                rate = s.n_unique / s.seconds if s.seconds > 0 else float("inf")
                print(
                    f"{space:6}{run:6}{load:>8.2f}{s.seconds:>10.2f}{rate:>11.0f}"
                    f"{s.n_forward:>9}{s.n_cached:>8}{s.n_encoded:>9}"
                )
                results[run] = emb
            cold, warm = results["cold"], results["warm"]
            diff = float(np.max(np.abs(cold.matrix - warm.matrix))) if cold.matrix.size else 0.0
            print(f"{space}: warm speed-up {cold.stats.seconds / warm.stats.seconds:.0f}x, "
                  f"max |cold - warm| {diff:.1e}")  # fmt: skip
            ok &= warm.stats.n_forward == 0 and diff == 0.0
    print("PASS" if ok else "FAIL: the warm run must read every embedding from the cache")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
