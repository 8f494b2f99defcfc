"""Question and pools files: read once per command in linear time, non-UTF-8 bytes and lone
surrogates named in one line before anything loads, and one content-based reader deciding
what a file is for every command."""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

import pytest

from lm_eval_rul.mcqa.tasks import load_rul_muchomusic
from lm_eval_rul.questions import DataValidationError, load_questions, read_rul_json
from lm_eval_rul.questions.file_kinds import QUESTIONS, question_format, sniff_data_file
from lm_eval_rul.questions.reading import read_once
from lm_eval_rul.testing.fixtures import fixture_rows, write_pools_json
from lm_eval_rul.testing.harness import cli_error_line

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def test_duplicate_ids_and_fields_are_named(tmp_path):
    rows = fixture_rows(3)
    body = ",\n".join(f'"{k}": {json.dumps(v)}' for k, v in rows.items())
    again = json.dumps(rows["5"])[:-1] + ', "question": "twice"}'
    path = tmp_path / "dup.json"
    path.write_text("{" + body + f',\n"5": {json.dumps(rows["5"])},\n"8": {again}' + "}")
    with pytest.raises(DataValidationError) as caught:
        read_rul_json(path)
    assert caught.value.problems == [
        "id '5': appears more than once",
        "id '8': appears more than once",
        "id '8': field 'question' appears more than once",
    ]


def _count_opens(monkeypatch, path: Path) -> list[str]:
    opened: list[str] = []
    original = io.open

    def counting(file, *args, **kwargs):
        mode = args[0] if args else kwargs.get("mode", "r")
        if str(file) == str(path) and "r" in mode:  # readings, not the test's own writes
            opened.append(str(file))
        return original(file, *args, **kwargs)

    monkeypatch.setattr(io, "open", counting)
    return opened


def test_build_reads_its_pools_file_once(tmp_path, monkeypatch, capsys):
    """Old code: sniffed, read by the reader, then read again for the failure marks (3)."""
    pools = write_pools_json(tmp_path / "pools.json")
    opened = _count_opens(monkeypatch, pools)
    from lm_eval_rul.cli import main

    main(["build", "--pools", str(pools), "--stage", "clean", "--output", str(tmp_path / "c.json")])
    assert "stage clean: wrote" in capsys.readouterr().out
    assert len(opened) == 1


def test_within_a_command_a_file_is_parsed_once_and_a_changed_file_again(tmp_path, monkeypatch):
    path = tmp_path / "rul.json"
    path.write_text(json.dumps(fixture_rows(4)))
    opened = _count_opens(monkeypatch, path)
    with read_once():
        sniff_data_file(path)
        first = load_questions(path)
        assert load_questions(path) == first and len(opened) == 1
        path.write_text(json.dumps(fixture_rows(5)))  # another size: read again
        assert len(load_questions(path)) == 5 and len(opened) == 2
    load_questions(path)  # outside a command nothing is kept
    assert len(opened) == 3


def _generic_csv(path: Path, n: int = 4) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "question", "correct_answer", "distractors"])
        for qid, row in fixture_rows(n).items():
            distractors = json.dumps(row["distractors"])
            writer.writerow([qid, row["question"], row["correct_answer"], distractors])
    return path


def test_a_generic_question_csv_is_a_question_file_for_run_as_for_pi(tmp_path):
    """Old code: run called it "MuChoMusic's CSV" from its .csv suffix and refused it."""
    path = _generic_csv(tmp_path / "mine.csv")
    assert question_format(path) == "csv"
    found = sniff_data_file(path)
    assert found.kind == QUESTIONS and "MuChoMusic" not in found.description
    docs = load_rul_muchomusic(0, rul_data_path=str(path))["test"]  # what run's tasks call
    assert sorted(docs["id"]) == sorted(fixture_rows(4)) and len(docs[0]["options"]) == 4
    # the same reader, by content, whatever the name: JSON lines in a .json file
    lines = tmp_path / "rows.json"
    lines.write_text("".join(json.dumps({"id": k, **v}) + "\n" for k, v in fixture_rows(3).items()))
    assert question_format(lines) == "jsonl" and len(load_questions(lines)) == 3


def _latin1(path: Path) -> Path:
    rows = fixture_rows(3)
    rows["5"]["question"] = "Quel est le caractère de la pièce?"
    path.write_bytes(json.dumps(rows, ensure_ascii=False).encode("latin-1"))
    return path


def _surrogate(path: Path) -> Path:
    rows = fixture_rows(3)
    text = json.dumps(rows).replace('"What is the mood?"', '"What is the \\ud800 mood?"', 1)
    path.write_text(text)
    return path


def test_reader_names_the_byte_offset_and_line(tmp_path):
    path = _latin1(tmp_path / "q.json")
    offset = path.read_bytes().index(b"\xe8")
    for name in ("q.jsonl", "q.csv"):
        other = tmp_path / name
        other.write_bytes(b"id,question\n1,caract\xe8re\n" if name.endswith("csv") else
                          b'{"id": "1", "question": "caract\xe8re"}\n')  # fmt: skip
        with pytest.raises(DataValidationError, match=rf"{name}: byte 0xe8 at offset \d+ \(line"):
            load_questions(other)
    with pytest.raises(DataValidationError) as caught:
        load_questions(path)
    assert f"byte 0xe8 at offset {offset} (line 1) is not UTF-8" in str(caught.value)


def _command(command: str, model: Path, data: Path, tmp_path: Path) -> list:
    scorer = ["--model", "hf", "--model_args", f"pretrained={model}", "--device", "cpu"]
    if command == "run":
        metadata = json.dumps({"rul_data_path": str(data)})
        return ["run", *scorer, "--tasks", "rul_muchomusic_fold0", "--output_path",
                tmp_path / "out", "--metadata", metadata]  # fmt: skip
    if command == "pi":
        return ["pi", *scorer, "--data", data, "--output", tmp_path / "pi.jsonl"]
    return ["build", *scorer, "--pools", data, "--output", tmp_path / "rul.json"]


@pytest.mark.parametrize("command", ["run", "pi", "build"])
def test_a_latin1_byte_is_one_line_before_the_model(
    command, tiny_lm, tmp_path, capsys, constructions
):
    """Old code: UnicodeDecodeError, a traceback naming no file, exit 1."""
    path = _latin1(tmp_path / "questions.json")
    if command == "build":  # pools: more than four candidates
        rows = json.loads(path.read_bytes().decode("latin-1"))
        for row in rows.values():
            row["distractors"] += ["Kazoo", "Zither", "Oud"]
        path.write_bytes(json.dumps(rows, ensure_ascii=False).encode("latin-1"))
    line = cli_error_line(_command(command, tiny_lm, path, tmp_path), capsys)
    assert f"{path}: byte 0xe8 at offset" in line and "is not UTF-8" in line
    assert constructions == []


@pytest.mark.parametrize("command", ["run", "pi", "build"])
def test_a_lone_surrogate_is_named_by_item_and_field(
    command, tiny_lm, tmp_path, capsys, constructions
):
    """Old code: it passed validation and failed later inside datasets or the tokenizer."""
    path = _surrogate(tmp_path / "questions.json")
    if command == "build":
        rows = json.loads(path.read_text())
        for row in rows.values():
            row["distractors"] += ["Kazoo", "Zither", "Oud"]
        path.write_text(json.dumps(rows))
    line = cli_error_line(_command(command, tiny_lm, path, tmp_path), capsys)
    assert "id '5': field 'question' holds a lone surrogate escape" in line
    assert constructions == []


def _pi_args(tiny_lm, data: Path, output: Path) -> list:
    return ["pi", "--data", data, "--model", "hf", "--model_args", f"pretrained={tiny_lm}",
            "--device", "cpu", "--output", output]  # fmt: skip


def _deep_json(path: Path, depth: int = 200_000) -> Path:
    path.write_text('{"1": {"question": ' + "[" * depth + "]" * depth + "}}")
    return path


def test_a_deeply_nested_question_file_is_one_line_in_pi(tiny_lm, tmp_path, capsys, constructions):
    from lm_eval_rul.testing.harness import cli_error_line

    deep = _deep_json(tmp_path / "deep.json")
    line = cli_error_line(_pi_args(tiny_lm, deep, tmp_path / "pi.jsonl"), capsys)
    assert str(deep) in line and "nested too deep to parse" in line
    assert "RecursionError" not in line and constructions == []


def test_a_deeply_nested_question_file_is_one_line_in_run(tiny_lm, tmp_path, capsys, constructions):
    from lm_eval_rul.testing.harness import cli_error_line

    deep = _deep_json(tmp_path / "deep.json")
    line = cli_error_line(
        ["run", "--model", "hf", "--model_args", f"pretrained={tiny_lm}", "--device", "cpu",
         "--tasks", "rul_muchomusic_fold0", "--metadata", json.dumps({"rul_data_path": str(deep)}),
         "--output_path", tmp_path / "out"],  # fmt: skip
        capsys,
    )
    assert str(deep) in line and "nested too deep to parse" in line
    assert constructions == []


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
