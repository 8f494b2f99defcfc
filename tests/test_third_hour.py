"""The traps of issue 38 (the third first hour), on both harness releases: each one line
before the model loads, or a run that works (``HFLM.__init__`` is counted)."""

from __future__ import annotations

import logging

from lm_eval_rul.testing.harness import cli_error_line as fail
from lm_eval_rul.testing.harness import read_output, text_run_args


def test_misspelt_task_is_one_line_on_either_harness(
    tiny_lm, data_dir, tmp_path, capsys, constructions
):
    # lm-eval 0.5's match_tasks keeps an unmatched name; its loader raised a KeyError
    args = text_run_args(tiny_lm, data_dir, tmp_path / "out", "rul_muchomusc,muchomusic")
    line = fail(args, capsys)
    assert "UnknownTaskError: unknown task 'rul_muchomusc' (closest: rul_muchomusic" in line
    assert constructions == []


def test_task_name_wins_over_a_folder_of_that_name(
    tiny_lm, data_dir, tmp_path, monkeypatch, caplog, constructions
):
    from lm_eval_rul.cli import main

    (tmp_path / "muchomusic").mkdir()  # e.g. the clips folder
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    with caplog.at_level(logging.WARNING, logger="lm_eval_rul"):
        main(text_run_args(tiny_lm, data_dir, out, "muchomusic", "--limit", "2"))
    results, _ = read_output(out)
    assert results["results"]["muchomusic"]["acc,none"] >= 0
    assert constructions == ["HFLM"]
    warned = [r.getMessage() for r in caplog.records if "folder named" in r.getMessage()]
    assert warned == [
        "--tasks muchomusic: a folder named 'muchomusic' is in the current directory; running "
        "the task muchomusic, not the folder's YAML files (for those, give --tasks "
        "'muchomusic/*.yaml')"
    ]
