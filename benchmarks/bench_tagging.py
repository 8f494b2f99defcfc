"""Tag scoring: one audio prefix per clip against the naive loop (the audio per tag).

Builds a tiny random-weight Qwen2-Audio with Whisper's own 30 s front end (a real-class
model whose 30 s clip is the 750 audio tokens of the released checkpoint) and the
MagnaTagATune fixture (its 50 tags, clips of ``--seconds``), then runs ``magnatagatune``
through the harness twice:

* ``lalm`` as shipped: the system + audio prefix of each clip is encoded once, and each
  tag's question (two single-token answers, " yes" and " no", read from one row) runs
  against a copy of that cache;
* the naive reference, ``prefix_cache=false``: one full forward, audio encoded, per
  request (two per tag); the naive *per-tag* loop (one forward with the audio per tag,
  both answers read from it) is half of it, and is what the ratio is taken against.

Decoder tokens are counted with a forward hook on the language model (batch × sequence of
every call, padding included); audio encodings with one on the audio tower. Prints both,
the wall times and whether the tag scores agree.

Measured (2 shared CPU cores, 1 clip of 30 s, the 50 tags): prefix 6,739 decoder tokens in
2 language-model forwards, 1 audio encoding per clip, 12.3 s; naive 77,602 tokens in 100
forwards, 100 audio encodings, 323.6 s: 11.5x fewer decoder tokens than the naive path per
request, 5.8x fewer than a per-tag loop, 26x less wall time, scores equal to 2e-6. The tiny
tokenizer spells " yes" and " no" in 3 tokens each (one row per answer instead of one per
tag) and the question in ~30 tokens; with a released tokenizer (one token per answer, ~16
for the question and template tail, 750 audio tokens) the per-tag ratio would be
50 * (770 + 16) / (770 + 50 * 16) = 25x.

With a released tokenizer (``--tokenizer tekken``: a tiny Voxtral whose ``tekken.json``
holds the Tekken vocabulary mistral-common bundles, 131,072 tokens; " yes" and " no" one
token each), measured (2 shared CPU cores, 1 clip of 30 s, the 50 tags): prefix 1,378
decoder tokens in 2 forwards, naive 39,678 in 100 (19,839 for a per-tag loop): **14.4x**
fewer than a per-tag loop, 28.8x fewer than per request, 22x less wall time, scores
equal (difference 0.0). Below 20x because Voxtral hears 12.5 audio tokens a second (375
for 30 s; the shared prefix is 378 tokens) while each tag's row is 20 tokens: the
question is 16-19 Tekken tokens (mean 16.8) plus ``[/INST]``, and the batch pads every
row to the longest. The per-tag ratio is T(P + q) / (P + T·q) with P the prefix and q a
row: 50 · 397 / (378 + 50 · 20) = 14.4; it tends to (P + q) / q ≈ 20 however many tags,
and reaches 20x at 50 tags only with rows of about 12 tokens or fewer, which needs a shorter
question (other scores). Rows without padding (batches of equal length) would give
about 15.7x; a 750-token audio prefix (Qwen2-Audio's 30 s) about 22x with these rows.

Usage:
    python benchmarks/bench_tagging.py
    python benchmarks/bench_tagging.py --tokenizer tekken
    python benchmarks/bench_tagging.py --clips 6 --seconds 10 --batch-size 25
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path


class _TokenCounter:
    def __init__(self, module) -> None:
        self.tokens = 0
        self.calls = 0
        self._handle = module.register_forward_hook(self._hit, with_kwargs=True)

    def _hit(self, _module, args, kwargs, _output) -> None:
        tensor = kwargs.get("inputs_embeds")
        if tensor is None:
            tensor = kwargs.get("input_ids", args[0] if args else None)
        self.calls += 1
        self.tokens += int(tensor.shape[0] * tensor.shape[1])

    def close(self) -> None:
        self._handle.remove()


def run(model_dir: Path, metadata: dict, *, prefix_cache: bool, batch_size: int, clips: int):
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    from lm_eval_rul.models.lalm import LALM
    from lm_eval_rul.registration import tasks_dir
    from lm_eval_rul.testing.counters import ForwardCounter

    lm = LALM(pretrained=str(model_dir), dtype="float32", device="cpu", batch_size=batch_size,
              prefix_cache=prefix_cache, results_cache="none")  # fmt: skip
    manager = TaskManager(include_path=str(tasks_dir()), metadata=metadata)
    modules = dict(lm.model.named_modules())
    language = next(m for n, m in modules.items() if n.split(".")[-1] == "language_model")
    tokens = _TokenCounter(language)
    try:
        with ForwardCounter(lm.model) as counts:
            start = time.perf_counter()
            out = simple_evaluate(model=lm, tasks=["magnatagatune"], task_manager=manager,
                                  log_samples=True, bootstrap_iters=0, limit=clips)  # fmt: skip
            wall = time.perf_counter() - start
    finally:
        tokens.close()
    rows = out["samples"]["magnatagatune"]
    scores = [s for r in rows for s in r["roc_auc"]["scores"]]
    return {"tokens": tokens.tokens, "lm_calls": tokens.calls, "audio": counts.audio_rows,
            "clips": len(rows), "tags": len(rows[0]["doc"]["tags"]), "wall": wall,
            "scores": scores}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0, help="clip length (default 30)")
    parser.add_argument("--batch-size", type=int, default=50, help="tag questions per forward")
    parser.add_argument("--clips", type=int, default=1, help="clips scored (default 1: the "
                        "naive loop costs a 30 s forward per request)")  # fmt: skip
    parser.add_argument("--tokenizer", choices=("test", "tekken"), default="test",
                        help="test: the tiny Qwen2-Audio with the test BPE (default); tekken: "
                        "a tiny Voxtral whose tekken.json holds the released Tekken vocabulary "
                        "mistral-common bundles (131,072 tokens, offline)")  # fmt: skip
    args = parser.parse_args()
    from lm_eval_rul.testing.audio import make_tiny_audio_lm
    from lm_eval_rul.testing.tagging import write_mtt
    from lm_eval_rul.testing.voxtral import make_tiny_voxtral

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        if args.tokenizer == "tekken":
            model = make_tiny_voxtral(root / "model", released_vocabulary=True)
        else:
            model = make_tiny_audio_lm(root / "model", "qwen2_audio", whisper_front_end=True)
        mtt = write_mtt(root / "mtt", seconds=args.seconds)
        metadata = {
            "mtt_annotations": str(mtt["annotations"]),
            "mtt_split_file": str(mtt["split"]),
            "mtt_audio_dir": str(mtt["audio"]),
            "tagging_seconds": args.seconds,
        }
        ours = run(model, metadata, prefix_cache=True, batch_size=args.batch_size, clips=args.clips)
        naive = run(model, metadata, prefix_cache=False, batch_size=1, clips=args.clips)
    per_tag_tokens = naive["tokens"] / 2  # one forward per tag reads both answers
    clips, tags = ours["clips"], ours["tags"]
    diff = max(abs(a - b) for a, b in zip(ours["scores"], naive["scores"], strict=True))
    print(json.dumps({
        "clips": clips, "tags": tags, "seconds": args.seconds, "tokenizer": args.tokenizer,
        "prefix": {"decoder_tokens": ours["tokens"], "lm_forwards": ours["lm_calls"],
                   "audio_encodings_per_clip": ours["audio"] / clips,
                   "wall_s": round(ours["wall"], 2)},
        "naive_per_request": {"decoder_tokens": naive["tokens"], "lm_forwards": naive["lm_calls"],
                              "audio_encodings_per_clip": naive["audio"] / clips,
                              "wall_s": round(naive["wall"], 2)},
        "naive_per_tag_decoder_tokens": per_tag_tokens,
        "decoder_token_ratio_vs_per_tag_loop": round(per_tag_tokens / ours["tokens"], 2),
        "decoder_token_ratio_vs_per_request": round(naive["tokens"] / ours["tokens"], 2),
        "wall_ratio": round(naive["wall"] / ours["wall"], 2),
        "max_abs_score_difference": diff,
    }, indent=2))  # fmt: skip


if __name__ == "__main__":
    main()
