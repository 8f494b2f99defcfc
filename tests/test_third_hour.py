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


def test_our_tasks_load_without_the_harness_warnings(data_dir, caplog):
    """What plain ``lm_eval`` and ``run`` do on either release: no "Metric 'perceptual_index'
    not found in registry" (0.5 looks every metric up) and no "Custom kwargs" per task."""
    from lm_eval.api.registry import metric_registry
    from lm_eval.tasks import TaskManager

    from lm_eval_rul.registration import tasks_dir

    manager = TaskManager(
        include_path=[str(tasks_dir())],
        include_defaults=False,
        metadata={
            "rul_data_path": str(data_dir / "rul.json"),
            "muchomusic_data_path": str(data_dir / "muchomusic.csv"),
        },
    )
    with caplog.at_level(logging.WARNING):
        loaded = manager.load(["rul_muchomusic_fold0", "muchomusic"])
        assert all(len(task.eval_docs) == 8 for task in loaded["tasks"].values())  # 0.5: lazy
    messages = [r.getMessage() for r in caplog.records]
    assert not [m for m in messages if "not found in registry" in m or "Custom kwargs" in m]
    assert "perceptual_index" in metric_registry  # registered, not a placeholder


def test_perceptual_index_metric_is_the_plugins_formula():
    from lm_eval_rul.mcqa.harness_metric import perceptual_index_metric

    class LLResults:  # lm-eval 0.5's shape: the choices' log-likelihoods in ``lls``
        lls = [0.0, 0.0, 0.0, 0.0]

    assert perceptual_index_metric(2, LLResults()) == 0.75
    assert perceptual_index_metric(0, [0.0, -1e9]) < 1e-12
