"""RUL-MMAU-music end to end: ``pi`` and ``build`` read MMAU's JSON, and the built file runs
as ``rul_mmau_music`` in four leave-one-out folds with RUL-MuChoMusic's fold votes."""

from __future__ import annotations

import json

import numpy as np
from doubles.chat import ChatServer

from lm_eval_rul.cli import main
from lm_eval_rul.report import majority_from_samples
from lm_eval_rul.testing.harness import read_output, run_cli
from lm_eval_rul.testing.mmau import mmau_rows, write_mmau_json

FOLDS = [f"rul_mmau_music_fold{k}" for k in range(4)]
CANDIDATES = ("Harp", "Oboe", "Tuba", "Lute", "Sitar", "Banjo", "Kazoo")


def test_pi_build_then_rul_mmau_music(tiny_lm, tmp_path, capsys):
    data = write_mmau_json(tmp_path / "mmau-test-mini.json")
    model = ["--model", "hf", "--model_args", f"pretrained={tiny_lm},dtype=float32",
             "--device", "cpu", "--batch_size", "8"]  # fmt: skip
    main(["pi", "--data", str(data), *model, "--output", str(tmp_path / "pi.jsonl")])
    pi_rows = [json.loads(line) for line in (tmp_path / "pi.jsonl").read_text().splitlines()]
    music = [r for r in mmau_rows() if r["task"] == "music"]
    assert sorted(r["id"] for r in pi_rows) == sorted(r["id"] for r in music)
    assert all(0.0 <= r["pi"] <= 1.0 for r in pi_rows)
    tags = "".join(f"<distractor>{c}</distractor>" for c in CANDIDATES)
    built = tmp_path / "rul_mmau.json"
    with ChatServer(lambda body: tags) as server:
        main(["build", "--data", str(data), "--generator", "local-chat-completions",
              "--generator_args", f"base_url={server.url},model=fake-llm,max_retries=1",
              "--n_batches", "1", *model, "--output", str(built), "--no_progress"])  # fmt: skip
        asked = [b["messages"][-1]["content"] for b in server.requests]
    assert "wrote 12 of 12 questions" in capsys.readouterr().out
    assert any("Which instrument carries the main line?" in text for text in asked)
    rows = json.loads(built.read_text())
    answers = {r["id"]: r["answer"] for r in music}
    assert set(rows) == set(answers)
    for qid, row in rows.items():
        assert row["correct_answer"] == answers[qid]
        assert len(row["distractors"]) == 4 and set(row["distractors"]) <= set(CANDIDATES)
    # the built file in four folds; its items keep MMAU's sub-categories
    out = tmp_path / "run"
    metadata = json.dumps({"data_path": str(built), "mmau_data_path": str(data)})
    run_cli(["run", *model, "--tasks", "rul_mmau_music", "--metadata", metadata,
             "--output_path", str(out), "--log_samples"])  # fmt: skip
    results, samples = read_output(out)
    for fold, task in enumerate(FOLDS):
        docs = [r["doc"] for r in samples[task]]
        assert len(docs) == 12 and {d["fold"] for d in docs} == {fold}
        assert all(d["dropped_distractor"] == rows[d["id"]]["distractors"][fold] for d in docs)
        assert {d["sub_category"] for d in docs} >= {"Instrumentation", "Lyrical Reasoning"}
    group = results["groups"]["rul_mmau_music"]
    votes = majority_from_samples([samples[t] for t in FOLDS])
    assert group["majority_acc,none"] == votes["majority_acc"]
    assert group["plurality_acc_release,none"] == votes["plurality_acc_release"]
    assert group["acc,none"] == np.mean([r["acc"] for t in FOLDS for r in samples[t]])
