"""``lalm-api`` against the loopback server: requests per question and throughput.

Builds a tiny random-weight Qwen2-Audio and a fixture (RUL questions, one synthesised
clip per track), serves the model with :class:`doubles.openai_server.OpenAIAudioServer`
and scores the letters of ``rul_muchomusic`` (all four folds) through ``lalm-api``:

* ``prompt`` path (exact, vLLM's prompt log-probabilities): one HTTP request per letter;
* ``top`` path (approximate, top-k first-token log-probabilities): one per question;
* each with ``num_concurrent`` 1 and 4, and a rerun answered by the resume cache.

HTTP requests are counted by the server. The server runs its model one request at a
time and each request first waits ``--latency`` seconds (a stand-in for network and
queueing time; vLLM would also batch concurrent requests on the GPU), so the gain of
``num_concurrent`` here is the latency it hides, not GPU batching.

Usage:
    python benchmarks/bench_lalm_api.py
    python benchmarks/bench_lalm_api.py --questions 32 --latency 0.1
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

#: The test doubles (tests/doubles/, not in the installed package) import as doubles.<module>.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))


def build(root: Path, n_questions: int) -> tuple[Path, list]:
    """The tiny model and the letter requests of the four folds."""
    from lm_eval.api.instance import Instance

    from lm_eval_rul.mcqa.tasks import (
        doc_to_choice,
        doc_to_text,
        load_rul_muchomusic,
        rul_questions,
    )
    from lm_eval_rul.testing.audio import make_tiny_audio_lm, write_audio_dir
    from lm_eval_rul.testing.fixtures import write_muchomusic_csv, write_rul_json

    model = make_tiny_audio_lm(root / "model", "qwen2_audio")
    rul = write_rul_json(root / "rul.json", n=n_questions)
    csv = write_muchomusic_csv(root / "muchomusic.csv", n=n_questions)
    questions = rul_questions(rul_data_path=str(rul), muchomusic_csv=str(csv))
    write_audio_dir(root / "audio", sorted({q.track for q in questions}))
    audio_dir = str(root / "audio")
    metadata = {"rul_data_path": str(rul), "muchomusic_csv": str(csv), "audio_dir": audio_dir}
    requests = []
    for fold in range(4):
        for n, doc in enumerate(load_rul_muchomusic(fold, **metadata)["test"]):
            task = f"rul_muchomusic_fold{fold}"
            for i, letter in enumerate(doc_to_choice(doc)):
                args = (doc_to_text(doc), f" {letter}")
                requests.append(Instance("loglikelihood", doc, args, i, (task, n, 1)))
    return model, requests


def measure(server, requests: list, **model_args) -> dict:
    from lm_eval_rul.models.api import LALMAPI

    lm = LALMAPI(base_url=server.url, model="tiny-audio", retry_backoff=0, **model_args)
    before = server.posts
    start = time.perf_counter()
    scores = lm.loglikelihood(requests, disable_tqdm=True)
    seconds = time.perf_counter() - start
    return {"posts": server.posts - before, "seconds": seconds, "scores": scores}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=16)
    parser.add_argument("--latency", type=float, default=0.05, help="seconds per request")
    parser.add_argument("--top-logprobs", type=int, default=20)
    args = parser.parse_args()

    import logging

    logging.getLogger("lm_eval_rul").setLevel(logging.ERROR)  # quiet tables and warnings
    from doubles.openai_server import OpenAIAudioServer

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        model, requests = build(root, args.questions)
        prompts = len({(r.task_name, r.doc["id"]) for r in requests})
        rows, scores = [], {}
        with OpenAIAudioServer(model, served_model="tiny-audio", latency=args.latency,
                               top_k_cap=args.top_logprobs) as server:  # fmt: skip
            for path in ("prompt", "top"):
                for concurrent in (1, 4):
                    cache = root / f"{path}_{concurrent}.sqlite"
                    common = {"logprobs": path, "top_logprobs": args.top_logprobs,
                              "num_concurrent": concurrent,
                              "results_cache": str(cache)}  # fmt: skip
                    for run in ("fresh", "rerun"):
                        result = measure(server, requests, **common)
                        rows.append((path, concurrent, run, result))
                        scores[(path, concurrent, run)] = result["scores"]
        base = next(r for p, c, run, r in rows if (p, c, run) == ("prompt", 1, "fresh"))
        print(f"{prompts} (question, fold) prompts, {len(requests)} letters, "
              f"server latency {args.latency:.3f} s/request")  # fmt: skip
        print(f"{'path':8}{'concurrent':>11}{'run':>7}{'HTTP/question':>15}{'seconds':>10}"
              f"{'questions/s':>13}{'speed-up':>10}")  # fmt: skip
        for path, concurrent, run, result in rows:
            rate = prompts / result["seconds"]
            print(f"{path:8}{concurrent:>11}{run:>7}{result['posts'] / prompts:>15.2f}"
                  f"{result['seconds']:>10.2f}{rate:>13.1f}"
                  f"{base['seconds'] / result['seconds']:>9.1f}x")  # fmt: skip
        for path in ("prompt", "top"):
            same = scores[(path, 1, "fresh")] == scores[(path, 4, "fresh")]
            cached = scores[(path, 4, "fresh")] == scores[(path, 4, "rerun")]
            print(f"{path}: num_concurrent 1 and 4 give the same scores: {same}; "
                  f"the cached rerun too: {cached}")  # fmt: skip
        missing = sum(ll == float("-inf") for ll, _ in scores[("top", 1, "fresh")])
        print(f"top-{args.top_logprobs}: {missing} of {len(requests)} letters not among the "
              "top tokens (counted and reported; a random-weight model spreads its "
              "probability over its whole vocabulary)")  # fmt: skip


if __name__ == "__main__":
    main()
