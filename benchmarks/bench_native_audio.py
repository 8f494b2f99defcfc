"""Letter scoring through the harness's audio argument (``doc_to_audio``) vs our task.

Builds a tiny random-weight audio LM of a real class (default Qwen2-Audio) and a fixture
(RUL questions whose tracks are shared by pairs of questions, one synthesised clip per
track), then scores the same (question, fold) items twice in one run with ``lalm``:

* ours: ``rul_muchomusic`` (4 folds), the clip read from the document's fields;
* native: the same four folds as a task that declares its audio the harness's way
  (``doc_to_audio``: lm-eval appends ``{"audio": [{"array", "sampling_rate"}]}`` to every
  letter request), written into a temporary task folder.

Forward passes are counted with forward hooks on the model's audio encoder and language
model (:class:`lm_eval_rul.testing.counters.ForwardCounter`); decoder tokens are the
sequence lengths the language model ran. The native path must keep the one-prefix-per-
clip saving: the same encodes per clip, the same forwards and tokens per question, and the
same log-likelihoods (max abs difference printed).

Usage:
    python benchmarks/bench_native_audio.py
    python benchmarks/bench_native_audio.py --questions 48 --batch-size 8
"""

from __future__ import annotations

import argparse
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

_NATIVE_UTILS = """
from lm_eval_rul.mcqa.native_tasks import doc_to_audio  # noqa: F401
from lm_eval_rul.mcqa.tasks import (  # noqa: F401
    doc_to_choice, doc_to_text, load_rul_muchomusic, process_results,
)
"""


def write_native_tasks(root: Path) -> list[str]:
    """``native_fold0..3``: rul_muchomusic's folds with ``doc_to_audio``."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "utils.py").write_text(_NATIVE_UTILS)
    names = []
    for fold in range(4):
        name = f"native_fold{fold}"
        (root / f"{name}.yaml").write_text(
            textwrap.dedent(
                f"""
                task: {name}
                dataset_path: ""
                dataset_name: ""
                custom_dataset: !function utils.load_rul_muchomusic
                dataset_kwargs:
                  fold: {fold}
                test_split: test
                output_type: multiple_choice
                doc_to_text: !function utils.doc_to_text
                doc_to_choice: !function utils.doc_to_choice
                doc_to_audio: !function utils.doc_to_audio
                doc_to_target: gold
                target_delimiter: " "
                process_results: !function utils.process_results
                metric_list:
                  - metric: acc
                """
            )
        )
        names.append(name)
    return names


class TokenCounter:
    """Decoder tokens: the sequence length x rows of every language-model forward."""

    def __init__(self, module: Any) -> None:
        self.tokens = 0
        self._handle = module.register_forward_pre_hook(self._hit, with_kwargs=True)

    def _hit(self, _module: Any, args: tuple, kwargs: dict) -> None:
        tensor = kwargs.get("inputs_embeds")
        if tensor is None:
            tensor = kwargs.get("input_ids", args[0] if args else None)
        if tensor is not None:
            self.tokens += int(tensor.shape[0]) * int(tensor.shape[1])

    def close(self) -> None:
        self._handle.remove()


def run(lm: Any, tasks: list[str], manager: Any) -> dict[str, Any]:
    from lm_eval import simple_evaluate

    from lm_eval_rul.audio import clear_audio_cache
    from lm_eval_rul.testing.counters import ForwardCounter, _first_module

    clear_audio_cache()
    tokens = TokenCounter(_first_module(dict(lm.model.named_modules()), "language_model"))
    try:
        with ForwardCounter(lm.model) as counts:
            start = time.perf_counter()
            out = simple_evaluate(model=lm, tasks=tasks, task_manager=manager, log_samples=True)
            seconds = time.perf_counter() - start
    finally:
        tokens.close()
    logliks = {}
    for task, rows in out["samples"].items():
        fold = task[-1]
        for row in rows:
            logliks[(fold, row["doc"]["id"])] = [float(r[0][0]) for r in row["resps"]]
    return {
        "items": len(logliks),
        "lm_forwards": counts.language,
        "audio_encodes": counts.audio,
        "tokens": tokens.tokens,
        "seconds": seconds,
        "logliks": logliks,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", default="qwen2_audio", help="tiny model family")
    parser.add_argument("--questions", type=int, default=24, help="fixture questions")
    parser.add_argument("--batch-size", type=int, default=8, help="questions per forward")
    args = parser.parse_args()

    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_lalm_scoring import build_fixture  # the same fixture as the scoring benchmark
    from lm_eval.tasks import TaskManager

    from lm_eval_rul.models.lalm import LALM
    from lm_eval_rul.registration import tasks_dir
    from lm_eval_rul.testing.audio import make_tiny_audio_lm

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        model_dir = make_tiny_audio_lm(root / "model", args.family)
        metadata = build_fixture(root, args.questions)
        native_tasks = write_native_tasks(root / "native_tasks")
        manager = TaskManager(
            include_path=[str(tasks_dir()), str(root / "native_tasks")],
            include_defaults=False,
            metadata=metadata,
        )
        lm = LALM(
            pretrained=str(model_dir),
            dtype="float32",
            device="cpu",
            batch_size=args.batch_size,
            results_cache="none",
        )
        run(lm, ["rul_muchomusic_fold0"], manager)  # warm-up: imports, resampler
        ours = run(lm, [f"rul_muchomusic_fold{k}" for k in range(4)], manager)
        native = run(lm, native_tasks, manager)

    clips = args.questions // 2
    diff = max(
        abs(a - b)
        for key in ours["logliks"]
        for a, b in zip(ours["logliks"][key], native["logliks"][key], strict=True)
    )
    print(
        f"{ours['items']} (question, fold) items, {4 * ours['items']} letter requests, "
        f"{clips} clips; tiny {args.family}, batch_size={args.batch_size}, CPU"
    )
    print(
        f"{'path':<8}{'encodes/clip':>14}{'LM calls/item':>15}{'tokens/item':>13}"
        f"{'seconds':>10}"
    )
    for name, r in (("ours", ours), ("native", native)):
        print(
            f"{name:<8}{r['audio_encodes'] / clips:>14.2f}{r['lm_forwards'] / r['items']:>15.3f}"
            f"{r['tokens'] / r['items']:>13.1f}{r['seconds']:>10.2f}"
        )
    print(
        f"native / ours: LM calls {native['lm_forwards'] / ours['lm_forwards']:.2f}x, "
        f"tokens {native['tokens'] / ours['tokens']:.2f}x, "
        f"encodes {native['audio_encodes'] / ours['audio_encodes']:.2f}x; "
        f"same items: {ours['logliks'].keys() == native['logliks'].keys()}; "
        f"max |loglik difference| = {diff:.2e}"
    )


if __name__ == "__main__":
    main()
