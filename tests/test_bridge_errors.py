"""The written bridge in an environment holding only numpy and soundfile: bad adapters and a
busy port stop in one line before it listens; adapter failures reach ``lalm-api`` as HTTP
errors (never answers); audio longer than the declared window is cut and reported."""

from __future__ import annotations

import ast
import json
import os
import socket
import sqlite3
import subprocess
import sys
import textwrap
import urllib.error
import urllib.request

import numpy as np
import pytest
from doubles.bridge import MINIMAL_PACKAGES, clean_env, isolated_python, start_bridge

os.environ.setdefault("HF_HUB_OFFLINE", "1")

TRIVIAL = """\
MAX_AUDIO_SECONDS = 0.5
NAME = "trivial"

def generate(audio, sampling_rate, prompt, max_new_tokens):
    return "A heard %d samples" % (0 if audio is None else len(audio))

def loglikelihood(audio, sampling_rate, context, continuation):
    return -float(len(audio)) / sampling_rate - len(continuation)
"""


@pytest.fixture(scope="module")
def minimal(tmp_path_factory):
    """The written server and an interpreter that has numpy and soundfile, nothing else."""
    from lm_eval_rul.bridge import write_server

    root = tmp_path_factory.mktemp("minimal_bridge")
    python = isolated_python(root / "env", MINIMAL_PACKAGES)
    return {"root": root, "python": python, "server": write_server(root / "bridge.py")}


def _adapter(minimal, name: str, source: str):
    path = minimal["root"] / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    return path


def _serve(minimal, adapter, *options: str) -> subprocess.CompletedProcess:
    command = [minimal["python"], minimal["server"], "--adapter", str(adapter), *options]
    return subprocess.run(
        command, capture_output=True, text=True, timeout=60, env=clean_env(), cwd=minimal["root"]
    )


def _post(url: str, body: dict) -> tuple[int, dict, dict]:
    request = urllib.request.Request(
        url + "/chat/completions", json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request) as answer:
            return answer.status, dict(answer.headers), json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), json.loads(error.read())


def test_the_written_file_is_python_38_and_imports_only_stdlib_numpy_soundfile(minimal):
    source = minimal["server"].read_text()
    tree = ast.parse(source, feature_version=(3, 8))
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in (node.names if isinstance(node, ast.Import) else [ast.alias(node.module)])
    }
    assert imported - set(sys.stdlib_module_names) == {"numpy", "soundfile"}
    probe = subprocess.run(
        [minimal["python"], "-c", "import numpy, soundfile\nimport torch"],
        capture_output=True, text=True, env=clean_env(), cwd=minimal["root"],
    )  # fmt: skip
    assert "No module named 'torch'" in probe.stderr
    helped = _serve(minimal, "x.py", "--help")
    for words in (
        "loglikelihood(audio", "MAX_AUDIO_SECONDS", "CHUNKED", "127.0.0.1", "HTTP 422",
        "HTTP 503", "WORKDIR", "TRANSIENT_ERRORS", "--chdir",
    ):  # fmt: skip
        assert words in helped.stdout


@pytest.mark.parametrize(
    "name, source, says",
    [
        ("missing", None, "not found"),
        ("broken", "import not_a_module_anywhere\n", "does not import: ModuleNotFoundError"),
        ("nogenerate", "def loglikelihood(*args):\n    return 0.0\n", "defines no generate("),
        ("badwindow", "MAX_AUDIO_SECONDS = -1\ndef generate(*a):\n    return ''\n", "-1"),
    ],
)
def test_a_bad_adapter_stops_in_one_line_before_listening(minimal, name, source, says):
    adapter = minimal["root"] / f"{name}.py"
    if source is not None:
        adapter.write_text(source)
    stopped = _serve(minimal, adapter, "--port", "0")
    assert stopped.returncode == 2 and stopped.stdout == ""  # never announced, never listened
    (line,) = stopped.stderr.strip().splitlines()
    assert str(adapter) in line or f"{name}.py" in line
    assert says in line


def test_a_port_in_use_is_one_line(minimal):
    adapter = _adapter(minimal, "trivial", TRIVIAL)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        stopped = _serve(minimal, adapter, "--port", str(taken.getsockname()[1]))
    assert stopped.returncode == 2
    (line,) = stopped.stderr.strip().splitlines()
    assert "cannot listen on 127.0.0.1:" in line and "--port" in line


def test_the_protocol_declaration_and_cuts(minimal):
    from lm_eval_rul.models.api_http import read_declaration
    from lm_eval_rul.models.api_payload import input_audio_part, prompt_logprobs_body, wav_bytes
    from lm_eval_rul.models.core import chat_messages

    adapter = _adapter(minimal, "trivial", TRIVIAL)
    log = minimal["root"] / "trivial.log"
    process, url = start_bridge(minimal["python"], minimal["server"], adapter, log)
    try:
        declared = read_declaration(url, "trivial")
        assert declared is not None and declared.max_audio_seconds == 0.5
        assert declared.has_loglikelihood and not declared.chunked
        assert read_declaration(url, "another") is None
        one_second = np.zeros(16_000, dtype=np.float32)
        part = input_audio_part(wav_bytes(one_second, 16_000, "FLOAT"))
        body = prompt_logprobs_body("trivial", chat_messages("Q?", audio_part=part), " B")
        status, headers, reply = _post(url, body)
        assert status == 200 and reply["prompt_logprobs"][-1]["0"]["logprob"] == -0.5 - 2
        assert reply["bridge"]["audio_cut"] == {"audio_seconds": 1.0, "cut_to_seconds": 0.5}
        assert headers["X-Bridge-Audio-Cut"] == "1.0s->0.5s"
        generation = {"model": "trivial", "messages": chat_messages("Q?", audio_part=part)}
        status, _, reply = _post(url, {**generation, "stop": [" heard"]})
        assert reply["choices"][0]["message"]["content"] == "A"  # stop applied
        assert _post(url, {**generation, "model": "other"})[0] == 404
        status, _, reply = _post(url, {**generation, "logprobs": True, "top_logprobs": 5})
        assert status == 400 and "prompt path only" in reply["error"]["message"]
    finally:
        process.terminate()
        process.wait(timeout=30)
    assert "cut to the model's window of 0.5 s" in log.read_text()


def _run(url: str, model: str, tasks: str, data: dict, out, extra: str = "") -> None:
    from lm_eval_rul.cli import main

    model_args = f"base_url={url},model={model},max_retries=1,retry_backoff=0.01{extra}"
    main(
        [
            "run", "--model", "lalm-api", "--model_args", model_args, "--tasks", tasks,
            "--metadata", json.dumps(data), "--limit", "1", "--gen_kwargs", "max_gen_toks=2",
            "--output_path", str(out),
        ]
    )  # fmt: skip


@pytest.mark.parametrize(
    "body, says, status, posts",
    [  # CUDA out of memory may pass (retried); anything else fails the same way again
        ("raise RuntimeError('CUDA out of memory (test)')", "RuntimeError: CUDA out of memory",
         503, 2),
        ("return 42", "adapter generate returned int, not str", 422, 1),
        ("raise ValueError('the prompt has no <Speech> tag')",
         "adapter generate raised ValueError: the prompt has no <Speech> tag", 422, 1),
    ],
)  # fmt: skip
def test_an_adapter_failure_stops_lalm_api_in_one_line_and_records_nothing(
    minimal, audio_data, tmp_path, capsys, body, says, status, posts
):
    source = "NAME = 'failing'\ndef generate(audio, sampling_rate, prompt, max_new_tokens):\n"
    adapter = _adapter(minimal, "failing", source + f"    {body}\n")
    log = tmp_path / "console.log"
    process, url = start_bridge(minimal["python"], minimal["server"], adapter, log, "--verbose")
    cache = tmp_path / "cache.sqlite"
    try:
        with pytest.raises(SystemExit) as stopped:
            _run(url, "failing", "muchomusic_gen", audio_data, tmp_path / "out",
                 f",results_cache={cache}")  # fmt: skip
    finally:
        process.terminate()
        process.wait(timeout=30)
    assert stopped.value.code == 2
    (line,) = [x for x in capsys.readouterr().err.splitlines() if "lm-eval-rul run: error" in x]
    assert says in line
    assert ("after 1 retries" in line) == (status == 503)  # a 422 is never retried
    assert log.read_text().count(f'"POST /v1/chat/completions HTTP/1.1" {status}') == posts
    assert log.read_text().count("POST /v1/chat/completions") == posts
    assert not list((tmp_path / "out").rglob("results_*.json"))
    if cache.exists():  # the resume cache holds no answer
        with sqlite3.connect(cache) as db:
            assert db.execute("SELECT COUNT(*) FROM results").fetchone() == (0,)


def test_without_loglikelihood_a_letter_task_stops_before_any_request(
    minimal, audio_data, tmp_path, capsys
):
    adapter = _adapter(minimal, "genonly", "def generate(*args):\n    return 'A'\n")
    log = tmp_path / "console.log"
    process, url = start_bridge(minimal["python"], minimal["server"], adapter, log, "--verbose")
    try:
        with pytest.raises(SystemExit) as stopped:
            _run(url, "genonly", "rul_muchomusic", audio_data, tmp_path / "out")
        _run(url, "genonly", "muchomusic_gen", audio_data, tmp_path / "gen", ",max_audio_seconds=1")
    finally:
        process.terminate()
        process.wait(timeout=30)
    assert stopped.value.code == 2
    (line,) = [x for x in capsys.readouterr().err.splitlines() if "lm-eval-rul run: error" in x]
    assert "defines no loglikelihood" in line and "rul_muchomusic_gen" in line
    assert log.read_text().count("POST") == 1  # the generation task's one request only


SLOW = """\
import threading, time
NAME, THREAD_SAFE = "slow", {safe}
_inside, _most, _lock = [0], [0], threading.Lock()

def generate(audio, sampling_rate, prompt, max_new_tokens):
    with _lock:
        _inside[0] += 1
        _most[0] = max(_most[0], _inside[0])
    time.sleep(0.2)
    with _lock:
        _inside[0] -= 1
    return str(_most[0])
"""


@pytest.mark.parametrize("safe", [False, True])
def test_model_calls_are_serialised_unless_the_adapter_is_thread_safe(minimal, safe):
    from concurrent.futures import ThreadPoolExecutor

    adapter = _adapter(minimal, f"slow_{safe}", SLOW.format(safe=safe))
    log = minimal["root"] / f"slow_{safe}.log"
    process, url = start_bridge(minimal["python"], minimal["server"], adapter, log)
    body = {"model": "slow", "messages": [{"role": "user", "content": "Q?"}]}
    try:
        with ThreadPoolExecutor(4) as pool:
            replies = list(pool.map(lambda _: _post(url, body)[2], range(4)))
    finally:
        process.terminate()
        process.wait(timeout=30)
    seen = max(int(r["choices"][0]["message"]["content"]) for r in replies)
    assert seen > 1 if safe else seen == 1  # most calls inside the adapter at once


CHUNKED_ADAPTER = """\
MAX_AUDIO_SECONDS = 3
CHUNKED = True
NAME = "chunky"

def generate(audio, sampling_rate, prompt, max_new_tokens):
    return "A piano, I think."
"""


def test_a_chunked_bridge_is_asked_window_by_window_without_repeating_it(
    minimal, factual_metadata, tmp_path
):
    """The paper ran LTU-AS, MU-LLaMA and LLaMA-Adapter in windows: a bridge that declares
    ``CHUNKED`` gets its recordings asked window by window (within its 3 s), with no
    ``chunked=`` in ``--model_args``; nothing is cut."""
    from lm_eval_rul.cli import main
    from lm_eval_rul.testing.harness import read_output

    adapter = _adapter(minimal, "chunky", CHUNKED_ADAPTER)
    process, url = start_bridge(
        minimal["python"], minimal["server"], adapter, tmp_path / "console.log"
    )
    out = tmp_path / "out"
    try:
        main(
            [
                "run", "--model", "lalm-api", "--model_args",
                f"base_url={url},model=chunky,results_cache=none", "--tasks",
                "factual_instrument_open", "--metadata",
                json.dumps({**factual_metadata, "sample_size": 2}), "--log_samples",
                "--output_path", str(out),
            ]
        )  # fmt: skip
    finally:
        process.terminate()
        process.wait(timeout=30)
    results, samples = read_output(out)
    assert results["configs"]["factual_instrument_open"]["metadata"]["chunked"] is True
    docs = [row["doc"] for row in samples["factual_instrument_open"]]
    assert len(docs) > len({doc["id"] for doc in docs})  # a long recording: several windows
    assert not any(doc["cut"] for doc in docs)
    windows = [doc["audio_window"] for doc in docs if doc["audio_window"] is not None]
    assert windows and all(end - start <= 3.0 + 1e-9 for start, end in windows)


def _bridge_file(tmp_path, name: str, source: str):
    from lm_eval_rul.bridge import write_server

    server = write_server(tmp_path / "bridge.py")
    adapter = tmp_path / f"{name}.py"
    adapter.write_text(source)
    return server, adapter


EXITING = """\
import sys
NAME = "exiting"
_calls = [0]

def generate(audio, sampling_rate, prompt, max_new_tokens):
    _calls[0] += 1
    if _calls[0] == 1:
        sys.exit("usage: infer.py: error: unrecognized arguments: --fp16")
    if _calls[0] == 2:
        exit(3)
    return "A"
"""


def test_an_adapter_calling_sys_exit_is_an_error_reply_and_the_bridge_keeps_serving(tmp_path):
    import sys

    from doubles.bridge import post_chat, start_bridge

    server, adapter = _bridge_file(tmp_path, "exiting", EXITING)
    log = tmp_path / "console.log"
    process, url = start_bridge(sys.executable, server, adapter, log)
    body = {"model": "exiting", "messages": [{"role": "user", "content": "Q?"}]}
    try:
        first, second, third = (post_chat(url, body) for _ in range(3))
        assert process.poll() is None  # still serving
    finally:
        process.terminate()
        process.wait(timeout=30)
    assert first[0] == 422 and "unrecognized arguments: --fp16" in first[1]["error"]["message"]
    assert second[0] == 422 and "the adapter called sys.exit(3)" in second[1]["error"]["message"]
    assert third[0] == 200 and third[1]["choices"][0]["message"]["content"] == "A"
    assert log.read_text().count("bridge: adapter generate raised") == 2


def test_an_adapter_window_of_math_inf_is_no_limit(tmp_path):
    import sys

    import numpy as np
    from doubles.bridge import post_chat, start_bridge

    from lm_eval_rul.models.api_http import read_declaration
    from lm_eval_rul.models.api_payload import input_audio_part, wav_bytes
    from lm_eval_rul.models.core import chat_messages

    source = ("import math\nMAX_AUDIO_SECONDS = math.inf\nNAME = 'endless'\n"
              "def generate(audio, sampling_rate, prompt, max_new_tokens):\n"
              "    return 'heard %d' % len(audio)\n")  # fmt: skip
    server, adapter = _bridge_file(tmp_path, "endless", source)
    process, url = start_bridge(sys.executable, server, adapter, tmp_path / "console.log")
    part = input_audio_part(wav_bytes(np.zeros(48_000, dtype=np.float32), 16_000, "FLOAT"))
    try:
        declared = read_declaration(url, "endless")
        status, reply = post_chat(url, {"model": "endless",
                                    "messages": chat_messages("Q?", audio_part=part)})  # fmt: skip
    finally:
        process.terminate()
        process.wait(timeout=30)
    assert declared is not None and declared.max_audio_seconds is None
    assert status == 200 and reply["choices"][0]["message"]["content"] == "heard 48000"
    assert "bridge" not in reply  # nothing cut


@pytest.mark.parametrize("port", ["80000", "-1"])
def test_a_bridge_port_out_of_range_is_one_line(tmp_path, port):
    import subprocess
    import sys

    source = "def generate(audio, sampling_rate, prompt, max_new_tokens):\n    return 'A'\n"
    server, adapter = _bridge_file(tmp_path, "plain", source)
    stopped = subprocess.run(
        [sys.executable, str(server), "--adapter", str(adapter), "--port", port],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert stopped.returncode == 2 and stopped.stdout == ""
    (line,) = stopped.stderr.strip().splitlines()
    assert f"bridge: --port {port} is not a port (0 to 65535" in line
