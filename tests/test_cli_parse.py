"""``lm-eval-rul parse``: one answer and why, a JSONL file, and one error line for bad input."""

from __future__ import annotations

import json

import pytest

from lm_eval_rul.cli import main
from lm_eval_rul.testing.factual import FMA_GENRE_ROWS
from lm_eval_rul.testing.harness import cli_error_line, run_cli
from lm_eval_rul.testing.harness import cli_error_line as fail


def _out(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    main(argv)
    return capsys.readouterr().out


@pytest.fixture
def genres_csv(tmp_path):
    path = tmp_path / "genres.csv"
    lines = ["genre_id,#tracks,parent,title,top_level"]
    lines += [f'{r[0]},{r[1]},{r[2]},"{r[3]}",{r[4]}' for r in FMA_GENRE_ROWS]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_an_open_answer_prints_labels_and_each_mention(capsys):
    out = _out(["parse", "--task", "instrument", "No drums; a pianist and a vilolinist."], capsys)
    lines = [line.strip() for line in out.splitlines()]
    assert lines[1] == "labels: piano, violin"
    assert "'drums' -> drums: dropped (negated: 'no')" in lines
    assert any("misspelling of 'violinist'" in line for line in lines)


def test_true_false_and_binary_print_the_answer_and_why(capsys):
    argv = ["parse", "--task", "mood", "--kind", "truefalse", "No doubt about it: true."]
    out = _out(argv, capsys)
    assert "answer: true" in out and "verdict 'true'" in out
    out = _out(
        ["parse", "--task", "composer", "--kind", "binary", "--options", "Haydn,Brahms",
         "Haydn or Brahms? I think Brahms."],
        capsys,
    )  # fmt: skip
    assert "choice: 1 (Brahms)" in out and "echo of both options" in out


def test_jsonl_gives_one_line_per_case(tmp_path, capsys, genres_csv):
    cases = [
        {"id": "a", "task": "instrument", "kind": "open", "text": "A cellist and a violist."},
        {"id": 2, "task": "regional", "kind": "truefalse", "text": "Nope."},
        {"id": "c", "task": "instrument", "kind": "binary", "text": "The latter.",
         "options": ["oboe", "flute"]},
        {"id": "d", "task": "genre", "kind": "open", "text": "Not rock, it's punk."},
        {"id": "e", "task": "mood", "kind": "truefalse", "text": "Hmm."},
    ]  # fmt: skip
    path = tmp_path / "answers.jsonl"
    path.write_text("\n".join(json.dumps(c) for c in cases) + "\n", encoding="utf-8")
    out = _out(["parse", "--jsonl", str(path), "--fma_genres", str(genres_csv)], capsys)
    assert [json.loads(line) for line in out.splitlines()] == [
        {"id": "a", "labels": ["cello", "viola"]},
        {"id": 2, "answer": False},
        {"id": "c", "answer": 1},
        {"id": "d", "labels": ["Punk"]},
        {"id": "e", "answer": None},
    ]


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["parse", "--task", "piano", "text"], "unknown task 'piano'"),
        (["parse", "--task", "mood", "--kind", "choice", "x"], "unknown kind 'choice'"),
        (["parse", "--task", "mood", "--kind", "binary", "x"], "needs its two options"),
        (["parse", "--task", "mood", "--kind", "binary", "--options", "sad", "x"],
         "two labels"),
        (["parse", "--task", "genre", "Rock"], "--fma_genres"),
        (["parse", "--task", "mood"], "nothing to read"),
    ],
)  # fmt: skip
def test_bad_requests_stop_with_one_error_line(argv, expected, capsys):
    assert expected in cli_error_line(argv, capsys)


@pytest.mark.parametrize(
    "line, expected",
    [
        ("{not json", "line 2: not JSON"),
        ('{"id": 1, "task": "mood", "text": "sad"}', "line 2: missing 'kind'"),
        ('{"id": 1, "task": "tempo", "kind": "open", "text": "x"}', "line 2: unknown task"),
        ('{"id": 1, "task": "mood", "kind": "binary", "text": "x"}', "line 2: a binary"),
        ('{"id": 1, "task": "mood", "kind": "binary", "text": "x", "options": ["sad"]}',
         "line 2: options must be two labels"),
        ("[1, 2]", "line 2: not a JSON object"),
    ],
)  # fmt: skip
def test_an_unreadable_jsonl_line_is_named_and_nothing_is_printed(line, expected, tmp_path, capsys):
    path = tmp_path / "answers.jsonl"
    good = '{"id": 0, "task": "mood", "kind": "open", "text": "sad"}'
    path.write_text(f"{good}\n{line}\n", encoding="utf-8")
    error = cli_error_line(["parse", "--jsonl", path], capsys)
    assert expected in error and str(path) in error


def test_the_console_script_reads_the_issue_example():
    done = run_cli(
        ["parse", "--task", "instrument", "A solo pianist, joined later by a violinist."],
        timeout=120,
    )
    assert "labels: piano, violin" in done.stdout


def test_parse_without_task_asks_for_it(capsys):
    line = fail(["parse", "piano"], capsys)
    assert "ParseInputError: which task's labels" in line and "--task" in line
    assert "None" not in line and "instrument" in line
