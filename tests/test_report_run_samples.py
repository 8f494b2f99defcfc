"""Runs in the report by what the model was asked (generation arguments, the GTZAN split) and
the samples files beside a run's results: another run's samples are named in the notes."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")


GENRES = ["blues", "classical", "country", "disco", "hiphop", "jazz", "metal", "pop", "reggae",
          "rock"]  # fmt: skip


def fake_run(
    folder: Path,
    task: str,
    rows: list[dict[str, Any]],
    figures: dict[str, float],
    *,
    model: str = "hf",
    model_args: str = "pretrained=org/tiny",
    metadata: dict[str, Any] | None = None,
    output_type: str = "multiple_choice",
    metric_list: list[dict[str, Any]] | None = None,
    stamp: str = "2026-01-01T00-00-00.000001",
    top: dict[str, Any] | None = None,
    config: dict[str, Any] | None = None,
) -> Path:
    """``folder/org__tiny/results_STAMP.json`` and its samples, as the harness writes them."""
    out = folder / "org__tiny"
    out.mkdir(parents=True, exist_ok=True)
    task_config: dict[str, Any] = {
        "task": task, "output_type": output_type,
        "metadata": {"version": 1.0, **(metadata or {})},
    }  # fmt: skip
    if metric_list is not None:
        task_config["metric_list"] = metric_list
    results = {
        "results": {task: {"alias": task, **{f"{k},none": v for k, v in figures.items()}}},
        "configs": {task: task_config},
        "config": {"model": model, "model_args": model_args, **(config or {})},
        "n-samples": {task: {"original": len(rows), "effective": len(rows)}},
        **(top or {}),
    }
    (out / f"results_{stamp}.json").write_text(json.dumps(results))
    lines = "".join(
        json.dumps({"doc_id": i, "filter": "none", **r}) + "\n" for i, r in enumerate(rows)
    )
    (out / f"samples_{task}_{stamp}.jsonl").write_text(lines)
    return folder


def mc_rows(n: int = 4) -> list[dict[str, Any]]:
    """``music_mc`` samples of one file: even items right, odd ones wrong."""
    rows = []
    for i in range(n):
        options = [f"q{i} option {k}" for k in range(4)]
        doc = {"id": f"q{i}", "question": f"question {i}", "options": options,
               "letters": list("ABCD"), "correct_answer": options[0],
               "benchmark_name": "Bench", "benchmark_task": "music_mc"}  # fmt: skip
        chosen = i % 2
        lls = [[-0.1 if k == chosen else -3.0, False] for k in range(4)]
        rows.append({"doc": doc, "acc": float(chosen == 0), "filtered_resps": lls})
    return rows


MC_META = {"mc_data_path": "/d/bench.jsonl", "benchmark_name": "Bench"}


def gtzan_rows(clips: list[str], right: bool) -> list[dict[str, Any]]:
    """``gtzan_gen`` samples: one per clip ``genre.000NN``, each answered right or wrong."""
    rows = []
    for clip in clips:
        genre = clip.split(".")[0]
        doc = {"id": clip, "benchmark": "gtzan", "tagging_task": "gtzan", "tags": GENRES,
               "gold_tags": [genre], "gold_text": genre, "prompt": "Identify the genre.",
               "audio_path": f"{genre}/{clip}.wav", "audio_window": [0.0, 1.5]}  # fmt: skip
        answer = genre if right else "polka"
        rows.append({"doc": doc, "acc": float(right), "parse_failure": float(not right),
                     "resps": [[answer]], "filtered_resps": [answer]})  # fmt: skip
    return rows


MEANS = [
    {"metric": "acc", "aggregation": "mean"},
    {"metric": "parse_failure", "aggregation": "mean"},
]


GTZAN_META = {"gtzan_split_file": "/d/gtzan/test_filtered.txt", "gtzan_audio_dir": "/d/gtzan/a"}


def gtzan_run(folder: Path, clips: list[str], *, right: bool = True, printed: float = 1.0,
              stamp: str = "2026-01-01T00-00-00.000001") -> Path:  # fmt: skip
    return fake_run(
        folder, "gtzan_gen", gtzan_rows(clips, right),
        {"acc": printed, "parse_failure": 1.0 - printed}, model="lalm",
        model_args="pretrained=org/tiny,audio=original", metadata=GTZAN_META,
        output_type="generate_until", metric_list=MEANS, stamp=stamp,
    )  # fmt: skip


def report_of(folders: list[Path]) -> tuple[list, dict]:
    from lm_eval_rul.report import ReportSettings, build_report, load_runs

    runs = load_runs(folders)
    return runs, build_report(runs, ReportSettings(n_resamples=20))


ASKED = {
    "lalm-api system_prompt": (
        {"model": "lalm-api",
         "model_args": "base_url=http://h/v1,model=m,system_prompt=Answer with one letter."},
        {"model": "lalm-api",
         "model_args": "base_url=http://h/v1,model=m,system_prompt=Think step by step."},
        "system_prompt=Answer with one letter.",
    ),
    "hf --system_instruction": (
        {"top": {"system_instruction": "You are terse."}},
        {"top": {"system_instruction": "You are a musicologist."}},
        "system_instruction=You are terse.",
    ),
    "hf --gen_kwargs": (
        {"config": {"gen_kwargs": {"temperature": 0.0}}, "output_type": "generate_until"},
        {"config": {"gen_kwargs": {"temperature": 1.0, "do_sample": True}},
         "output_type": "generate_until"},
        "gen_kwargs=temperature=0.0",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(ASKED))
def test_runs_differing_in_what_the_model_was_asked_are_two_rows(case, tmp_path):
    """53.5: a system prompt (``system_prompt=``, ``--system_instruction``) or generation
    arguments (``--gen_kwargs``) that differ make two runs, each row named by its value;
    none is dropped as a repeat of the other."""
    first, second, shown = ASKED[case]
    a = fake_run(tmp_path / "a", "music_mc", mc_rows(), {"acc": 0.5}, metadata=MC_META, **first)
    b = fake_run(tmp_path / "b", "music_mc", mc_rows(), {"acc": 0.5}, metadata=MC_META,
                 stamp="2026-01-02T00-00-00.000001", **second)  # fmt: skip
    runs, report = report_of([a, b])
    assert len(runs) == 2
    assert not any("repeats" in note for note in report["notes"])
    settings = [row["setting"] for row in report["benchmarks"]["Bench"]["rows"]]
    assert len(set(settings)) == 2 and any(shown in s for s in settings), settings


def test_gen_kwargs_never_split_a_run_of_log_likelihood_tasks(tmp_path):
    """53.5: the harness ignores ``--gen_kwargs`` for log-likelihood tasks: a repeat of one
    with other generation arguments is still the same run (the newer used)."""
    a = fake_run(tmp_path / "a", "music_mc", mc_rows(), {"acc": 0.5}, metadata=MC_META)
    b = fake_run(tmp_path / "b", "music_mc", mc_rows(), {"acc": 0.5}, metadata=MC_META,
                 config={"gen_kwargs": {"max_gen_toks": 8}},
                 stamp="2026-01-02T00-00-00.000001")  # fmt: skip
    runs, report = report_of([a, b])
    assert len(runs) == 1 and any("repeats 1 task(s)" in n for n in report["notes"])


def test_a_gtzan_split_rewritten_between_two_runs_is_two_runs(tmp_path):
    """53.5: tagging runs carry a digest of the clips they asked: one ``gtzan_split_file``
    path rewritten in between gives two runs; the very same clips again stay one run."""
    a = gtzan_run(tmp_path / "a", ["blues.00012", "rock.00012"])
    b = gtzan_run(tmp_path / "b", ["jazz.00012", "pop.00012"], stamp="2026-01-02T00-00-00.000001")
    runs, _ = report_of([a, b])
    assert len(runs) == 2
    assert {len(r.tasks["gtzan_gen"].tagging_clips) for r in runs} == {2}
    assert runs[0].label != runs[1].label
    again = gtzan_run(tmp_path / "c", ["blues.00012", "rock.00012"],
                      stamp="2026-01-03T00-00-00.000001")  # fmt: skip
    runs, report = report_of([a, again])
    assert len(runs) == 1 and any("repeats 1 task(s)" in n for n in report["notes"])


def test_a_tagging_samples_file_of_another_run_is_named_in_the_notes(tmp_path):
    """53.6: results that print acc 1.0 over samples that give 0.0 (a ``gtzan_gen`` samples
    file swapped for another run's) get the note ``music_mc`` gets; so does a free-text
    tagging figure of its own aggregation (``micro_f1``)."""
    swapped = gtzan_run(tmp_path / "g", ["blues.00012", "rock.00012"], right=False)
    _, report = report_of([swapped])
    assert any(
        "gtzan_gen: the harness printed acc 1.000000 but the logged samples give 0.000000; the "
        "samples may come from another run" in note
        for note in report["notes"]
    ), report["notes"]
    # micro_f1 of mtg_top50_gen: the records give 0.0, the results print 1.0
    tags = ["genre---rock", "genre---pop"]
    rows = []
    for i, (gold, read) in enumerate([(["genre---rock"], ["genre---pop"]),
                                      (["genre---pop"], ["genre---rock"])]):  # fmt: skip
        record = {"id": f"t{i}", "task": "mtg_top50", "tags": tags, "gold": gold,
                  "labels": read, "unparsed": False}  # fmt: skip
        doc = {"id": f"t{i}", "tagging_task": "mtg_top50", "tags": tags, "gold_tags": gold}
        rows.append({"doc": doc, "micro_f1": record, "resps": [["x"]], "filtered_resps": ["x"]})
    aggregation = "lm_eval_rul.tagging.tasks.TagAggregation('micro_f1', 'gen')"
    mtg = fake_run(tmp_path / "m", "mtg_top50_gen", rows, {"micro_f1": 1.0},
                   output_type="generate_until",
                   metric_list=[{"metric": "micro_f1", "aggregation": aggregation}])  # fmt: skip
    from lm_eval_rul.report import load_runs

    (run,) = load_runs([mtg])
    assert run.tasks["mtg_top50_gen"].mismatches == [("micro_f1", "none", 1.0, 0.0)]


def test_samples_that_give_the_printed_figures_get_no_note(tmp_path):
    runs, report = report_of([gtzan_run(tmp_path / "g", ["blues.00012", "rock.00012"])])
    assert not any("another run" in note for note in report["notes"])
    assert runs[0].tasks["gtzan_gen"].mismatches == []
