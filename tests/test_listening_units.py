"""The listening classes as pure functions, a model's section with letter scoring, and the
subset writer on the layouts a benchmark's file comes in (RUL JSON, MuChoMusic's CSV, a
JSON list, a TSV)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from lm_eval_rul.report.listening import (
    ItemScore,
    audio_reliance,
    classify_item,
    listening_report,
    shortest_excerpt,
)


def test_classes_partition_the_items_and_original_accuracy():
    assert classify_item(True, [False, False, False]) == "needs_audio"
    assert classify_item(True, [False, True]) == "answered_without_audio"
    assert classify_item(False, [False]) == "missed"
    assert classify_item(False, [True, True]) == "missed"  # wrong with the clip comes first
    with pytest.raises(ValueError, match="at least one no-audio run"):
        classify_item(True, [])
    assert ItemScore(0.75, None, 4).right and not ItemScore(0.5, None, 4).right  # a strict majority
    assert audio_reliance(0.8, [0.2, 0.6]) == pytest.approx(0.2)
    assert audio_reliance(0.3, [0.6]) == pytest.approx(-0.3)
    assert audio_reliance(None, [0.1]) is None and audio_reliance(0.5, [0.1, None]) is None
    assert shortest_excerpt({}) is None and shortest_excerpt({10.0: True, 2.5: True}) == 2.5


def _samples_file(folder: Path, stamp: str, rows: list[tuple[str, float, float]]) -> None:
    """A harness samples file of ``music_mc`` (letter scoring): (id, acc, p(correct))."""
    lines = []
    for n, (qid, acc, p) in enumerate(rows):
        doc = {"id": qid, "question": f"q {qid}?", "options": ["a", "b"], "letters": ["A", "B"],
               "correct_answer": "a", "gold": 0, "benchmark": "music_mc"}  # fmt: skip
        right, wrong = (-0.1, -3.0) if acc else (-3.0, -0.1)
        lines.append(json.dumps({"doc_id": n, "doc": doc, "acc": acc,
                                 "perceptual_index": 1.0 - p,
                                 "resps": [[[right, True]], [[wrong, False]]],
                                 "filtered_resps": [[right, True], [wrong, False]]}))  # fmt: skip
    (folder / f"samples_music_mc_{stamp}.jsonl").write_text("\n".join(lines) + "\n")


def _run(root: Path, condition: str, rows, data: str = "bench.jsonl", **settings) -> Path:
    folder = root / condition / "tiny"
    folder.mkdir(parents=True)
    stamp = "2026-01-01T00-00-00.000001"
    config = {"model": "lalm", "model_args": "pretrained=/m/tiny", "audio_condition": condition,
              **{f"audio_{k}": v for k, v in settings.items()}}  # fmt: skip
    if condition == "text":
        config = {"model": "hf", "model_args": "pretrained=/m/textlm"}
    results = {"results": {"music_mc": {"acc,none": sum(r[1] for r in rows) / len(rows)}},
               "configs": {"music_mc": {"output_type": "multiple_choice",
                                        "metadata": {"mc_data_path": data}}},
               "config": config, "n-samples": {"music_mc": {"original": len(rows)}}}  # fmt: skip
    (folder / f"results_{stamp}.json").write_text(json.dumps(results))
    _samples_file(folder, stamp, rows)
    return root / condition


def test_a_models_section_with_letter_scoring_and_two_excerpt_lengths(tmp_path):
    from lm_eval_rul.report import ReportSettings, load_runs

    folders = [
        _run(tmp_path, "original", [("1", 1, 0.9), ("2", 1, 0.8), ("3", 0, 0.3), ("4", 1, 0.7)]),
        _run(tmp_path, "noise", [("1", 0, 0.4), ("2", 1, 0.6), ("3", 0, 0.2), ("4", 0, 0.1)]),
        _run(tmp_path, "silence", [("1", 0, 0.2), ("2", 0, 0.3), ("3", 1, 0.6), ("4", 0, 0.3)]),
    ]
    folders.append(_run(tmp_path / "x2", "excerpt", [("1", 0, 0.3), ("4", 1, 0.6)],
                        excerpt_seconds=2.0, excerpt_at="end"))  # fmt: skip
    folders.append(_run(tmp_path / "x5", "excerpt", [("1", 1, 0.6), ("2", 1, 0.7), ("4", 1, 0.6)],
                        excerpt_seconds=5.0, excerpt_at="end"))  # fmt: skip
    folders.append(_run(tmp_path, "text", [("1", 0, 0.2), ("2", 1, 0.9), ("3", 0, 0.4),
                                           ("4", 0, 0.5)]))  # fmt: skip
    runs = load_runs(folders)
    backbone = next(r for r in runs if r.is_text)
    assert sorted(r.setting for r in runs if r.condition == "excerpt") == [
        "excerpt, excerpt_seconds=2", "excerpt, excerpt_seconds=5"
    ]
    notes: list[str] = []
    section = listening_report(runs, ReportSettings(n_resamples=99), backbone, notes)
    (model,) = section["music_mc"]["models"]
    rows = {row["id"]: row for row in section["music_mc"]["_items"]}
    assert {q: r["class"] for q, r in rows.items()} == {
        "1": "needs_audio", "2": "answered_without_audio", "3": "missed", "4": "needs_audio"
    }
    assert rows["1"]["audio_reliance"] == pytest.approx(0.9 - 0.4)
    assert rows["3"]["audio_reliance"] == pytest.approx(0.3 - 0.6)
    assert (rows["1"]["shortest_excerpt_seconds"], rows["1"]["needs_whole_clip"]) == (5.0, False)
    assert (rows["4"]["shortest_excerpt_seconds"], rows["4"]["needs_whole_clip"]) == (2.0, False)
    assert rows["2"]["needs_whole_clip"] is False  # right without audio: not only with the clip
    assert rows["3"]["needs_whole_clip"] is None  # no excerpt run logged item 3
    assert rows["1"]["p_correct[noise]"] == pytest.approx(0.4)
    assert rows["1"]["correct[excerpt, excerpt_seconds=2]"] == 0.0
    assert model["counts"] == {"needs_audio": 2, "answered_without_audio": 1, "missed": 1}
    assert model["shortest_excerpt_counts"] == {"2": 1, "5": 1}
    assert [p["seconds"] for p in model["curve"]] == [0.0, 0.0, 2.0, 5.0, None]
    assert model["mean_audio_reliance"] == pytest.approx(((0.5) + (0.8 - 0.6) + (-0.3) + 0.4) / 4)
    assert rows["1"]["text_pi"] == pytest.approx(0.8) and rows["2"]["text_pi"] == pytest.approx(0.1)
    assert model["text_mean_pi"] == pytest.approx((0.8 + 0.1 + 0.6 + 0.5) / 4)
    assert section["music_mc"]["pi_source"] == "the text-only run of textlm"
    assert notes == []
    alone = listening_report(load_runs(folders[:1]), ReportSettings(n_resamples=99), None, notes)
    assert alone == {} and notes == []  # an original run alone: no section, nothing to say


def test_two_question_files_of_one_model_are_never_mixed(tmp_path):
    from lm_eval_rul.report import ReportSettings, load_runs

    folders = [
        _run(tmp_path / "a", "original", [("1", 1, 0.9)], data="a.jsonl"),
        _run(tmp_path / "a", "none", [("1", 0, 0.1)], data="a.jsonl"),
        _run(tmp_path / "b", "original", [("1", 1, 0.9)], data="b.jsonl"),
        _run(tmp_path / "b", "none", [("1", 1, 0.8)], data="b.jsonl"),
    ]
    section = listening_report(load_runs(folders), ReportSettings(n_resamples=99), None, [])
    classes = {(r["model"], r["class"]) for r in section["music_mc"]["_items"]}
    assert classes == {("tiny [questions=a.jsonl]", "needs_audio"),
                       ("tiny [questions=b.jsonl]", "answered_without_audio")}  # fmt: skip


def _ids(path: Path, **options) -> list[str]:
    from lm_eval_rul.questions import load_questions

    return sorted(q.id for q in load_questions(path, **options))


def test_the_subset_keeps_the_files_own_layout(tmp_path):
    from lm_eval_rul.questions.subsets import TABLE_LAYOUT, write_subset
    from lm_eval_rul.testing.fixtures import write_muchomusic_csv, write_rul_json

    rul = write_rul_json(tmp_path / "rul.json", n=6)
    all_ids = _ids(rul)
    chosen = all_ids[1:3]
    done = write_subset(rul, chosen, tmp_path / "out" / "rul_subset.json")
    assert done.kept_layout and done.layout == "json object keyed by id"
    source, kept = json.loads(rul.read_text()), json.loads(done.path.read_text())
    assert kept == {k: v for k, v in source.items() if k in chosen}  # the records themselves
    assert _ids(done.path) == chosen

    muchomusic = write_muchomusic_csv(tmp_path / "muchomusic.csv", n=6)
    ids = _ids(muchomusic)[:2]
    done = write_subset(muchomusic, ids, tmp_path / "mm_subset.csv")
    with muchomusic.open(newline="") as a, done.path.open(newline="") as b:
        header_a, header_b = next(csv.reader(a)), next(csv.reader(b))
    assert header_a == header_b and done.layout == "csv" and _ids(done.path) == ids

    rows = [{"id": f"t{i}", "question": f"Q{i}?", "correct_answer": f"yes {i}",
             "distractors": [f"no {i}", f"never {i}"]} for i in range(4)]  # fmt: skip
    listed = tmp_path / "list.json"
    listed.write_text(json.dumps(rows))
    done = write_subset(listed, ["t2"], tmp_path / "list_subset.json")
    assert done.layout == "json list" and json.loads(done.path.read_text()) == [rows[2]]

    tsv = tmp_path / "bench.tsv"
    tsv.write_text("question_id\tquestion\tanswer\tchoice_a\tchoice_b\n"
                   "p1\tFirst?\tA\tred\tblue\np2\tSecond?\tB\tgreen\tpink\n")  # fmt: skip
    done = write_subset(tsv, ["p2"], tmp_path / "tsv_subset.tsv")
    assert done.layout == "tsv" and done.path.read_text().splitlines()[1].startswith("p2\t")
    assert _ids(done.path) == ["p2"]

    no_ids = tmp_path / "no_ids.tsv"  # ids are row numbers: the layout cannot be kept
    no_ids.write_text("question\tanswer\tchoice_a\tchoice_b\n"
                      "First?\tA\tred\tblue\nSecond?\tB\tgreen\tpink\n")  # fmt: skip
    for name in ("fallback.json", "fallback.jsonl"):  # one JSON line alone is a JSON list
        done = write_subset(no_ids, ["1"], tmp_path / name)
        assert not done.kept_layout and done.layout == TABLE_LAYOUT and _ids(done.path) == ["1"]

    from lm_eval_rul.questions import DataValidationError

    with pytest.raises(DataValidationError, match="not in the file"):
        write_subset(rul, ["nope"], tmp_path / "never.json")
    with pytest.raises(DataValidationError, match="overwrite its own source"):
        write_subset(rul, chosen, rul)
