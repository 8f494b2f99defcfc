"""Session-wide offline fixtures: a tiny real causal LM and small data files."""

from __future__ import annotations

import functools
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


@pytest.fixture(scope="session")
def factual_metadata(tmp_path_factory) -> dict[str, str]:
    """MusicNet, FMA and OverClocked ReMix fixtures in their public layouts (``--metadata``)."""
    from lm_eval_rul.testing.factual import write_factual_datasets

    return write_factual_datasets(tmp_path_factory.mktemp("factual_data"))


@pytest.fixture(scope="session")
def tiny_audio_lm(tmp_path_factory) -> Path:
    """A random-weight ``Qwen2AudioForConditionalGeneration`` with its real processor."""
    from lm_eval_rul.testing.audio import make_tiny_audio_lm

    return make_tiny_audio_lm(tmp_path_factory.mktemp("tiny_qwen2_audio"), "qwen2_audio")


@pytest.fixture(scope="session")
def audio_data(tmp_path_factory) -> dict[str, str]:
    """``--metadata`` of 8 RUL and MuChoMusic questions with one clip per track (4 tracks)."""
    from lm_eval_rul.testing.audio import write_audio_benchmark

    return write_audio_benchmark(tmp_path_factory.mktemp("audio_data"))


@pytest.fixture
def constructions(monkeypatch) -> list[str]:
    """Every harness HF model (``hf`` or ``lalm``) constructed while the test runs."""
    from lm_eval.models.huggingface import HFLM

    built: list[str] = []
    original = HFLM.__init__

    @functools.wraps(original)
    def counting(self, *args, **kwargs):
        built.append(type(self).__name__)
        original(self, *args, **kwargs)

    monkeypatch.setattr(HFLM, "__init__", counting)
    return built


@pytest.fixture(scope="session")
def family_models(tmp_path_factory):
    """Tiny published-conventions models, one per ``FAMILIES`` row CI can build, each built
    on first use and shared by every test file (``lm_eval_rul.testing.families``)."""
    from lm_eval_rul.testing.families import TinyModels

    return TinyModels(tmp_path_factory.mktemp("families"))
