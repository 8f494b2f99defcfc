"""Hostile inputs, fifth pass (issue 44): a user's own folder and benchmark are never
merged, renamed, ignored or mistaken for a built-in.

The report's tests read results and samples files written here (as the harness writes
them) instead of running models; the ``run`` tests stop before any model loads.
"""

from __future__ import annotations

import json
import logging
import os
import re
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

ROOT = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------ fabricated harness output


def _doc(i: int, question: str, n_options: int = 4, **extra: Any) -> dict[str, Any]:
    options = [f"{question} option {k}" for k in range(n_options)]
    return {
        "id": f"q{i}", "question": question, "options": options,
        "letters": [chr(65 + k) for k in range(n_options)], "correct_answer": options[0],
        **extra,
    }  # fmt: skip


def fake_run(
    folder: Path,
    task: str,
    docs: list[dict[str, Any]],
    *,
    metadata: dict[str, Any] | None = None,
    stamp: str = "2026-01-01T00-00-00.000001",
    model_args: str = "pretrained=org/tiny",
    top: dict[str, Any] | None = None,
) -> Path:
    """``folder/org__tiny/results_STAMP.json`` and its samples, as ``hf`` writes them: the
    model answers the first option of even items (right) and the second of odd ones."""
    out = folder / "org__tiny"
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for i, doc in enumerate(docs):
        right = i % 2 == 0
        chosen = 0 if right else 1
        lls = [[-0.1 if k == chosen else -3.0, False] for k in range(len(doc["options"]))]
        rows.append({"doc_id": i, "doc": doc, "acc": float(right), "filtered_resps": lls,
                     "filter": "none"})  # fmt: skip
    acc = sum(r["acc"] for r in rows) / len(rows)
    results = {
        "results": {task: {"alias": task, "acc,none": acc, "acc_stderr,none": 0.1}},
        "configs": {task: {"task": task, "output_type": "multiple_choice",
                           "metadata": {"version": 1.0, **(metadata or {})}}},
        "config": {"model": "hf", "model_args": model_args},
        "n-samples": {task: {"original": len(rows), "effective": len(rows)}},
        **(top or {}),
    }  # fmt: skip
    (out / f"results_{stamp}.json").write_text(json.dumps(results))
    (out / f"samples_{task}_{stamp}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


def mc_docs(name: str, file_tag: str, n: int) -> list[dict[str, Any]]:
    """``music_mc`` documents of a file (``file_tag`` makes its questions its own)."""
    return [
        _doc(i, f"{file_tag} question {i}", benchmark_name=name, benchmark_task="music_mc")
        for i in range(n)
    ]


def report_of(folders: list[Path], out: Path | None = None) -> tuple[list, dict, str]:
    from lm_eval_rul.report import ReportSettings, build_report, load_runs, write_report

    runs = load_runs(folders)
    report = build_report(runs, ReportSettings(n_resamples=50))
    markdown = ""
    if out is not None:
        markdown = write_report(report, out)["markdown"].read_text(encoding="utf-8")
    return runs, report, markdown


# ------------------------------------------------------------------ 44.1, 44.2, 44.3, dtype


def test_two_user_benchmarks_and_two_versions_of_one_are_never_merged(tmp_path):
    """44.1: Bench-A and Bench-B (two files) by one model are two sections; Bench-A on two
    files is two rows, each naming its file; nothing is dropped as a repeat."""
    a = fake_run(tmp_path / "a", "music_mc", mc_docs("Bench-A", "a", 4),
                 metadata={"mc_data_path": "/d/a.jsonl", "benchmark_name": "Bench-A"})  # fmt: skip
    b = fake_run(tmp_path / "b", "music_mc", mc_docs("Bench-B", "b", 6),
                 metadata={"mc_data_path": "/d/b.jsonl", "benchmark_name": "Bench-B"},
                 stamp="2026-01-02T00-00-00.000001")  # fmt: skip
    runs, report, _ = report_of([a, b])
    assert {"Bench-A", "Bench-B"} <= set(report["benchmarks"])
    assert not any("repeats" in note for note in report["notes"])
    assert [row["n_questions"] for row in report["benchmarks"]["Bench-B"]["rows"]] == [6]
    assert runs[0].question_file("Bench-A") == "/d/a.jsonl"  # never "the public release"
    # two versions of Bench-A: two rows, told apart by their files
    v2 = fake_run(tmp_path / "v2", "music_mc", mc_docs("Bench-A", "a-v2", 5),
                  metadata={"mc_data_path": "/d/a_v2.jsonl", "benchmark_name": "Bench-A"},
                  stamp="2026-01-03T00-00-00.000001")  # fmt: skip
    runs, report, _ = report_of([a, v2])
    rows = report["benchmarks"]["Bench-A"]["rows"]
    assert sorted(row["setting"] for row in rows) == [
        "text, questions=a.jsonl", "text, questions=a_v2.jsonl"
    ]
    assert not any("repeats" in note for note in report["notes"])


def test_a_truly_identical_repeat_is_still_one_run_the_newer_used(tmp_path):
    docs = mc_docs("Bench-A", "a", 4)
    meta = {"mc_data_path": "/d/a.jsonl", "benchmark_name": "Bench-A"}
    first = fake_run(tmp_path / "one", "music_mc", docs, metadata=meta)
    again = fake_run(tmp_path / "two", "music_mc", docs, metadata=meta,
                     stamp="2026-01-05T00-00-00.000001")  # fmt: skip
    runs, report, _ = report_of([first, again])
    assert len(runs) == 1 and len(runs[0].results_files) == 2
    assert any("repeats 1 task(s)" in note and "newer" in note for note in report["notes"])


def mmar_docs(n: int) -> list[dict[str, Any]]:
    return [_doc(i, f"mmar question {i}", protocol="rul") for i in range(n)]


def test_two_subsets_of_one_file_are_two_runs_named_by_their_subset(tmp_path):
    """44.2: mmar_music under mmar_subset=music and music_any: neither is a repeat."""
    music = fake_run(tmp_path / "m", "mmar_music", mmar_docs(3), metadata={"mmar_subset": "music"})
    mixed = fake_run(tmp_path / "x", "mmar_music", mmar_docs(5), metadata={
        "mmar_subset": "music_any"}, stamp="2026-01-02T00-00-00.000001")  # fmt: skip
    runs, report, _ = report_of([music, mixed])
    assert len(runs) == 2
    rows = report["benchmarks"]["mmar_music"]["rows"]
    assert sorted((row["setting"], row["n_questions"]) for row in rows) == [
        ("text, mmar_subset=music", 3), ("text, mmar_subset=music_any", 5)
    ]
    assert not any("repeats" in note for note in report["notes"])


def test_the_dtype_a_run_used_is_part_of_its_identity(tmp_path):
    docs = mc_docs("Bench-A", "a", 4)
    meta = {"mc_data_path": "/d/a.jsonl", "benchmark_name": "Bench-A"}
    f32 = fake_run(tmp_path / "f32", "music_mc", docs, metadata=meta,
                   model_args="pretrained=org/tiny,dtype=float32")  # fmt: skip
    bf16 = fake_run(tmp_path / "bf16", "music_mc", docs, metadata=meta,
                    model_args="pretrained=org/tiny,dtype=auto",
                    top={"model_dtype": "torch.bfloat16"},
                    stamp="2026-01-02T00-00-00.000001")  # fmt: skip
    runs, report, _ = report_of([f32, bf16])
    assert sorted(r.setting for r in runs) == ["text, dtype=bfloat16", "text, dtype=float32"]
    assert not any("repeats" in note for note in report["notes"])


def test_a_user_file_named_like_mmau_is_never_mmaus_table(tmp_path):
    """44.3: benchmark_name mmau_music on a 2-question file is its own section, naming its
    file; MMAU's table holds the MMAU run only."""
    mmau = fake_run(tmp_path / "mmau", "mmau_music", [_doc(i, f"mmau {i}", protocol="rul")
                                                     for i in range(6)])  # fmt: skip
    mine = fake_run(tmp_path / "mine", "music_mc", mc_docs("mmau_music", "mine", 2),
                    metadata={"mc_data_path": "/d/two.jsonl", "benchmark_name": "mmau_music"},
                    stamp="2026-01-02T00-00-00.000001")  # fmt: skip
    runs, report, markdown = report_of([mmau, mine], tmp_path / "report")
    assert [row["n_questions"] for row in report["benchmarks"]["mmau_music"]["rows"]] == [6]
    (own,) = [k for k in report["benchmarks"] if k != "mmau_music"]
    assert own == "mmau_music (music_mc)"
    assert [row["n_questions"] for row in report["benchmarks"][own]["rows"]] == [2]
    (user_run,) = [r for r in runs if r.tasks_of(own)]
    assert user_run.question_file(own) == "/d/two.jsonl"
    assert "## mmau_music (music_mc)" in markdown


# ------------------------------------------------------------------ 44.14 markdown and file names


def test_a_benchmark_name_with_markdown_characters_keeps_the_tables_whole(tmp_path):
    name = "A|B [v2]/x"
    meta = {"mc_data_path": "/d/odd.jsonl", "benchmark_name": name}
    folder = fake_run(tmp_path / "r", "music_mc", mc_docs(name, "odd", 4), metadata=meta)
    _, report, markdown = report_of([folder], tmp_path / "report")
    assert "## A\\|B \\[v2\\]/x" in markdown
    tables = re.findall(r"(?:^\|.*\n)+", markdown, flags=re.M)
    assert len(tables) >= 2
    for table in tables:  # every row of a table has its header's column count
        counts = {len(re.findall(r"(?<!\\)\|", row)) for row in table.splitlines()}
        assert len(counts) == 1, table
    figures = [p.name for p in (tmp_path / "report" / "figures").iterdir()]
    assert figures and all("|" not in f and "[" not in f for f in figures)
    assert all(p.parent.name == "figures" for p in (tmp_path / "report").rglob("*.png"))


# ------------------------------------------------------------------ --include_path descriptors


def user_folder(root: Path, descriptor: str | None = None, *, name: str = "mybench") -> Path:
    """``root/mine/<name>/``: a fold group of two tasks and (``descriptor``) its benchmark.py."""
    folder = root / "mine" / name
    folder.mkdir(parents=True)
    (folder / f"_{name}.yaml").write_text(
        f"group: {name}_folds\ntask:\n  - {name}_fold0\n  - {name}_fold1\n"
        "aggregate_metric_list: []\n"
    )
    for fold in (0, 1):
        (folder / f"{name}_fold{fold}.yaml").write_text(
            f"task: {name}_fold{fold}\ndataset_path: ''\ncustom_dataset: !function utils.load\n"
            "output_type: multiple_choice\ndoc_to_text: '{{q}}'\ndoc_to_choice: [a, b]\n"
            "doc_to_target: 0\n"
        )
    if descriptor is not None:
        (folder / "benchmark.py").write_text(descriptor)
    return root / "mine"


GOOD = (
    "from lm_eval_rul.catalogue import Benchmark\n"
    "BENCHMARK = Benchmark(folder='mybench', name='My bench', metadata_keys=('mybench_path',),\n"
    "    fold_groups=('mybench_folds',), report_names={'mybench': 'My own bench'})\n"
)


def test_an_include_path_descriptor_gives_votes_names_and_keys(tmp_path):
    """44.5: the folder's benchmark.py counts: its fold group gets the votes, report names
    its benchmark as declared, task_manager checks its keys."""
    from lm_eval_rul import catalogue, task_manager
    from lm_eval_rul.cli import main
    from lm_eval_rul.cli.run import add_majority_acc
    from lm_eval_rul.included import included
    from lm_eval_rul.registration import UnknownTaskMetadataError

    mine = user_folder(tmp_path, GOOD)
    samples = {
        f"mybench_fold{f}": [
            {"doc": _doc(i, f"q{i}", 2, fold=f), "filtered_resps": [[-0.1, False], [-3.0, False]],
             "filter": "none"} for i in range(3)
        ] for f in (0, 1)
    }  # fmt: skip
    results = {"results": {"mybench_folds": {}}, "groups": {"mybench_folds": {}},
               "group_subtasks": {"mybench_folds": list(samples)}, "samples": samples}  # fmt: skip
    assert "mybench_folds" not in catalogue.fold_groups()
    with included(str(mine)):
        assert catalogue.fold_groups()["mybench_folds"] == catalogue.VOTE_METRICS
        add_majority_acc(results)
    assert results["groups"]["mybench_folds"]["majority_acc,none"] == 1.0
    assert "mybench" not in catalogue.report_names()  # only while a command includes it
    typo = "'mybench_pth' \\(did you mean 'mybench_path'"
    with pytest.raises(UnknownTaskMetadataError, match=typo):
        task_manager(include_path=str(mine), mybench_pth="x.json")
    # report --include_path: the section is named as the descriptor says
    runs = fake_run(tmp_path / "runs", "mybench", [_doc(i, f"q{i}") for i in range(4)])
    main(["report", str(runs), "--out", str(tmp_path / "report"), "--include_path", str(mine),
          "--n-resamples", "50"])  # fmt: skip
    assert "## My own bench" in (tmp_path / "report" / "report.md").read_text()


BROKEN = {
    "syntax": ("BENCHMARK = Benchmark(\n", "line 1: syntax error"),
    "raises": ("import lm_eval_rul_no_such_module\n", "importing it raised ModuleNotFoundError"),
    "field type": (GOOD.replace("name='My bench'", "name=3"), "name=3 must be a string"),
    "reader": (
        "from lm_eval_rul.catalogue import Benchmark, Reader\n"
        "BENCHMARK = Benchmark(folder='mybench', name='x', metadata_keys=(),\n"
        "    readers=(Reader(detect='lm_eval_rul.questions.mmau:no_such', read='x:y'),))\n",
        "readers detect 'lm_eval_rul.questions.mmau:no_such' names nothing importable",
    ),
    "built-in folder": (GOOD.replace("folder='mybench'", "folder='mmau'"),
                        "folder='mmau', but the file is in the folder 'mybench'"),  # fmt: skip
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_broken_include_path_descriptor_is_one_line_before_the_model(
    case, tiny_lm, tmp_path, capsys, constructions
):
    """44.6: each broken benchmark.py is one line naming the file and the problem, exit 2."""
    from lm_eval_rul.testing.harness import cli_error_line

    text, problem = BROKEN[case]
    mine = user_folder(tmp_path, text)
    line = cli_error_line(["run", "--model", "hf", "--model_args", f"pretrained={tiny_lm}",
                           "--tasks", "mybench_fold0", "--include_path", mine, "--device", "cpu"],
                          capsys)  # fmt: skip
    assert str(mine / "mybench" / "benchmark.py") in line and problem in line
    assert constructions == []


def test_a_user_folder_named_like_a_built_in_one_is_refused(tmp_path):
    """44.6: a benchmark.py in a folder ``mmau`` claims MMAU's folder: refused."""
    from lm_eval_rul.descriptors import DescriptorError
    from lm_eval_rul.included import check_include_paths

    mine = user_folder(tmp_path, GOOD.replace("mybench", "mmau"), name="mmau")
    with pytest.raises(DescriptorError, match="folder='mmau' is the benchmark of .*mmau"):
        check_include_paths(str(mine))


def test_a_user_task_named_like_a_built_in_is_refused_before_the_model(
    tiny_lm, tmp_path, capsys, constructions
):
    """44.9: the user's mmau_music would run under the plugin's name: one line, renamed."""
    from lm_eval_rul.testing.harness import cli_error_line

    folder = tmp_path / "own"
    folder.mkdir()
    (folder / "mmau_music.yaml").write_text("task: mmau_music\ndataset_path: ''\n")
    line = cli_error_line(["run", "--model", "hf", "--model_args", f"pretrained={tiny_lm}",
                           "--tasks", "mmau_music", "--include_path", folder, "--device", "cpu"],
                          capsys)  # fmt: skip
    assert "'mmau_music'" in line and "built-in task in" in line and "mmau" in line
    assert "rename your task" in line and "KeyError" not in line
    assert constructions == []
    from lm_eval_rul.catalogue import tasks_dir
    from lm_eval_rul.included import check_include_paths

    # the plugin's own folder given again (lm-eval-rul tasks-dir, or its real path) is no user's
    assert check_include_paths([str(tasks_dir()), str(tasks_dir().resolve())]) == []


@pytest.mark.parametrize("kind", ["missing", "yaml file"])
def test_an_include_path_that_is_no_folder_names_the_include_path(
    kind, tiny_lm, tmp_path, capsys, constructions
):
    """44.10: not "unknown task 'qa_mine' (closest: qa4mre...)"."""
    from lm_eval_rul.testing.harness import cli_error_line

    path = tmp_path / "nowhere"
    if kind == "yaml file":
        path = tmp_path / "qa_mine.yaml"
        path.write_text("task: qa_mine\n")
    line = cli_error_line(["run", "--model", "hf", "--model_args", f"pretrained={tiny_lm}",
                           "--tasks", "qa_mine", "--include_path", path, "--device", "cpu"],
                          capsys)  # fmt: skip
    assert f"--include_path {path}" in line and "closest" not in line
    assert ("no such folder" if kind == "missing" else f"--include_path {tmp_path}") in line
    assert constructions == []


# ------------------------------------------------------------------ 44.8 smoke DIR


@pytest.mark.parametrize("case", ["a file", "below a file", "a file where it writes data/"])
def test_the_smoke_command_on_a_dir_taken_by_a_file_is_one_line(case, tmp_path, capsys):
    from lm_eval_rul.testing.smoke import main

    taken = tmp_path / "taken"
    taken.write_text("x")
    directory = {"a file": taken, "below a file": taken / "below"}.get(case, tmp_path / "dir")
    if case == "a file where it writes data/":
        directory.mkdir()
        (directory / "data").write_text("x")
    assert main([str(directory)]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("error: python -m lm_eval_rul.testing.smoke") and "is a file" in line
    assert not (tmp_path / "dir" / "text_model").exists()


# ------------------------------------------------------------------ 44.11 MMAU's and MMAR's files


def test_mmau_and_mmar_files_swapped_name_the_other_benchmark(tmp_path, capsys):
    from lm_eval_rul.mcqa.mmau.tasks import check_mmau_data
    from lm_eval_rul.questions import DataValidationError
    from lm_eval_rul.questions.file_kinds import sniff_data_file
    from lm_eval_rul.tasks.mmar.utils import check_mmar_data
    from lm_eval_rul.testing.harness import cli_error_line
    from lm_eval_rul.testing.mmar import write_mmar_jsonl
    from lm_eval_rul.testing.mmau import write_mmau_json

    mmar = write_mmar_jsonl(tmp_path / "MMAR-meta.jsonl")
    mmau = write_mmau_json(tmp_path / "m.json")
    with pytest.raises(DataValidationError, match="MMAR's released layout.*mmar_data_path"):
        check_mmau_data({"mmau_data_path": str(mmar)})
    with pytest.raises(DataValidationError, match="MMAU's released layout.*mmau_data_path"):
        check_mmar_data({"mmar_data_path": str(mmau)})
    assert sniff_data_file(mmar).description.startswith("MMAR's released layout")
    line = cli_error_line(["build", "--pools", mmar, "--model", "hf", "--model_args",
                           "pretrained=/nonexistent", "--stage", "clean",
                           "--output", tmp_path / "out.json"], capsys)  # fmt: skip
    assert "MMAR's released layout" in line and f"give it as --data {mmar}" in line
    assert "without distractors" not in line


# ------------------------------------------------------------------ 44.15 lm-eval 0.5 registry


def test_every_plugin_metric_is_registered_and_every_group_declares_its_aggregation(
    tmp_path, data_dir
):
    """44.15: loading MMAU's and the fold tasks logs neither "Metric ... not found in
    registry" nor "has no aggregate_metric_list" (lm-eval 0.5; 0.4.13 logs neither)."""
    from lm_eval.api.registry import metric_registry
    from lm_eval.tasks import TaskManager

    from lm_eval_rul.catalogue import tasks_dir
    from lm_eval_rul.included import read_task_yaml
    from lm_eval_rul.mcqa.harness_metric import task_file_metrics
    from lm_eval_rul.testing.mmau import write_mmau_json

    groups = [p for p in tasks_dir().glob("*/*.yaml") if "group" in (read_task_yaml(p) or {})]
    assert groups and all("aggregate_metric_list" in read_task_yaml(p) for p in groups)
    metrics = task_file_metrics()
    assert {"parse_failure", "perceptual_index", "micro_f1"} <= set(metrics)
    on_next = isinstance(getattr(metric_registry.get("acc", None), "output_type", None), set)
    if on_next:
        assert all(name in metric_registry for name in metrics)
    records: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: records.append(record.getMessage())  # type: ignore[method-assign]
    harness_log = logging.getLogger("lm_eval")
    harness_log.addHandler(handler)
    try:
        manager = TaskManager(include_path=str(tasks_dir()), include_defaults=False,
                              metadata={"mmau_data_path": str(write_mmau_json(tmp_path / "m.json")),
                                        "rul_data_path": str(data_dir / "rul.json")})  # fmt: skip
        manager.load_task_or_group(["mmau", "rul_muchomusic_gen"])
    finally:
        harness_log.removeHandler(handler)
    assert not [r for r in records if "not found in registry" in r or "aggregate_metric_list" in r]


# ------------------------------------------------------------------ 42.3 name rules


def test_the_reports_name_rules_are_the_descriptors():
    """Issue 42, item 3: categories by declared keys, question sets by declared names, file
    kinds by every descriptor's reader: no name rule inside the report."""
    summary = (ROOT / "lm_eval_rul" / "report" / "summary.py").read_text()
    breakdowns = (ROOT / "lm_eval_rul" / "report" / "breakdowns.py").read_text()
    kinds = (ROOT / "lm_eval_rul" / "questions" / "file_kinds.py").read_text()
    assert '"muchomusic" in' not in summary and "_CSV_KEYS" not in breakdowns
    assert "looks_like_mmau" not in kinds
    run_keys = (ROOT / "lm_eval_rul" / "report" / "run_keys.py").read_text()
    assert "startswith(base" not in run_keys and 'removesuffix("_gen")' not in run_keys
    from lm_eval_rul.included import for_task
    from lm_eval_rul.report.run_keys import base_benchmark

    assert base_benchmark("mmau_music_gen") == "mmau_music"  # declared: question_sets
    assert base_benchmark("mmau_mine_gen") == "mmau_mine_gen"  # no descriptor names it: itself
    assert for_task("rul_muchomusic_native_gen").folder == "harness_native"  # its YAML's folder
    from lm_eval_rul.report.breakdowns import category_keys

    assert "muchomusic_csv" in category_keys("rul_muchomusic_gen")
    assert category_keys("mmau_music") == () and category_keys("Bench-A") == ()
