"""Text-only letter scoring of RUL-MuChoMusic: validity of the folds and cost per question.

Builds (or takes) a tiny random-weight causal LM, then for the given data file:

1. checks every fold: one doc per question, four distinct options, exactly one of them
   the correct answer, the dropped distractor absent;
2. runs the four folds through lm-eval's ``hf`` model twice and checks that the
   per-sample logs are identical;
3. counts forward passes of the torch model per (question, fold), and the time, with the
   harness's logits cache on (all four letters from one forward) against the same run
   with ``logits_cache=False`` (one forward per letter), in the same process.

Usage:
    python benchmarks/bench_text_scoring.py                       # 64-question fixture
    python benchmarks/bench_text_scoring.py --data path/to/RUL-MuchoMusic.json
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

FOLDS = [f"rul_muchomusic_fold{k}" for k in range(4)]


def check_folds(data: Path) -> int:
    from lm_eval_rul.mcqa import make_docs
    from lm_eval_rul.questions import read_rul_json

    questions = read_rul_json(data)
    for fold in range(4):
        docs = make_docs(questions, benchmark="rul_muchomusic", fold=fold)
        assert len(docs) == len(questions) == len({d["id"] for d in docs})
        for doc, q in zip(docs, questions, strict=True):
            assert len(doc["options"]) == 4 and len(set(doc["options"])) == 4, doc["id"]
            assert [o == q.correct_answer for o in doc["options"]].count(True) == 1, doc["id"]
            assert doc["options"][doc["gold"]] == q.correct_answer
            assert q.distractors[fold] not in doc["options"]
    return len(questions)


def evaluate(model_dir: Path, data: Path, *, logits_cache: bool, limit: int | None):
    import torch
    from lm_eval import simple_evaluate
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks import TaskManager

    from lm_eval_rul.registration import tasks_dir

    lm = HFLM(
        pretrained=str(model_dir),
        dtype="float32",
        device="cpu",
        batch_size=16,
        logits_cache=logits_cache,
    )
    forwards = {"rows": 0}

    def count(_module, args, kwargs, _output):
        tokens = args[0] if args else kwargs.get("input_ids", kwargs.get("inputs_embeds"))
        forwards["rows"] += int(tokens.shape[0])

    handle = lm.model.register_forward_hook(count, with_kwargs=True)
    manager = TaskManager(include_path=str(tasks_dir()), metadata={"data_path": str(data)})
    start = time.perf_counter()
    with torch.no_grad():
        out = simple_evaluate(
            model=lm,
            tasks=["rul_muchomusic"],
            task_manager=manager,
            log_samples=True,
            limit=limit,
            verbosity="ERROR",
        )
    seconds = time.perf_counter() - start
    handle.remove()
    samples = {
        t: sorted(
            (s["doc_id"], json.dumps(s["doc"], sort_keys=True), json.dumps(s["filtered_resps"]))
            for s in out["samples"][t]
        )
        for t in FOLDS
    }
    n_items = sum(len(v) for v in samples.values())
    # Sequence rows run through the model: a batch of 16 prompts counts 16.
    return out, samples, forwards["rows"], n_items, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, help="RUL JSON (default: 64-question fixture)")
    parser.add_argument("--limit", type=int, default=None, help="questions per fold")
    args = parser.parse_args()

    from lm_eval_rul.testing.fixtures import write_rul_json
    from lm_eval_rul.testing.text import make_tiny_causal_lm

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        data = args.data or write_rul_json(tmp / "rul.json", n=64)
        n_questions = check_folds(data)
        print(
            f"folds valid: 4 folds x {n_questions} questions, 4 distinct options each, "
            "exactly one correct, dropped distractor absent"
        )
        model_dir = make_tiny_causal_lm(tmp / "lm")

        out1, samples1, fwd1, items, t1 = evaluate(
            model_dir, data, logits_cache=True, limit=args.limit
        )
        out2, samples2, _, _, _ = evaluate(model_dir, data, logits_cache=True, limit=args.limit)
        print(f"two runs, identical per-sample logs: {samples1 == samples2}")
        _, samples0, fwd0, _, t0 = evaluate(model_dir, data, logits_cache=False, limit=args.limit)
        max_diff = max(
            abs(float(x[0]) - float(y[0]))
            for t in FOLDS
            for a, b in zip(samples0[t], samples1[t], strict=True)
            for x, y in zip(json.loads(a[2]), json.loads(b[2]), strict=True)
        )
        print(f"(question, fold) items: {items}")
        print(
            f"ours (letters share one forward): {fwd1 / items:.2f} forward passes per "
            f"(question, fold), {t1:.2f}s, {items / t1:.1f} items/s"
        )
        print(
            f"baseline (logits_cache=False):     {fwd0 / items:.2f} forward passes per "
            f"(question, fold), {t0:.2f}s, {items / t0:.1f} items/s"
        )
        print(
            f"forward-pass ratio baseline/ours: {fwd0 / max(fwd1, 1):.2f}x; "
            f"speed-up: {t0 / t1:.2f}x; max |loglik difference|: {max_diff:.2e}"
        )
        group = out1["results"]["rul_muchomusic"] if "rul_muchomusic" in out1["results"] else {}
        for task in FOLDS:
            r = out1["results"][task]
            print(
                f"{task}: acc={r['acc,none']:.4f} perceptual_index={r['perceptual_index,none']:.4f}"
            )
        if group:
            print(f"group: acc={group.get('acc,none')}")


if __name__ == "__main__":
    main()
