"""The traps of issue 52 (the fifth first hour): the headline group offline, no silent
answer shift, a missing checkpoint said before anything loads, GTZAN as users hold it,
long tagging clips, and ``report``'s wording and figures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lm_eval_rul.testing.harness import cli_error_line as fail
from lm_eval_rul.testing.harness import read_output
from lm_eval_rul.testing.tagging import (
    write_gtzan,
    write_medley,
    write_mtg,
    write_mtt,
    write_nsynth,
)


@pytest.fixture(scope="module")
def tagging_data(tmp_path_factory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("tagging5")
    gtzan, mtg = write_gtzan(root / "gtzan", per_genre=1), write_mtg(root / "mtg")
    mtt, medley = write_mtt(root / "mtt"), write_medley(root / "medley")
    return {
        "nsynth_dir": str(write_nsynth(root / "nsynth")),
        "medley_metadata": str(medley["metadata"]), "medley_audio_dir": str(medley["audio"]),
        "gtzan_split_file": str(gtzan["split"]), "gtzan_audio_dir": str(gtzan["audio"]),
        "mtg_data_dir": str(mtg["data"]), "mtg_audio_dir": str(mtg["audio"]),
        "mtt_annotations": str(mtt["annotations"]), "mtt_split_file": str(mtt["split"]),
        "mtt_audio_dir": str(mtt["audio"]), "tagging_seconds": 1.5,
    }  # fmt: skip


# -- 3: a group's members' keys ------------------------------------------------------------


def test_music_understanding_runs_offline_with_each_members_keys(
    tiny_lm, data_dir, tagging_data, tmp_path
):
    from lm_eval_rul.cli import main

    out = tmp_path / "out"
    metadata = {**tagging_data, "data_path": str(data_dir / "rul.json")}
    main(["run", "--model", "hf", "--model_args", f"pretrained={tiny_lm},dtype=float32",
          "--tasks", "music_understanding", "--metadata", json.dumps(metadata),
          "--device", "cpu", "--batch_size", "8", "--limit", "1",
          "--output_path", str(out)])  # fmt: skip
    results, _ = read_output(out)
    ran = set(results["results"])
    assert {"rul_muchomusic_fold0", "gtzan_gen", "mtg_top50_gen", "magnatagatune_gen",
            "nsynth_instrument_gen", "medley_solos_gen"} <= ran


def test_a_key_no_task_of_the_group_reads_is_one_line(
    tiny_lm, data_dir, tmp_path, capsys, constructions
):
    metadata = {"data_path": str(data_dir / "rul.json"), "gtzan_audio_dirr": "x"}
    line = fail(["run", "--model", "hf", "--model_args", f"pretrained={tiny_lm}",
                 "--tasks", "music_understanding", "--metadata", json.dumps(metadata),
                 "--output_path", str(tmp_path / "out")], capsys)  # fmt: skip
    assert "unknown --metadata key 'gtzan_audio_dirr' (did you mean 'gtzan_audio_dir'?)" in line
    assert "'data_path'" not in line.split("Known keys")[0]  # a member's key is known
    assert "rul_muchomusic" in line and "data_path" in line.split("Known keys")[1]
    assert constructions == []


# -- 5: the checkpoint a model cannot start without ----------------------------------------


@pytest.mark.parametrize(
    ("model", "key"), [("lalm", "pretrained"), ("lalm-vllm", "pretrained"),
                       ("lalm-api", "base_url")],
)  # fmt: skip
def test_a_model_without_its_checkpoint_is_one_line_before_anything_loads(
    model, key, data_dir, tmp_path, capsys, constructions
):
    line = fail(["run", "--model", model, "--model_args", "dtype=float32", "--tasks",
                 "muchomusic", "--metadata", f"muchomusic_data_path={data_dir / 'muchomusic.csv'}",
                 "--output_path", str(tmp_path / "out")], capsys)  # fmt: skip
    assert f"MissingModelArgError: --model {model} needs --model_args {key}=" in line
    assert "Nothing was loaded" in line
    assert constructions == []


# -- 4: a numeric answer column whose base the file does not settle ------------------------


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


# -- 6: GTZAN as users hold it -------------------------------------------------------------


@pytest.fixture(scope="module")
def gtzan_layouts(tmp_path_factory) -> dict[str, str]:
    """One GTZAN fixture as the release's folders, Kaggle's ``Data`` folder and the hub's
    ``marsyas/gtzan`` saved with ``save_to_disk`` (rows in another order than the split)."""
    import shutil

    root = tmp_path_factory.mktemp("gtzan_layouts")
    release = write_gtzan(root / "release", per_genre=1)
    kaggle = root / "kaggle" / "Data"
    shutil.copytree(release["audio"], kaggle / "genres_original")
    files = sorted(p for p in release["audio"].rglob("*") if p.is_file())[::-1]
    hub = _hub_gtzan(root / "marsyas_gtzan", files, [p.parent.name for p in files])
    wrong = _hub_gtzan(root / "mislabelled", files, ["rock" for _ in files])
    return {"split": str(release["split"]), "release": str(release["audio"]),
            "kaggle": str(kaggle), "hub": str(hub), "mislabelled": str(wrong)}  # fmt: skip


def _hub_gtzan(path: Path, files: list[Path], genres: list[str]) -> Path:
    """``marsyas/gtzan``'s columns (``file``, ``audio``, ``genre`` a ClassLabel), saved
    with ``save_to_disk`` as its one ``train`` split."""
    import datasets

    from lm_eval_rul.tagging.vocab import GTZAN_GENRES

    rows = {
        "file": [f"/home/u/.cache/extracted/genres/{p.parent.name}/{p.name}" for p in files],
        "audio": [{"bytes": p.read_bytes(), "path": p.name} for p in files],
        "genre": [GTZAN_GENRES.index(g) for g in genres],
    }
    cell = {"bytes": datasets.Value("binary"), "path": datasets.Value("string")}
    features = datasets.Features({
        "file": datasets.Value("string"), "audio": cell,
        "genre": datasets.ClassLabel(names=list(GTZAN_GENRES)),
    })  # fmt: skip
    table = datasets.Dataset.from_dict(rows, features=features).cast_column(
        "audio", datasets.Audio(decode=False)
    )  # the hub's features (encoding needs torchcodec; the cells are already bytes)
    datasets.DatasetDict({"train": table}).save_to_disk(str(path))
    return path


def test_gtzan_as_the_hub_or_kaggle_hold_it_reads_the_releases_letters_and_clips(
    gtzan_layouts,
):
    import numpy as np

    from lm_eval_rul.audio.decoding import load_window
    from lm_eval_rul.audio.sources import clip_identity
    from lm_eval_rul.tagging.data import check_tagging_data
    from lm_eval_rul.tagging.documents import make_documents

    read = {}
    for layout in ("release", "kaggle", "hub"):
        metadata = {"gtzan_split_file": gtzan_layouts["split"],
                    "gtzan_audio_dir": gtzan_layouts[layout]}  # fmt: skip
        check_tagging_data(metadata)  # every clip found, before any model
        docs = make_documents("gtzan", "letters", metadata)
        read[layout] = [(d["id"], d["prompt"], d["gold"],
                         clip_identity(d["audio_ref"])["sha256"]) for d in docs]  # fmt: skip
    assert len(read["release"]) == 10
    assert read["kaggle"] == read["release"] and read["hub"] == read["release"]
    heard = []
    for layout in ("release", "hub"):
        doc = make_documents("gtzan", "letters", {"gtzan_split_file": gtzan_layouts["split"],
                                                  "gtzan_audio_dir": gtzan_layouts[layout]})[3]
        heard.append(load_window(doc["audio_ref"], sampling_rate=16000,
                                 window=tuple(doc["audio_window"])))  # fmt: skip
    assert '"kind": "hf"' in doc["audio_ref"]  # the hub's row, decoded from its bytes
    assert heard[0].size > 16000 and np.array_equal(heard[0], heard[1])


def test_a_hub_dataset_whose_genres_contradict_the_split_is_one_line(gtzan_layouts):
    from lm_eval_rul.tagging.data import check_tagging_data
    from lm_eval_rul.tagging.readers import TaggingDataError

    with pytest.raises(TaggingDataError, match=r"is labelled 'rock', the split file says 'blues'"):
        check_tagging_data({"gtzan_split_file": gtzan_layouts["split"],
                            "gtzan_audio_dir": gtzan_layouts["mislabelled"]})  # fmt: skip


def test_gtzan_without_its_clips_advises_its_own_key(gtzan_layouts):
    from lm_eval_rul.audio.conditions.availability import check_audio_available
    from lm_eval_rul.audio.errors import MissingAudioError
    from lm_eval_rul.tagging.documents import make_documents

    docs = make_documents("gtzan", "letters", {"gtzan_split_file": gtzan_layouts["split"]})
    with pytest.raises(MissingAudioError) as caught:
        check_audio_available(docs, "original")
    advice = str(caught.value).splitlines()[-1]
    assert "gtzan_audio_dir" in advice and "marsyas/gtzan" in advice
    assert "audio_dir /" not in advice and "audio_hf_dataset" not in advice


# -- 7: a tagging clip longer than the model hears -----------------------------------------


def test_a_tagging_clip_longer_than_the_model_hears_is_trimmed_and_counted(
    tiny_audio_lm, tagging_data, tmp_path
):
    from lm_eval_rul.testing.harness import run_cli

    out = tmp_path / "out"
    done = run_cli(["run", "--model", "lalm", "--model_args",
                    f"pretrained={tiny_audio_lm},max_audio_seconds=1,results_cache=none",
                    "--tasks", "gtzan", "--limit", "3", "--batch_size", "16",
                    "--metadata", json.dumps(tagging_data), "--device", "cpu",
                    "--output_path", str(out), "--log_samples"])  # fmt: skip
    results, samples = read_output(out)
    assert len(samples["gtzan"]) == 3 and "acc,none" in results["results"]["gtzan"]
    assert "3 clip(s) longer than the model's limit of 1 s were trimmed to their first 1 s" in (
        done.stderr
    )
    assert "[0-1.5 s] (1.5 s) and 2 other clip(s)" in done.stderr


def test_a_window_a_task_asks_about_is_still_never_cut(tmp_path):
    from lm_eval_rul.audio.conditions.basic import clip_key
    from lm_eval_rul.audio.conditions.spec import AudioSpec
    from lm_eval_rul.audio.errors import AudioError

    doc = {"id": "piece-3", "audio_window": [0.0, 40.0], "audio_window_key": "chunk_seconds"}
    with pytest.raises(AudioError, match="Set --metadata chunk_seconds to at most 30"):
        clip_key(doc, '{"kind": "file", "path": "/x.wav"}', AudioSpec(16000, 30.0))


# -- 8: report's first line and the names it could not read -------------------------------


def test_reports_first_line_counts_tagging_tasks(tiny_lm, tagging_data, tmp_path, capsys):
    from lm_eval_rul.cli import main

    out = tmp_path / "gtzan"
    main(["run", "--model", "hf", "--model_args", f"pretrained={tiny_lm},dtype=float32",
          "--tasks", "gtzan", "--limit", "4", "--metadata", json.dumps(tagging_data),
          "--device", "cpu", "--batch_size", "16", "--output_path", str(out),
          "--log_samples"])  # fmt: skip
    capsys.readouterr()
    main(["report", str(out), "--out", str(tmp_path / "report"), "--n-resamples", "50"])
    first = capsys.readouterr().out.splitlines()[0]
    assert first == "1 run, 0 benchmarks, 0 factual tasks, 1 tagging task"


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


# -- 8: the figures ------------------------------------------------------------------------


def _kept(monkeypatch, module) -> list:
    """Figures ``module`` draws, kept open instead of written (their parts are read)."""
    drawn = []

    def keep(fig, path):
        drawn.append(fig)
        return Path(path)

    monkeypatch.setattr(module, "save_figure", keep)
    return drawn


def test_pi_accuracy_fits_no_line_through_zeros_and_ones_and_says_what_is_averaged(
    monkeypatch, tmp_path
):
    from lm_eval_rul.report import plots

    drawn = _kept(monkeypatch, plots)
    pi = [0.1, 0.4, 0.6, 0.9]
    one_run = "accuracy per question\n(0 or 1: one run, one prompt)"
    plots.pi_accuracy_scatter(tmp_path / "a.png", {"audio (original)": (pi, [1, 0, 1, 0])},
                              ylabel=one_run)  # fmt: skip
    plots.pi_accuracy_scatter(tmp_path / "b.png", {"audio (original)": (pi, [1, 0.5, 0.75, 0])})
    binary, averaged = (fig.axes[0] for fig in drawn)
    assert binary.get_lines() == [] and len(averaged.get_lines()) == 1
    assert binary.get_ylabel() == one_run
    assert "mean over" in averaged.get_ylabel()


def test_a_text_only_runs_pi_is_never_set_against_its_own_accuracy(
    tiny_lm, data_dir, tmp_path, capsys
):
    from lm_eval_rul.cli import main
    from lm_eval_rul.testing.harness import text_run_args

    out = tmp_path / "text"
    main(text_run_args(tiny_lm, data_dir, out, "muchomusic", "--log_samples"))
    capsys.readouterr()
    main(["report", str(out), "--out", str(tmp_path / "report"), "--n-resamples", "50"])
    printed = capsys.readouterr().out
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    assert report["benchmarks"]["muchomusic"]["correlations"] == []
    assert "PI-accuracy of text-only: not reported, as its PI comes from the same run" in printed
    assert not (tmp_path / "report" / "figures" / "pi_vs_accuracy_muchomusic.png").exists()


def test_per_tag_figure_names_its_tags_and_side_and_keeps_edge_points_whole(
    monkeypatch, tmp_path
):
    from lm_eval_rul.report.tagging import plots as tagging_plots

    drawn = _kept(monkeypatch, tagging_plots)
    data = {"model": "m", "tags": ["rock", "jazz", "piano"], "original": [1.0, 0.0, 0.5],
            "noise": [0.5, 1.0, 0.0]}  # fmt: skip
    tagging_plots.per_tag_auc_scatter(tmp_path / "t.png", data, "m: MTG top-50, per-tag ROC-AUC")
    ax = drawn[0].axes[0]
    texts = [t.get_text() for t in ax.texts]
    assert ax.get_title().endswith("(3 tags)")
    assert {"rock", "jazz", "piano"} <= set(texts)
    assert any("the audio helps" in t for t in texts)
    (points,) = ax.collections
    assert not points.get_clip_on()
    for low, high in (ax.get_xlim(), ax.get_ylim()):
        assert low < 0 and high > 1


def test_perception_gain_figure_marks_an_interval_that_contains_zero(monkeypatch, tmp_path):
    from lm_eval_rul.report import forest

    drawn = _kept(monkeypatch, forest)
    forest.perception_gain_forest(
        tmp_path / "f.png",
        [("m", "noise", 0.20, 0.10, 0.30), ("m", "none", 0.05, -0.02, 0.12)],
    )
    ax = drawn[0].axes[0]
    notes = sorted(t.get_text() for t in ax.texts)
    assert notes == ["+0.050 (interval contains 0)", "+0.200"]
    faces = [line.get_markerfacecolor() for line in ax.get_lines() if line.get_marker() == "o"]
    assert faces.count("white") == 1
    assert "hollow: the interval contains 0" in ax.get_xlabel()
