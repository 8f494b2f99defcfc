"""Each published shape ``music_mc`` reads (CSV/TSV with choice columns, one ``choices``
column, numbered options, JSON lines, ``mc_columns``), the one-line errors of a table the
readers cannot place, and what changes the option order (only the data)."""

from __future__ import annotations

import json

import pytest

from lm_eval_rul.audio import attach_audio
from lm_eval_rul.errors import UserInputError
from lm_eval_rul.mcqa.music_mc import load_music_mc
from lm_eval_rul.questions import DataValidationError, load_questions
from lm_eval_rul.testing.audio import synth_clip, write_clip
from lm_eval_rul.testing.harness import cli_error_line as fail
from lm_eval_rul.testing.mmau import mmau_rows, write_mmau_json


def _docs(**metadata) -> list[dict]:
    return list(load_music_mc(**metadata)["test"])


def test_a_csv_with_lettered_choices_a_letter_answer_and_audio_paths(tmp_path):
    write_clip(tmp_path / "clips" / "a.wav", synth_clip("tone", seconds=0.5))
    path = tmp_path / "bench.csv"
    path.write_text("id,question,choice_a,choice_b,choice_c,choice_d,answer,audio_path\n"
                    "1,Which?,x,y,z,,B,clips/a.wav\n2,What?,p,q,r,s,(D),clips/missing.wav\n")
    first, second = load_questions(path)
    assert (first.correct_answer, first.distractors) == ("y", ("x", "z"))  # empty cell left out
    assert (second.correct_answer, second.distractors) == ("s", ("p", "q", "r"))
    docs = attach_audio([{"id": "1"}, {"id": "2"}], [first, second], {})
    assert json.loads(docs[0]["audio_ref"])["path"] == str((tmp_path / "clips/a.wav").resolve())
    assert docs[1]["audio_ref"] is None
    assert docs[1]["audio_tried"] == [str(tmp_path / "clips" / "missing.wav")]
    # with audio_dir the path column is read inside it first
    write_clip(tmp_path / "elsewhere" / "clips" / "missing.wav", synth_clip("tone", seconds=0.5))
    docs = attach_audio([{"id": "2"}], [second], {"audio_dir": str(tmp_path / "elsewhere")})
    assert json.loads(docs[0]["audio_ref"])["path"].endswith("elsewhere/clips/missing.wav")


def test_numbered_options_count_from_their_first_number_and_text_answers(tmp_path):
    path = tmp_path / "bench.tsv"
    path.write_text("qid\tprompt\toption_1\toption_2\toption_3\tlabel\n"
                    "a\tQ1?\tx\ty\tz\t1\nb\tQ2?\tu\tv\tw\t3\n")
    questions = load_questions(path)
    assert [q.correct_answer for q in questions] == ["x", "w"]
    listed = tmp_path / "listed.csv"
    listed.write_text('id,question,choices,answer\n1,Q?,"Jazz|Rock|Pop",rock\n'
                      '2,Q2?,"[""a"", ""b""]",0\n')
    assert [q.correct_answer for q in load_questions(listed)] == ["Rock", "a"]


def test_mc_columns_maps_any_names_and_names_its_mistakes(tmp_path):
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps({"key": "k1", "ask": "Which?", "opts": ["a", "b", "c"],
                                "reply": "c", "clip": "k1.wav"}) + "\n")
    with pytest.raises(DataValidationError) as unplaced:
        load_questions(path)
    message = str(unplaced.value)
    assert "\n" not in message
    assert "'key', 'ask', 'opts', 'reply', 'clip'" in message  # the columns found
    assert "the roles question, choices, answer have no column" in message
    assert '--metadata mc_columns=\'{"question": "<column>", "choices": "<column>", ' in message
    columns = {"id": "key", "question": "ask", "choices": "opts", "answer": "reply"}
    (question,) = load_questions(path, columns=columns)
    assert (question.id, question.correct_answer, question.audio.path) == ("k1", "c", "k1.wav")
    with pytest.raises(DataValidationError, match="unknown role\\(s\\) 'prompt'"):
        load_questions(path, columns={"prompt": "ask"})
    with pytest.raises(DataValidationError, match="answer = 'gold'\\); its columns are"):
        load_questions(path, columns={**columns, "answer": "gold"})


def test_an_answer_that_names_no_option_is_named_by_row(tmp_path):
    path = tmp_path / "bench.csv"
    path.write_text("id,question,choice_a,choice_b,answer\n1,Q?,x,y,E\n2,Q2?,x,y,x\n")
    with pytest.raises(DataValidationError, match="id '1': answer 'E' \\('answer'\\) is not one"):
        load_questions(path)


def test_distractor_columns_with_empty_trailing_cells_give_3_and_4_options(tmp_path):
    path = tmp_path / "bench.csv"  # 44.13
    path.write_text("id,question,correct_answer,distractor_1,distractor_2,distractor_3\n"
                    "n1,Q?,a,b,c,d\nn2,Q2?,a,b,,\n")
    assert [len(q.distractors) for q in load_questions(path)] == [3, 1]
    assert [len(d["options"]) for d in _docs(mc_data_path=str(path))] in ([4, 2], [2, 4])


def test_a_file_in_mmau_layout_is_read_whole_by_music_mc(tmp_path):
    path = write_mmau_json(tmp_path / "mmau.json")  # 44.7: sound, speech and music items
    docs = _docs(mc_data_path=str(path))
    assert len(docs) == len([r for r in mmau_rows()])
    sound = _docs(mc_data_path=str(path), mc_subset="sound")
    assert 0 < len(sound) < len(docs)
    with pytest.raises(DataValidationError, match="Pick another --metadata mc_subset"):
        _docs(mc_data_path=str(path), mc_subset="nothing")


def test_a_mistyped_path_without_a_public_copy_never_advises_leaving_it_out(
    tiny_lm, tmp_path, capsys
):
    from lm_eval_rul.testing.harness import cli_error_line

    model = ["--model", "hf", "--model_args", f"pretrained={tiny_lm}", "--device", "cpu"]
    for task, key in (("music_mc", "mc_data_path"), ("rul_mmar_music", "rul_mmar_data_path")):
        line = cli_error_line(["run", *model, "--tasks", task, "--metadata",
                               json.dumps({key: str(tmp_path / "typo.json")})], capsys)
        assert "no such file" in line and "download" not in line and "leave" not in line
    line = cli_error_line(["run", *model, "--tasks", "mmau_music", "--metadata",
                           json.dumps({"mmau_data_path": str(tmp_path / "typo.json")})], capsys)
    assert "leave mmau_data_path out" in line  # MMAU has a public copy


def test_only_the_data_changes_the_option_order(tmp_path):
    rows = [{"id": str(i), "question": f"Q{i}?", "choices": ["a", "b", "c", "d"], "answer": "b"}
            for i in range(12)]
    first = tmp_path / "first.jsonl"
    first.write_text("".join(json.dumps(r) + "\n" for r in rows))
    listed = tmp_path / "listed.jsonl"  # the options in another order, the ids renamed
    renamed = [{**r, "id": f"x{r['id']}", "choices": ["d", "c", "b", "a"]} for r in rows]
    listed.write_text("".join(json.dumps(r) + "\n" for r in renamed))

    def shown(**metadata):
        return {d["question"]: (d["options"], d["gold_letter"]) for d in _docs(**metadata)}

    reference = shown(mc_data_path=str(first), benchmark_name="Tones-12")
    assert shown(mc_data_path=str(first), benchmark_name="Tones-A") == reference
    assert shown(mc_data_path=str(listed)) == reference
    assert shown(mc_data_path=str(first), shuffle_seed=7) != reference
    assert len({tuple(options) for options, _ in reference.values()}) > 1  # shuffled per item


def test_a_cell_of_230_kb_is_read_in_csv_and_tsv_files(tmp_path):
    long = "la " * 80_000  # 240 KB, above the csv module's 128 KiB default
    ours = tmp_path / "ours.csv"  # 53.16: the question readers of run and pi
    ours.write_text(f'id,question,correct_answer,distractors,caption\n1,Q?,a,"b|c",{long}\n')
    (question,) = load_questions(ours)
    assert question.caption == long.strip()
    published = tmp_path / "bench.tsv"
    published.write_text(f"id\tquestion\tchoice_a\tchoice_b\tanswer\tnotes\n1\tQ?\tx\ty\tB\t{long}\n")
    (question,) = load_questions(published)
    assert question.correct_answer == "y"


def test_a_damaged_save_to_disk_folder_is_one_line(tmp_path):
    import datasets

    rows = [{"question": f"Q{i}?", "choices": ["a", "b"], "answer": "a"} for i in range(40)]
    saved = tmp_path / "saved"
    datasets.Dataset.from_list(rows).save_to_disk(str(saved))
    assert len(load_questions(saved)) == 40
    shard = next(saved.glob("*.arrow"))
    whole = shard.read_bytes()
    shard.write_bytes(whole[: len(whole) // 2])  # 53.17: a copy cut short
    with pytest.raises(UserInputError) as truncated:
        load_questions(saved)
    shard.write_bytes(whole)
    (saved / "state.json").write_text("{not json")
    with pytest.raises(UserInputError) as not_json:
        load_questions(saved)
    for error in (truncated, not_json):
        message = str(error.value)
        assert "\n" not in message
        assert f"the save_to_disk folder {saved} cannot be read" in message
    assert "OSError" in str(truncated.value) and "JSONDecodeError" in str(not_json.value)


def test_every_bad_row_of_a_published_table_is_named_in_one_pass(tmp_path):
    path = tmp_path / "bench.csv"
    path.write_text(
        "id,question,choice_a,choice_b,choice_c,answer\n"
        "1,Q1?,x,y,z,E\n"  # names no option
        "2,Q2?,x,y,y,A\n"  # two distractors the same
        "1,Q3?,u,v,w,A\n"  # a repeated id
        "4,Q4?,piano,piano,harp,piano\n"  # the options repeat: not "not one of its choices"
    )
    with pytest.raises(DataValidationError) as error:
        load_questions(path)  # 53.18
    problems = error.value.problems
    assert len(problems) == 4, problems
    assert problems[0].startswith("id '1': answer 'E' ('answer') is not one of its 3 choices")
    assert problems[1] == "id '2': two distractors are the same text"
    assert problems[2] == "id '1': appears more than once"
    assert problems[3].startswith("id '4': answer 'piano' ('answer') names choices 1 and 2, "
                                  "which repeat the same text")  # fmt: skip
    assert "not one of" not in problems[3]


def _choice_csv(path, answers: list[int]):
    import csv

    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["id", "question", "choice_a", "choice_b", "choice_c", "choice_d",
                         "answer"])  # fmt: skip
        for i, answer in enumerate(answers):
            writer.writerow([f"q{i}", f"Question {i}?", f"a{i}", f"b{i}", f"c{i}", f"d{i}",
                             answer])  # fmt: skip
    return path


def test_numeric_answers_of_an_unsettled_base_are_refused_in_one_line(
    tiny_lm, tmp_path, capsys, constructions
):
    path = _choice_csv(tmp_path / "bench.csv", [2, 3, 1, 1, 3, 1])
    line = fail(["run", "--model", "hf", "--model_args", f"pretrained={tiny_lm}",
                 "--tasks", "music_mc", "--metadata", f"mc_data_path={path}",
                 "--output_path", str(tmp_path / "out")], capsys)  # fmt: skip
    assert "the answer column 'answer'" in line
    assert "from 0 the first rows read 2 -> C 'c0'; 3 -> D 'd1'" in line
    assert "from 1 2 -> B 'b0'; 3 -> C 'c1'" in line
    assert "mc_answer_base=1" in line and "mc_columns" in line
    assert constructions == []


@pytest.mark.parametrize(
    ("answers", "base", "gold"),
    [([2, 3, 1, 1, 3, 1], 1, ["b0", "c1", "a2"]),  # the key settles it
     ([2, 3, 1, 1, 3, 1], 0, ["c0", "d1", "b2"]),
     ([2, 3, 0, 1, 3, 1], None, ["c0", "d1", "a2"]),  # a 0: from 0, as before
     ([2, 3, 4, 1, 3, 1], None, ["b0", "c1", "d2"])],  # a 4 of 4 choices: from 1
)  # fmt: skip
def test_a_file_or_the_key_that_settles_the_base_reads_as_it_says(answers, base, gold, tmp_path):
    from lm_eval_rul.questions import load_questions

    path = _choice_csv(tmp_path / "bench.csv", answers)
    questions = load_questions(path, answer_base=base)
    assert [q.correct_answer for q in questions[:3]] == gold


def test_answers_that_are_their_options_text_need_no_base(tmp_path):
    import csv

    from lm_eval_rul.questions import load_questions

    path = tmp_path / "beats.csv"
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["id", "question", "choice_a", "choice_b", "choice_c", "choice_d",
                         "answer"])  # fmt: skip
        writer.writerows([["q0", "How many beats?", "2", "3", "4", "5", "3"],
                          ["q1", "How many bars?", "2", "3", "4", "5", "2"]])  # fmt: skip
    assert [q.correct_answer for q in load_questions(path)] == ["3", "2"]
