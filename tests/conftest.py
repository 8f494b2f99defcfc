"""Session-wide offline fixtures: a tiny real causal LM and small data files."""

from __future__ import annotations

from pathlib import Path

import pytest

from lm_eval_rul.testing.fixtures import write_muchomusic_csv, write_pools_json, write_rul_json
from lm_eval_rul.testing.text import make_tiny_causal_lm


@pytest.fixture(autouse=True)
def _own_cache_dir(tmp_path, monkeypatch):
    """Each test gets its own ``$LM_EVAL_RUL_CACHE``: ``lalm``'s stored results never leak
    from one test into another."""
    monkeypatch.setenv("LM_EVAL_RUL_CACHE", str(tmp_path / "lm_eval_rul_cache"))


@pytest.fixture(scope="session")
def tiny_lm(tmp_path_factory) -> Path:
    """A random-weight ``Qwen2ForCausalLM`` with a locally trained tokenizer."""
    return make_tiny_causal_lm(tmp_path_factory.mktemp("tiny_qwen2"), family="qwen2")


@pytest.fixture(scope="session")
def tiny_lm_split_letters(tmp_path_factory) -> Path:
    """A tiny ``GPT2LMHeadModel`` whose tokenizer spells `` A`` as two tokens."""
    return make_tiny_causal_lm(
        tmp_path_factory.mktemp("tiny_gpt2_split"), family="gpt2", merge_letters=False
    )


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory) -> Path:
    """RUL JSON, pools and MuChoMusic CSV fixtures (8 questions, shared ids)."""
    root = tmp_path_factory.mktemp("data")
    write_rul_json(root / "rul.json", n=8)
    write_pools_json(root / "pools.json", n=8)
    write_muchomusic_csv(root / "muchomusic.csv", n=8)
    return root
