"""Which items need the audio, end to end, on a served model that listens for real.

The loopback server (``doubles.listening_server``) answers an item right only when the WAV
``lalm-api`` sends holds that item's tone, or when the item is answerable from its text;
some items are never answered right, and some items' tones sound only in the last two of
their eight seconds. Four runs of ``music_mc_gen`` (``original``, ``none``, ``noise``, a
3-second ``excerpt`` from the start) then ``lm-eval-rul report`` must give the classes and
``needs_whole_clip`` flags of the construction in ``items.csv``; ``lm-eval-rul subset``
writes the ``needs_audio`` items in the file's own layout, and that file runs as a
benchmark holding exactly them.
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import numpy as np
import pytest
from doubles.listening_server import ListenedItem, ListeningServer

os.environ.setdefault("HF_HUB_OFFLINE", "1")

RATE = 16_000
SECONDS = 8.0
#: id -> (kind, tone start s, tone end s); the expected class and needs_whole_clip.
CONSTRUCTION = {
    "q0": ("text", 0, 0, "answered_without_audio", "false"),
    "q1": ("text", 0, 0, "answered_without_audio", "false"),
    "q2": ("never", 0, 0, "missed", "false"),
    "q3": ("audio", 0.0, 8.0, "needs_audio", "false"),
    "q4": ("audio", 0.5, 2.5, "needs_audio", "false"),
    "q5": ("audio", 6.0, 8.0, "needs_audio", "true"),
    "q6": ("audio", 5.5, 8.0, "needs_audio", "true"),
    "q7": ("never", 0, 0, "missed", "false"),
}


def _benchmark(root: Path) -> tuple[Path, Path, list[ListenedItem]]:
    """The question file (JSON lines, our own layout), one clip per item, the items."""
    import soundfile as sf

    audio = root / "clips"
    audio.mkdir()
    rows, items = [], []
    rng = np.random.default_rng(0)
    for n, (qid, (kind, start, end, _, _)) in enumerate(CONSTRUCTION.items()):
        question = f"Which sound does item {qid} make?"
        answer = f"the sound of {qid}"
        rows.append({"id": qid, "question": question, "correct_answer": answer,
                     "distractors": [f"decoy {k} of {qid}" for k in range(3)]})  # fmt: skip
        hz = 400.0 + 150.0 * n
        t = np.arange(int(SECONDS * RATE)) / RATE
        wave = 0.01 * rng.standard_normal(t.size)
        inside = (t >= start) & (t < end)
        wave[inside] += 0.5 * np.sin(2 * np.pi * hz * t[inside])
        sf.write(audio / f"{qid}.wav", wave.astype(np.float32), RATE)
        items.append(ListenedItem(question, answer, kind, hz))
    questions = root / "bench.jsonl"
    questions.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return questions, audio, items


def _run(server: ListeningServer, audio: str, metadata: dict, out: Path) -> None:
    from lm_eval_rul.cli import main

    model_args = (f"base_url={server.url},model=listener,audio={audio},results_cache=none,"
                  "retry_backoff=0")  # fmt: skip
    main(
        [
            "run", "--model", "lalm-api", "--model_args", model_args, "--tasks", "music_mc_gen",
            "--metadata", json.dumps(metadata), "--gen_kwargs", "max_gen_toks=8",
            "--log_samples", "--output_path", str(out),
        ]
    )  # fmt: skip


@pytest.fixture(scope="module")
def listened(tmp_path_factory):
    from lm_eval_rul.cli import main

    root = tmp_path_factory.mktemp("listening")
    questions, audio, items = _benchmark(root)
    metadata = {"mc_data_path": str(questions), "audio_dir": str(audio),
                "benchmark_name": "tones"}  # fmt: skip
    conditions = {
        "original": "original",
        "none": "none",
        "noise": "noise",
        "excerpt": "excerpt,excerpt_seconds=3,excerpt_at=start",
    }
    with ListeningServer(items) as server:
        for name, audio_arg in conditions.items():
            _run(server, audio_arg, metadata, root / "runs" / name)
        heard = list(server.heard)
        report = root / "report"
        main(["report", *(str(root / "runs" / n) for n in conditions), "--out", str(report),
              "--n-resamples", "199"])  # fmt: skip
        yield {"root": root, "report": report, "heard": heard, "server": server,
               "metadata": metadata, "questions": questions}  # fmt: skip


def test_items_csv_gives_the_construction(listened):
    with (listened["report"] / "items.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert {row["id"]: (row["class"], row["needs_whole_clip"]) for row in rows} == {
        qid: (expected, whole) for qid, (*_, expected, whole) in CONSTRUCTION.items()
    }
    (row,) = [r for r in rows if r["id"] == "q5"]
    assert row["shortest_excerpt_seconds"] == "" and row["correct[original]"] == "1"
    assert row["correct[none]"] == row["correct[noise]"] == "0"
    (row,) = [r for r in rows if r["id"] == "q3"]
    assert row["shortest_excerpt_seconds"] == "3"
    assert any("excerpt" in column for column in rows[0])
    # the excerpt was what was heard: the late tones never in the first 3 s
    report = json.loads((listened["report"] / "report.json").read_text())
    (model,) = report["listening"]["tones_gen"]["models"]
    assert model["counts"] == {"needs_audio": 4, "answered_without_audio": 2, "missed": 2}
    assert model["n_needs_whole_clip"] == 2
    share = model["shares"]["needs_audio"]
    assert share["estimate"] == 0.5 and share["low"] < 0.5 < share["high"]
    assert [p["seconds"] for p in model["curve"]] == [0.0, 0.0, 3.0, None]
    markdown = (listened["report"] / "report.md").read_text()
    assert "## Which items need the audio" in markdown
    assert (listened["report"] / report["listening"]["tones_gen"]["figure"]).is_file()


def test_the_logged_samples_name_the_excerpt_heard(listened):
    (path,) = (listened["root"] / "runs" / "excerpt").rglob("samples_*.jsonl")
    windows = {json.loads(line)["doc"]["id"]: json.loads(line)["doc"]["audio_window"]
               for line in path.read_text().splitlines()}  # fmt: skip
    assert windows == {qid: [0.0, 3.0] for qid in CONSTRUCTION}


def test_the_subset_runs_as_a_benchmark_holding_exactly_the_chosen_items(listened, capsys):
    from lm_eval_rul.cli import main
    from lm_eval_rul.testing.harness import cli_error_line

    out = listened["root"] / "subset" / "tones_listening.jsonl"
    out.parent.mkdir()
    main(["subset", str(listened["report"]), "--benchmark", "tones_gen", "--models", "listener",
          "--out", str(out)])  # fmt: skip
    assert "4 item(s) of tones_gen" in capsys.readouterr().out
    lines = listened["questions"].read_text().splitlines()
    source = {json.loads(line)["id"]: line for line in lines}
    kept = out.read_text().splitlines()
    assert kept == [source[q] for q in ("q3", "q4", "q5", "q6")]  # its own lines, byte for byte
    record = json.loads(out.with_name(out.name + ".provenance.json").read_text())
    assert record["ids"] == ["q3", "q4", "q5", "q6"] and record["kept_source_layout"] is True
    assert record["rule"]["models"] == ["listener"] and record["rule"]["at_least"] == 1
    assert record["runs"]["listener"]["original"] == "listener [original]"
    assert record["source"] == str(listened["questions"])
    assert "never instead of" in record["caution"]

    metadata = {**listened["metadata"], "mc_data_path": str(out), "benchmark_name": "subset"}
    _run(listened["server"], "original", metadata, listened["root"] / "runs_subset")
    (path,) = (listened["root"] / "runs_subset").rglob("samples_*.jsonl")
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert sorted(row["doc"]["id"] for row in rows) == ["q3", "q4", "q5", "q6"]
    assert all(row["acc"] == 1.0 for row in rows)  # heard with the whole clip: all right

    line = cli_error_line(["subset", str(listened["report"]), "--benchmark", "tones_gen",
                           "--models", "nobody", "--out", str(out)], capsys)  # fmt: skip
    assert "--models nobody: no listening classes for them on tones_gen" in line
    assert "models with classes: listener" in line
