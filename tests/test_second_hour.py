"""The trips of a user's second first hour (issue 31) and ``--limit`` values that select
nothing: each one line, exit status 2, before any model is constructed."""

from __future__ import annotations

import re
from pathlib import Path

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


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        ("dtpye=float32", "model_args dtpye= (did you mean dtype?)"),
        ("atn_implementation=eager", "model_args atn_implementation= (did you mean attn_impl"),
        ("colour=red", "model_args colour=: neither the harness's HFLM"),
    ],
)
def test_a_misspelt_hf_argument_stops_before_the_model(
    extra, says, tiny_lm, data_dir, tmp_path, capsys, constructions
):
    args = text_run_args(tiny_lm, data_dir, tmp_path, "rul_muchomusic")
    args[args.index("--model_args") + 1] += f",{extra}"
    line = fail(args, capsys)
    assert f"HFModelArgsError: --model hf does not take {says}" in line
    assert constructions == []


def test_hf_arguments_of_the_harness_transformers_and_the_config_pass(tiny_lm):
    from lm_eval_rul.cli.hf_args import check_hf_model_args

    given = {"pretrained": str(tiny_lm), "dtype": "float32", "max_length": 64,
             "attn_implementation": "eager", "low_cpu_mem_usage": True,
             "torch_dtype": "float32", "tie_word_embeddings": False}  # fmt: skip
    check_hf_model_args("hf", given)


def test_a_misspelt_hf_argument_of_pi_stops_before_the_model(
    tiny_lm, data_dir, tmp_path, capsys, constructions
):
    args = ["pi", "--data", data_dir / "rul.json", "--model", "hf",
            "--model_args", f"pretrained={tiny_lm},dtpye=float32",
            "--output", tmp_path / "pi.jsonl"]  # fmt: skip
    assert "(did you mean dtype?)" in fail(args, capsys)
    assert constructions == []


def test_a_question_file_of_another_schema_is_named_so_with_the_schemas(tmp_path):
    from lm_eval_rul.questions import DataValidationError, load_questions

    path = tmp_path / "mine.csv"
    path.write_text("qid,q,answer\n1,Which instrument?,piano\n2,Which genre?,jazz\n")
    with pytest.raises(DataValidationError) as raised:
        load_questions(path)
    message = str(raised.value)
    assert "\n" not in message and "Fix or remove" not in message
    assert "no row has the field(s) 'id', 'question', 'correct_answer', 'distractors'" in message
    assert "'qid', 'q', 'answer'" in message
    assert all(s in message for s in ("RUL JSON", "MuChoMusic CSV", "generic CSV"))


def test_every_missing_field_of_a_row_is_named_at_once(tmp_path):
    from lm_eval_rul.questions import DataValidationError, load_questions

    path = tmp_path / "q.jsonl"
    good = '{"id": "1", "question": "Q?", "correct_answer": "a", "distractors": ["b", "c"]}\n'
    path.write_text(good + '{"question": "Q2?"}\n')
    with pytest.raises(DataValidationError) as raised:
        load_questions(path)
    message = str(raised.value)
    assert "row 1: missing field(s) 'id', 'correct_answer', 'distractors'" in message
    assert "Fix or remove these rows" in message and "RUL JSON" in message


ROOT = Path(__file__).resolve().parents[1]


def test_the_cpu_install_note_creates_the_venv_before_the_cpu_build():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    note = readme[readme.index("**CPU-only machine?**") :]
    block = note[note.index("```bash") : note.index("```", note.index("```bash") + 3)]
    venv, cpu = block.find(". .venv/bin/activate"), block.find("whl/cpu")
    package = block.find('pip install -e ".[test]"')
    assert 0 <= venv < cpu < package, block


def test_parse_without_task_asks_for_it(capsys):
    line = fail(["parse", "piano"], capsys)
    assert "ParseInputError: which task's labels" in line and "--task" in line
    assert "None" not in line and "instrument" in line


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


def test_a_text_only_factual_run_is_logged_as_hearing_nothing(tiny_lm, factual_metadata, tmp_path):
    import json

    from lm_eval_rul.testing.harness import read_output, run_cli

    out = tmp_path / "out"
    run_cli(["run", "--model", "hf", "--model_args", f"pretrained={tiny_lm},dtype=float32",
             "--tasks", "factual_instrument_binary", "--metadata", json.dumps(factual_metadata),
             "--device", "cpu", "--limit", "2", "--output_path", out, "--log_samples",
             "--gen_kwargs", "max_gen_toks=2"])  # fmt: skip
    _, samples = read_output(out)
    docs = [s["doc"] for rows in samples.values() for s in rows]
    assert docs and {d["condition"] for d in docs} == {"none"}


@pytest.mark.parametrize("command", ["run", "pi"])
def test_several_processes_without_gpus_stop_before_the_model(
    command, tiny_lm, data_dir, tmp_path, capsys, constructions, monkeypatch
):
    # as torchrun --nproc_per_node 2 sets them, in the second process
    for name, value in {"WORLD_SIZE": "2", "RANK": "1", "LOCAL_RANK": "1"}.items():
        monkeypatch.setenv(name, value)
    if command == "run":
        args = text_run_args(tiny_lm, data_dir, tmp_path, "rul_muchomusic")
    else:
        args = ["pi", "--data", data_dir / "rul.json", "--model", "hf", "--model_args",
                f"pretrained={tiny_lm}", "--output", tmp_path / "pi.jsonl"]  # fmt: skip
    line = fail(args, capsys)
    assert "DataParallelError: 2 processes were launched (WORLD_SIZE=2, this is RANK=1)" in line
    assert "splits documents across processes only on GPUs" in line
    assert constructions == []


def test_plain_lm_eval_prints_no_custom_kwargs_warning_for_our_tasks(data_dir, caplog):
    """The harness's own task loading (what plain ``lm_eval`` does) on the plugin's task
    folder: its per-task "Custom kwargs can be passed to `--metadata`" warning says
    nothing about our tasks and is dropped; another task's would stay."""
    import logging

    from lm_eval.tasks import TaskManager

    from lm_eval_rul.registration import tasks_dir

    manager = TaskManager(
        include_path=[str(tasks_dir())],
        include_defaults=False,
        metadata={"data_path": str(data_dir / "rul.json")},
    )
    with caplog.at_level(logging.WARNING):
        manager.load(["rul_muchomusic_fold0"])
        logging.getLogger("lm_eval.api.task").warning(
            "other_task: Custom kwargs can be passed to `--metadata` in console"
        )
    messages = [r.getMessage() for r in caplog.records]
    assert not any(m.startswith("rul_muchomusic_fold0: Custom kwargs") for m in messages)
    assert any(m.startswith("other_task: Custom kwargs") for m in messages)
