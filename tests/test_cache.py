"""The on-disk result cache: scoped, persistent across processes, committed as written."""

from __future__ import annotations

import subprocess
import sys

import pytest

from lm_eval_rul.cache import ResultCache, digest


def test_entries_are_found_only_under_their_scope_and_parts(tmp_path):
    path = tmp_path / "c.sqlite"
    noise = ResultCache(path, scope={"model": "m", "audio": "noise", "noise_std": 1.0})
    noise.put(("ll", "ctx", " A"), [-1.25, False])
    assert noise.get(("ll", "ctx", " A")) == [-1.25, False]
    assert noise.get(("ll", "ctx", " B")) is None
    other = ResultCache(path, scope={"model": "m", "audio": "noise", "noise_std": 0.5})
    assert other.get(("ll", "ctx", " A")) is None
    assert len(noise) == 1 and len(other) == 0
    assert (noise.hits, noise.misses, noise.writes) == (1, 1, 1)


def test_scope_key_order_does_not_matter_but_values_do():
    assert digest({"a": 1, "b": [1, 2]}) == digest({"b": [1, 2], "a": 1})
    assert digest({"a": 1}) != digest({"a": 1.5})
    assert digest(("x", b"wav")) != digest(("x", b"wav2"))


def test_unkeyable_values_are_refused():
    with pytest.raises(TypeError, match="cannot key"):
        digest({"a": object()})


def test_a_second_process_reads_what_the_first_committed(tmp_path):
    path = tmp_path / "c.sqlite"
    code = (
        "from lm_eval_rul.cache import ResultCache\n"
        f"c = ResultCache({str(path)!r}, scope={{'m': 1}})\n"
        "c.put_many([(('q', i), i * i) for i in range(5)])\n"
        "import os; os._exit(0)\n"  # no close(): what was put is already committed
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    cache = ResultCache(path, scope={"m": 1})
    assert cache.get_many([("q", i) for i in range(6)]) == [0, 1, 4, 9, 16, None]
