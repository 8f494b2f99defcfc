"""Reading the harness's own output folders: real `lm-eval-rul run` outputs of a tiny LM."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from lm_eval_rul.report import RunReadError, load_runs, read_pi_file
from lm_eval_rul.report.runs import benchmark_of
from lm_eval_rul.testing.fixtures import fixture_rows
from lm_eval_rul.testing.harness import run_cli, text_run_args


def harness(model: Path, data_dir: Path, out: Path, tasks: str, *extra: str) -> None:
    run_cli(text_run_args(model, data_dir, out, tasks, *extra))


@pytest.fixture(scope="module")
def outputs(tiny_lm, data_dir, tmp_path_factory):
    """A run with --log_samples (MC + a generation task), and the same folder as a run
    without --log_samples leaves it (the results JSON alone)."""
    root = tmp_path_factory.mktemp("runs")
    harness(
        tiny_lm,
        data_dir,
        root / "logged",
        "rul_muchomusic,muchomusic,muchomusic_gen",
        "--log_samples",
        "--gen_kwargs",
        "max_gen_toks=8",
    )
    shutil.copytree(root / "logged", root / "unlogged")
    for path in (root / "unlogged").rglob("samples_*.jsonl"):
        path.unlink()
    return root


def results_json(folder: Path) -> dict:
    (path,) = folder.rglob("results_*.json")
    return json.loads(path.read_text())


def logged(folder: Path, task: str) -> list[dict]:
    (path,) = [
        p for p in folder.rglob(f"samples_{task}_*.jsonl") if p.name[8 + len(task) + 1].isdigit()
    ]
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_identifies_model_condition_tasks_and_folds(outputs, tiny_lm):
    (run,) = load_runs([outputs / "logged"])
    assert (run.model, run.pretrained, run.model_type) == (tiny_lm.name, str(tiny_lm), "hf")
    assert run.condition == "text" and run.is_text and run.label == f"{tiny_lm.name} [text]"
    assert run.benchmarks() == ["muchomusic", "muchomusic_gen", "rul_muchomusic"]
    folds = run.tasks_of("rul_muchomusic")
    assert [t.fold for t in folds] == [0, 1, 2, 3]
    assert {t.task for t in folds} == {f"rul_muchomusic_fold{k}" for k in range(4)}
    assert run.tasks["muchomusic_gen"].is_generation
    assert not run.tasks["muchomusic"].is_generation
    assert run.group_metrics["rul_muchomusic"]["acc"] == pytest.approx(
        np.mean([s.correct for s in run.samples_of("rul_muchomusic")])
    )


def test_metrics_and_samples_match_what_the_harness_wrote(outputs):
    (run,) = load_runs([outputs / "logged"])
    printed = results_json(outputs / "logged")["results"]
    rows = fixture_rows(8)
    for name, task in run.tasks.items():
        assert task.metrics["acc"] == printed[name]["acc,none"]
        assert task.n == 8
        raw = logged(outputs / "logged", name)
        by_id = {str(r["doc"]["id"]): r for r in raw}
        for sample in task.samples:
            row = by_id[sample.id]
            assert sample.correct == row["acc"]
            assert sample.fold == row["doc"]["fold"]
            assert sample.correct_answer == rows[sample.id]["correct_answer"]
            if task.is_generation:
                assert sample.parse_failure == row["parse_failure"] and sample.pi is None
            else:
                logliks = [float(r[0]) for r in row["filtered_resps"]]
                assert sample.answer == row["doc"]["options"][int(np.argmax(logliks))]
                assert sample.pi == pytest.approx(row["perceptual_index"])
    keys = [s.key for s in run.samples_of("rul_muchomusic")]
    assert len(keys) == len(set(keys)) == 32
    assert {s.fold for s in run.samples_of("muchomusic")} == {-1}
    assert {s.source_pi for s in run.samples_of("rul_muchomusic")} == {
        row["PI"] for row in rows.values()
    }


def test_missing_samples_say_rerun_with_log_samples(outputs):
    with pytest.raises(RunReadError, match=r"task '\w+' has no logged samples.*--log_samples"):
        load_runs([outputs / "unlogged"])


def test_folders_without_results_are_named(tmp_path):
    with pytest.raises(RunReadError, match="does not exist"):
        load_runs([tmp_path / "nowhere"])
    with pytest.raises(RunReadError, match=r"no results_\*\.json under .*--output_path"):
        load_runs([tmp_path])


def test_data_files_given_as_runs_say_what_they_are_and_where_they_go(outputs, data_dir, tmp_path):
    cases = {
        data_dir / "rul.json": r"is a question file \(8 questions, 4 distractors each.*not harness "
        r"output; a question file is evaluated first: lm-eval-rul run .*data_path",
        data_dir / "pools.json": r"is a distractor pools file .*lm-eval-rul build --pools",
        data_dir / "muchomusic.csv": r"is MuChoMusic's CSV",
    }
    for path, message in cases.items():
        with pytest.raises(RunReadError, match=message):
            load_runs([path])
    pi_dir = tmp_path / "pi_out"
    pi_dir.mkdir()
    (pi_dir / "pi.jsonl").write_text('{"id": "2", "pi": 0.5, "chance": 0.75}\n')
    message = r"it holds pi\.jsonl, PI rows .*\(1 question\).* as --pi NAME=\S+pi\.jsonl"
    with pytest.raises(RunReadError, match=message):
        load_runs([pi_dir])
    stopped = tmp_path / "stopped"  # samples logged, results never written
    shutil.copytree(outputs / "logged", stopped)
    for path in stopped.rglob("results_*.json"):
        path.unlink()
    with pytest.raises(RunReadError, match=r"holds samples_\*\.jsonl: .* this run stopped early"):
        load_runs([stopped])


def test_duplicate_tasks_keep_the_newer_file_and_say_so(outputs, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(outputs / "logged", copy)
    for path in copy.rglob("*_20*"):
        path.rename(path.with_name(path.name.replace("_20", "_30", 1)))
    (run,) = load_runs([outputs / "logged", copy, outputs / "logged"])
    assert len(run.results_files) == 2
    assert all(t.results_file.is_relative_to(copy) for t in run.tasks.values())
    (note,) = run.notes  # one note for the repeated file, not one per task or fold
    assert f"repeats {len(run.tasks)} task(s) of " in note and "the newer" in note


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ({"model_args": {"audio": "noise"}}, "noise"),
        ({"model_args": {"audio": None}}, "none"),  # lm-eval parses audio=none to None
        ({"model_args": {}}, "original"),  # lalm's default
        ({"model_args": {}, "audio_condition": "random"}, "random"),  # written by lalm
        ({"model_args": {"audio": None}, "audio_condition": "none"}, "none"),
    ],
)
def test_audio_condition_of_lalm_runs(outputs, tmp_path, config, expected):
    (original,) = (outputs / "logged").rglob("results_*.json")
    shutil.copytree(original.parent, tmp_path / "run")
    edited = json.loads(original.read_text())
    edited["config"].update(model="lalm", **config)
    (tmp_path / "run" / original.name).write_text(json.dumps(edited))
    (run,) = load_runs([tmp_path / "run"])
    assert run.condition == expected and not run.is_text


def test_benchmark_of_task_names():
    assert benchmark_of("rul_muchomusic_fold2") == ("rul_muchomusic", 2)
    assert benchmark_of("rul_muchomusic_gen_fold0") == ("rul_muchomusic_gen", 0)
    assert benchmark_of("muchomusic_gen") == ("muchomusic_gen", None)


def test_pi_file_reads_rows_and_names_bad_lines(tmp_path):
    good = tmp_path / "pi.jsonl"
    good.write_text('{"id": "2", "pi": 0.9, "p_correct": 0.1}\n\n{"id": 5, "pi": 0.25}\n')
    assert read_pi_file(good).pi == {"2": 0.9, "5": 0.25}
    assert read_pi_file(good).chance == {}  # rows without chance or options
    cases = {
        '{"id": "2", "pi": 0.5, "chance": 1.0}\n': r"chance of id 2 is 1\.0, not in \[0, 1\)",
        '{"id": "2", "pi": 0.5, "chance": "x"}\n': r"chance of id 2 is 'x'",
        '{"id": "2"}\n': r"bad\.jsonl:1: expected a row",
        '{"id": "2", "pi": 0.5}\n{"id": "2", "pi": 0.4}\n': r":2: id 2 appears twice",
        '{"id": "2", "pi": 1.5}\n': r"outside \[0, 1\]",
        '{"id": "2", "pi": "high"}\n': "not a number",
        "not json\n": r":1: not JSON",
        "\n": "has no rows",
    }
    bad = tmp_path / "bad.jsonl"
    for text, message in cases.items():
        bad.write_text(text)
        with pytest.raises(RunReadError, match=message):
            read_pi_file(bad)
    with pytest.raises(RunReadError, match="does not exist"):
        read_pi_file(tmp_path / "missing.jsonl")


def test_pi_file_reads_each_questions_chance_level(tmp_path):
    path = tmp_path / "pi.jsonl"
    rows = [
        {"id": "2", "pi": 0.7, "chance": 0.75},  # written by lm-eval-rul pi
        {"id": "5", "pi": 0.6, "prompts": [{"options": ["a", "b", "c"]}] * 2},  # 3 options
        {"id": "8", "pi": 0.1, "options": ["a", "b", "c", "d", "e"]},
        {"id": "9", "pi": 0.2},  # unknown: left out, never guessed
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    pi_file = read_pi_file(path)
    assert pi_file.path == str(path) and pi_file.pi == {"2": 0.7, "5": 0.6, "8": 0.1, "9": 0.2}
    assert pi_file.chance == pytest.approx({"2": 0.75, "5": 2 / 3, "8": 0.8})


def lalm_copy(outputs: Path, folder: Path, **config) -> Path:
    """The logged text run, relabelled as a `lalm` run with ``config`` in its results."""
    (original,) = (outputs / "logged").rglob("results_*.json")
    shutil.copytree(original.parent, folder)
    edited = json.loads(original.read_text())
    edited["config"].update(model="lalm", **config)
    (folder / original.name).write_text(json.dumps(edited))
    return folder


def test_runs_with_other_seed_or_noise_stay_apart_and_are_labelled(outputs, tmp_path):
    noise = {"audio_condition": "noise", "audio_sampling_rate": 16000, "audio_family": "x"}
    base = {"audio_seed": 0, "audio_noise_seconds": 10.0, "audio_noise_std": 1.0}
    folders = [
        lalm_copy(outputs, tmp_path / "a", **noise, **base, audio_max_seconds=30.0),
        lalm_copy(outputs, tmp_path / "b", **noise, **base, audio_max_seconds=30.0),
        lalm_copy(outputs, tmp_path / "c", **noise, **{**base, "audio_seed": 1}),
        lalm_copy(outputs, tmp_path / "d", **noise, **{**base, "audio_noise_std": 0.5}),
    ]
    runs = load_runs(folders)
    # a and b (same settings) merge; c and d differ in seed / noise_std and stay apart
    assert len(runs) == 3 and len(runs[0].results_files) == 2
    assert [r.label.split(" ", 1)[1] for r in runs] == [
        "[noise, seed=0, noise_std=1, max_audio_seconds=30]",
        "[noise, seed=1, noise_std=1, max_audio_seconds=None]",
        "[noise, seed=0, noise_std=0.5, max_audio_seconds=None]",
    ]
    assert runs[1].audio_settings == {
        "seed": 1,
        "noise_seconds": 10.0,
        "noise_std": 1.0,
        "max_audio_seconds": None,
    }
    # c's tasks are its own, not replaced by d's newer file
    assert all(t.results_file.is_relative_to(tmp_path / "c") for t in runs[1].tasks.values())
    from lm_eval_rul.report import ReportSettings, build_report, write_report

    report = build_report(runs, ReportSettings(n_resamples=50))
    rows = report["benchmarks"]["muchomusic"]["rows"]
    assert len({r["run"] for r in rows}) == 3
    assert {r["setting"] for r in rows} == {r.setting for r in runs}
    paths = write_report(report, tmp_path / "report")
    markdown = paths["markdown"].read_text()
    assert "| noise, seed=1, noise_std=1, max_audio_seconds=None |" in markdown
    # one audio model: its settings are the accuracy figure's bars, no conditions figure
    assert (tmp_path / "report" / "figures" / "accuracy_muchomusic.png").is_file()
    assert not (tmp_path / "report" / "figures" / "conditions_muchomusic.png").exists()


def test_audio_settings_fall_back_to_model_args_and_alone_keep_the_plain_label(outputs, tmp_path):
    args = {"pretrained": "m", "audio": "noise", "seed": "3", "noise_std": "2"}
    (run,) = load_runs([lalm_copy(outputs, tmp_path / "a", model_args=args)])
    assert run.audio_settings == {
        "seed": 3,
        "noise_seconds": None,
        "noise_std": 2.0,
        "max_audio_seconds": None,
    }
    assert run.label == "m [noise]"  # no other noise run of the model: nothing to tell apart
    args["seed"] = "three"
    with pytest.raises(RunReadError, match="seed='three' is not a number"):
        load_runs([lalm_copy(outputs, tmp_path / "b", model_args=args)])


def test_malformed_logged_samples_name_the_file_and_line(outputs, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(outputs / "logged", copy)
    (path,) = [p for p in copy.rglob("samples_muchomusic_2*.jsonl")]
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    rows[1]["acc"] = "yes"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(RunReadError, match=rf"{path.name}:2: .*malformed value"):
        load_runs([copy])
    rows[1]["acc"] = 1.0
    rows[1]["filtered_resps"] = rows[1]["filtered_resps"][:2]  # 2 log-likelihoods, 4 options
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(RunReadError, match=rf"{path.name}:2: cannot read the chosen.*2 responses"):
        load_runs([copy])


def test_generation_rows_report_the_printed_parse_failure_rate(outputs):
    from lm_eval_rul.report import ReportSettings, build_report

    report = build_report(load_runs([outputs / "logged"]), ReportSettings(n_resamples=99))
    (row,) = report["benchmarks"]["muchomusic_gen"]["rows"]
    printed = results_json(outputs / "logged")["results"]["muchomusic_gen"]
    assert row["output_type"] == "generate_until" and row["mean_pi"] is None
    assert row["parse_failure_rate"] == pytest.approx(printed["parse_failure,none"])
    assert row["accuracy"]["estimate"] == pytest.approx(printed["acc,none"])
    (mc_row,) = report["benchmarks"]["muchomusic"]["rows"]
    assert mc_row["parse_failure_rate"] is None
