"""``lalm``, ``lalm-vllm`` and ``lalm-api`` -> vLLM side by side on one fixture.

Run it in the vLLM environment (``bash .ci/vllm_env.sh``; ``.venv-vllm/bin/python``).

Default mode (CPU, minutes): a tiny random-weight Qwen2-Audio with Whisper's own front end,
RUL-MuChoMusic fixture questions (``--questions`` x ``--folds``, synthesised clips),
letter scoring by

* ``lalm`` (transformers in process; forward passes of its audio encoder and language
  model counted by hooks),
* ``lalm-vllm`` (vLLM's in-process engine; requests sent and prompt tokens read from its
  prefix cache),
* ``lalm-api`` against a real vLLM OpenAI-compatible server (HTTP requests),

each with its wall time (engine or server start apart) and the largest letter difference
from ``lalm``.

``--gpu`` (for a machine with a GPU): a full-size random-weight Qwen2-Audio-7B
(the published config: Whisper-large encoder, 32-layer 4096-wide Qwen decoder, bfloat16)
on 1,187 questions x 4 folds of RUL-MuChoMusic fixture rows with 30 s synthesised clips:
seconds and questions per second for ``lalm`` and ``lalm-vllm``, and their largest
letter difference. ``--gpu --size tiny --questions 8`` runs the same path here.

Usage:
    .venv-vllm/bin/python benchmarks/bench_vllm.py
    .venv-vllm/bin/python benchmarks/bench_vllm.py --gpu   # on a GPU machine
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

#: The test doubles (tests/doubles/, not in the installed package) import as doubles.<module>.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
for _name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ.setdefault(_name, "1")

#: Qwen2-Audio-7B's published sizes (config.json of Qwen/Qwen2-Audio-7B-Instruct).
QWEN2_AUDIO_7B = {
    "audio": dict(num_mel_bins=128, encoder_layers=32, encoder_attention_heads=20,
                  encoder_ffn_dim=5120, d_model=1280, max_source_positions=1500),
    "text": dict(hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
                 num_attention_heads=32, num_key_value_heads=32, vocab_size=156032,
                 max_position_embeddings=8192, rope_theta=10000.0),
}  # fmt: skip


def fixture(root: Path, questions: int, folds: int, clip_seconds: float) -> tuple[dict, list]:
    """(``--metadata``, letter requests of ``folds`` folds) with synthesised clips."""
    from lm_eval_rul.mcqa.tasks import rul_questions
    from lm_eval_rul.testing.audio import synth_clip, write_clip
    from lm_eval_rul.testing.fixtures import write_muchomusic_csv, write_rul_json
    from lm_eval_rul.testing.requests import letter_docs, letter_requests

    root.mkdir(parents=True, exist_ok=True)
    rul = write_rul_json(root / "rul.json", n=questions)
    csv = write_muchomusic_csv(root / "muchomusic.csv", n=questions)
    read = rul_questions(rul_data_path=str(rul), muchomusic_csv=str(csv))
    tracks = sorted({q.track for q in read})
    kinds = ("tone", "chord", "clicks", "sweep")
    for index, track in enumerate(tracks):
        wave = synth_clip(kinds[index % 4], seconds=clip_seconds, seed=index % 24)
        write_clip(root / "audio" / f"{track}.wav", wave)
    metadata = {"rul_data_path": str(rul), "muchomusic_data_path": str(csv),
                "muchomusic_csv": str(csv), "audio_dir": str(root / "audio")}  # fmt: skip
    return metadata, letter_requests(letter_docs(metadata, folds=range(folds)))


def full_size_qwen2_audio(directory: Path) -> Path:
    """A random-weight Qwen2-Audio-7B (bfloat16) with the tiny fixture tokenizer."""
    import torch
    import transformers as tf

    from lm_eval_rul.testing.audio import make_tiny_audio_lm
    from lm_eval_rul.testing.checkpoints import published_qwen2_audio_keys

    make_tiny_audio_lm(directory, "qwen2_audio", whisper_front_end=True)  # processor, tokenizer
    config = tf.Qwen2AudioConfig.from_pretrained(directory)
    config.audio_config.update(QWEN2_AUDIO_7B["audio"])
    config.text_config.update(QWEN2_AUDIO_7B["text"])
    layers = config.text_config.num_hidden_layers  # the tiny config listed one layer's type
    config.text_config.layer_types = ["full_attention"] * layers
    config.text_config.max_window_layers = layers
    torch.manual_seed(0)
    torch.set_default_dtype(torch.bfloat16)
    with torch.device("cuda" if torch.cuda.is_available() else "cpu"):
        model = tf.Qwen2AudioForConditionalGeneration(config)
    torch.set_default_dtype(torch.float32)
    model.save_pretrained(directory)
    published_qwen2_audio_keys(directory)
    del model
    torch.cuda.empty_cache()
    return directory


def time_lalm(path: Path, requests: list, dtype: str) -> dict:
    import torch

    from lm_eval_rul.models.lalm import LALM
    from lm_eval_rul.testing.counters import ForwardCounter

    start = time.perf_counter()
    # 16 questions per forward on a GPU, as a user sizing lalm for throughput would
    batch = 16 if torch.cuda.is_available() else 1
    lm = LALM(pretrained=str(path), dtype=dtype, results_cache="none", batch_size=batch)
    loaded = time.perf_counter()
    with ForwardCounter(lm.model) as counts:
        scores = lm.loglikelihood(requests, disable_tqdm=True)
    done = time.perf_counter()
    questions = len(requests) // 4
    figures = {"load_s": loaded - start, "seconds": done - loaded, "scores": scores,
               "audio_forwards_per_question": counts.audio / questions,
               "lm_forwards_per_question": counts.language / questions}  # fmt: skip
    del lm, counts
    import gc

    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
    return figures


def time_lalm_vllm(path: Path, requests: list, dtype: str, **engine) -> dict:
    from lm_eval_rul.models.lalm_vllm import LALMVLLM

    start = time.perf_counter()
    lm = LALMVLLM(pretrained=str(path), dtype=dtype, results_cache="none", **engine)
    loaded = time.perf_counter()
    scores = lm.loglikelihood(requests, disable_tqdm=True)
    done = time.perf_counter()
    counts, questions = lm.engine_counts, len(requests) // 4
    lm.llm.llm_engine.engine_core.shutdown()
    return {"load_s": loaded - start, "seconds": done - loaded, "scores": scores,
            "requests_per_question": counts["requests"] / questions,
            "prompt_tokens": counts["prompt_tokens"],
            "prefix_cached_tokens": counts["cached_tokens"]}  # fmt: skip


def time_lalm_api(path: Path, requests: list, log: Path) -> dict:
    from doubles.vllm_server import API_KEY_ENV, SERVED_MODEL, VLLMServer

    from lm_eval_rul.models.api import LALMAPI

    start = time.perf_counter()
    with VLLMServer(path, log=log) as server:
        loaded = time.perf_counter()
        lm = LALMAPI(base_url=server.url, model=SERVED_MODEL, api_key_env=API_KEY_ENV,
                     wav_subtype="FLOAT", results_cache="none", num_concurrent=4)  # fmt: skip
        scores = lm.loglikelihood(requests, disable_tqdm=True)
        done = time.perf_counter()
        posts = lm.get_model_info()["api_http_requests"]
    return {"load_s": loaded - start, "seconds": done - loaded, "scores": scores,
            "http_requests_per_question": posts / (len(requests) // 4)}  # fmt: skip


def largest_difference(a: list, b: list) -> float:
    return max(abs(x[0] - y[0]) for x, y in zip(a, b, strict=True))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gpu", action="store_true", help="lalm vs lalm-vllm, full size")
    parser.add_argument("--size", choices=("full", "tiny"), default="full", help="--gpu model")
    parser.add_argument("--questions", type=int, default=None)
    parser.add_argument("--folds", type=int, default=None)
    parser.add_argument("--clip-seconds", type=float, default=None)
    parser.add_argument("--no-server", action="store_true", help="skip lalm-api (CPU mode)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    gpu = args.gpu
    questions = args.questions or (1187 if gpu else 8)
    folds = args.folds or (4 if gpu else 2)
    clip_seconds = args.clip_seconds or (30.0 if gpu else 1.5)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _, requests = fixture(root / "data", questions, folds, clip_seconds)
        if gpu and args.size == "full":
            path, dtype = full_size_qwen2_audio(root / "qwen2_audio_7b"), "bfloat16"
        else:
            from lm_eval_rul.testing.audio import make_tiny_audio_lm

            path = make_tiny_audio_lm(root / "tiny", "qwen2_audio", whisper_front_end=True)
            dtype = "float32"
        # on a GPU lalm's weights are freed first; vLLM takes half the memory regardless
        engine = {"enforce_eager": True, "block_size": 32}
        if gpu:
            engine = {"gpu_memory_utilization": 0.5}
        runs = {"lalm": time_lalm(path, requests, dtype),
                "lalm-vllm": time_lalm_vllm(path, requests, dtype, **engine)}  # fmt: skip
        if not gpu and not args.no_server:
            runs["lalm-api"] = time_lalm_api(path, requests, root / "server.log")
    n_questions = len(requests) // 4
    figures = {"questions": n_questions, "letters": len(requests), "dtype": dtype}
    reference = runs["lalm"]["scores"]
    for name, run in runs.items():
        scores = run.pop("scores")
        run["questions_per_s"] = n_questions / run["seconds"]
        if name != "lalm":
            run["max_letter_diff_vs_lalm"] = largest_difference(scores, reference)
        figures[name] = run
    print(json.dumps(figures, indent=1, default=float))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1, default=float))


if __name__ == "__main__":
    main()
