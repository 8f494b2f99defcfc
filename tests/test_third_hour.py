"""The traps of issue 38 (the third first hour), on both harness releases: each one line
before the model loads, or a run that works (``HFLM.__init__`` is counted)."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pytest

from lm_eval_rul.testing.harness import cli_error_line as fail
from lm_eval_rul.testing.harness import read_output, text_run_args


def test_misspelt_task_is_one_line_on_either_harness(
    tiny_lm, data_dir, tmp_path, capsys, constructions
):
    # lm-eval 0.5's match_tasks keeps an unmatched name; its loader raised a KeyError
    args = text_run_args(tiny_lm, data_dir, tmp_path / "out", "rul_muchomusc,muchomusic")
    line = fail(args, capsys)
    assert "UnknownTaskError: unknown task 'rul_muchomusc' (closest: rul_muchomusic" in line
    assert constructions == []


def test_task_name_wins_over_a_folder_of_that_name(
    tiny_lm, data_dir, tmp_path, monkeypatch, caplog, constructions
):
    from lm_eval_rul.cli import main

    (tmp_path / "muchomusic").mkdir()  # e.g. the clips folder
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    with caplog.at_level(logging.WARNING, logger="lm_eval_rul"):
        main(text_run_args(tiny_lm, data_dir, out, "muchomusic", "--limit", "2"))
    results, _ = read_output(out)
    assert results["results"]["muchomusic"]["acc,none"] >= 0
    assert constructions == ["HFLM"]
    warned = [r.getMessage() for r in caplog.records if "folder named" in r.getMessage()]
    assert warned == [
        "--tasks muchomusic: a folder named 'muchomusic' is in the current directory; running "
        "the task muchomusic, not the folder's YAML files (for those, give --tasks "
        "'muchomusic/*.yaml')"
    ]


def test_our_tasks_load_without_the_harness_warnings(data_dir, caplog):
    """What plain ``lm_eval`` and ``run`` do on either release: no "Metric 'perceptual_index'
    not found in registry" (0.5 looks every metric up) and no "Custom kwargs" per task."""
    from lm_eval.api.registry import metric_registry
    from lm_eval.tasks import TaskManager

    from lm_eval_rul.registration import tasks_dir

    manager = TaskManager(
        include_path=[str(tasks_dir())],
        include_defaults=False,
        metadata={
            "rul_data_path": str(data_dir / "rul.json"),
            "muchomusic_data_path": str(data_dir / "muchomusic.csv"),
        },
    )
    with caplog.at_level(logging.WARNING):
        loaded = manager.load(["rul_muchomusic_fold0", "muchomusic"])
        assert all(len(task.eval_docs) == 8 for task in loaded["tasks"].values())  # 0.5: lazy
    messages = [r.getMessage() for r in caplog.records]
    assert not [m for m in messages if "not found in registry" in m or "Custom kwargs" in m]
    assert "perceptual_index" in metric_registry  # registered, not a placeholder


def test_perceptual_index_metric_is_the_plugins_formula():
    from lm_eval_rul.mcqa.harness_metric import perceptual_index_metric

    class LLResults:  # lm-eval 0.5's shape: the choices' log-likelihoods in ``lls``
        lls = [0.0, 0.0, 0.0, 0.0]

    assert perceptual_index_metric(2, LLResults()) == 0.75
    assert perceptual_index_metric(0, [0.0, -1e9]) < 1e-12


def _crossed_count_labels(fig) -> list[str]:
    """Each ``n=`` label that a line (whisker, cap, chance line) or a bar crosses."""
    from matplotlib.collections import LineCollection
    from matplotlib.lines import Line2D
    from matplotlib.patches import Rectangle

    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    crossed = []
    for text in fig.findobj(lambda a: hasattr(a, "get_text") and "n=" in a.get_text()):
        box = text.get_window_extent(renderer)
        for ax in fig.axes:
            paths = [line.get_transform().transform_path(line.get_path())
                     for line in ax.findobj(Line2D) if line.get_visible()]  # fmt: skip
            for lines in ax.findobj(LineCollection):
                paths += [lines.get_transform().transform_path(p) for p in lines.get_paths()]
            hit = any(p.intersects_bbox(box, filled=False) for p in paths if len(p.vertices))
            hit = hit or any(
                bar.get_window_extent(renderer).overlaps(box) for bar in ax.findobj(Rectangle)
                if bar is not ax.patch and bar.get_visible()
            )  # fmt: skip
            if hit:
                crossed.append(text.get_text())
    return crossed


def test_partial_run_counts_are_written_where_nothing_crosses_them(tmp_path, monkeypatch):
    from matplotlib.figure import Figure

    from lm_eval_rul.report import plots

    saved = []
    original = Figure.savefig

    def savefig(self, *args, **kwargs):
        saved.append(_crossed_count_labels(self))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", savefig)
    for groups in (["Qwen2-Audio-7B"] * 3, None):  # the report's grouped bars, and plain ones
        plots.accuracy_bars(
            tmp_path / "accuracy_rul_muchomusic.png",
            ["text", "original", "noise"],
            [0.375, 0.5, 0.25],
            [0.1, 0.2, 0.05],
            [0.7, 0.8, 0.6],
            groups=groups,
            chance=0.25,
            counts=["8 of 1,187", "8 of 1,187", "8 of 1,187"],
        )
    assert saved == [[], []]


@pytest.fixture(scope="module")
def same_named_runs(tiny_lm, data_dir, tmp_path_factory) -> dict[str, Path]:
    """Text runs of three checkpoints all named ``checkpoint-1000``: ``/…/a/checkpoint-1000``,
    ``/…/b/checkpoint-1000`` and ``../a/checkpoint-1000`` (a relative path)."""
    from lm_eval_rul.cli import main

    root = tmp_path_factory.mktemp("same_named")
    checkpoint = root / "a" / "checkpoint-1000"
    shutil.copytree(tiny_lm, checkpoint)
    main([*text_run_args(checkpoint, data_dir, root / "runs_a", "muchomusic"), "--log_samples"])
    folders = {"a": root / "runs_a"}
    for name, given in (
        ("b", str(root / "b" / "checkpoint-1000")),
        ("rel", "../a/checkpoint-1000"),
    ):
        folders[name] = root / f"runs_{name}"
        shutil.copytree(folders["a"], folders[name])
        for results in folders[name].rglob("results_*.json"):
            results.write_text(results.read_text().replace(str(checkpoint), given))
    return folders


def test_report_names_same_named_checkpoints_apart(same_named_runs, tmp_path):
    from lm_eval_rul.report.runs import load_runs

    runs = load_runs(list(same_named_runs.values()))
    names = {run.model for run in runs}
    root = same_named_runs["a"].parent
    assert names == {"../a/checkpoint-1000", f"{root.name}/a/checkpoint-1000", "b/checkpoint-1000"}


def test_ambiguous_text_backbone_is_one_line_listing_the_candidates(same_named_runs, capsys):
    folders = [str(f) for f in same_named_runs.values()]
    out = same_named_runs["a"].parent / "report"
    line = fail(["report", *folders, "--out", out, "--text-backbone", "checkpoint-1000"], capsys)
    assert "AmbiguousModelError: --text-backbone 'checkpoint-1000' matches 3 models: " in line
    assert "b/checkpoint-1000 (" in line and "../a/checkpoint-1000 (../a/checkpoint-1000)" in line
    from lm_eval_rul.cli import main

    main(["report", *folders, "--out", str(out), "--text-backbone", "b/checkpoint-1000"])
    report = json.loads((out / "report.json").read_text())
    assert report["settings"]["text_backbone"].startswith("b/checkpoint-1000")


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


def test_build_writing_no_question_fails_in_one_line_and_leaves_no_lock(tiny_lm, tmp_path, capsys):
    from lm_eval_rul.testing.fixtures import fixture_rows

    rows = fixture_rows(5)
    for row in rows.values():  # pools of 5 candidates that clean down to one
        answer = row["correct_answer"]
        row["distractors"] = [answer, answer.upper(), "a", "a.", "A"]
    pools = tmp_path / "pools.json"
    pools.write_text(json.dumps(rows))
    out = tmp_path / "out" / "rul.json"
    line = fail(
        ["build", "--pools", pools, "--model", "hf", "--model_args",
         f"pretrained={tiny_lm},dtype=float32", "--device", "cpu", "--output", out,
         "--no_progress"],
        capsys,
    )  # fmt: skip
    assert f"NothingBuiltError: wrote 0 of 5 questions to {out}: all failed (e.g. question" in line
    assert "1 clean candidate(s), 4 needed" in line and "out/rul.report.md" in line
    assert not list(tmp_path.rglob("*.lock"))


def test_a_text_file_named_mp3_is_said_to_be_no_audio(tmp_path, capfd):
    from lm_eval_rul.audio.decoding import decode_audio
    from lm_eval_rul.audio.errors import AudioDecodeError
    from lm_eval_rul.audio.preflight import clip_header_problem

    fake = tmp_path / "7.mp3"
    fake.write_text("<!DOCTYPE html>\n<html><body>404 Not Found</body></html>\n")
    ref = json.dumps({"kind": "file", "path": str(fake)})
    assert clip_header_problem(ref) == (
        "is a text file, not audio (it starts '<!DOCTYPE html>'); replace it with the clip"
    )
    with pytest.raises(AudioDecodeError, match=r"7\.mp3: is a text file, not audio") as raised:
        decode_audio(str(fake), sampling_rate=16_000, name=str(fake))
    assert "ffmpeg" not in str(raised.value)
    printed = capfd.readouterr()
    assert "Note:" not in printed.err + printed.out  # no decoder ran (libmpg123's lines)


def test_limit_one_is_one_document_and_the_run_says_how_many(
    tiny_lm, data_dir, tmp_path, caplog, capsys
):
    from lm_eval_rul.cli import main

    with pytest.raises(SystemExit):
        main(["run", "--help"])
    assert "1 and 1.0 are counts: ONE document per task" in " ".join(
        capsys.readouterr().out.split()
    )
    out = tmp_path / "out"
    limits = logging.getLogger("lm_eval_rul.cli.limits")  # its own handler: the CLI's
    with caplog.at_level(logging.INFO, logger=limits.name):  # loggers do not propagate
        limits.addHandler(caplog.handler)
        try:
            main(text_run_args(tiny_lm, data_dir, out, "rul_muchomusic", "--limit", "1.0",
                               "--log_samples"))  # fmt: skip
        finally:
            limits.removeHandler(caplog.handler)
    records = {id(r): r for r in caplog.records if r.name == limits.name}  # one per record:
    said = [r.getMessage() for r in records.values()]  # the root's handler may see it too
    assert said == [
        "--limit 1 runs 1 of 8 documents in each of 4 tasks; a --limit of 1 or more counts "
        "documents per task (1.0 is one document), below 1 is a fraction"
    ]
    results, samples = read_output(out)
    assert {len(rows) for rows in samples.values()} == {1}
