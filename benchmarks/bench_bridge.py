"""The bridge's own cost per call: requests per second through it with a trivial adapter.

Writes the bridge (``lm-eval-rul bridge --write``), serves an adapter whose
``generate`` and ``loglikelihood`` return at once, and measures in the same run:

* ``direct``: the adapter called in this process on the same waveforms (the baseline: what
  the model itself costs here, nothing);
* ``raw HTTP``: one prebuilt request body posted again and again (the server alone: JSON,
  base64 and WAV decoding, the lock, the reply);
* ``lalm-api``: the harness model sending letter-scoring and generation requests through
  the bridge (client and server: audio conditioning, WAV encoding, retries wrapper, cache
  bookkeeping), with ``num_concurrent`` 1 and 4, in float32 WAV (the default) and in
  ``PCM_16`` (half the bytes).

and the fidelity of ``audio=noise`` (sigma 1) as the adapter receives it: its RMS and peak
over the in-process noise's (``lalm``'s), per ``wav_subtype``, with the clipped samples the
run records.

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
    if audio is None:
        return "none"
    return "%r %r" % (float((audio.astype("float64") ** 2).mean() ** 0.5), float(abs(audio).max()))

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
    from lm_eval_rul.bridge import write_server

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
    from lm_eval_rul.models.core import chat_messages

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
            for subtype in ("FLOAT", "PCM_16"):
                for concurrent in (1, 4):
                    lm = LALMAPI(base_url=url, model="trivial", results_cache="none",
                                 num_concurrent=concurrent, wav_subtype=subtype)  # fmt: skip
                    start_time = time.perf_counter()
                    lm.loglikelihood(letters, disable_tqdm=True)
                    rate = len(letters) / (time.perf_counter() - start_time)
                    rows.append((f"lalm-api {subtype}", "letter", concurrent, rate))
                    start_time = time.perf_counter()
                    lm.generate_until(generations, disable_tqdm=True)
                    rate = len(generations) / (time.perf_counter() - start_time)
                    rows.append((f"lalm-api {subtype}", "generation", concurrent, rate))
            fidelity = noise_fidelity(url, generations[: min(8, len(generations))])
        finally:
            process.terminate()
            process.wait()
    direct = rows[0][3]
    print(f"{len(letters)} letters and {len(generations)} generations of {args.questions} "
          f"questions, clips of {args.clip_seconds:g} s (16 kHz WAV); trivial adapter")
    print(f"{'path':18}{'request':>12}{'concurrent':>12}{'requests/s':>12}{'ms/call':>10}"
          f"{'overhead ms':>13}")  # fmt: skip
    for path, kind, concurrent, rate in rows:
        overhead = 1000 / rate - 1000 / direct
        print(f"{path:18}{kind:>12}{concurrent:>12}{rate:>12.1f}{1000 / rate:>10.2f}"
              f"{overhead:>13.2f}")  # fmt: skip
    rates = {(path, kind, c): rate for path, kind, c, rate in rows}
    for kind in ("letter", "generation"):
        ratio = rates[("lalm-api FLOAT", kind, 1)] / rates[("lalm-api PCM_16", kind, 1)]
        print(f"FLOAT / PCM_16 requests per second ({kind}, 1 concurrent): {ratio:.2f}")
    print(f"audio=noise (sigma 1, 10 s) as the adapter receives it, over lalm's "
          f"({fidelity['questions']} questions):")
    print(f"{'wav_subtype':14}{'RMS ratio':>12}{'peak ratio':>12}{'clipped samples':>17}")
    for subtype, (rms, peak, clipped) in fidelity["rows"].items():
        print(f"{subtype:14}{rms:>12.4f}{peak:>12.4f}{clipped:>17}")


def noise_fidelity(url: str, generations: list) -> dict:
    """RMS and peak of the noise the adapter received over the in-process noise's."""
    import numpy as np

    from lm_eval_rul.audio import AudioSpec, condition_audio
    from lm_eval_rul.models.api import LALMAPI

    spec = AudioSpec(sampling_rate=16_000, max_seconds=None, condition="noise", seed=0,
                     noise_seconds=10.0, noise_std=1.0)  # fmt: skip
    own = [condition_audio(g.doc, spec)[1] for g in generations]
    rows = {}
    for subtype in ("FLOAT", "PCM_16"):
        lm = LALMAPI(base_url=url, model="trivial", results_cache="none", audio="noise",
                     wav_subtype=subtype)  # fmt: skip
        heard = [tuple(map(float, text.split())) for text in lm.generate_until(generations, True)]
        rms = np.mean([h[0] / float(np.sqrt(np.mean(np.square(w, dtype=np.float64))))
                       for h, w in zip(heard, own, strict=True)])  # fmt: skip
        peak = np.mean([h[1] / float(np.abs(w).max()) for h, w in zip(heard, own, strict=True)])
        rows[subtype] = (float(rms), float(peak), lm.get_model_info()["audio_sent_clipped_samples"])
    return {"questions": len(generations), "rows": rows}


if __name__ == "__main__":
    main()
