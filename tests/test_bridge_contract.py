"""The bridge's contract with its adapter and its clients, in an environment holding only
numpy and soundfile: declarations are True/False, a log-likelihood is a finite number,
``is_greedy`` is computed or unknown (never invented), an adapter failure stops ``lalm-api``
at once with the adapter's message (a declared transient one is retried), an import failure
names its file and line, research code finds its relative paths (``WORKDIR``, ``--chdir``),
malformed requests are 400s, and binding beyond loopback warns."""

from __future__ import annotations

import json
import socket
import subprocess
import textwrap
import time

import pytest
from doubles.bridge import (
    MINIMAL_PACKAGES,
    clean_env,
    isolated_python,
    post_chat,
    start_bridge,
)


@pytest.fixture(scope="module")
def minimal(tmp_path_factory):
    """The written server and an interpreter that has numpy and soundfile, nothing else."""
    from lm_eval_rul.bridge import write_server

    root = tmp_path_factory.mktemp("bridge_contract")
    python = isolated_python(root / "env", MINIMAL_PACKAGES)
    return {"root": root, "python": python, "server": write_server(root / "bridge.py")}


def _adapter(folder, name: str, source: str):
    path = folder / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    return path


def _serve(minimal, adapter, *options: str) -> subprocess.CompletedProcess:
    command = [minimal["python"], minimal["server"], "--adapter", str(adapter), *options]
    return subprocess.run(
        command, capture_output=True, text=True, timeout=60, env=clean_env(), cwd=minimal["root"]
    )


def _one_line(stopped: subprocess.CompletedProcess) -> str:
    assert stopped.returncode == 2 and stopped.stdout == ""  # never announced, never listened
    (line,) = stopped.stderr.strip().splitlines()
    return line


@pytest.mark.parametrize(
    "source, says",
    [
        ('CHUNKED = "false"\n', "CHUNKED = 'false' is not True or False"),
        ('THREAD_SAFE = "false"\n', "THREAD_SAFE = 'false' is not True or False"),
        ("NAME = 7\n", "NAME = 7 is not a model name"),
        ("TRANSIENT_ERRORS = ('busy',)\n", "TRANSIENT_ERRORS = ('busy',) is not a tuple"),
        ("import os\nWORKDIR = os.getcwd()\n", "flags.py:2: WORKDIR must be a plain string"),
        ('WORKDIR = "no_such_checkout"\n', "WORKDIR "),
    ],
)
def test_a_declaration_of_the_wrong_kind_stops_in_one_line(minimal, tmp_path, source, says):
    adapter = _adapter(tmp_path, "flags", source + "def generate(*args):\n    return ''\n")
    line = _one_line(_serve(minimal, adapter, "--port", "0"))
    assert says in line and "flags.py" in line


def test_an_import_failure_names_the_adapters_line_and_the_failing_file(minimal, tmp_path):
    _adapter(tmp_path, "checkpoint_loader", "import os\nraise OSError('no weights in ./ckpt')\n")
    adapter = _adapter(tmp_path, "loads", "import sys\nimport checkpoint_loader\n")
    line = _one_line(_serve(minimal, adapter, "--port", "0"))
    assert "does not import: OSError: no weights in ./ckpt" in line
    assert f"at {adapter}:2" in line and f"{tmp_path / 'checkpoint_loader.py'}:2" in line
    typo = _adapter(tmp_path, "typo", "x = 1\ndef generate(:\n    pass\n")
    line = _one_line(_serve(minimal, typo, "--port", "0"))
    assert "SyntaxError" in line and f"{typo}:2" in line


RELATIVE = """\
import json, os
{workdir}
import repo_module                           # beside the checkout's own files
with open("prompts/template.json") as f:    # opened relative to where the code runs
    TEMPLATE = json.load(f)["template"]

def generate(audio, sampling_rate, prompt, max_new_tokens):
    return TEMPLATE.format(prompt) + " from " + os.getcwd() + " " + repo_module.WHO
"""


def _checkout(tmp_path):
    repo = tmp_path / "repo"
    (repo / "prompts").mkdir(parents=True)
    (repo / "prompts" / "template.json").write_text(json.dumps({"template": "<Q>{}</Q>"}))
    (repo / "repo_module.py").write_text("WHO = 'the checkout'\n")
    return repo


@pytest.mark.parametrize("how", ["WORKDIR", "--chdir", "neither"])
def test_research_code_reading_relative_paths_runs_from_its_checkout(minimal, tmp_path, how):
    repo = _checkout(tmp_path)
    workdir = 'WORKDIR = "repo"' if how == "WORKDIR" else ""  # relative to the adapter
    adapter = _adapter(tmp_path, "relative", RELATIVE.format(workdir=workdir))
    options = ("--chdir", str(repo)) if how == "--chdir" else ()
    if how == "neither":  # the import fails where the checkout's module is imported
        line = _one_line(_serve(minimal, adapter, "--port", "0"))
        assert "ModuleNotFoundError" in line and f"{adapter}:3" in line
        return
    process, url = start_bridge(
        minimal["python"], minimal["server"], adapter, tmp_path / "console.log", *options
    )
    try:
        body = {"messages": [{"role": "user", "content": "Which key?"}], "max_tokens": 4}
        status, reply = post_chat(url, body)
    finally:
        process.terminate()
        process.wait(timeout=30)
    assert status == 200
    answer = reply["choices"][0]["message"]["content"]
    assert answer == f"<Q>Which key?</Q> from {repo} the checkout"


SCORING = """\
NAME = "scoring"

def generate(audio, sampling_rate, prompt, max_new_tokens):
    return "A"

def loglikelihood(audio, sampling_rate, context, continuation):
    return {value}
"""


@pytest.fixture(scope="module")
def hostile(minimal):
    """One bridge whose loglikelihood returns what ``context`` names (the request decides)."""
    folder = minimal["root"] / "hostile"
    folder.mkdir()
    source = SCORING.format(value="VALUES[context]").replace(
        'NAME = "scoring"',
        'NAME = "scoring"\nVALUES = {"string": "-1.5", "bool": True, "nan": float("nan"), '
        '"inf": float("-inf"), "positive": 0.5, "pair": (-0.5, "yes"), "ok": -0.25}',
    )
    adapter = _adapter(folder, "hostile", source)
    process, url = start_bridge(minimal["python"], minimal["server"], adapter, folder / "log")
    yield url
    process.terminate()
    process.wait(timeout=30)


def _letter(context: str, **extra) -> dict:
    user = {"role": "user", "content": [{"type": "text", "text": context}]}
    answer = {"role": "assistant", "content": " A"}
    return {"messages": [user, answer], "continue_final_message": True, "prompt_logprobs": 1,
            **extra}  # fmt: skip


@pytest.mark.parametrize(
    "context, says",
    [
        ("string", "returned str '-1.5', not a number"),
        ("bool", "returned bool True, not a number"),
        ("nan", "returned nan, not a finite log p"),
        ("inf", "returned -inf, not a finite log p"),
        ("positive", "returned 0.5, not a finite log p"),
        ("pair", "is_greedy = 'yes'; give True or False"),
    ],
)
def test_a_loglikelihood_that_is_not_a_finite_number_is_a_422(hostile, context, says):
    status, reply = post_chat(hostile, _letter(context))
    assert status == 422 and says in reply["error"]["message"]


def test_a_bare_float_is_greedy_unknown_never_true(hostile):
    status, reply = post_chat(hostile, _letter("ok"))
    assert status == 200 and reply["bridge"] == {"is_greedy": None}
    (own,) = reply["prompt_logprobs"][-1].values()
    assert own == {"logprob": -0.25, "rank": None, "decoded_token": " A"}


@pytest.mark.parametrize(
    "body, says",
    [
        ({"messages": [{"role": "user", "content": [{"type": "input_audio",
                                                    "input_audio": "UklG"}]}]},
         "input_audio must be"),
        ({"messages": [{"role": "user", "content": [{"type": "input_audio"}]}]},
         "input_audio must be"),  # not "no audio"
        ({"messages": [{"role": "user", "content": [{"type": "input_audio",
                                                    "input_audio": {"data": 5}}]}]},
         "input_audio must be"),
        ({"messages": [{"role": "user", "content": "Q?"}], "max_tokens": "lots"},
         "max_tokens = 'lots' is not a positive whole number"),
        ({"messages": [{"role": "user", "content": "Q?"}], "max_tokens": True}, "max_tokens"),
        ({"messages": [{"role": "user", "content": "Q?"}], "stop": 5}, "stop = 5"),
        ({"messages": ["Q?"]}, "each message must be a JSON object"),
        ({"messages": [{"role": "user", "content": 5}]}, "the user content is int"),
        ({"messages": [{"role": "user", "content": [{"type": "text", "text": 3}]}]},
         "text is int"),
        (b"[1, 2]", "not a JSON object"),
        (b"{not json", "not JSON"),
    ],
)  # fmt: skip
def test_a_malformed_request_is_a_400_which_lalm_api_does_not_retry(hostile, body, says):
    status, reply = post_chat(hostile, body)
    assert status == 400 and says in reply["error"]["message"]


@pytest.mark.parametrize("length", ["abc", "-5", "1_0"])
def test_a_bad_content_length_is_answered_400(hostile, length):
    host, port = hostile.split("//", 1)[1].split("/", 1)[0].split(":")
    with socket.create_connection((host, int(port)), timeout=10) as connection:
        connection.sendall(
            f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: {length}\r\n\r\n{{}}"
            .encode()
        )
        answer = b""
        while chunk := connection.recv(4096):  # the server closes the connection after it
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400")
    assert "is not a byte count" in json.loads(body)["error"]["message"]


def test_binding_beyond_loopback_warns_that_the_model_is_served_unauthenticated(
    minimal, tmp_path
):
    adapter = _adapter(tmp_path, "open", "def generate(*args):\n    return 'A'\n")
    for host, warned in (("0.0.0.0", True), ("127.0.0.1", False)):
        log = tmp_path / f"{host}.log"
        options = ("--host", host)
        process, _ = start_bridge(minimal["python"], minimal["server"], adapter, log, *options)
        process.terminate()
        process.wait(timeout=30)
        said = log.read_text()
        assert ("reachable from other machines" in said and "no authentication" in said) == warned


def _run(url: str, model: str, tasks: str, data: dict, out, extra: str = "") -> None:
    from lm_eval_rul.cli import main

    main(
        [
            "run", "--model", "lalm-api", "--model_args",
            f"base_url={url},model={model},results_cache=none{extra}", "--tasks", tasks,
            "--metadata", json.dumps(data), "--limit", "1", "--gen_kwargs", "max_gen_toks=2",
            "--log_samples", "--output_path", str(out),
        ]
    )  # fmt: skip


def test_a_string_loglikelihood_stops_the_run_in_one_line_at_once(
    minimal, audio_data, tmp_path, capsys
):
    called = tmp_path / "called_at"
    stamp = f"    open({str(called)!r}, 'w').write(repr(__import__('time').time()))\n"
    source = SCORING.format(value='"-1.5"').replace("    return", stamp + "    return")
    adapter = _adapter(tmp_path, "scoring", source)
    log = tmp_path / "console.log"
    process, url = start_bridge(minimal["python"], minimal["server"], adapter, log, "--verbose")
    try:  # the default max_retries=3 and retry_backoff=1: none is used
        with pytest.raises(SystemExit) as stopped:
            _run(url, "scoring", "rul_muchomusic", audio_data, tmp_path / "out")
    finally:
        process.terminate()
        process.wait(timeout=30)
    # stopped at once: well under 10 s after the adapter's one and only call
    assert stopped.value.code == 2 and time.time() - float(called.read_text()) < 10
    (line,) = [x for x in capsys.readouterr().err.splitlines() if "lm-eval-rul run: error" in x]
    assert "HTTP 422" in line and "returned str '-1.5', not a number" in line
    assert log.read_text().count("POST /v1/chat/completions") == 1  # never retried
    assert not list((tmp_path / "out").rglob("results_*.json"))


GREEDY = """\
NAME = "greedy"

def generate(audio, sampling_rate, prompt, max_new_tokens):
    return "A"

def loglikelihood(audio, sampling_rate, context, continuation):
    logprob = -0.1 if continuation == " A" else -2.0
    return {returned}
"""


@pytest.mark.parametrize("returned", ["logprob", "(logprob, continuation == ' A')"])
def test_is_greedy_is_the_adapters_or_false_and_counted_unknown(
    minimal, audio_data, tmp_path, returned
):
    from lm_eval_rul.testing.harness import read_output

    adapter = _adapter(tmp_path, "greedy", GREEDY.format(returned=returned))
    process, url = start_bridge(
        minimal["python"], minimal["server"], adapter, tmp_path / "console.log"
    )
    try:
        _run(url, "greedy", "rul_muchomusic_fold0", audio_data, tmp_path / "out")
    finally:
        process.terminate()
        process.wait(timeout=30)
    results, samples = read_output(tmp_path / "out")
    (rows,) = samples.values()
    letters = [
        (arg["arg_1"], resp[0])
        for row in rows
        for arg, resp in zip(row["arguments"].values(), row["resps"], strict=True)
    ]
    assert len(letters) == 4
    known = returned != "logprob"  # the logged samples spell the pair's bool as text
    assert [greedy for _, (_, greedy) in letters] == [str(known and c == " A") for c, _ in letters]
    assert results["config"]["api_bridge_greedy_unknown"] == (0 if known else 4)


TRANSIENT = """\
import os
NAME = "flaky"

class Busy(Exception):
    pass

TRANSIENT_ERRORS = (Busy,)
_calls = [0]

def generate(audio, sampling_rate, prompt, max_new_tokens):
    _calls[0] += 1
    if _calls[0] == 1:
        raise Busy("the GPU is shared and busy")
    return "A"
"""


def test_a_declared_transient_failure_is_retried_and_the_run_completes(
    minimal, audio_data, tmp_path
):
    from lm_eval_rul.testing.harness import read_output

    adapter = _adapter(tmp_path, "flaky", TRANSIENT)
    log = tmp_path / "console.log"
    process, url = start_bridge(minimal["python"], minimal["server"], adapter, log, "--verbose")
    try:
        _run(url, "flaky", "muchomusic_gen", audio_data, tmp_path / "out", ",retry_backoff=0.01")
    finally:
        process.terminate()
        process.wait(timeout=30)
    results, _ = read_output(tmp_path / "out")
    assert results["config"]["api_retries"] == 1
    assert log.read_text().count('"POST /v1/chat/completions HTTP/1.1" 503') == 1
