"""Hostile inputs, fourth pass (issue 36, items 5-17), second half: MMAU items with more
choices than letters, data keys of ``task_manager``, the bridge (an adapter that exits, an
infinite window, a port out of range) and unreadable clips (tiny real models, temp folders).
"""

from __future__ import annotations

import json
import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")


# ------------------------------------------------------------------ more choices than letters


@pytest.mark.parametrize("protocol", ["rul", "official", "lmms"])
@pytest.mark.parametrize("task", ["mmau_music", "mmau_music_gen"])
def test_an_mmau_item_with_more_choices_than_letters_is_one_line_under_every_protocol(
    protocol, task, tiny_lm, tmp_path, capsys, constructions
):
    from lm_eval_rul.testing.harness import cli_error_line
    from lm_eval_rul.testing.mmau import mmau_rows, write_mmau_json

    rows = mmau_rows()
    rows[3]["choices"] = [f"choice {k}" for k in range(30)]
    rows[3]["answer"] = "choice 7"
    data = write_mmau_json(tmp_path / "mmau.json", rows)
    line = cli_error_line(
        ["run", "--model", "hf", "--model_args", f"pretrained={tiny_lm}", "--device", "cpu",
         "--tasks", task, "--output_path", tmp_path / "out",
         "--metadata",
         json.dumps({"mmau_data_path": str(data), "protocol": protocol})],  # fmt: skip
        capsys,
    )
    assert f"item {rows[3]['id']!r}: 30 choices, more than the 26 option letters" in line
    assert "ValueError" not in line and constructions == []


def test_a_question_file_with_more_options_than_letters_names_the_question(tmp_path):
    from lm_eval_rul.questions import DataValidationError
    from lm_eval_rul.questions.validation import rows_to_questions

    rows = [
        {"id": "1", "question": "q", "correct_answer": "a", "distractors": ["b", "c"]},
        {"id": "2", "question": "q", "correct_answer": "a",
         "distractors": [f"d{k}" for k in range(26)]},  # fmt: skip
    ]
    with pytest.raises(DataValidationError, match="id '2': 27 choices, more than the 26"):
        rows_to_questions(tmp_path / "q.json", rows, n_distractors=None)
    pools = rows_to_questions(tmp_path / "p.json", rows, n_distractors=None, check_options=False)
    assert len(pools[1].distractors) == 26  # a pool is offered a few candidates at a time


# ------------------------------------------------------------ task_manager's data keys


@pytest.mark.parametrize(
    "key, what",
    [("mmau_data_path", "file"), ("rul_mmau_data_path", "file"), ("musicnet_dir", "directory"),
     ("ocremix_tags", "file")],  # fmt: skip
)
def test_every_data_key_of_every_benchmark_is_checked_at_the_task_manager_call(
    key, what, tmp_path
):
    import lm_eval_rul

    missing = tmp_path / "nowhere"
    with pytest.raises(FileNotFoundError) as caught:
        lm_eval_rul.task_manager(include_defaults=False, **{key: str(missing)})
    message = str(caught.value)
    assert f"lm_eval_rul.task_manager keyword {key}='{missing}': no such {what}" in message


def test_task_manager_reads_the_mmau_file_it_is_given(tmp_path):
    import lm_eval_rul
    from lm_eval_rul.data_keys import data_keys
    from lm_eval_rul.questions import DataValidationError
    from lm_eval_rul.testing.mmau import mmau_rows, write_mmau_json

    assert {"mmau_data_path", "rul_mmau_data_path"} <= set(data_keys()["mmau"])
    rows = mmau_rows()
    rows[0]["answer"] = "no such choice"
    bad = write_mmau_json(tmp_path / "mmau.json", rows)
    with pytest.raises(DataValidationError, match=f"item {rows[0]['id']!r}: answer"):
        lm_eval_rul.task_manager(include_defaults=False, mmau_data_path=str(bad))


# ------------------------------------------------------------------------------ the bridge


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


# -------------------------------------------------------------------- unreadable clips


def test_every_unreadable_clip_is_named_in_one_pass(tiny_audio_lm, audio_data, tmp_path, capsys):
    """A symbolic link loop beside a clip whose name is a folder: only the first was
    named, then the run stopped; a corrupt clip beside them is named as before."""
    import shutil

    from lm_eval_rul.cli import main

    own = {**audio_data, "audio_dir": str(tmp_path / "audio")}
    shutil.copytree(audio_data["audio_dir"], own["audio_dir"])
    clips = sorted((tmp_path / "audio").iterdir())
    loop, folder, corrupt = clips[0], clips[1], clips[2]
    loop.unlink()
    loop.symlink_to(loop.name)  # a link to itself
    folder.unlink()
    folder.mkdir()
    corrupt.write_bytes(b"RIFF not really a wave file")
    with pytest.raises(SystemExit) as stopped:
        main(["run", "--model", "lalm", "--model_args",
              f"pretrained={tiny_audio_lm},results_cache=none", "--tasks", "rul_muchomusic_fold0",
              "--metadata", json.dumps(own)])  # fmt: skip
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert "3 of 4 audio files cannot be used" in err, err
    for clip in (loop, folder, corrupt):
        assert clip.name in err
    assert "a symbolic link that leads back to itself" in err and "is a folder" in err
