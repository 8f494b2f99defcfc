"""Letter scoring with audio: prefix-cached ``lalm`` against the naive path, same run.

Builds a tiny random-weight audio LM of a real class (default Qwen2-Audio) and a
fixture (RUL questions whose tracks are shared by pairs of questions, one synthesised
clip per track), then runs ``rul_muchomusic`` (4 folds) through the harness twice:

* cached: ``lalm`` as shipped (the system + audio prefix is encoded once per clip;
  each (question, fold) costs one batched forward of its suffix);
* naive: ``prefix_cache=false`` (one full forward per choice letter, the audio
  re-encoded for every request);
* cached with a one-clip decode cache (the LRU of long clips): requests are grouped by
  :func:`lm_eval_rul.audio.condition_key`, which reads no audio, so each clip is still
  decoded once (grouping by the waveform used to decode every clip twice here).

Forward passes are counted with forward hooks on the model's real audio encoder
(``*.audio_tower``) and language model (``*.language_model``); clip decodes with
:func:`lm_eval_rul.audio.decode_count`. The script prints both paths side by side and
whether their per-choice log-likelihoods agree (max abs difference).

Usage:
    python benchmarks/bench_lalm_scoring.py
    python benchmarks/bench_lalm_scoring.py --family audioflamingo3 --questions 48 --batch-size 8
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path


def build_fixture(root: Path, n_questions: int) -> dict[str, str]:
    from lm_eval_rul.mcqa.tasks import rul_questions
    from lm_eval_rul.testing.audio import write_audio_dir
    from lm_eval_rul.testing.fixtures import write_muchomusic_csv, write_rul_json

    rul = write_rul_json(root / "rul.json", n=n_questions)
    csv = write_muchomusic_csv(root / "muchomusic.csv", n=n_questions)
    questions = rul_questions(rul_data_path=str(rul), muchomusic_csv=str(csv))
    tracks = sorted({q.track for q in questions})
    write_audio_dir(root / "audio", tracks)
    return {"rul_data_path": str(rul), "muchomusic_csv": str(csv), "audio_dir": str(root / "audio")}


def run(
    model_dir: Path,
    metadata: dict[str, str],
    *,
    prefix_cache: bool,
    batch_size: int,
    cache_bytes: int | None = None,
):
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    from lm_eval_rul import audio
    from lm_eval_rul.audio import clear_audio_cache, decode_count
    from lm_eval_rul.models.lalm import LALM
    from lm_eval_rul.registration import tasks_dir
    from lm_eval_rul.testing.counters import ForwardCounter

    lm = LALM(
        pretrained=str(model_dir),
        dtype="float32",
        device="cpu",
        batch_size=batch_size,
        prefix_cache=prefix_cache,
        results_cache="none",  # measure the model, not results read back from disk
    )
    manager = TaskManager(include_path=str(tasks_dir()), metadata=metadata)
    clear_audio_cache()
    default_bytes = audio.CLIP_CACHE.max_bytes
    audio.CLIP_CACHE.max_bytes = default_bytes if cache_bytes is None else cache_bytes
    try:
        with ForwardCounter(lm.model) as counts:
            start = time.perf_counter()
            out = simple_evaluate(
                model=lm, tasks=["rul_muchomusic"], task_manager=manager, log_samples=True
            )
            seconds = time.perf_counter() - start
    finally:
        audio.CLIP_CACHE.max_bytes = default_bytes
    logliks, clips = {}, set()
    for task, rows in out["samples"].items():
        for row in rows:
            logliks[(task, row["doc"]["id"])] = [float(r[0][0]) for r in row["resps"]]
            clips.add(row["doc"]["audio_ref"])
    items = len(logliks)
    return {
        "items": items,
        "clips": len(clips),
        "requests": 4 * items,
        "lm_forwards": counts.language,
        "lm_rows": counts.language_rows,
        "audio_encodes": counts.audio,
        "decodes": decode_count(),
        "seconds": seconds,
        "logliks": logliks,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", default="qwen2_audio", help="tiny model family")
    parser.add_argument("--questions", type=int, default=24, help="fixture questions")
    parser.add_argument("--batch-size", type=int, default=8, help="questions per forward")
    args = parser.parse_args()

    from lm_eval_rul.testing.audio import make_tiny_audio_lm

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        model_dir = make_tiny_audio_lm(root / "model", args.family)
        metadata = build_fixture(root, args.questions)
        # warm-up (imports, librosa resampler) so neither path pays it
        run(model_dir, metadata, prefix_cache=True, batch_size=args.batch_size)
        cached = run(model_dir, metadata, prefix_cache=True, batch_size=args.batch_size)
        naive = run(model_dir, metadata, prefix_cache=False, batch_size=args.batch_size)
        small = run(
            model_dir, metadata, prefix_cache=True, batch_size=args.batch_size, cache_bytes=1
        )

    diff = max(
        abs(a - b)
        for key in cached["logliks"]
        for a, b in zip(cached["logliks"][key], naive["logliks"][key], strict=True)
    )
    same_keys = cached["logliks"].keys() == naive["logliks"].keys()
    print(
        f"rul_muchomusic, 4 folds: {cached['items']} (question, fold) items, "
        f"{cached['requests']} letter requests, {cached['clips']} clips; "
        f"tiny {args.family}, batch_size={args.batch_size}, CPU"
    )
    header = f"{'path':<8}{'LM calls/item':>14}{'LM rows/item':>13}{'encodes/clip':>14}"
    header += f"{'decodes/clip':>14}"
    print(header + f"{'items/s':>10}{'seconds':>10}")
    for name, r in (("cached", cached), ("naive", naive), ("1-clip", small)):
        print(
            f"{name:<8}{r['lm_forwards'] / r['items']:>14.3f}"
            f"{(r['lm_rows'] - r['clips'] * (name != 'naive')) / r['items']:>13.2f}"
            f"{r['audio_encodes'] / r['clips']:>14.2f}{r['decodes'] / r['clips']:>14.2f}"
            f"{r['items'] / r['seconds']:>10.1f}{r['seconds']:>10.2f}"
        )
    print(
        f"speed-up {naive['seconds'] / cached['seconds']:.1f}x; LM forward calls "
        f"{cached['lm_forwards']} vs {naive['lm_forwards']} "
        f"(cached = {cached['clips']} prefixes + ceil(items per clip / batch) suffix batches)"
    )
    print("LM rows/item: batch rows per (question, fold), prefix rows excluded")
    print("1-clip: cached with a decode cache that holds one clip (the LRU of long clips)")
    print(
        f"same log-likelihoods: {same_keys and diff < 1e-4} "
        f"(max |cached - naive| = {diff:.2e} over {cached['requests']} letters)"
    )
    print(json.dumps({k: v for k, v in cached.items() if k != "logliks"}))


if __name__ == "__main__":
    main()
