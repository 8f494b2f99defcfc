"""The MMAU tasks end to end through ``lm-eval-rul run``: a tiny text-only model under the
protocols, the tiny audio LM hearing the clips or noise, and bad input refused in one line
before any model loads."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from lm_eval_rul.mcqa.mmau.prompts import LMMS_POST_PROMPT
from lm_eval_rul.mcqa.mmau.tasks import doc_to_text, doc_to_text_gen, load_mmau
from lm_eval_rul.mcqa.mmau_parsing import mmau_official_answer, mmau_string_match
from lm_eval_rul.mcqa.parsing import parse_answer
from lm_eval_rul.testing.harness import cli_error_line, read_output, run_cli
from lm_eval_rul.testing.harness import cli_error_line as fail
from lm_eval_rul.testing.mmau import mmau_rows, official_rule, write_mmau_audio, write_mmau_json

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="module")
def mmau_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("mmau")
    write_mmau_json(root / "mmau.json")
    write_mmau_audio(root / "archive")
    return root


def hf_args(model: Path, out: Path, tasks: str, metadata: dict, *extra: str) -> list[str]:
    return [
        "run", "--model", "hf", "--model_args", f"pretrained={model},dtype=float32",
        "--tasks", tasks, "--metadata", json.dumps(metadata), "--device", "cpu",
        "--batch_size", "8", "--output_path", str(out), "--log_samples", *extra,
    ]  # fmt: skip


def predictions_file(out: Path, task: str) -> Path:
    """The one predictions file of ``task``: beside the model's results, named with their
    date id, with a plain file's mode like every other output (0644 under umask 022), not
    the private 0600 of a temporary file."""
    (results,) = out.glob("*/results_*.json")
    stamp = results.stem.removeprefix("results_")
    path = results.parent / f"mmau_predictions_{task}_{stamp}.json"
    assert sorted(out.rglob("mmau_predictions_*")) == sorted(
        results.parent.glob("mmau_predictions_*")
    )
    umask = os.umask(0)
    os.umask(umask)
    assert path.is_file() and path.stat().st_mode & 0o777 == 0o666 & ~umask
    return path


def test_text_only_run_under_ours_and_the_official_protocol(tiny_lm, mmau_dir, tmp_path):
    data = str(mmau_dir / "mmau.json")
    out = tmp_path / "rul"
    run_cli(hf_args(tiny_lm, out, "mmau", {"mmau_data_path": data}, "--gen_kwargs",
                    "max_gen_toks=8"))  # fmt: skip
    results, samples = read_output(out)
    assert {"acc,none", "perceptual_index,none"} <= set(results["results"]["mmau_music"])
    letters = samples["mmau_music"]
    assert len(letters) == 12 and {r["doc"]["mmau_task"] for r in letters} == {"music"}
    assert np.mean([r["perceptual_index"] for r in letters]) == pytest.approx(
        results["results"]["mmau_music"]["perceptual_index,none"]
    )
    released = {r["id"]: r["choices"] for r in mmau_rows()}
    assert any(r["doc"]["options"] != released[r["doc"]["id"]] for r in letters)  # seeded
    gen = samples["mmau_music_gen"]
    parsed = [parse_answer(r["filtered_resps"][0], r["doc"]["options"]) for r in gen]
    assert results["results"]["mmau_music_gen"]["parse_failure,none"] == np.mean(
        [p.letter is None for p in parsed]
    )
    # the official protocol: the JSON's order, the choices' text asked for, MMAU's rule
    out = tmp_path / "official"
    metadata = {"mmau_data_path": data, "mmau_protocol": "official"}
    run_cli(hf_args(tiny_lm, out, "mmau_music_gen,mmau_music", metadata, "--gen_kwargs",
                    "max_gen_toks=8"))  # fmt: skip
    results, samples = read_output(out)
    official = samples["mmau_music_gen"]
    assert [r["doc"]["options"] for r in official] == [released[r["doc"]["id"]]
                                                       for r in official]  # fmt: skip
    prompt = official[0]["arguments"]["gen_args_0"]["arg_0"]
    assert prompt.endswith("Answer with the text of the correct choice.")
    answers = {r["id"]: r["answer"] for r in mmau_rows()}
    expected = np.mean([
        mmau_string_match(answers[r["doc"]["id"]], r["filtered_resps"][0], r["doc"]["choices"])
        for r in official
    ])  # fmt: skip
    assert results["results"]["mmau_music_gen"]["acc,none"] == expected
    unread = [mmau_official_answer(r["filtered_resps"][0], r["doc"]["options"]).letter is None
              for r in official]  # fmt: skip
    assert results["results"]["mmau_music_gen"]["parse_failure,none"] == np.mean(unread)
    in_order = sorted(samples["mmau_music"], key=lambda r: r["doc"]["release_position"])
    assert [r["doc"]["gold_letter"] for r in in_order] == list("ABBCBDCCABBA")
    # the predictions file the authors score: their rule on it gives the run's acc
    items = json.loads(predictions_file(out, "mmau_music_gen").read_text())
    assert [i["id"] for i in items] == [r["id"] for r in mmau_rows()[:12]]
    assert {k for k in items[0] if k != "model_output"} == set(mmau_rows()[0])
    outputs = {r["doc"]["id"]: r["filtered_resps"][0] for r in official}
    assert [i["model_output"] for i in items] == [outputs[i["id"]] for i in items]
    assert np.mean([official_rule(i["answer"], i["model_output"], i["choices"])
                    for i in items]) == expected  # fmt: skip
    check_report(tmp_path, shuffled=letters)


def check_report(tmp_path: Path, shuffled: list[dict]) -> None:
    """``report`` on both runs: the MMAU sections with the always-letter baselines of each
    option order and the sub-category and difficulty tables."""
    report_dir = tmp_path / "report"
    run_cli(["report", str(tmp_path / "rul"), str(tmp_path / "official"), "--out",
             str(report_dir), "--n-resamples", "99"])  # fmt: skip
    report = json.loads((report_dir / "report.json").read_text())
    section = report["benchmarks"]["mmau_music"]
    baselines = section["always_letter"]
    # the JSON's order: A B B C B D C C A B B A, the last item's answer also at D
    assert baselines["official"]["letters"] == pytest.approx(
        {"A": 3 / 12, "B": 5 / 12, "C": 3 / 12, "D": 2 / 12}
    )
    assert baselines["official"]["best"] == "B"
    seeded = {x: np.mean([r["doc"]["options"][ord(x) - 65] == r["doc"]["answer"]
                          for r in shuffled]) for x in "ABCD"}  # fmt: skip
    assert baselines["rul"]["letters"] == pytest.approx(seeded)
    tables = section["label_breakdowns"]
    assert set(tables) == {"sub_category", "difficulty"}
    assert {label: cells[next(iter(cells))]["n_questions"]
            for label, cells in tables["difficulty"].items()} == {"easy": 4, "hard": 3,
                                                                  "medium": 5}  # fmt: skip
    assert tables["sub_category"]["Temporal Reasoning"]
    markdown = (report_dir / "report.md").read_text()
    assert "## MMAU-music\n" in markdown and "## MMAU-music (generation)" in markdown
    assert "| official | 0.250 | 0.417 | 0.250 | 0.167 | 0.250 | 12 |" in markdown
    assert "| sub-category |" in markdown and "| difficulty |" in markdown


def test_a_test_split_run_writes_the_leaderboard_file(tiny_lm, tmp_path):
    """No answers: one line at the start says so, no metric is computed (no NaN), every item
    gets its model_output (here a letter run's chosen choice) in the release's fields,
    answer-less, and ``report`` lists the run as predictions only, pointing to the file."""
    data = write_mmau_json(tmp_path / "mmau-test.json", mmau_rows(answers=False))
    out = tmp_path / "out"
    metadata = {"mmau_data_path": str(data), "mmau_split": "test", "mmau_subset": "all"}
    args = hf_args(tiny_lm, out, "mmau_music", metadata)
    args.remove("--log_samples")  # the file is written without it
    done = run_cli(args)
    assert (f"{data} has no answers (MMAU's test split, or a file without 'answer'): this run "
            "writes predictions only (14 items") in done.stderr  # fmt: skip
    results, samples = read_output(out)
    assert samples == {}
    row = results["results"]["mmau_music"]
    assert not [key for key in row if key.split(",")[0] in ("acc", "perceptual_index")]
    predictions = predictions_file(out, "mmau_music")
    items = json.loads(predictions.read_text())
    released = mmau_rows(answers=False)
    assert [i["id"] for i in items] == [r["id"] for r in released]
    assert all(i["model_output"] in i["choices"] and "answer" not in i for i in items)
    assert [{k: v for k, v in i.items() if k != "model_output"} for i in items] == released
    report_dir = tmp_path / "report"
    run_cli(["report", str(out), "--out", str(report_dir), "--n-resamples", "99"])
    report = json.loads((report_dir / "report.json").read_text())
    assert report["benchmarks"] == {}
    assert [(p["task"], p["n"], p["predictions_file"]) for p in report["predictions_only"]] == [
        ("mmau_music", 14, str(predictions))
    ]
    markdown = (report_dir / "report.md").read_text()
    assert "## Predictions only" in markdown and f"`{predictions}`" in markdown
    assert "nan" not in markdown.lower()


def test_lmms_protocol_prompt_and_subsets(mmau_dir):
    data = str(mmau_dir / "mmau.json")
    docs = load_mmau(mmau_data_path=data, protocol="lmms")["test"]
    doc = next(d for d in docs if d["id"] == mmau_rows()[1]["id"])  # the file's second item
    expected = ("How would you describe the tempo?\nA. Very slow\nB. Moderate\nC. Fast\n"
                "D. Rubato" + LMMS_POST_PROMPT)  # fmt: skip
    assert doc_to_text_gen(doc) == expected == doc_to_text(doc)
    assert doc["parser"] == "mmau_lmms"
    sound = load_mmau(mmau_data_path=data, mmau_subset="sound")["test"]
    in_file_order = sorted(sound, key=lambda d: d["release_position"])
    assert [len(d["options"]) for d in in_file_order] == [4, 2]
    assert len(load_mmau(mmau_data_path=data, mmau_subset="all")["test"]) == 14


def test_lalm_hears_the_clips_and_noise_changes_the_letters(tiny_audio_lm, mmau_dir, tmp_path):
    metadata = json.dumps({"mmau_data_path": str(mmau_dir / "mmau.json"),
                           "audio_dir": str(mmau_dir / "archive")})  # fmt: skip
    logliks = {}
    for condition in ("original", "noise"):
        out = tmp_path / condition
        args = [
            *("run", "--model", "lalm", "--tasks", "mmau_music", "--metadata", metadata),
            *("--model_args", f"pretrained={tiny_audio_lm},audio={condition},noise_seconds=1"),
            *("--device", "cpu", "--limit", "3", "--output_path", str(out), "--log_samples"),
        ]
        run_cli(args)
        _, samples = read_output(out)
        rows = samples["mmau_music"]
        assert len(rows) == 3
        logliks[condition] = [[float(r[0]) for r in row["filtered_resps"]] for row in rows]
    assert not np.allclose(logliks["original"], logliks["noise"])


def test_bad_input_is_one_line_before_the_model(tiny_lm, tiny_audio_lm, mmau_dir, tmp_path,
                                                capsys):  # fmt: skip
    rows = mmau_rows()
    rows[4]["answer"] = "Serene"
    bad = write_mmau_json(tmp_path / "bad.json", rows)
    line = cli_error_line(hf_args(tiny_lm, tmp_path / "o", "mmau_music",
                                  {"mmau_data_path": str(bad)}), capsys)  # fmt: skip
    assert f"item {rows[4]['id']!r}: answer 'Serene' is not one of its choices" in line
    line = cli_error_line(hf_args(tiny_lm, tmp_path / "o", "mmau_music",
                                  {"mmau_data_path": str(bad), "protocol": "mmau"}),
                          capsys)  # fmt: skip
    assert "protocol='mmau'" in line and "rul, official, lmms" in line
    archive = tmp_path / "archive"
    shutil.copytree(mmau_dir / "archive", archive)
    missing = mmau_rows()[2]["id"]
    (archive / "test-mini-audios" / f"{missing}.wav").unlink()
    metadata = json.dumps({"mmau_data_path": str(mmau_dir / "mmau.json"),
                           "audio_dir": str(archive)})  # fmt: skip
    args = ["run", "--model", "lalm", "--model_args", f"pretrained={tiny_audio_lm}",
            "--tasks", "mmau_music", "--metadata", metadata, "--device", "cpu"]  # fmt: skip
    from lm_eval_rul.cli import main

    with pytest.raises(SystemExit) as exited:  # the missing-audio message lists the paths
        main(args)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert f"MissingAudioError: No audio for 1 of 12 items: ids {missing}." in err
    assert f"test-mini-audios/{missing}.wav" in err  # the release's layout was tried


def test_random_condition_plays_another_items_clip(mmau_dir):
    """``audio=random``: each item hears another MMAU item's clip, the same one every run."""
    from lm_eval_rul.audio import random_clip

    docs = list(load_mmau(mmau_data_path=str(mmau_dir / "mmau.json"),
                          audio_dir=str(mmau_dir / "archive"))["test"])  # fmt: skip
    own = {d["audio_ref"] for d in docs}
    assert len(own) == 12 and all("test-mini-audios" in ref for ref in own)
    drawn = [random_clip(d, 5) for d in docs]
    assert all(ref in own and ref != d["audio_ref"] for ref, d in zip(drawn, docs, strict=True))
    assert drawn == [random_clip(d, 5) for d in docs] and drawn != [random_clip(d, 6) for d in docs]


@pytest.mark.parametrize("protocol", ["rul", "official", "lmms"])
@pytest.mark.parametrize("task", ["mmau_music", "mmau_music_gen"])
def test_an_mmau_item_with_more_choices_than_letters_is_one_line_under_every_protocol(
    protocol, task, tiny_lm, tmp_path, capsys, constructions
):
    from lm_eval_rul.testing.harness import cli_error_line
    from lm_eval_rul.testing.mmau import mmau_rows, write_mmau_json

    rows = mmau_rows()
    rows[3]["choices"] = [f"choice {k}" for k in range(30)]
    rows[3]["answer"] = "choice 7"
    data = write_mmau_json(tmp_path / "mmau.json", rows)
    line = cli_error_line(
        ["run", "--model", "hf", "--model_args", f"pretrained={tiny_lm}", "--device", "cpu",
         "--tasks", task, "--output_path", tmp_path / "out",
         "--metadata",
         json.dumps({"mmau_data_path": str(data), "protocol": protocol})],  # fmt: skip
        capsys,
    )
    assert f"item {rows[3]['id']!r}: 30 choices, more than the 26 option letters" in line
    assert "ValueError" not in line and constructions == []


def test_task_manager_reads_the_mmau_file_it_is_given(tmp_path):
    import lm_eval_rul
    from lm_eval_rul.data_keys import data_keys
    from lm_eval_rul.questions import DataValidationError
    from lm_eval_rul.testing.mmau import mmau_rows, write_mmau_json

    assert {"mmau_data_path", "rul_mmau_data_path"} <= set(data_keys()["mmau"])
    rows = mmau_rows()
    rows[0]["answer"] = "no such choice"
    bad = write_mmau_json(tmp_path / "mmau.json", rows)
    with pytest.raises(DataValidationError, match=f"item {rows[0]['id']!r}: answer"):
        lm_eval_rul.task_manager(include_defaults=False, mmau_data_path=str(bad))


def test_mmau_json_given_to_rul_muchomusic_is_one_line(tiny_lm, tmp_path, capsys, constructions):
    from lm_eval_rul.testing.mmau import write_mmau_json

    mmau = write_mmau_json(tmp_path / "mmau-test-mini.json")
    line = fail(
        ["run", "--model", "hf", "--model_args", f"pretrained={tiny_lm}", "--tasks",
         "rul_muchomusic", "--metadata", json.dumps({"rul_data_path": str(mmau)})],
        capsys,
    )  # fmt: skip
    assert "DataValidationError: 1 problem in" in line
    assert "the file is MMAU's released layout (" in line
    assert "not questions with 4 distractors each. The mmau_music tasks read it" in line
    assert "expected 4 distractors" not in line
    assert constructions == []
