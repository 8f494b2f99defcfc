"""What makes a run one run in the report: a user's own benchmarks and their versions, subsets
of one file, the dtype, names like a built-in benchmark's, markdown characters in names."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from doubles.harness_runs import fake_run  # noqa: E402
from doubles.harness_runs import mc_doc as _doc  # noqa: E402


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


def mmar_docs(n: int) -> list[dict[str, Any]]:
    return [_doc(i, f"mmar question {i}", protocol="rul") for i in range(n)]


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
