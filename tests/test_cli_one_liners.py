"""One line each, exit 2, before anything loads: a run without ``--tasks``, lmms-eval's
``model=``, a table the readers cannot place; the ``--log_samples`` warning at the start
(only when it applies); ``run --help`` lists the catalogue's tasks; ``report`` on a folder
holding a question file hints a ``music_mc`` run; no git noise from the Python API."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import pytest

from lm_eval_rul.testing.harness import cli_error_line
from lm_eval_rul.testing.harness import cli_error_line as fail


def test_a_run_without_tasks_or_with_model_for_pretrained_is_one_line(tiny_lm, capsys,
                                                                      constructions):  # fmt: skip
    line = cli_error_line(["run", "--model", "hf", "--model_args", f"pretrained={tiny_lm}"],
                          capsys)  # fmt: skip
    assert "no --tasks given" in line and "--tasks music_mc" in line
    line = cli_error_line(["run", "--model", "lalm", "--model_args", f"model={tiny_lm}",
                           "--tasks", "music_mc"], capsys)  # fmt: skip
    assert f"give --model_args pretrained={tiny_lm}" in line
    assert constructions == []


def test_a_csv_with_an_unmapped_answer_column_is_one_line(tiny_lm, tmp_path, capsys,
                                                          constructions):  # fmt: skip
    path = tmp_path / "bench.csv"
    path.write_text("id,question,choice_a,choice_b,reply\n1,Q?,x,y,A\n2,Q2?,x,y,B\n")
    line = cli_error_line(["run", "--model", "hf", "--model_args", f"pretrained={tiny_lm}",
                           "--tasks", "music_mc", "--metadata",
                           json.dumps({"mc_data_path": str(path)})], capsys)  # fmt: skip
    assert "the role answer has no column" in line
    assert "'id', 'question', 'choice_a', 'choice_b', 'reply'" in line
    assert '''mc_columns='{"answer": "<column>"}\'''' in line
    assert constructions == []


def test_the_log_samples_warning_comes_at_the_start_and_only_when_it_applies(caplog):
    from lm_eval_rul.cli.run_flags import warn_unlogged
    from lm_eval_rul.cli.run_inputs import task_folders

    with caplog.at_level(logging.WARNING):
        assert warn_unlogged("music_mc,arc_easy", False, task_folders)
        assert not warn_unlogged("music_mc", True, task_folders)
        assert not warn_unlogged("arc_easy", False, task_folders)  # not ours: report skips it
    (record,) = [r for r in caplog.records if "without --log_samples" in r.getMessage()]
    assert record.getMessage().startswith("running music_mc without --log_samples")


def test_run_help_lists_every_benchmark_of_the_catalogue(capsys):
    from lm_eval_rul.cli import main

    with pytest.raises(SystemExit) as exited:
        main(["run", "--help"])
    assert exited.value.code in (0, None)
    out = capsys.readouterr().out
    tail = out[out.index("tasks of this plugin"):]
    for name in ("music_mc", "music_mc_gen", "rul_music_mc", "mmau_music", "mmar_music",
                 "rul_muchomusic", "factual"):  # fmt: skip
        assert f" {name}," in tail or f" {name}\n" in tail, name


def test_report_on_a_question_file_hints_a_music_mc_run(data_dir, tmp_path):
    import pytest

    from lm_eval_rul.report import load_runs
    from lm_eval_rul.report.samples import RunReadError

    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "bench.jsonl").write_text(json.dumps(
        {"id": "1", "question": "Q?", "correct_answer": "a", "distractors": ["b", "c"]}) + "\n")
    with pytest.raises(RunReadError) as raised:
        load_runs([folder])
    message = str(raised.value)
    assert "--tasks music_mc --metadata '{\"mc_data_path\": " in message
    assert "rul_muchomusic" not in message


def test_the_python_api_prints_no_git_noise(tmp_path, monkeypatch, capfd):
    import lm_eval.evaluator as evaluator

    import lm_eval_rul

    monkeypatch.chdir(tmp_path)  # outside any clone
    lm_eval_rul.task_manager(include_defaults=False)
    evaluator.get_git_commit_hash()
    assert "not a git repository" not in capfd.readouterr().err


ROOT = Path(__file__).resolve().parents[1]


def test_the_unknown_command_example_lists_every_command(capsys):
    from lm_eval_rul.cli import PluginCLI

    commands = list(PluginCLI()._subparsers.choices)
    line = fail(["reprot"], capsys)
    assert f"The commands: {', '.join(commands)};" in line
    errors = (ROOT / "docs" / "errors.md").read_text(encoding="utf-8")
    assert f"The commands: {', '.join(commands)}; see lm-eval-rul --help." in errors


def test_run_help_lists_the_factual_tasks(capsys):
    from lm_eval_rul.cli import main
    from lm_eval_rul.registration import tasks_dir

    with pytest.raises(SystemExit):
        main(["run", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    groups = set(re.findall(r"\bfactual(?:_[a-z]+)*\b", shown))
    assert {"factual", "factual_instrument", "factual_binary"} <= groups
    declared = {
        m.group(1)
        for f in (tasks_dir() / "factual").glob("*.yaml")
        if (m := re.search(r"^group: (\S+)", f.read_text(encoding="utf-8"), re.M))
    }
    assert groups <= declared, groups - declared  # every name shown is a real group


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
