"""Hostile inputs, sixth pass (issue 53): the tagging readers and the published readers.

Each test fails on 6792c0b: a file read as its release ships it but for one hostile detail
(a repeated clip, a tag in two cases, a BOM, a 230 KB cell, a damaged save_to_disk
folder, several bad rows at once) is read right, or refused in one line naming it.
"""

from __future__ import annotations

import os

import pytest

from lm_eval_rul.errors import UserInputError
from lm_eval_rul.questions import DataValidationError, load_questions
from lm_eval_rul.tagging import read_gtzan_split, read_mtg_tsv, read_mtt
from lm_eval_rul.tagging.data import check_tagging_data
from lm_eval_rul.tagging.documents import make_documents
from lm_eval_rul.tagging.parsing import read_tags
from lm_eval_rul.tagging.readers import TaggingDataError
from lm_eval_rul.tagging.records import gen_figures
from lm_eval_rul.tagging.tasks import process_results_gen
from lm_eval_rul.testing.tagging import write_gtzan, write_mtg, write_mtt

_HEADER = "TRACK_ID\tARTIST_ID\tALBUM_ID\tPATH\tDURATION\tTAGS"


def _tsv(folder, rows: list[str], task: str = "genre"):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"autotagging_{task}-test.tsv"
    path.write_text("\n".join([_HEADER, *rows]) + "\n", encoding="utf-8")
    return path


def test_every_tagging_reader_refuses_a_clip_listed_twice_naming_file_line_and_clip(tmp_path):
    mtt = write_mtt(tmp_path / "mtt")
    lines = mtt["split"].read_text().splitlines()
    mtt["split"].write_text("\n".join([*lines, lines[2]]) + "\n")  # 53.1: line 7 repeats 3
    stem = lines[2].split("\t")[1].rsplit("/", 1)[1][: -len(".mp3")]
    with pytest.raises(TaggingDataError) as error:
        read_mtt(mtt["annotations"], mtt["split"])
    message = str(error.value)
    assert "\n" not in message
    assert f"mtt_split_file {mtt['split']}, line 7: clip {stem} is listed twice" in message
    assert "first on line 3" in message
    gtzan = write_gtzan(tmp_path / "gtzan", per_genre=1)
    gtzan["split"].write_text("blues/blues.00012.wav\njazz/jazz.00012.wav\nblues/blues.00012.wav\n")
    with pytest.raises(TaggingDataError, match=r"line 3: clip blues.00012 is listed twice"):
        read_gtzan_split(gtzan["split"])
    tsv = _tsv(tmp_path / "mtg", ["t1\ta\tb\t1/1.mp3\t30\tgenre---pop"] * 2)
    with pytest.raises(TaggingDataError, match=r"row 3: track t1 is listed twice"):
        read_mtg_tsv(tsv, "genre")


def test_mtg_tags_differing_only_in_case_are_one_tag_in_vocabulary_and_answers(tmp_path):
    tsv = _tsv(tmp_path / "mtg", [
        "t1\ta\tb\t1/1.mp3\t30\tgenre---Rock\tgenre---rock",
        "t2\ta\tb\t1/2.mp3\t30\tgenre---rock",
        "t3\ta\tb\t1/3.mp3\t30\tgenre---POP",
    ])  # fmt: skip
    clips = read_mtg_tsv(tsv, "genre")  # 53.2
    assert [c.tags for c in clips] == [("genre---rock",), ("genre---rock",), ("genre---pop",)]
    docs = make_documents("mtg_genre", "gen", {"mtg_data_dir": str(tsv.parent)})
    assert docs[0]["tags"] == ["genre---rock", "genre---pop"]
    records = [process_results_gen(doc, [answer])["micro_f1"]
               for doc, answer in zip(docs, ["Rock.", "rock", "Pop"], strict=True)]  # fmt: skip
    assert [r["labels"] for r in records] == [["genre---rock"], ["genre---rock"], ["genre---pop"]]
    assert gen_figures(records)["micro_f1"] == 1.0


@pytest.mark.parametrize(
    ("answer", "tag"),
    [("Rock 'n' Roll", "rocknroll"), ("rock n' roll", "rocknroll"), ("rock 'n roll", "rocknroll"),
     ("rock and roll", "rocknroll"), ("Rock’n’Roll", "rocknroll"), ("Drum 'n' Bass", "drumnbass"),
     ("drum n bass", "drumnbass"), ("drum and bass", "drumnbass"), ("drum & bass", "drumnbass")],
)  # fmt: skip
def test_free_text_joined_with_n_in_any_spelling_reads_one_tag(answer, tag):
    tags = ("genre---rock", "genre---rocknroll", "genre---drumnbass", "genre---pop")
    assert read_tags(answer, "mtg_genre", tags).tags == (f"genre---{tag}",)  # 53.3


@pytest.mark.parametrize("duration", ["inf", "nan", "-30", "0"])
def test_an_mtg_duration_that_is_no_length_is_one_line_naming_the_row(tmp_path, duration):
    tsv = _tsv(tmp_path / "mtg", ["t1\ta\tb\t1/1.mp3\t30\tgenre---pop",
                                  f"t2\ta\tb\t1/2.mp3\t{duration}\tgenre---rock"])  # fmt: skip
    with pytest.raises(TaggingDataError) as error:  # 53.12: the descriptor check, before the model
        check_tagging_data({"mtg_data_dir": str(tsv.parent), "tagging_offset": "middle"})
    message = str(error.value)
    assert "\n" not in message
    assert f"{tsv}, row 3: DURATION {duration!r} is not a number of seconds above 0" in message


def test_genre_folders_the_user_linked_into_the_audio_folder_are_followed(tmp_path):
    gtzan = write_gtzan(tmp_path / "gtzan", per_genre=1)
    linked = tmp_path / "linked"
    linked.mkdir()
    for genre in gtzan["audio"].iterdir():  # 53.14: each genre folder a link to the release's
        os.symlink(genre, linked / genre.name)
    metadata = {"gtzan_split_file": str(gtzan["split"]), "gtzan_audio_dir": str(linked)}
    check_tagging_data(metadata)
    docs = make_documents("gtzan", "letters", metadata)
    assert all(doc["audio_ref"] for doc in docs) and len(docs) == 10
    # a path in the metadata that leaves the folder is still refused, naming the clip
    tsv = _tsv(tmp_path / "mtg", ["t1\ta\tb\t../../outside.mp3\t30\tgenre---pop"])
    with pytest.raises(UserInputError, match=r"clip t1: the file name '../../outside.mp3' points"):
        check_tagging_data({"mtg_data_dir": str(tsv.parent), "mtg_audio_dir": str(linked)})


def test_tagging_files_with_a_byte_order_mark_are_read(tmp_path):
    gtzan = write_gtzan(tmp_path / "gtzan", per_genre=1)
    gtzan["split"].write_bytes(b"\xef\xbb\xbf" + gtzan["split"].read_bytes())  # 53.15
    assert len(read_gtzan_split(gtzan["split"])) == 10
    mtg = write_mtg(tmp_path / "mtg")
    tsv = mtg["data"] / "autotagging_genre-test.tsv"
    tsv.write_bytes(b"\xef\xbb\xbf" + tsv.read_bytes())
    assert len(read_mtg_tsv(tsv, "genre")) == 8


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


def _top_reply(top: list[tuple[str, float]]):
    import json

    from doubles.scripted_http import Answer

    entries = [{"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in top]
    first = {**entries[0], "top_logprobs": entries}
    choice = {"index": 0, "message": {"role": "assistant", "content": top[0][0]},
              "logprobs": {"content": [first]}, "finish_reason": "length"}  # fmt: skip
    return Answer(200, json.dumps({"id": "x", "object": "chat.completion",
                                   "choices": [choice]}).encode())  # fmt: skip


def test_tag_likelihoods_over_top_tokens_match_case_variants_and_stay_finite(tmp_path):
    import itertools
    import json
    import math
    import threading

    from doubles.scripted_http import Answer, ScriptedServer

    from lm_eval_rul.testing.harness import read_output, run_cli

    mtg = write_mtg(tmp_path / "mtg")
    tops = itertools.cycle([
        [(" yes", -0.2), ("Yes", -1.8)],  # "no" left out: yes is the likelier
        [("Yes", -0.5), ("No", -1.0)],  # both, capitalised, no space
        [("NO", -0.3), (" no", -2.0)],
        [("Maybe", -0.1), ("Sure", -2.5)],  # neither: no score can be formed
    ])  # fmt: skip
    lock = threading.Lock()

    def answer(request) -> Answer:
        if request.method == "GET":
            return Answer(200, b'{"object": "list", "data": []}')
        with lock:
            return _top_reply(next(tops))

    out = tmp_path / "out"
    metadata = {"mtg_data_dir": str(mtg["data"]), "mtg_audio_dir": str(mtg["audio"]),
                "tagging_seconds": 1.5}  # fmt: skip
    with ScriptedServer(answer) as server:  # 53.4
        run_cli(["run", "--model", "lalm-api", "--model_args",
                 f"base_url={server.url},model=tiny-audio,logprobs=top,results_cache=none,"
                 "retry_backoff=0,num_concurrent=1", "--tasks", "mtg_genre",
                 "--metadata", json.dumps(metadata), "--output_path", str(out),
                 "--log_samples"])  # fmt: skip
    results, samples = read_output(out)
    figures = results["results"]["mtg_genre"]
    assert all(math.isfinite(figures[f"{name},none"]) for name in ("roc_auc", "pr_auc", "micro_f1"))
    records = [row["roc_auc"] for row in samples["mtg_genre"]]
    n_tags = len(records[0]["tags"])
    scores = [s for r in records for s in r["scores"]]
    assert len(scores) == 8 * n_tags
    unscored = sum(len(r["unscored"]) for r in records)
    assert unscored == len(scores) // 4  # every fourth reply: counted, scored 0
    assert sum(s == math.inf for s in scores) == len(scores) // 4
    assert sum(s == -math.inf for s in scores) == len(scores) // 4
    assert sum(s == 0.5 for s in scores) == len(scores) // 4  # "Yes"/"No" matched
    missing = {k: v for k, v in results["config"].items() if "missing_from_top" in str(k)}
    assert missing, results["config"].keys()
    from lm_eval_rul.models.api_payload import top_path_scores

    # a word's case variants add up; a letter keeps its case ("a" is a word, not option A)
    assert top_path_scores([("Yes", -2.0), (" yes", -2.0), ("a", -0.5)], [" yes", " A"]) == [
        (pytest.approx(math.log(2 * math.exp(-2.0))), False), None]


def test_a_file_shorter_than_its_duration_logs_the_stretch_heard_and_warns_once(tmp_path, caplog):
    import logging

    from lm_eval_rul.testing.audio import synth_clip, write_clip

    write_clip(tmp_path / "audio" / "1" / "1.mp3", synth_clip("tone", seconds=3.0))
    write_clip(tmp_path / "audio" / "1" / "2.mp3", synth_clip("chord", seconds=3.0))
    tsv = _tsv(tmp_path / "mtg", ["t1\ta\tb\t1/1.mp3\t200\tgenre---pop",
                                  "t2\ta\tb\t1/2.mp3\t3\tgenre---rock"])  # fmt: skip
    metadata = {"mtg_data_dir": str(tsv.parent), "mtg_audio_dir": str(tmp_path / "audio"),
                "tagging_seconds": 2, "tagging_offset": "middle"}  # fmt: skip
    with caplog.at_level(logging.WARNING, logger="lm_eval_rul"):
        docs = make_documents("mtg_genre", "gen", metadata)  # 53.11
        make_documents("mtg_genre", "likelihood", metadata)
    # the middle 2 s of the 3 s file, as heard (not [99, 101] of the 200 s DURATION)
    assert [d["audio_window"] for d in docs] == [[0.5, 2.5], [0.5, 2.5]]
    warned = [r.getMessage() for r in caplog.records if "shorter than" in r.getMessage()]
    assert len(warned) == 1
    assert warned[0].startswith("mtg_genre: 1 of 2 clips are shorter than the length their "
                                "metadata gives (first: t1, 3.0 s of 200.0 s)")  # fmt: skip
