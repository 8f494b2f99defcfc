"""The traps of a user's first hour, each through the CLI: exit status 2, ONE line naming
the problem, and no model constructed (``HFLM.__init__`` is counted; ``lalm`` extends it).

The hub is stood in by a small server on 127.0.0.1 answering the Hugging Face metadata
request as the hub does (``X-Error-Code`` headers), or by a closed port (no network).
"""

from __future__ import annotations

import http.server
import json
import socket
import threading
from pathlib import Path

import pytest

from lm_eval_rul.testing.harness import cli_error_line as fail
from lm_eval_rul.testing.harness import read_output, run_cli, text_run_args


def hf_run(model: str | Path, data_dir: Path, tmp_path: Path, tasks: str = "rul_muchomusic"):
    """``run --model hf`` arguments on the fixture files."""
    return text_run_args(model, data_dir, tmp_path / "out", tasks, batch_size=2)


def test_data_path_typo_with_hf_fails_before_the_model(tiny_lm, tmp_path, capsys, constructions):
    line = fail(
        ["run", "--model", "hf", "--model_args", f"pretrained={tiny_lm}", "--tasks",
         "rul_muchomusic", "--metadata", '{"data_path": "RUL-MuchoMusic.jsn"}'],
        capsys,
    )  # fmt: skip
    assert "data_path='RUL-MuchoMusic.jsn': no such file" in line
    assert constructions == []


def test_unknown_task_names_the_closest(tiny_lm, data_dir, tmp_path, capsys, constructions):
    line = fail(hf_run(tiny_lm, data_dir, tmp_path, tasks="rul_muchomusc"), capsys)
    assert "UnknownTaskError: unknown task 'rul_muchomusc' (closest: rul_muchomusic" in line
    assert "lm-eval-rul ls tasks" in line
    # the entry points only: groups and stand-alone tasks, not the tasks inside a group
    listed = line.split("This plugin's groups and tasks: ", 1)[1].split(";", 1)[0].split(", ")
    assert {"rul_muchomusic", "muchomusic", "factual", "factual_robustness"} <= set(listed)
    assert "rul_muchomusic_fold0" not in listed and "factual_instrument_open" not in listed
    assert constructions == []


def test_a_task_named_twice_names_both_names(tiny_lm, data_dir, tmp_path, capsys, constructions):
    args = hf_run(tiny_lm, data_dir, tmp_path, tasks="rul_muchomusic,rul_muchomusic_fold1")
    line = fail(args, capsys)
    assert "DuplicateTaskError: --tasks names one task twice: task 'rul_muchomusic_fold1'" in line
    assert "'rul_muchomusic' and 'rul_muchomusic_fold1'" in line
    assert constructions == []


def test_lalm_model_arg_on_hf_names_the_arg_and_its_model(
    tiny_lm, data_dir, tmp_path, capsys, constructions
):
    args = hf_run(tiny_lm, data_dir, tmp_path)
    args[args.index("--model_args") + 1] += ",audio=noise,noise_std=2"
    line = fail(args, capsys)
    assert "--model hf does not take model_args audio=noise, noise_std=2" in line
    assert "arguments of --model lalm" in line
    assert constructions == []


def test_data_file_of_the_other_benchmark_says_which_file_each_task_wants(
    tiny_lm, data_dir, tmp_path, capsys, constructions
):
    line = fail(
        ["run", "--model", "hf", "--model_args", f"pretrained={tiny_lm}", "--tasks", "muchomusic",
         "--metadata", json.dumps({"data_path": str(data_dir / "rul.json")})],
        capsys,
    )  # fmt: skip
    assert "data_path is the RUL-MuChoMusic JSON" in line
    assert "muchomusic* tasks read MuChoMusic's CSV (muchomusic.csv" in line
    assert constructions == []


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


@pytest.fixture
def backoff(monkeypatch) -> list[float]:
    """The hub client's back-off sleeps (one before each retried request)."""
    import huggingface_hub.utils._http as hub_http

    slept: list[float] = []
    monkeypatch.setattr(hub_http.time, "sleep", slept.append)
    return slept


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


def test_bad_flags_show_the_subcommand_usage(capsys):
    from lm_eval_rul.cli import main

    for argv in (
        ["run", "--bogus"],
        ["build", "--output", "x.json", "--bogus"],
        ["pi", "--data", "x", "--output", "y", "--bogus"],
        ["report", "x", "--out", "y", "--bogus"],
    ):
        with pytest.raises(SystemExit) as exited:
            main(argv)
        err = capsys.readouterr().err
        assert exited.value.code == 2 and err.startswith(f"usage: lm-eval-rul {argv[0]}"), err
        assert f"lm-eval-rul {argv[0]}: error: unrecognized arguments: --bogus" in err


def test_help_shows_this_tool_and_its_examples(capsys):
    from lm_eval_rul.cli import main

    for argv, wanted in (
        (["--help"], ["usage: lm-eval-rul", "is your audio language model really listening",
                      "lm-eval-rul run --model hf", "examples:"]),
        (["run", "--help"], ["usage: lm-eval-rul run --model hf|lalm", "--audio_check",
                             "lm-eval-rul run --model lalm", "examples:"]),
    ):  # fmt: skip
        with pytest.raises(SystemExit):
            main(argv)
        out = capsys.readouterr().out
        assert all(text in out for text in wanted), out
        assert "lm-eval run" not in out and "hellaswag" not in out


@pytest.fixture(scope="module")
def tiny_audio(tmp_path_factory) -> dict[str, Path]:
    """A tiny Qwen2-Audio and the fixture questions' clips (one per question id)."""
    from lm_eval_rul.testing.audio import make_tiny_audio_lm, write_audio_dir
    from lm_eval_rul.testing.fixtures import fixture_rows

    root = tmp_path_factory.mktemp("quiet_audio")
    write_audio_dir(root / "audio", list(fixture_rows(8)))
    return {"model": make_tiny_audio_lm(root / "model", "qwen2_audio"), "audio": root / "audio"}


@pytest.mark.parametrize("model", ["hf", "lalm"])
def test_logs_are_quiet_and_said_once(model, tiny_lm, tiny_audio, data_dir, tmp_path):
    args = hf_run(tiny_lm, data_dir, tmp_path)
    if model == "lalm":
        args[args.index("hf")] = "lalm"
        args[args.index("--model_args") + 1] = f"pretrained={tiny_audio['model']},dtype=float32"
        metadata = json.loads(args[args.index("--metadata") + 1])
        args[args.index("--metadata") + 1] = json.dumps(
            {**metadata, "audio_dir": str(tiny_audio["audio"])}
        )
    at = args.index("--device")
    del args[at : at + 2]  # no --device: the harness's default is cuda:0
    done = run_cli([*args, "--limit", "2"], cwd=tmp_path)  # tmp_path: not a git clone
    log = done.stdout + done.stderr
    results, _ = read_output(tmp_path / "out")
    assert results["config"]["device"] == "cpu"  # where it ran (no GPU here), not cuda:0
    assert "Custom kwargs" not in log
    assert "not a git repository" not in log
    assert log.count("--limit SHOULD ONLY BE USED FOR TESTING") == 1
    assert log.count("Selected tasks:") == 1
    assert "majority_acc" in done.stdout and "Traceback" not in log


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


def test_lalm_refuses_use_cache_before_loading(data_dir, tmp_path, capsys, constructions):
    model = tmp_path / "never_loaded"
    model.mkdir()
    (model / "config.json").write_text("{}")
    line = fail(
        ["run", "--model", "lalm", "--model_args", f"pretrained={model}", "--tasks",
         "rul_muchomusic", "--use_cache", tmp_path / "lm_cache",
         "--metadata", json.dumps({"data_path": str(data_dir / "rul.json")})],
        capsys,
    )  # fmt: skip
    assert "lalm does not support --use_cache" in line and "results_cache=PATH|none" in line
    assert constructions == []
