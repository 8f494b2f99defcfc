"""``lm-eval-rul diagnose`` end to end with tiny local T5 / CLAP encoders: question files
and pools side by side, outputs, the cache on a rerun, and clean errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lm_eval_rul.diagnose import DiagnoseConfig, run_diagnose, write_outputs
from lm_eval_rul.testing.encoders import make_tiny_clap, make_tiny_t5
from lm_eval_rul.testing.harness import run_cli

FLAWED = [
    {"id": "448", "question": "What is the vocal style used in the song?",
     "correct_answer": "Not specified in the description",
     "distractors": ["Soul", "Gospel belting", "Operatic"]},
    {"id": "832", "question": "Who is the primary vocalist in the song?", "correct_answer": "Male",
     "distractors": ["Lead", "Vocalist", "Singer"]},
    {"id": "7", "question": "What is used at the very beginning to make the track sound vintage?",
     "correct_answer": "Effect", "distractors": ["Lo-fi", "Tape saturation", "Vinyl crackle"]},
    {"id": "20", "question": "Based on the description, which genre is this?",
     "correct_answer": "Gospel", "distractors": ["Rock", "It was recorded in Nashville", "Pop"]},
    {"id": "21", "question": "Which drum is played?", "correct_answer": "Tom-tom",
     "distractors": ["Snare", "Tom-Tom", "Kick"]},
    {"id": "22", "question": "Which instrument plays the melody?", "correct_answer": "Piano",
     "distractors": ["Violin", "Flute", "Harp"]},
]  # fmt: skip


@pytest.fixture(scope="module")
def encoders(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("diag_encoders")
    return {"t5": make_tiny_t5(root / "t5"), "clap": make_tiny_clap(root / "clap")}


@pytest.fixture()
def flawed(tmp_path) -> Path:
    path = tmp_path / "flawed.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in FLAWED))
    return path


def test_cli_compares_files_and_pools_then_reads_the_cache(tmp_path, encoders, data_dir, flawed):
    out, cache = tmp_path / "out", tmp_path / "emb.sqlite"

    def args(out: Path) -> list:
        return [
            "diagnose", f"rul={data_dir / 'rul.json'}", f"pools={data_dir / 'pools.json'}",
            str(flawed), "--out", out, "--t5", encoders["t5"], "--clap", encoders["clap"],
            "--cache", cache, "--batch_size", "16", "--device", "cpu", "--no_progress",
        ]  # fmt: skip

    done = run_cli(args(out))
    assert "flawed: 6 questions; flagged not_specified 1, refers_to_description 2" in done.stdout
    summary = json.loads((out / "diagnose.json").read_text())
    names = [d["name"] for d in summary["datasets"]]
    assert names == ["rul", "pools", "flawed"]
    assert [d["kind"] for d in summary["datasets"]] == ["questions", "pools", "questions"]
    # Both files failing the option checks are read as they are, and their problems kept.
    assert [d["checks"]["passed"] for d in summary["datasets"]] == [True, False, False]
    assert "equals the correct answer" in summary["datasets"][2]["checks"]["problems"][0]
    stats = summary["embedding"]["stats"]
    assert stats["t5"]["n_cached"] == 0 and stats["t5"]["n_forward"] >= 1
    assert stats["t5"]["n_encoded"] == stats["t5"]["n_unique"]

    findings = [json.loads(line) for line in (out / "findings.jsonl").read_text().splitlines()]
    assert len(findings) == 8 + 8 + 6
    pools = [f for f in findings if f["dataset"] == "pools"]
    # The first pool lists its correct answer (upper-cased) and repeats a candidate: both
    # are kept, compared and marked, never silently cleaned away.
    assert [len(f["distractors"]) for f in pools] == [11] + [9] * 7
    marks = [(o.get("duplicate_of"), o.get("duplicate_kind")) for o in pools[0]["distractors"]]
    assert marks[9:] == [("correct_answer", "case"), ("distractors[0]", "exact")]
    first, repeat = pools[0]["distractors"][0], pools[0]["distractors"][10]
    assert (repeat["t5"], repeat["clap"]) == (first["t5"], first["clap"])
    by_id = {f["id"]: f for f in findings if f["dataset"] == "flawed"}
    assert by_id["448"]["rules"] == ["not_specified", "refers_to_description"]
    assert by_id["832"]["rules"] == ["gender_only_who"]
    assert by_id["7"]["rules"] == ["too_short"]
    assert by_id["20"]["rules"] == ["refers_to_description", "recording_metadata"]
    assert by_id["22"]["rules"] == [] and by_id["22"]["flags"] == []
    tom = by_id["21"]["distractors"][1]
    assert (tom["duplicate_of"], tom["duplicate_kind"]) == ("correct_answer", "case")
    for option in by_id["22"]["distractors"]:
        assert -1 <= option["t5"] <= 1 and -1 <= option["clap"] <= 1
        assert isinstance(option["near_identical"], bool)

    flawed_summary = summary["datasets"][2]
    assert flawed_summary["audit"]["too_short"]["ids"] == ["7"]
    assert flawed_summary["audit"]["any_rule"]["questions"] == 4
    assert flawed_summary["duplicates"][0]["id"] == "21"
    for space in ("t5", "clap"):
        assert flawed_summary["similarity"][space]["n"] == 18
    markdown = (out / "diagnose.md").read_text()
    assert "| `too_short` | flawed | 1 | 0 | 1 | 0 | 1 | 7 |" in markdown
    assert "| 21 | Tom-Tom | correct_answer | case |" in markdown
    assert "Questions listing their own correct answer as a distractor (case: 2)." in markdown
    assert "Read as released: 1 option problem(s)" in markdown
    for name in ("similarity", "similarity_scatter", "audit"):
        png = out / "figures" / f"{name}.png"
        assert png.stat().st_size > 5000 and f"figures/{name}.png" in markdown

    run_cli(args(tmp_path / "again"))
    again = json.loads((tmp_path / "again" / "diagnose.json").read_text())
    for space in ("t5", "clap"):
        warm = again["embedding"]["stats"][space]
        assert warm["n_forward"] == 0 and warm["n_cached"] == stats[space]["n_unique"]
    assert again["datasets"][0]["similarity"] == summary["datasets"][0]["similarity"]


def test_one_space_and_audit_only_runs(tmp_path, encoders, flawed):
    config = DiagnoseConfig(
        datasets=[str(flawed)], t5="none", clap=str(encoders["clap"]), use_cache=False,
        near={"t5": 0.95, "clap": -1.0}, progress=False,
    )  # fmt: skip
    diagnosis = run_diagnose(config)
    assert set(diagnosis.summary["embedding"]["spaces"]) == {"clap"}
    assert all(o["near_identical"] for f in diagnosis.findings for o in f["distractors"])
    paths = write_outputs(diagnosis, tmp_path / "clap_only")
    assert "scatter" not in paths and paths["similarity"].is_file()

    audit_only = run_diagnose(DiagnoseConfig(datasets=[str(flawed)], similarity=False))
    assert audit_only.summary["embedding"] == {}
    assert "similarity" not in audit_only.findings[0]
    paths = write_outputs(audit_only, tmp_path / "audit_only")
    assert "Skipped (`--no_similarity`)" in paths["markdown"].read_text()
    assert sorted(p.name for p in (tmp_path / "audit_only" / "figures").iterdir()) == ["audit.png"]


@pytest.mark.parametrize(
    "extra, message",
    [
        (["a=FLAWED", "a=FLAWED"], "dataset name(s) 'a' given twice"),
        (["MISSING"], "question file not found"),
        (["FLAWED", "--t5", "./no/such/t5"], "no such folder"),
        (["FLAWED", "--near_clap", "1.5"], "a cosine is in [-1, 1]"),
    ],
)
def test_bad_input_is_a_clean_error(tmp_path, flawed, extra, message):
    extra = [e.replace("FLAWED", str(flawed)).replace("MISSING", str(tmp_path / "x.json"))
             for e in extra]  # fmt: skip
    done = run_cli(["diagnose", *extra, "--out", tmp_path / "out", "--no_progress"], check=False)
    assert done.returncode == 2, done.stderr[-2000:]
    assert message in done.stderr and "Traceback" not in done.stderr
