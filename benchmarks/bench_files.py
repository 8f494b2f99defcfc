"""Reading only what is needed: one 30 s window of a 20-minute file, and a large question file.

Two measurements, each against the old way measured in the same run:

* **audio**: prepare what a model with a 30 s limit hears from a 20-minute 44.1 kHz
  stereo wav (212 MB): the first 30 s (``decode_audio(max_seconds=30)``) and a window
  in the middle (``load_window``, 600-630 s), at 16 kHz. Before: decode the whole file,
  average the channels, resample it all, then cut (the old ``decode_audio``). Each case
  runs in its own subprocess; peak memory is that process's ``ru_maxrss`` growth over
  its state after the imports.
* **questions**: read and validate a file of N questions in the released dict-of-dicts
  layout (``read_rul_json``) at 20k, 40k, 80k and 100k questions, and the old reader
  (its duplicate-key check counted every key against every other key) at 5k, 10k and
  20k; the old reader's time at 100k is extrapolated from those (quadratic fit), unless
  ``--old_full`` measures it (about ten minutes).

Usage::

    python benchmarks/bench_files.py                 # both parts
    python benchmarks/bench_files.py --part questions --old_full

Exit status 1 if the new reader does not grow linearly (time per question at 80k more
than twice that at 20k) or the window is not smaller in memory and faster than before.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

RATE, TARGET, MINUTES, LIMIT = 44_100, 16_000, 20, 30.0
WINDOW = (600.0, 630.0)

# ----------------------------------------------------------------------------- audio


def write_long_wav(path: Path) -> Path:
    """20 minutes of stereo at 44.1 kHz (16-bit), written in blocks."""
    import soundfile as sf

    rng = np.random.default_rng(0)
    with sf.SoundFile(path, "w", RATE, 2, subtype="PCM_16") as handle:
        for _ in range(MINUTES * 60 // 10):
            block = 0.2 * rng.standard_normal((10 * RATE, 2))
            handle.write(block.astype(np.float32))
    return path


def _old_decode(path: str) -> np.ndarray:
    """The old decode_audio: whole file, mono, whole resample, then the trim."""
    import librosa
    import soundfile as sf

    data, rate = sf.read(path, dtype="float32", always_2d=True)
    mono = np.ascontiguousarray(data.mean(axis=1), dtype=np.float32)
    return librosa.resample(mono, orig_sr=rate, target_sr=TARGET).astype(np.float32)


def audio_case(case: str, path: str) -> dict[str, Any]:
    """Run one case in this process (called in a subprocess); time and peak memory."""
    import librosa
    import soundfile  # noqa: F401

    # librosa's first resample loads its backends (seconds, ~150 MB), once per process
    # whatever the clip: warmed up before the baseline, as in a run past its first clip
    librosa.resample(np.zeros(RATE, np.float32), orig_sr=RATE, target_sr=TARGET)

    from lm_eval_rul.audio import cut_window, decode_audio
    from lm_eval_rul.audio.decoding import load_window, report_trims
    from lm_eval_rul.audio.sources import file_ref

    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    if case == "trim_before":
        wave = _old_decode(path)[: int(LIMIT * TARGET)]
    elif case == "trim_after":
        wave = decode_audio(path, sampling_rate=TARGET, max_seconds=LIMIT)
        report_trims()
    elif case == "window_before":
        wave = cut_window(_old_decode(path), TARGET, WINDOW)
    else:
        wave = load_window(file_ref(Path(path)), sampling_rate=TARGET, window=WINDOW)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base
    return {"seconds": seconds, "peak_mb": peak / 1024, "samples": int(wave.shape[0]),
            "head": wave[:2000].tolist()}  # fmt: skip


def bench_audio(folder: Path) -> bool:
    path = write_long_wav(folder / "long.wav")
    print(f"audio: {path.stat().st_size / 2**20:.0f} MB wav, {MINUTES} min, {RATE} Hz stereo; "
          f"model limit {LIMIT:g} s at {TARGET} Hz")  # fmt: skip
    results = {}
    for case in ("trim_before", "trim_after", "window_before", "window_after"):
        done = subprocess.run(
            [sys.executable, __file__, "--audio_case", case, str(path)],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        results[case] = json.loads(done.stdout.strip().splitlines()[-1])
    ok = True
    window = f"window {WINDOW[0]:g}-{WINDOW[1]:g} s"
    for what, label in (("trim", "first 30 s"), ("window", window)):
        before, after = results[f"{what}_before"], results[f"{what}_after"]
        gap = float(np.max(np.abs(np.array(before["head"]) - np.array(after["head"]))))
        print(
            f"  {label:>20}: before {before['seconds']:6.2f} s {before['peak_mb']:7.0f} MB | "
            f"after {after['seconds']:6.3f} s {after['peak_mb']:6.0f} MB | time ratio "
            f"{before['seconds'] / after['seconds']:5.0f}x, memory ratio "
            f"{before['peak_mb'] / max(after['peak_mb'], 1):4.0f}x | samples "
            f"{after['samples']} (before {before['samples']}), max difference {gap:.1e}"
        )
        ok &= after["seconds"] < before["seconds"] and after["peak_mb"] < before["peak_mb"]
        ok &= after["samples"] == before["samples"] and gap < 1e-4
    path.unlink()
    return ok


# ----------------------------------------------------------------------------- questions


def _old_hook(pairs: list[tuple[str, Any]]) -> dict:
    """The old duplicate-key check: a count over all keys for every key (O(k^2))."""
    obj: dict = {}
    duplicates = [key for key, _ in pairs if sum(1 for k, _ in pairs if k == key) > 1]
    obj.update(pairs)
    obj["__duplicates__"] = tuple(dict.fromkeys(duplicates))
    return obj


def old_read(path: Path) -> int:
    """The old reader: the quadratic hook, then the same validation as today."""
    from lm_eval_rul.questions.validation import rows_to_questions

    raw = json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=_old_hook)
    raw.pop("__duplicates__")
    rows = [{"id": k, **{f: v for f, v in value.items() if f != "__duplicates__"}}
            for k, value in raw.items()]  # fmt: skip
    return len(rows_to_questions(path, rows, n_distractors=4))


def write_questions(path: Path, n: int) -> Path:
    from lm_eval_rul.testing.fixtures import fixture_rows

    template = list(fixture_rows(2).values())
    rows = {}
    for i in range(n):
        row = dict(template[i % 2])
        row["question"] = f"{row['question']} ({i})"
        rows[f"q{i}"] = row
    path.write_text(json.dumps(rows))
    return path


def _timed(function: Any, *args: Any) -> float:
    start = time.perf_counter()
    function(*args)
    return time.perf_counter() - start


def bench_questions(folder: Path, old_full: bool) -> bool:
    from lm_eval_rul.questions import read_rul_json

    print("questions: read and validate a dict-of-dicts question file (read_rul_json)")
    new: dict[int, float] = {}
    for n in (20_000, 40_000, 80_000, 100_000):
        path = write_questions(folder / f"q{n}.json", n)
        new[n] = _timed(read_rul_json, path)
        print(f"  now  {n:>7,} questions: {new[n]:6.2f} s  ({1e6 * new[n] / n:5.1f} us/question, "
              f"{path.stat().st_size / 2**20:.0f} MB)")  # fmt: skip
    old: dict[int, float] = {}
    for n in (5_000, 10_000, 20_000, *((100_000,) if old_full else ())):
        old[n] = _timed(old_read, write_questions(folder / f"o{n}.json", n))
        print(f"  old  {n:>7,} questions: {old[n]:6.2f} s")
    if 100_000 not in old:
        sizes = np.array(sorted(old), dtype=float)
        coeffs = np.polyfit(sizes, np.array([old[int(n)] for n in sizes]), 2)
        old[100_000] = float(np.polyval(coeffs, 100_000))
        print(f"  old  100,000 questions: {old[100_000]:6.0f} s (quadratic fit of 5k-20k, an "
              "underestimate; --old_full measures it)")  # fmt: skip
    print(f"  100k: old {old[100_000]:.0f} s, now {new[100_000]:.2f} s: "
          f"{old[100_000] / new[100_000]:.0f}x faster")  # fmt: skip
    print(f"  growth now: 40k/20k {new[40_000] / new[20_000]:.2f}x, 80k/40k "
          f"{new[80_000] / new[40_000]:.2f}x, 80k/20k {new[80_000] / new[20_000]:.2f}x "
          f"(linear: 2, 2, 4); old 20k/10k {old[20_000] / old[10_000]:.2f}x (quadratic: 4)")
    per_question = {n: new[n] / n for n in new}
    return per_question[80_000] < 2 * per_question[20_000]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--part", choices=("all", "audio", "questions"), default="all")
    parser.add_argument("--old_full", action="store_true", help="Time the old reader at 100k")
    parser.add_argument("--audio_case", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.audio_case:
        print(json.dumps(audio_case(*args.audio_case)))
        return 0
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        if args.part in ("all", "audio"):
            ok &= bench_audio(Path(tmp))
        if args.part in ("all", "questions"):
            ok &= bench_questions(Path(tmp), args.old_full)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
