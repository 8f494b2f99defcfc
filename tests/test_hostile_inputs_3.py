"""Hostile inputs, third pass: harness flags named twice, bad output paths, symlink loops,
deeply nested question files, huge question texts (tiny real models, offline)."""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _run_lalm(model: Path, data: dict, out: Path, model_args: str, *more: str) -> None:
    from lm_eval_rul.cli import main

    main(
        [
            "run", "--model", "lalm", "--model_args",
            f"pretrained={model},dtype=float32,results_cache=none,{model_args}",
            "--tasks", "rul_muchomusic_fold0", "--metadata", json.dumps(data), "--limit", "2",
            "--output_path", str(out), *more,
        ]
    )  # fmt: skip


def _one_line_exit_2(capsys, action) -> str:
    with pytest.raises(SystemExit) as stopped:
        action()
    assert stopped.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in err[0], err
    return err[0]


def test_device_and_batch_size_in_model_args_are_taken_as_meant(
    tiny_audio_lm, audio_data, tmp_path, monkeypatch
):
    """docs/models.md documents ``device=`` and ``batch_size=`` in --model_args: the
    harness passing its own flags too must not make them ``multiple values``."""
    from lm_eval_rul.models.lalm import LALM

    built: list = []
    original = LALM.__init__

    @functools.wraps(original)  # keeps the signature lalm's argument check reads
    def recording(self, *args, **kwargs):
        original(self, *args, **kwargs)
        built.append(self)

    monkeypatch.setattr(LALM, "__init__", recording)
    _run_lalm(tiny_audio_lm, audio_data, tmp_path / "out", "device=cpu,batch_size=3")
    (model,) = built
    assert str(model.device) == "cpu" and model.batch_size == 3
    (results,) = (tmp_path / "out").rglob("results_*.json")
    assert json.loads(results.read_text())["results"]  # the run scored its questions


def test_device_in_model_args_clashing_with_the_flag_is_one_line(
    tiny_audio_lm, audio_data, tmp_path, capsys
):
    line = _one_line_exit_2(
        capsys,
        lambda: _run_lalm(
            tiny_audio_lm, audio_data, tmp_path / "out", "batch_size=4", "--batch_size", "2"
        ),
    )
    assert "batch_size=4 and --batch_size 2 disagree" in line
    assert not (tmp_path / "out").exists()
