"""The on-disk result cache: scoped, persistent across processes, committed as written."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from lm_eval_rul.cache import ResultCache, digest

os.environ.setdefault("HF_HUB_OFFLINE", "1")


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


_WRITER = """
import sys, time
from lm_eval_rul.cache import ResultCache
path, start, me = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
time.sleep(max(0.0, start - time.time()))  # every process opens the fresh file at once
cache = ResultCache(path, scope={"writer": me % 2})
for i in range(20):
    cache.get(("q", me, i))
    cache.put(("q", me, i), [me, i])
"""


def test_concurrent_first_opens_of_a_fresh_cache_keep_every_row(tmp_path):
    import time

    for attempt in range(2):
        path = tmp_path / f"round{attempt}" / "fresh" / "c.sqlite"  # no folder yet either
        start = time.time() + 1.5
        writers = [
            subprocess.Popen(
                [sys.executable, "-c", _WRITER, str(path), str(start), str(me)],
                stderr=subprocess.PIPE,
                text=True,
            )
            for me in range(8)
        ]
        errors = [w.communicate()[1] for w in writers]
        assert [w.returncode for w in writers] == [0] * 8, errors
        stored = {
            scope: ResultCache(path, scope={"writer": scope}).get_many(
                [("q", me, i) for me in range(scope, 8, 2) for i in range(20)]
            )
            for scope in (0, 1)
        }
        assert all(v is not None for values in stored.values() for v in values)
        assert sum(len(values) for values in stored.values()) == 160


_HOLDER = """
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=10)
db.execute("BEGIN")
db.execute("SELECT * FROM sqlite_master").fetchall()
db.execute("CREATE TABLE other (x)")  # a write lock held, not yet committed
print("holding", flush=True)
time.sleep(1.0)
db.execute("COMMIT")
"""


def test_an_open_while_another_process_writes_waits_for_it(tmp_path):
    """A lock SQLite reports busy at once (it would deadlock waiting) is retried: the
    first open of a file another process is writing waits instead of crashing."""
    path = tmp_path / "c.sqlite"
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(path)], stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout.readline().strip() == "holding"
    cache = ResultCache(path, scope={"m": 1})
    cache.put(("q",), 1)
    assert holder.wait() == 0
    assert ResultCache(path, scope={"m": 1}).get(("q",)) == 1


def test_a_file_that_is_not_a_cache_is_named_with_the_fix(tmp_path):
    from lm_eval_rul.cache import CacheFileError

    path = tmp_path / "lalm_results.sqlite"
    path.write_text("these are my notes, not a database\n" * 100)
    with pytest.raises(CacheFileError) as caught:
        ResultCache(path, scope={"m": 1})
    message = str(caught.value)
    assert str(path) in message and "not a readable SQLite cache" in message
    assert "delete or move it away" in message and "\n" not in message
    assert path.read_text().startswith("these are my notes")  # left as it was


def test_a_cache_below_a_regular_file_is_one_line(tmp_path):
    from lm_eval_rul.cache import CacheFileError

    blocking = tmp_path / "results"
    blocking.write_text("a file where a folder should be")
    with pytest.raises(CacheFileError, match=r"its folder cannot be made, .*results is a file"):
        ResultCache(blocking / "deeper" / "c.sqlite", scope={"m": 1})
    with pytest.raises(CacheFileError, match="is a folder, not a file"):
        ResultCache(tmp_path, scope={"m": 1})


def test_a_full_disk_is_one_line_and_keeps_what_was_committed(tmp_path, monkeypatch):
    """SQLite's ``database or disk is full`` (simulated: the cache file may not grow past
    its size) names the file; the batch in flight is rolled back, earlier ones stay."""
    from lm_eval_rul.cache import CacheFileError

    path = tmp_path / "c.sqlite"
    cache = ResultCache(path, scope={"m": 1})
    cache.put(("kept",), 1)
    pages = cache._db.execute("PRAGMA page_count").fetchone()[0]
    cache._db.execute(f"PRAGMA max_page_count = {pages}")  # no room for a new page
    with pytest.raises(CacheFileError, match="the disk is full") as caught:
        cache.put_many([(("lost", i), "x" * 4000) for i in range(50)])
    assert str(path) in str(caught.value) and "\n" not in str(caught.value)
    assert len(cache) == 1 and cache.get(("kept",)) == 1


def test_a_results_cache_that_is_not_sqlite_stops_lalm_before_the_model(
    tiny_audio_lm, audio_data, tmp_path, capsys, monkeypatch
):
    from lm_eval_rul.models.lalm import LALM
    from lm_eval_rul.testing.harness import cli_error_line

    built: list = []
    monkeypatch.setattr(LALM, "_create_model", lambda *a, **k: built.append(1))
    notes = tmp_path / "notes.sqlite"
    notes.write_text("not a database\n" * 50)
    line = cli_error_line(
        ["run", "--model", "lalm", "--model_args",
         f"pretrained={tiny_audio_lm},results_cache={notes}", "--device", "cpu",
         "--tasks", "rul_muchomusic_fold0", "--metadata", json.dumps(audio_data)],  # fmt: skip
        capsys,
    )
    assert "CacheFileError" in line and str(notes) in line and "delete or move it" in line
    assert built == []


@pytest.mark.parametrize("value", ["", "relative/cache"])
def test_an_empty_or_relative_xdg_cache_home_is_unset(value, tmp_path, monkeypatch):
    """53.13: ``XDG_CACHE_HOME`` set but empty (or relative, which XDG also calls invalid)
    never puts a cache in the working folder: ``~/.cache/lm_eval_rul`` is used, for every
    cache of the package (they all ask :func:`~lm_eval_rul.questions.cache_dir`)."""
    from lm_eval_rul.questions import cache_dir

    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("LM_EVAL_RUL_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", value)
    monkeypatch.chdir(tmp_path)
    assert cache_dir() == home / ".cache" / "lm_eval_rul"
    assert not (tmp_path / "lm_eval_rul").exists() and not (tmp_path / "relative").exists()
