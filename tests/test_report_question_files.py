"""Runs on different question files stay apart in the report and are never paired."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from lm_eval_rul.report import ReportSettings, build_report, load_runs, write_report
from lm_eval_rul.testing.harness import run_cli, text_run_args


@pytest.fixture(scope="module")
def logged(tiny_lm, data_dir, tmp_path_factory) -> Path:
    """A real text-only run of rul_muchomusic on the fixture's question file."""
    out = tmp_path_factory.mktemp("qfiles") / "release"
    run_cli(text_run_args(tiny_lm, data_dir, out, "rul_muchomusic", "--log_samples"))
    return out


def rerun_on(
    logged: Path,
    folder: Path,
    *,
    data_path: str | None = None,
    new_options: bool = False,
    stamp: str = "_20",
    **config,
) -> Path:
    """A copy of ``logged`` as if made on another question file: ``data_path`` recorded in
    each task's metadata, and (``new_options``) question 2's distractors rewritten, as a
    freshly built file with the same ids has; ``config`` updates the results' config."""
    (original,) = logged.rglob("results_*.json")
    shutil.copytree(original.parent, folder)
    results = json.loads(original.read_text())
    results["config"].update(config)
    for task_config in results["configs"].values():
        if data_path is not None:
            task_config["metadata"]["rul_data_path"] = data_path
    (folder / original.name).write_text(json.dumps(results))
    for path in folder.glob("samples_*.jsonl"):
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        for row in rows:
            doc = row["doc"]
            if new_options and str(doc["id"]) == "2":
                doc["options"] = [
                    o if o == doc["correct_answer"] else f"{o} (rebuilt)" for o in doc["options"]
                ]
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    for path in list(folder.iterdir()):  # a later run: a later timestamp in the names
        path.rename(path.with_name(path.name.replace("_20", stamp, 1)))
    return folder


def test_runs_on_another_question_file_stay_apart_and_name_it(logged, tmp_path):
    built = rerun_on(logged, tmp_path / "built", data_path="/x/rul_built.json", stamp="_30")
    runs = load_runs([logged, built])
    assert len(runs) == 2, "a run on another file must not replace the release run's tasks"
    assert [r.setting for r in runs] == [
        "text, questions=rul.json",
        "text, questions=rul_built.json",
    ]
    assert runs[1].question_file("rul_muchomusic") == "/x/rul_built.json"
    assert not any("newer" in note for run in runs for note in run.notes)
    report = build_report(runs, ReportSettings(n_resamples=50))
    (note,) = [n for n in report["notes"] if "different question files" in n]
    assert "/x/rul_built.json" in note and "rul.json" in note
    # the same file twice still merges (newest wins), as before
    again = rerun_on(logged, tmp_path / "again", stamp="_30")
    (run,) = load_runs([logged, again])
    assert run.setting == "text" and len(run.results_files) == 2


def audio_run(logged: Path, folder: Path, condition: str, **changes) -> Path:
    return rerun_on(logged, folder, model="lalm", audio_condition=condition, **changes)


def test_paired_comparisons_are_refused_across_question_files(logged, tmp_path):
    original = audio_run(logged, tmp_path / "o", "original")
    noise = audio_run(logged, tmp_path / "n", "noise", data_path="/x/rul_built.json")
    settings = ReportSettings(n_resamples=50)
    report = build_report(load_runs([original, noise]), settings)
    assert report["benchmarks"]["rul_muchomusic"]["perception_gain"] == []
    (note,) = [n for n in report["notes"] if "not compared" in n]
    assert "different question files" in note and "rul_built.json" in note
    markdown = write_report(report, tmp_path / "report")["markdown"].read_text()
    assert "not compared" in markdown
    # on the same file the pair is compared
    same = audio_run(logged, tmp_path / "s", "noise")
    report = build_report(load_runs([original, same]), settings)
    assert len(report["benchmarks"]["rul_muchomusic"]["perception_gain"]) == 1


def test_a_file_rebuilt_under_the_same_name_is_told_apart_by_content(logged, tmp_path):
    original = audio_run(logged, tmp_path / "o", "original")
    rebuilt = audio_run(logged, tmp_path / "r", "noise", new_options=True)
    runs = load_runs([original, rebuilt])
    report = build_report(runs, ReportSettings(n_resamples=50))
    assert report["benchmarks"]["rul_muchomusic"]["perception_gain"] == []
    (note,) = [n for n in report["notes"] if "not compared" in n]
    assert "differ in text or options under the same id (e.g. question 2)" in note
    # two text-only files of one model with rebuilt content do not merge either
    text_rebuilt = rerun_on(logged, tmp_path / "t", new_options=True, stamp="_30")
    runs = load_runs([logged, text_rebuilt])
    assert len(runs) == 2 and runs[0].label != runs[1].label
    assert all(r.setting.startswith("text, questions=rul.json#") for r in runs)
