"""Fixtures of the vLLM tests: run in the vLLM environment (``.ci/vllm_env.sh``) only.

The main suite (``tests/``) never imports vLLM; ``.ci/run`` runs this folder with the
``.venv-vllm`` interpreter. The model is a tiny Qwen2-Audio with Whisper's own front end
(128 mel bins, 30 s windows), which vLLM's Qwen2-Audio requires; one in-process engine
per audio condition and one OpenAI-compatible server (started with ``--api-key``) serve
the whole session.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

#: ``tests/``, so the test doubles import as ``doubles.<module>`` (tests/doubles/).
_TESTS_DIR = str(Path(__file__).resolve().parents[1] / "tests")
if _TESTS_DIR not in sys.path:
    sys.path.insert(0, _TESTS_DIR)

os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
for _name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ.setdefault(_name, "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture(autouse=True)
def _own_cache_dir(tmp_path, monkeypatch):
    """Each test gets its own ``$LM_EVAL_RUL_CACHE`` (no stored results leak between tests)."""
    monkeypatch.setenv("LM_EVAL_RUL_CACHE", str(tmp_path / "lm_eval_rul_cache"))


@pytest.fixture(scope="session")
def whisper_qwen2_audio(tmp_path_factory) -> Path:
    """A random-weight Qwen2-Audio with the real Whisper front end (vLLM loads it)."""
    from lm_eval_rul.testing.audio import make_tiny_audio_lm

    return make_tiny_audio_lm(
        tmp_path_factory.mktemp("whisper_qwen2_audio"), "qwen2_audio", whisper_front_end=True
    )


@pytest.fixture(scope="session")
def audio_data(tmp_path_factory) -> dict[str, str]:
    """``--metadata`` of 8 RUL and MuChoMusic questions with one clip per track (4 tracks)."""
    from lm_eval_rul.testing.audio import write_audio_benchmark

    return write_audio_benchmark(tmp_path_factory.mktemp("audio_data"))


@pytest.fixture(scope="session")
def vllm_server(whisper_qwen2_audio, tmp_path_factory):
    """One real ``vllm.entrypoints.openai.api_server`` for the session, with an API key."""
    from doubles.vllm_server import VLLMServer

    log = tmp_path_factory.mktemp("vllm_server") / "server.log"
    with VLLMServer(whisper_qwen2_audio, log=log) as server:
        yield server
