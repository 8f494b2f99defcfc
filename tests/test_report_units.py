"""The report's figures and JSON as units: PNGs that open, clear errors, strict JSON."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from matplotlib.image import imread

from lm_eval_rul.errors import UserInputError
from lm_eval_rul.mcqa import voting
from lm_eval_rul.report import (
    ReportSettings,
    ReportSettingsError,
    Run,
    Sample,
    TaskResult,
    build_report,
    plots,
    read_pi_file,
    render_markdown,
    summary,
)
from lm_eval_rul.report.samples import majority_from_samples
from lm_eval_rul.report.writing import _finite


def opens(path) -> np.ndarray:
    image = imread(path)
    assert image.ndim == 3 and image.shape[0] > 100 and image.std() > 0.01
    return image


def test_each_figure_writes_a_png(tmp_path):
    opens(plots.accuracy_bars(tmp_path / "a.png", ["m"], [0.5], [0.4], [0.6], chance=0.25))
    opens(
        plots.condition_bars(
            tmp_path / "b" / "c.png",  # folders are created
            ["m1", "m2"],
            ["original", "noise"],
            {("m1", "original"): (0.6, 0.5, 0.7), ("m2", "noise"): (0.3, 0.2, 0.4)},
            chance=0.25,
        )
    )
    rng = np.random.default_rng(0)
    opens(plots.pi_histograms(tmp_path / "h.png", {"A": rng.random(50), "B": rng.random(7)}))
    opens(
        plots.pi_accuracy_scatter(
            tmp_path / "s.png",
            {"text-only": ([0.1, 0.5, 0.9], [1.0, 0.5, 0.0]), "one point": ([0.3], [0.2])},
            annotations={"text-only": "(r = -1.00)"},
        )
    )


def test_figures_refuse_empty_or_ragged_input(tmp_path):
    with pytest.raises(ValueError, match="one estimate, low and high per label"):
        plots.accuracy_bars(tmp_path / "a.png", ["m", "n"], [0.5], [0.4], [0.6])
    with pytest.raises(ValueError, match="non-empty distribution"):
        plots.pi_histograms(tmp_path / "h.png", {"A": []})
    with pytest.raises(ValueError, match="at least one model"):
        plots.condition_bars(tmp_path / "c.png", [], ["noise"], {})


def test_undefined_statistics_become_null_in_json():
    report = {"r": float("nan"), "rows": [{"p": np.float64("inf"), "ok": 0.5}], "n": 3}
    text = json.dumps(_finite(report), allow_nan=False)
    assert json.loads(text) == {"r": None, "rows": [{"p": None, "ok": 0.5}], "n": 3}


def test_settings_reject_an_unknown_resampling_unit():
    with pytest.raises(ValueError, match="by must be 'question' or 'track'"):
        ReportSettings(by="fold")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"by": "fold"}, "by must be 'question' or 'track'"),
        ({"confidence_level": 1.5}, r"--confidence 1\.5 is not a level in \(0, 1\)"),
        ({"n_resamples": 0}, "--n-resamples 0 must be a positive number"),
        ({"method": "jackknife"}, "--method 'jackknife' is not one of"),
    ],
)
def test_bad_settings_are_user_input_errors(options, message):
    with pytest.raises(ReportSettingsError, match=message) as caught:
        ReportSettings(**options)
    assert isinstance(caught.value, UserInputError)  # the CLI prints it and exits 2


def test_a_pi_name_given_twice_is_a_user_input_error(tmp_path):
    from lm_eval_rul.cli.report import _pi_files

    path = tmp_path / "pi.jsonl"
    path.write_text('{"id": "1", "pi": 0.5}\n')
    assert _pi_files([f"rul_muchomusic={path}"])["rul_muchomusic"].pi == {"1": 0.5}
    with pytest.raises(UserInputError, match="the name 'pi' is given twice"):
        _pi_files([str(path), f"pi={path}"])


# ---------------------------------------------------------------- runs built by hand


def sample(qid: str, fold: int, answer: str | None, n_options: int = 4, **extra) -> Sample:
    return Sample(
        id=qid,
        fold=fold,
        correct=float(answer == "right"),
        correct_answer="right",
        answer=answer,
        n_options=n_options,
        **extra,
    )


def make_run(benchmark: str, samples: list[Sample], condition: str = "text") -> Run:
    run = Run(model="m", pretrained="m", model_type="hf", condition=condition, model_args={})
    for fold in sorted({s.fold for s in samples}):
        task = f"{benchmark}_fold{fold}" if fold >= 0 else benchmark
        chosen = [s for s in samples if s.fold == fold]
        run.tasks[task] = TaskResult(
            task, benchmark, fold if fold >= 0 else None, "multiple_choice", {}, len(chosen),
            chosen, Path("s.jsonl"), Path("r.json"),
        )  # fmt: skip
    return run


def test_report_majority_is_the_scoring_majority(monkeypatch):
    answers = {  # question -> answers over 4 folds: right, tie (wrong), one vote vs unparsed
        "1": ["right", "right", "x", "y"],
        "2": ["right", "right", "x", "x"],
        "3": ["right", None, None, None],
        "4": ["x", "x", "right", None],
    }
    samples = [sample(q, k, a) for q, votes in answers.items() for k, a in enumerate(votes)]
    calls = []
    original = voting.majority_from_answers

    def spy(triples):
        calls.append(list(triples))
        return original(calls[-1])

    monkeypatch.setattr(summary, "majority_from_answers", spy)
    assert summary._majority(samples) == 0.5
    assert len(calls) == 1 and len(calls[0]) == 16  # one definition, called by the report
    # the same votes as logged generation samples give the harness's majority_acc
    options = ["right", "x", "y", "z"]
    folds = [
        [
            {
                "doc": {"id": q, "options": options, "letters": list("ABCD"),
                        "correct_answer": "right"},
                "filtered_resps": ["hmm" if v[k] is None else f"[[{'ABCD'[options.index(v[k])]}]]"],
            }
            for q, v in answers.items()
        ]
        for k in range(4)
    ]  # fmt: skip
    assert majority_from_samples(folds)["majority_acc"] == 0.5
    assert summary._majority([s for s in samples if s.fold == 0]) is None  # one fold: no vote


def test_share_above_chance_uses_each_questions_own_chance(tmp_path):
    # question 1 has 2 options (chance PI 0.5), questions 2-3 have 4 (chance PI 0.75)
    samples = [
        sample("1", -1, "right", n_options=2, pi=0.6),
        sample("2", -1, "x", pi=0.6),
        sample("3", -1, "x", pi=0.8),
    ]
    text_run = make_run("muchomusic", samples)
    built = build_report([text_run], ReportSettings(n_resamples=20))
    summary = built["pi_distributions"]["summary"]["MuChoMusic"]
    assert summary["share_above_chance"] == pytest.approx(2 / 3)  # 0.6 > 0.5 and 0.8 > 0.75
    assert summary["mean_chance"] == pytest.approx((0.5 + 0.75 + 0.75) / 3)
    # --pi files: the row's chance, else the options the runs logged, else left out (noted)
    path = tmp_path / "pi.jsonl"
    path.write_text(
        '{"id": "1", "pi": 0.6}\n{"id": "2", "pi": 0.6, "chance": 0.5}\n{"id": "9", "pi": 0.9}\n'
    )
    settings = ReportSettings(n_resamples=20, pi_files={"muchomusic": read_pi_file(path)})
    built = build_report([text_run], settings)
    summary = built["pi_distributions"]["summary"]["muchomusic"]
    assert (summary["n"], summary["n_without_chance"]) == (3, 1)
    assert summary["share_above_chance"] == 1.0  # 0.6 > 0.5 (docs) and 0.6 > 0.5 (row)
    assert any("1 of 3 questions have no chance level" in n for n in built["notes"])
    assert "| MuChoMusic | 3 | 0.700 | 0.600 | 0.500 | 1.000 |" in render_markdown(built)


def _user_run(folder, task: str):
    """A results file and samples of ``task`` as the harness writes them (``hf``)."""
    out = folder / "org__tiny"
    out.mkdir(parents=True)
    stamp = "2026-01-01T00-00-00.000001"
    rows = []
    for i in range(4):
        options = [f"q{i} option {k}" for k in range(4)]
        doc = {"id": f"q{i}", "question": f"q{i}?", "options": options,
               "letters": list("ABCD"), "correct_answer": options[0]}  # fmt: skip
        lls = [[-0.1 if k == i % 2 else -3.0, False] for k in range(4)]
        rows.append({"doc_id": i, "doc": doc, "acc": float(i % 2 == 0), "filtered_resps": lls,
                     "filter": "none"})  # fmt: skip
    results = {
        "results": {task: {"alias": task, "acc,none": 0.5}},
        "configs": {task: {"task": task, "output_type": "multiple_choice",
                           "metadata": {"version": 1.0}}},
        "config": {"model": "hf", "model_args": "pretrained=org/tiny"},
        "n-samples": {task: {"original": 4, "effective": 4}},
    }  # fmt: skip
    (out / f"results_{stamp}.json").write_text(json.dumps(results))
    (out / f"samples_{task}_{stamp}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


def test_a_run_of_an_include_path_task_reported_without_it_names_what_it_could_not_read(
    tmp_path, capsys
):
    from lm_eval_rul.cli import main

    runs = _user_run(tmp_path / "runs", "mybench_fold0")
    main(["report", str(runs), "--out", str(tmp_path / "report"), "--n-resamples", "50"])
    notes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("note:")]
    assert any("could not be read as a benchmark's: mybench_fold0" in n
               and "report --include_path FOLDER" in n for n in notes), notes  # fmt: skip
