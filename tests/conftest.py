"""Session-wide offline fixtures: a tiny real causal LM and small data files."""

from __future__ import annotations

import functools
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from lm_eval_rul.testing.fixtures import write_muchomusic_csv, write_pools_json, write_rul_json
from lm_eval_rul.testing.isolation import WriteGuard, isolate_session
from lm_eval_rul.testing.text import make_tiny_causal_lm

#: ``tests/`` itself, so the test doubles import as ``doubles.<module>`` (tests/doubles/: not
#: in the installed package) whatever pytest's import mode.
TESTS_DIR = str(Path(__file__).resolve().parent)
if TESTS_DIR not in sys.path:
    sys.path.insert(0, TESTS_DIR)

_GUARD = pytest.StashKey[WriteGuard]()
_SESSION_CACHES = pytest.StashKey[Path]()


def pytest_configure(config):
    """Before any fixture: every cache (ours, huggingface, torch, matplotlib) in a session
    folder, and a guard recording writes under the user's own cache folders."""
    root = Path(tempfile.mkdtemp(prefix="lm_eval_rul_test_caches_"))
    config.stash[_SESSION_CACHES] = root
    config.stash[_GUARD] = isolate_session(root)
    _harness_log_follows_stderr()


class _CurrentStderr:
    """Whatever ``sys.stderr`` is when a record is written (a test's ``capsys`` or not)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


def _harness_log_follows_stderr() -> None:
    """The harness makes its one log handler at the first ``setup_logging`` call, bound to
    that moment's ``sys.stderr``: from a test under ``capsys``, a stream closed when that
    test ends, so every later test's harness log line became a "Logging error" traceback.
    Made here and pointed at the current ``sys.stderr``, it writes where each test reads."""
    import logging

    from lm_eval.utils import setup_logging

    setup_logging()
    for handler in logging.getLogger("lm_eval").handlers:
        if isinstance(handler, logging.StreamHandler):
            handler.setStream(_CurrentStderr())


#: Session fixtures that build a model: a test using one (directly or through a fixture of its
#: module) is end-to-end.
_MODEL_FIXTURES = frozenset({"tiny_lm", "tiny_lm_split_letters", "tiny_audio_lm", "family_models"})
#: Names whose use builds a model, loads one through the harness or starts another Python
#: process (the CLI, a bridge, concurrent writers): a test, one of its fixtures or a helper of
#: its module naming one is end-to-end.
_SLOW_CALLS = frozenset(
    {
        "make_tiny_causal_lm",
        "make_tiny_audio_lm",
        "make_tiny_t5",
        "make_tiny_clap",
        "make_tiny_omni_full_checkpoint",
        "TinyModels",
        "simple_evaluate",
        "run_cli",
        "make_research_lm",
        "isolated_python",
        "start_bridge",
        "runpy",
        "subprocess",
        "multiprocessing",
    }
)
#: Subcommands that load a model: ``main([...])`` naming one runs the harness in-process.
_MODEL_COMMANDS = frozenset({"run", "pi", "build"})


def _names(code, module, seen: set) -> set[str]:
    """Global and attribute names ``code``, the functions nested in it and the helpers of
    ``module`` it calls refer to; ``main`` calls of a model command read as ``run_cli``."""
    found = set(code.co_names)
    if "main" in found and _MODEL_COMMANDS & {c for c in code.co_consts if isinstance(c, str)}:
        found.add("run_cli")
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            found |= _names(const, module, seen)
    for name in code.co_names:
        helper = getattr(module, name, None)
        if getattr(helper, "__module__", None) == module.__name__ and name not in seen:
            seen.add(name)
            if hasattr(helper, "__code__"):
                found |= _names(helper.__code__, module, seen)
    return found


def _is_e2e(item) -> bool:
    if _MODEL_FIXTURES & set(getattr(item, "fixturenames", ())):
        return True
    functions = [getattr(item, "function", None)]
    for defs in item._fixtureinfo.name2fixturedefs.values():
        functions += [fixture.func for fixture in defs]
    return any(
        _SLOW_CALLS & _names(function.__code__, sys.modules[function.__module__], set())
        for function in functions
        if hasattr(function, "__code__")
    )


def pytest_collection_modifyitems(config, items):
    """``e2e`` marks the tests that build or load a model or run the CLI (``-m "not e2e"``
    leaves the fast subset); a test the rule misses carries ``pytest.mark.e2e`` itself."""
    for item in items:
        if item.get_closest_marker("e2e") is None and _is_e2e(item):
            item.add_marker(pytest.mark.e2e)


def pytest_sessionfinish(session):
    """Writes no test was blamed for (collection, session fixtures' teardown) fail the run."""
    writes = session.config.stash[_GUARD].take()
    if writes:
        print(f"\nwritten under the user's cache folders: {writes[:10]}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_unconfigure(config):
    config.stash[_GUARD].active = False
    shutil.rmtree(config.stash[_SESSION_CACHES], ignore_errors=True)


@pytest.fixture(autouse=True)
def _own_cache_dir(tmp_path, monkeypatch, request):
    """Each test gets its own ``$LM_EVAL_RUL_CACHE``: ``lalm``'s stored results never leak
    from one test into another. After the test (its module fixtures included), nothing may
    have been written under the user's cache folders."""
    monkeypatch.setenv("LM_EVAL_RUL_CACHE", str(tmp_path / "lm_eval_rul_cache"))
    yield
    writes = request.config.stash[_GUARD].take()
    assert not writes, f"written under the user's cache folders: {writes[:10]}"


@pytest.fixture(scope="session")
def write_guard(request) -> WriteGuard:
    """The session's guard over the user's cache folders (its ``forbidden`` folders)."""
    return request.config.stash[_GUARD]


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
