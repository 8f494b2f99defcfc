"""What identifying clips by content costs: hashing against decoding, measured in one run.

``lalm`` keys stored results by each clip's SHA-256 (``clip_identity``), read once per
file state in a process, instead of (path, size, mtime) from ``stat``. The benchmark
writes N clips like MuChoMusic's (30 s, 44.1 kHz stereo, 16-bit wav: 5.3 MB each) and
times, per clip:

* ``stat``: the old identity;
* ``hash``: the new identity, first time in the process (the file in the page cache);
* ``hash again``: the same call again (the per-state memo: a ``stat``);
* ``decode``: what the model needs anyway, ``decode_audio`` to 16 kHz mono, 30 s.

Usage::

    python benchmarks/bench_clip_identity.py [--clips 20]

Exit status 1 if hashing a clip costs more than a fifth of decoding it.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

RATE, TARGET, SECONDS = 44_100, 16_000, 30.0


def write_clips(folder: Path, n: int) -> list[str]:
    import soundfile as sf

    rng = np.random.default_rng(0)
    paths = []
    for index in range(n):
        path = folder / f"{index}.wav"
        wave = 0.2 * rng.standard_normal((int(SECONDS * RATE), 2))
        sf.write(path, wave.astype(np.float32), RATE, subtype="PCM_16")
        paths.append(str(path))
    return paths


def per_clip(action, paths: list[str]) -> float:
    """Milliseconds per clip of ``action(path)`` over ``paths``."""
    start = time.perf_counter()
    for path in paths:
        action(path)
    return 1000 * (time.perf_counter() - start) / len(paths)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clips", type=int, default=20)
    args = parser.parse_args()

    import librosa

    from lm_eval_rul.audio import decode_audio, file_content_digest

    librosa.resample(np.zeros(RATE, np.float32), orig_sr=RATE, target_sr=TARGET)  # warm-up
    with tempfile.TemporaryDirectory() as folder:
        paths = write_clips(Path(folder), args.clips)
        size = os.path.getsize(paths[0]) / 1e6
        stat = per_clip(os.stat, paths)
        hashed = per_clip(file_content_digest, paths)
        again = per_clip(file_content_digest, paths)
        decoded = per_clip(
            lambda p: decode_audio(p, sampling_rate=TARGET, max_seconds=SECONDS), paths
        )
    print(f"{args.clips} clips of {size:.1f} MB ({SECONDS:.0f} s, {RATE} Hz stereo wav)")
    print(f"  stat (old identity)      {stat:8.3f} ms/clip")
    print(f"  hash (new identity)      {hashed:8.3f} ms/clip  ({size / hashed * 1000:.0f} MB/s)")
    print(f"  hash again (memo)        {again:8.3f} ms/clip")
    print(f"  decode to 16 kHz mono    {decoded:8.3f} ms/clip")
    print(f"hash / decode = {hashed / decoded:.3f}")
    return 0 if hashed <= decoded / 5 else 1


if __name__ == "__main__":
    sys.exit(main())
