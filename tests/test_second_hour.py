"""The trips of a user's second first hour (issue 31) and ``--limit`` values that select
nothing: each one line, exit status 2, before any model is constructed."""

from __future__ import annotations

import pytest

from lm_eval_rul.testing.harness import cli_error_line as fail
from lm_eval_rul.testing.harness import text_run_args


@pytest.mark.parametrize("limit", ["-1", "0", "2.5", "nan"])
def test_run_limit_that_selects_nothing_is_one_line(
    limit, tiny_lm, data_dir, tmp_path, capsys, constructions
):
    args = text_run_args(tiny_lm, data_dir, tmp_path, "rul_muchomusic", "--limit", limit)
    line = fail(args, capsys)
    assert f"LimitError: --limit {limit}: give a whole number of documents per task" in line
    assert constructions == []


@pytest.mark.parametrize("limit", ["-1", "0"])
def test_pi_limit_that_selects_nothing_is_one_line(
    limit, tiny_lm, data_dir, tmp_path, capsys, constructions
):
    args = ["pi", "--data", data_dir / "rul.json", "--model", "hf",
            "--model_args", f"pretrained={tiny_lm}", "--output", tmp_path / "pi.jsonl",
            "--limit", limit]  # fmt: skip
    line = fail(args, capsys)
    assert f"LimitError: --limit {limit}: give how many questions" in line
    assert constructions == [] and not (tmp_path / "pi.jsonl").exists()


def test_run_limit_fraction_is_still_the_harness_share():
    from lm_eval_rul.cli.limits import check_run_limit

    for fine in (None, 0.5, "0.1", 3, "40", 40.0):
        check_run_limit(fine)
