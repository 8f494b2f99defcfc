"""No test writes outside its temp folders (issue 38 item 8): the caches are moved before any
fixture runs, and a write under the user's own cache folders fails the test that made it."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from lm_eval_rul.testing.isolation import CACHE_VARIABLES, WriteGuard


@pytest.fixture(scope="module")
def module_cache_dir() -> Path:
    """Like tests/test_python_api.py's module fixtures: set up before any test's monkeypatch."""
    from lm_eval_rul.questions.sources import cache_dir

    return cache_dir()


def _inside(path: str | Path, folders) -> bool:
    path = os.path.abspath(path)
    return any(path == str(f) or path.startswith(f"{f}{os.sep}") for f in folders)


def test_a_module_fixture_writes_outside_the_users_caches(module_cache_dir, write_guard):
    assert not _inside(module_cache_dir, write_guard.forbidden)
    for name in CACHE_VARIABLES:  # huggingface, torch, matplotlib: all moved
        assert not _inside(os.environ[name], write_guard.forbidden), name


def test_the_guard_records_writes_under_a_guarded_folder(tmp_path):
    guarded = tmp_path / "home" / ".cache"
    guarded.mkdir(parents=True)
    (guarded / "read.txt").write_text("x")
    guard = WriteGuard([guarded]).install()
    try:
        (guarded / "read.txt").read_text()  # reading is fine
        (tmp_path / "elsewhere.txt").write_text("x")
        (guarded / "lm_eval_rul").mkdir()
        sqlite3.connect(guarded / "lm_eval_rul" / "lalm_results.sqlite").close()
        writes = guard.take()
    finally:
        guard.active = False
    assert writes == [
        f"os.mkdir {guarded / 'lm_eval_rul'}",
        f"sqlite3.connect {guarded / 'lm_eval_rul' / 'lalm_results.sqlite'}",
    ]
