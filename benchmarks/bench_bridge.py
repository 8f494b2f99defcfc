"""The bridge's own cost per call: requests per second through it with a trivial adapter.

Writes the bridge (``lm-eval-rul bridge --write``), serves an adapter whose
``generate`` and ``loglikelihood`` return at once, and measures in the same run:

* ``direct``: the adapter called in this process on the same waveforms (the baseline: what
  the model itself costs here, nothing);
* ``raw HTTP``: one prebuilt request body posted again and again (the server alone: JSON,
  base64 and WAV decoding, the lock, the reply);
* ``lalm-api``: the harness model sending letter-scoring and generation requests through
  the bridge (client and server: audio conditioning, WAV encoding, retries wrapper, cache
  bookkeeping), with ``num_concurrent`` 1 and 4.

The per-call overhead in milliseconds is what the bridge adds to each call of a real
model; a 7B audio LM takes on the order of 100 ms (a letter) to seconds (a generation)
per call on a GPU.

Usage:
    python benchmarks/bench_bridge.py
    python benchmarks/bench_bridge.py --questions 32 --clip-seconds 30
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

TRIVIAL = """\
NAME = "trivial"
THREAD_SAFE = False

def generate(audio, sampling_rate, prompt, max_new_tokens):
    return "A"

def loglikelihood(audio, sampling_rate, context, continuation):
    return -1.0
"""


def build(root: Path, n_questions: int, clip_seconds: float) -> tuple[list, list]:
    """Letter and generation requests of ``rul_muchomusic`` fold 0 on synthesised clips."""
    from lm_eval.api.instance import Instance

    from lm_eval_rul.mcqa.tasks import (
        doc_to_choice,
        doc_to_text,
        load_rul_muchomusic,
        rul_questions,
    )
    from lm_eval_rul.testing.audio import synth_clip, write_clip
    from lm_eval_rul.testing.fixtures import write_muchomusic_csv, write_rul_json

    rul = write_rul_json(root / "rul.json", n=n_questions)
    csv = write_muchomusic_csv(root / "muchomusic.csv", n=n_questions)
    questions = rul_questions(rul_data_path=str(rul), muchomusic_csv=str(csv))
    for n, track in enumerate(sorted({q.track for q in questions})):
        wave = synth_clip("tone", seconds=clip_seconds, seed=n)
        write_clip(root / "audio" / f"{track}.wav", wave)
    metadata = {"rul_data_path": str(rul), "muchomusic_csv": str(csv),
                "audio_dir": str(root / "audio")}  # fmt: skip
    letters, generations = [], []
    for n, doc in enumerate(load_rul_muchomusic(0, **metadata)["test"]):
        text = doc_to_text(doc)
        for i, letter in enumerate(doc_to_choice(doc)):
            letters.append(Instance("loglikelihood", doc, (text, f" {letter}"), i,
                                    ("rul_muchomusic_fold0", n, 1)))  # fmt: skip
        generations.append(Instance("generate_until", doc, (text, {"max_gen_toks": 8}), 0,
                                    ("rul_muchomusic_gen_fold0", n, 1)))  # fmt: skip
    return letters, generations


def start(root: Path) -> tuple[subprocess.Popen, str]:
    from lm_eval_rul.cli.bridge import write_server

    server = write_server(root / "bridge.py")
    (root / "trivial.py").write_text(TRIVIAL)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    process = subprocess.Popen(
        [sys.executable, str(server), "--adapter", str(root / "trivial.py"), "--port", "0"],
        stdout=subprocess.PIPE, text=True, env=env, cwd=root,
    )  # fmt: skip
    line = process.stdout.readline()
    return process, line.rsplit(" at ", 1)[1].strip()


def timed(function, count: int) -> float:
    """Calls per second of ``function`` (called ``count`` times)."""
    start = time.perf_counter()
    for _ in range(count):
        function()
    return count / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=16)
    parser.add_argument("--clip-seconds", type=float, default=10.0)
    args = parser.parse_args()

    import logging

    logging.getLogger("lm_eval_rul").setLevel(logging.ERROR)
    from lm_eval_rul.audio import AudioSpec, condition_audio
    from lm_eval_rul.models.api import LALMAPI
    from lm_eval_rul.models.api_payload import input_audio_part, prompt_logprobs_body, wav_bytes
    from lm_eval_rul.models.common import chat_messages

    namespace: dict = {}
    exec(TRIVIAL, namespace)  # noqa: S102 - the same adapter, in process
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        letters, generations = build(root, args.questions, args.clip_seconds)
        process, url = start(root)
        try:
            rows = []
            spec = AudioSpec(sampling_rate=16_000, max_seconds=None, condition="original",
                             seed=0, noise_seconds=10.0, noise_std=1.0)  # fmt: skip
            _, wave = condition_audio(letters[0].doc, spec)
            context, continuation = letters[0].args
            rows.append(("direct", "letter", 1, timed(
                lambda: namespace["loglikelihood"](wave, 16_000, context, continuation), 2000)))
            messages = chat_messages(context, audio_part=input_audio_part(wav_bytes(wave, 16_000)))
            body = json.dumps(prompt_logprobs_body("trivial", messages, continuation)).encode()

            def post() -> None:
                request = urllib.request.Request(
                    url + "/chat/completions", body, {"Content-Type": "application/json"}
                )
                with urllib.request.urlopen(request) as answer:
                    answer.read()

            rows.append(("raw HTTP", "letter", 1, timed(post, 100)))
            for concurrent in (1, 4):
                lm = LALMAPI(base_url=url, model="trivial", results_cache="none",
                             num_concurrent=concurrent)  # fmt: skip
                start_time = time.perf_counter()
                lm.loglikelihood(letters, disable_tqdm=True)
                rate = len(letters) / (time.perf_counter() - start_time)
                rows.append(("lalm-api", "letter", concurrent, rate))
                start_time = time.perf_counter()
                lm.generate_until(generations, disable_tqdm=True)
                rate = len(generations) / (time.perf_counter() - start_time)
                rows.append(("lalm-api", "generation", concurrent, rate))
        finally:
            process.terminate()
            process.wait()
    direct = rows[0][3]
    print(f"{len(letters)} letters and {len(generations)} generations of {args.questions} "
          f"questions, clips of {args.clip_seconds:g} s (16 kHz WAV, PCM_16); trivial adapter")
    print(f"{'path':10}{'request':>12}{'concurrent':>12}{'requests/s':>12}{'ms/call':>10}"
          f"{'overhead ms':>13}")  # fmt: skip
    for path, kind, concurrent, rate in rows:
        overhead = 1000 / rate - 1000 / direct
        print(f"{path:10}{kind:>12}{concurrent:>12}{rate:>12.1f}{1000 / rate:>10.2f}"
              f"{overhead:>13.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
