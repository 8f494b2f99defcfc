import csv
import json

import pytest

from lm_eval_rul.questions import (
    DataValidationError,
    attach_tracks,
    load_questions,
    normalize_answer,
    read_muchomusic_csv,
    read_pools,
    read_questions_table,
    read_rul_json,
)
from lm_eval_rul.testing.fixtures import fixture_rows, write_rul_json


def _write(tmp_path, rows, name="rul.json"):
    path = tmp_path / name
    path.write_text(json.dumps(rows) if not isinstance(rows, str) else rows)
    return path


def test_reads_released_schema(data_dir):
    questions = read_rul_json(data_dir / "rul.json")
    rows = fixture_rows(8)
    assert [q.id for q in questions] == list(rows)
    first = questions[0]
    assert first.correct_answer == rows["2"]["correct_answer"]
    assert first.distractors == tuple(rows["2"]["distractors"])
    assert first.pi == rows["2"]["PI"]
    assert first.caption.startswith("A short piece")


def test_list_layout_is_accepted(tmp_path):
    rows = [{"id": k, **v} for k, v in fixture_rows(3).items()]
    assert [q.id for q in read_rul_json(_write(tmp_path, rows))] == ["2", "5", "8"]


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda r: r["5"].pop("question"), "id '5': missing field(s) 'question'"),
        (lambda r: r["5"].pop("correct_answer"), "id '5': missing field(s) 'correct_answer'"),
        (lambda r: r["5"]["distractors"].pop(), "id '5': expected 4 distractors, found 3"),
        (
            lambda r: r["5"]["distractors"].__setitem__(2, r["5"]["correct_answer"].upper()),
            "equals the correct answer",
        ),
        (
            lambda r: r["5"]["distractors"].__setitem__(1, r["5"]["distractors"][0]),
            "id '5': two distractors are the same text",
        ),
        (lambda r: r["5"].__setitem__("PI", "high"), "id '5': PI 'high' is not a number"),
        (lambda r: r["5"].__setitem__("distractors", "abc"), "must be a list of strings"),
    ],
)
def test_malformed_rows_are_named(tmp_path, mutate, message):
    rows = fixture_rows(4)
    mutate(rows)
    with pytest.raises(DataValidationError, match="1 problem") as info:
        read_rul_json(_write(tmp_path, rows))
    assert message in str(info.value)
    assert str(tmp_path / "rul.json") in str(info.value)


def test_case_only_duplicate_distractors_are_kept_with_a_warning(tmp_path, caplog):
    rows = fixture_rows(4)
    rows["5"]["distractors"][1] = rows["5"]["distractors"][0].upper()
    questions = read_rul_json(_write(tmp_path, rows))
    assert len(questions) == 4
    assert "differing only in case or spacing, kept as released: ids 5" in caplog.text


def test_every_bad_row_is_reported_at_once(tmp_path):
    rows = fixture_rows(4)
    rows["2"].pop("question")
    rows["8"]["distractors"] = ["only one"]
    with pytest.raises(DataValidationError) as info:
        read_rul_json(_write(tmp_path, rows))
    assert len(info.value.problems) == 2
    assert "nothing was loaded" in str(info.value)


def test_duplicate_ids_are_an_error(tmp_path):
    row = json.dumps(fixture_rows(1)["2"])
    path = _write(tmp_path, f'{{"2": {row}, "7": {row}, "2": {row}}}')
    with pytest.raises(DataValidationError, match="id '2': appears more than once"):
        read_rul_json(path)
    rows = [{"id": "3", **fixture_rows(1)["2"]}, {"id": "3", **fixture_rows(1)["2"]}]
    with pytest.raises(DataValidationError, match="id '3': appears more than once"):
        read_rul_json(_write(tmp_path, rows, "list.json"))


def test_not_json_is_a_clear_error(tmp_path):
    with pytest.raises(DataValidationError, match="not valid JSON"):
        read_rul_json(_write(tmp_path, "{not json"))


def test_pools_are_cleaned_and_counted(data_dir):
    questions, report = read_pools(data_dir / "pools.json")
    first = questions[0]
    correct = normalize_answer(first.correct_answer)
    assert all(normalize_answer(d) != correct for q in questions for d in q.distractors)
    assert report.equal_to_correct == {"2": 1}
    assert report.duplicates == {"2": 1}
    assert report.n_candidates_in - report.n_candidates_out == 2
    assert len(first.distractors) == 9
    assert "1 equal to the correct answer" in report.summary().replace("dropped ", "")


def test_pool_with_nothing_left_is_an_error(tmp_path):
    rows = fixture_rows(2)
    rows["2"]["distractors"] = [rows["2"]["correct_answer"], " "]
    with pytest.raises(DataValidationError, match="id '2': no candidate left after cleaning"):
        read_pools(_write(tmp_path, rows))


def test_muchomusic_csv_schema(data_dir):
    questions = read_muchomusic_csv(data_dir / "muchomusic.csv")
    assert len(questions) == 8
    assert len(questions[0].distractors) == 3
    assert questions[0].track == "1000" and questions[0].source == "sdd"
    assert questions[2].track == "yt00000001_30" and questions[2].source == "musiccaps"
    assert questions[0].distractors == tuple(fixture_rows(8)["2"]["distractors"][:3])


def test_muchomusic_csv_missing_column_and_id(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("id,question,correct_answer\n1,q,a\n")
    with pytest.raises(DataValidationError, match="missing column"):
        read_muchomusic_csv(path)
    header = ["question", "dataset", "dataset_identifier", "correct_answer"] + [
        f"distractor_{i}_answer" for i in (1, 2, 3)
    ]
    with path.open("w", newline="") as handle:
        csv.writer(handle).writerows([header, ["q", "sdd", "1.json", "a", "b", "c", "d"]])
    with pytest.raises(DataValidationError, match="no question id column"):
        read_muchomusic_csv(path)


def test_muchomusic_csv_empty_distractor_is_reported(tmp_path, data_dir):
    lines = (data_dir / "muchomusic.csv").read_text().splitlines()
    cells = next(csv.reader([lines[1]]))
    cells[6] = ""
    out = tmp_path / "m.csv"
    with out.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(next(csv.reader([lines[0]])))
        writer.writerow(cells)
    with pytest.raises(DataValidationError, match="id '2': expected 3 distractors, found 2"):
        read_muchomusic_csv(out)


def test_table_formats(tmp_path):
    rows = [{"id": k, **v} for k, v in fixture_rows(3).items()]
    jsonl = tmp_path / "q.jsonl"
    jsonl.write_text("\n".join(json.dumps(r) for r in rows))
    assert [q.id for q in read_questions_table(jsonl)] == ["2", "5", "8"]

    csv_path = tmp_path / "q.csv"
    with csv_path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, ["id", "question", "correct_answer", "distractors"])
        writer.writeheader()
        for r in rows:
            writer.writerow(
                {
                    **{k: r[k] for k in ("id", "question", "correct_answer")},
                    "distractors": "|".join(r["distractors"]),
                }
            )
    assert read_questions_table(csv_path)[1].distractors == tuple(rows[1]["distractors"])

    import pyarrow as pa
    import pyarrow.parquet as pq

    parquet = tmp_path / "q.parquet"
    pq.write_table(pa.Table.from_pylist(rows), parquet)
    loaded = load_questions(parquet, n_distractors=4)
    assert loaded[2].distractors == tuple(rows[2]["distractors"])


def test_bad_jsonl_line_is_named(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text('{"id": "1"}\n{oops\n')
    with pytest.raises(DataValidationError, match="line 2: not valid JSON"):
        read_questions_table(path)


def test_load_questions_dispatches_on_content(data_dir, tmp_path):
    assert len(load_questions(data_dir / "rul.json")[0].distractors) == 4
    assert len(load_questions(data_dir / "muchomusic.csv")[0].distractors) == 3
    with pytest.raises(FileNotFoundError, match="question file not found"):
        load_questions(tmp_path / "nope.json")


def test_attach_tracks_joins_on_id(data_dir, tmp_path):
    rul = read_rul_json(write_rul_json(tmp_path / "r.json", n=10))
    joined = attach_tracks(rul, read_muchomusic_csv(data_dir / "muchomusic.csv"))
    assert joined[0].track == "1000" and joined[3].track == "yt00000001_30"
    assert joined[9].track is None  # id absent from the 8-row CSV


def test_any_distractor_count_still_rejects_the_correct_answer_and_repeats(tmp_path):
    rows = [{"id": "1", "question": "q", "correct_answer": "Piano", "distractors": ["piano", "x"]}]
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps(rows[0]))
    with pytest.raises(DataValidationError, match="id '1': distractor 'piano' equals the correct"):
        load_questions(path)
    path.write_text(json.dumps({**rows[0], "distractors": ["flute", "flute"]}))
    with pytest.raises(DataValidationError, match="id '1': two distractors are the same text"):
        load_questions(path)


def test_duplicate_field_inside_a_row_is_named(tmp_path):
    row = json.dumps(fixture_rows(1)["2"])[1:-1]
    path = _write(tmp_path, '{"2": {%s, "question": "again?"}}' % row)  # noqa: UP031
    with pytest.raises(DataValidationError, match="id '2': field 'question' appears more than"):
        read_rul_json(path)


def test_numbered_distractor_columns_keep_numeric_order_and_report_empty_cells(tmp_path):
    header = ["id", "question", "correct_answer"] + [f"distractor_{i}" for i in range(1, 12)]
    values = ["1", "q", "c"] + [f"d{i}" for i in range(1, 12)]
    path = tmp_path / "wide.csv"
    with path.open("w", newline="") as handle:
        csv.writer(handle).writerows([header, values])
    (question,) = read_questions_table(path)
    assert question.distractors == tuple(f"d{i}" for i in range(1, 12))
    values[5] = ""
    with path.open("w", newline="") as handle:
        csv.writer(handle).writerows([header, values])
    with pytest.raises(DataValidationError, match="id '1': distractor 3 is empty"):
        read_questions_table(path)
