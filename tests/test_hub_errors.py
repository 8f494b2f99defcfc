"""A model or data set the hub cannot give (gated, missing, no network, offline mode, no
cached copy) is one line at once, without retries, before any model loads."""

from __future__ import annotations

import http.server
import socket
import threading
from pathlib import Path

import pytest

from lm_eval_rul.testing.harness import cli_error_line as fail
from lm_eval_rul.testing.harness import run_cli, text_run_args


def hf_run(model: str | Path, data_dir: Path, tmp_path: Path, tasks: str = "rul_muchomusic"):
    """``run --model hf`` arguments on the fixture files."""
    return text_run_args(model, data_dir, tmp_path / "out", tasks, batch_size=2)


class _Hub(http.server.BaseHTTPRequestHandler):
    """Answers ``HEAD /<org>/<name>/resolve/<rev>/config.json`` as huggingface.co does."""

    def do_HEAD(self) -> None:  # noqa: N802 - http.server's name
        repo = "/".join(self.path.strip("/").split("/")[:2])
        codes = {"acme/gated": (401, "GatedRepo"), "acme/missing": (404, "RepoNotFound")}
        status, code = codes.get(repo, (404, "RepoNotFound"))
        self.send_response(status)
        self.send_header("X-Error-Code", code)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args) -> None:
        """Print no request log (the tests read the exit status and the error line)."""


def point_hub_at(monkeypatch, endpoint: str) -> None:
    """What ``HF_ENDPOINT=endpoint`` does when huggingface_hub is imported."""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "ENDPOINT", endpoint)
    template = endpoint + "/{repo_id}/resolve/{revision}/{filename}"
    monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE", template)


@pytest.fixture
def hub(monkeypatch):
    """The hub client pointed at a loopback server, online."""
    from huggingface_hub import constants

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    point_hub_at(monkeypatch, f"http://127.0.0.1:{server.server_port}")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("HF_HUB_CACHE", "/nonexistent-cache")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", "/nonexistent-cache")
    yield server
    server.shutdown()


@pytest.fixture
def backoff(monkeypatch) -> list[float]:
    """The hub client's back-off sleeps (one before each retried request)."""
    import huggingface_hub.utils._http as hub_http

    slept: list[float] = []
    monkeypatch.setattr(hub_http.time, "sleep", slept.append)
    return slept


@pytest.mark.parametrize(
    ("repo", "expected"),
    [
        ("acme/gated", "is gated: accept its terms on http://127.0.0.1"),
        ("acme/missing", "no such model on the hub (or it is private"),
    ],
)
def test_model_that_cannot_be_downloaded_says_why_at_once(
    hub, repo, expected, data_dir, tmp_path, capsys, constructions
):
    line = fail(hf_run(repo, data_dir, tmp_path), capsys)
    assert f"ModelUnavailableError: --model_args pretrained='{repo}'" in line and expected in line
    assert constructions == []


def test_no_network_is_one_line_without_retries(
    hub, monkeypatch, data_dir, tmp_path, capsys, backoff, constructions
):

    with socket.socket() as probe:  # a port nobody listens on: connection refused
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    point_hub_at(monkeypatch, f"http://127.0.0.1:{closed}")
    line = fail(hf_run("Qwen/Qwen2.5-0.5B-Instruct", data_dir, tmp_path), capsys)
    assert "cannot be downloaded: http://127.0.0.1" in line and "is not reachable" in line
    assert "pretrained=/path/to/model" in line and "--metadata" in line
    assert backoff == [] and constructions == []


def test_offline_mode_and_no_cached_copy(monkeypatch, data_dir, tmp_path, capsys, constructions):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "empty_hub_cache"))
    line = fail(hf_run("Qwen/Qwen2.5-0.5B-Instruct", data_dir, tmp_path), capsys)
    assert "is not in the local Hugging Face cache and the hub is off (HF_HUB_OFFLINE=1)" in line
    assert constructions == []


def test_missing_local_model_folder(data_dir, tmp_path, capsys, constructions):
    line = fail(hf_run(tmp_path / "no_model_here", data_dir, tmp_path), capsys)
    assert "no_model_here': no such folder" in line
    assert constructions == []


def test_readme_command_offline_in_a_subprocess_prints_the_error_first(tmp_path):
    """The README's first command as a new user types it (with --limit), with no network at
    all: the one-line error is the first line printed (the harness's "Including path",
    "Selected Tasks" and --limit lines of the run that does not happen are not), with no
    retry and no traceback."""
    done = run_cli(
        ["run", "--model", "hf", "--model_args", "pretrained=Qwen/Qwen2.5-0.5B-Instruct",
         "--tasks", "rul_muchomusic", "--batch_size", "8", "--limit", "2"],
        check=False,
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and "Retrying" not in done.stderr
    (line,) = [x for x in done.stderr.splitlines() if "error:" in x]
    assert "ModelUnavailableError" in line and "docs/errors.md: Offline" in line
    assert done.stderr.splitlines()[0] == line and done.stdout == ""


def test_default_data_without_network_is_one_line_without_retries(
    tiny_lm, monkeypatch, tmp_path, capsys, backoff, constructions
):
    from lm_eval_rul.questions import sources

    with socket.socket() as probe:  # nobody listens: connection refused, like no network
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}"
    point_hub_at(monkeypatch, closed)
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", False)
    monkeypatch.setattr(sources, "RUL_GITHUB_URL", f"{closed}/RUL-MuchoMusic.json")
    line = fail(
        ["run", "--model", "hf", "--model_args", f"pretrained={tiny_lm}", "--tasks",
         "rul_muchomusic"],
        capsys,
    )  # fmt: skip
    assert "DataSourceError: cannot download RUL-MuChoMusic (github.com: " in line
    assert (
        "huggingface.co/datasets/yongyizang/RUListening: " in line
        and "(docs/errors.md: Offline)" in line
    )
    assert backoff == [] and constructions == []  # no request retried, no model built
