"""The documented offline smoke test (docs/errors.md, "Offline"): ``python -m
lm_eval_rul.testing.smoke DIR``, then the ``lm-eval-rul run`` commands it prints: the text
model runs, and the audio model under ``original`` and ``noise`` gives different letters
and a different accuracy."""

from __future__ import annotations

import contextlib
import io
import json
import os
import runpy
import shlex
import sys
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="module")
def smoke(tmp_path_factory) -> tuple[Path, list[str]]:
    """Run the documented command; return its folder and the commands it printed."""
    root = tmp_path_factory.mktemp("smoke")
    argv, sys.argv = sys.argv, ["python -m lm_eval_rul.testing.smoke", str(root)]
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed), pytest.raises(SystemExit) as done:
            runpy.run_module("lm_eval_rul.testing.smoke", run_name="__main__", alter_sys=True)
    finally:
        sys.argv = argv
    assert done.value.code == 0
    commands = [line.strip() for line in printed.getvalue().splitlines() if "lm-eval-rul" in line]
    return root, commands


def _run(command: str, monkeypatch) -> dict:
    """One printed ``run`` command, run in-process (``lm-eval-rul`` is
    ``lm_eval_rul.cli.main``); each (fold, id)'s letter and the group's accuracy."""
    from lm_eval_rul.cli import main

    words = shlex.split(command)
    assert words[:3] == ["HF_HUB_OFFLINE=1", "lm-eval-rul", "run"] and "--log_samples" in words
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    main(words[2:])
    out = Path(words[words.index("--output_path") + 1])
    (results,) = out.rglob("results_*.json")
    letters = {}
    for path in out.rglob("samples_*rul_muchomusic_fold*.jsonl"):
        for line in path.read_text().splitlines():
            row = json.loads(line)
            lls = [float(r[0][0]) for r in row["resps"]]
            letters[(row["doc"]["fold"], row["doc"]["id"])] = lls.index(max(lls))
    acc = json.loads(results.read_text())["groups"]["rul_muchomusic"]["acc,none"]
    return {"letters": letters, "acc": acc}


def test_smoke_models_original_and_noise_differ(smoke, monkeypatch):
    root, commands = smoke
    text, original, noise, report = commands
    assert f"--model hf --model_args pretrained={root}/text_model" in text
    assert "audio_dir" not in text
    assert len(_run(text, monkeypatch)["letters"]) == 32  # the text model runs too
    assert "audio=original" in original and "audio=noise" in noise
    heard, noisy = _run(original, monkeypatch), _run(noise, monkeypatch)
    assert heard["letters"].keys() == noisy["letters"].keys() and len(heard["letters"]) == 32
    changed = [k for k in heard["letters"] if heard["letters"][k] != noisy["letters"][k]]
    assert len(changed) >= 8  # a quarter of the 32 (question, fold) pairs at least
    assert heard["acc"] != noisy["acc"]
    assert report == f"lm-eval-rul report {root}/runs/text {root}/runs/original " + (
        f"{root}/runs/noise --out {root}/report"
    )


@pytest.mark.parametrize("case", ["a file", "below a file", "a file where it writes data/"])
def test_the_smoke_command_on_a_dir_taken_by_a_file_is_one_line(case, tmp_path, capsys):
    from lm_eval_rul.testing.smoke import main

    taken = tmp_path / "taken"
    taken.write_text("x")
    directory = {"a file": taken, "below a file": taken / "below"}.get(case, tmp_path / "dir")
    if case == "a file where it writes data/":
        directory.mkdir()
        (directory / "data").write_text("x")
    assert main([str(directory)]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("error: python -m lm_eval_rul.testing.smoke") and "is a file" in line
    assert not (tmp_path / "dir" / "text_model").exists()
