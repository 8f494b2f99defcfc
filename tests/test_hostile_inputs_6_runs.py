"""Hostile inputs, sixth pass (issue 53, items 5-10 and 13): what a run asked is part of
its identity in ``report``, a samples file of another run is named for every family, a
served model's echo of its key is never written, ``--include_path`` descriptors claim
nothing built-in, cannot end the command and have their checks called, and an empty
``XDG_CACHE_HOME`` is unset."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

GENRES = ["blues", "classical", "country", "disco", "hiphop", "jazz", "metal", "pop", "reggae",
          "rock"]  # fmt: skip


# ------------------------------------------------------------------ fabricated harness output


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


# ------------------------------------------------------------------ 5: what the model was asked

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


# ------------------------------------------------------------------ 6: samples of another run


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


# ------------------------------------------------------------------ 7: a key in an answer


def test_a_served_answer_echoing_the_key_is_masked_in_every_file(tmp_path, monkeypatch):
    """53.7: the key a served model echoes in its completion is in no file ``run`` writes:
    the samples, the results and the resume cache hold ``***`` instead."""
    from doubles.chat import ChatServer

    from lm_eval_rul.cli import main
    from lm_eval_rul.testing.tagging import write_gtzan

    key = "sk-echoedKEY0123456789abc"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    gtzan = write_gtzan(tmp_path / "gtzan", per_genre=1)
    metadata = {"gtzan_split_file": str(gtzan["split"]), "gtzan_audio_dir": str(gtzan["audio"])}
    cache = tmp_path / "cache.sqlite"
    with ChatServer(lambda body: f"rock (my key is {key})") as server:
        main(["run", "--model", "lalm-api", "--model_args",
              f"base_url={server.url},model=stand-in,results_cache={cache}",
              "--tasks", "gtzan_gen", "--metadata", json.dumps(metadata), "--limit", "2",
              "--output_path", str(tmp_path / "out"), "--log_samples"])  # fmt: skip
    (samples,) = (tmp_path / "out").rglob("samples_gtzan_gen_*.jsonl")
    answers = [json.loads(line)["resps"][0][0] for line in samples.read_text().splitlines()]
    assert answers == ["rock (my key is ***)"] * 2
    written = [p.read_bytes() for p in [*tmp_path.rglob("*.json*"), cache] if p.is_file()]
    assert written and not any(key.encode() in data for data in written)
    with sqlite3.connect(cache) as db:
        assert db.execute("SELECT COUNT(*) FROM results").fetchone()[0] >= 2


def test_mask_reply_masks_every_text_and_keeps_the_rest():
    from lm_eval_rul.masking import mask_reply

    body = {"choices": [{"message": {"content": "key abcd1234 and sk-proj-0123456789"},
                         "logprobs": {"content": [{"token": "A", "logprob": -0.5}]}}]}  # fmt: skip
    masked = mask_reply(body, ["abcd1234"])
    assert masked["choices"][0]["message"]["content"] == "key *** and ***"
    assert masked["choices"][0]["logprobs"] == body["choices"][0]["logprobs"]


# ------------------------------------------------------------------ 8, 9, 10: descriptors


def user_folder(root: Path, descriptor: str, *, name: str = "mybench", check: str = "") -> Path:
    """``root/mine/<name>/``: one multiple-choice task, its benchmark.py (and a check module)."""
    folder = root / "mine" / name
    folder.mkdir(parents=True)
    (folder / f"{name}.yaml").write_text(
        f"task: {name}\ndataset_path: ''\ncustom_dataset: !function utils.load\n"
        "output_type: multiple_choice\ndoc_to_text: '{{q}}'\ndoc_to_choice: [a, b]\n"
        "doc_to_target: 0\n"
    )
    (folder / "utils.py").write_text(
        "import datasets\n\n"
        "def load(**kwargs):\n"
        "    return {'test': datasets.Dataset.from_list([{'q': 'one?'}, {'q': 'two?'}])}\n"
    )
    (folder / "benchmark.py").write_text(descriptor)
    if check:
        (root / "mychecks.py").write_text(check)
    return root / "mine"


def _descriptor(**fields: str) -> str:
    fields = {"metadata_keys": "()", **fields}
    given = ", ".join(f"{key}={value}" for key, value in fields.items())
    return (
        "from lm_eval_rul.catalogue import Benchmark\n"
        f"BENCHMARK = Benchmark(folder='mybench', name='Mine', {given})\n"
    )


CLAIMS = {
    "a built-in fold group": (
        _descriptor(fold_groups="('rul_muchomusic',)", votes="()",
                    report_names="{'rul_muchomusic': 'Hijacked RUL'}"),
        "fold_groups claims 'rul_muchomusic'",
    ),
    "a built-in question set": (
        _descriptor(data_keys="{'mmau_music': 'mybench_path'}"),
        "data_keys claims 'mmau_music'",
    ),
    "a built-in title": (
        _descriptor(report_names="{'mybench': 'RUL-MuchoMusic'}"),
        "report_names claims 'RUL-MuchoMusic'",
    ),
    "a built-in report name": (
        _descriptor(report_names="{'gtzan': 'Not GTZAN'}"), "report_names claims 'gtzan'"
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(CLAIMS))
def test_a_user_descriptor_claiming_a_built_in_name_is_refused(case, tmp_path):
    """53.8: a ``benchmark.py`` naming a built-in fold group, question set or report name
    is one line naming the file and the claim; the built-in's votes and names stay."""
    from lm_eval_rul import catalogue
    from lm_eval_rul.descriptors import DescriptorError
    from lm_eval_rul.included import included

    text, claim = CLAIMS[case]
    mine = user_folder(tmp_path, text)
    with pytest.raises(DescriptorError) as error, included(str(mine)):
        pass
    line = str(error.value)
    assert "\n" not in line and claim in line
    assert str(mine / "mybench" / "benchmark.py") in line
    assert catalogue.fold_groups()["rul_muchomusic"] == catalogue.VOTE_METRICS
    assert catalogue.report_names()["gtzan"] == "GTZAN"


def test_a_hijacking_descriptor_stops_run_before_the_model(tiny_lm, tmp_path, capsys,
                                                          constructions):  # fmt: skip
    from lm_eval_rul.testing.harness import cli_error_line

    mine = user_folder(tmp_path, CLAIMS["a built-in fold group"][0])
    line = cli_error_line(["run", "--model", "hf", "--model_args", f"pretrained={tiny_lm}",
                           "--tasks", "mybench", "--include_path", str(mine), "--device", "cpu"],
                          capsys)  # fmt: skip
    assert "fold_groups claims 'rul_muchomusic'" in line and constructions == []


@pytest.mark.parametrize("call", ["import sys\nsys.exit(0)\n", "exit()\n", "raise SystemExit(3)\n"])
def test_a_descriptor_that_exits_at_import_is_one_line_exit_2(call, tiny_lm, tmp_path, capsys,
                                                              constructions):  # fmt: skip
    """53.9: ``sys.exit(0)`` / ``exit()`` in a ``benchmark.py`` cannot end ``run`` in silence
    with exit 0: one line naming the file, exit 2, no model."""
    from lm_eval_rul.cli import main

    mine = user_folder(tmp_path, call + _descriptor())
    with pytest.raises(SystemExit) as stopped:
        main(["run", "--model", "hf", "--model_args", f"pretrained={tiny_lm}",
              "--tasks", "mybench", "--include_path", str(mine), "--device", "cpu"])  # fmt: skip
    assert stopped.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(mine / "mybench" / "benchmark.py") in err[0]
    assert "called exit" in err[0] and constructions == []


CHECK = (
    "from lm_eval_rul.errors import UserInputError\n"
    "def check(metadata):\n"
    "    if metadata.get('mybench_path') != 'ok.json':\n"
    "        raise UserInputError(f\"mybench_path={metadata.get('mybench_path')!r} is not ok\")\n"
    "def broken(metadata):\n"
    "    raise RuntimeError('no such table')\n"
)


@pytest.mark.parametrize(
    "checks, said",
    [("('mychecks:check',)", "mybench_path='bad.json' is not ok"),
     ("('mychecks:broken',)", "its check 'mychecks:broken' refused --metadata (RuntimeError: "
                              "no such table)")],
)  # fmt: skip
def test_run_calls_every_check_a_descriptor_declares_before_the_model(
    checks, said, tiny_lm, tmp_path, capsys, constructions, monkeypatch
):
    """53.10: ``run`` calls each ``checks`` function of an ``--include_path`` benchmark.py
    before the model loads, as ``task_manager`` does: its refusal is the one line."""
    from lm_eval_rul.testing.harness import cli_error_line

    monkeypatch.syspath_prepend(str(tmp_path))
    mine = user_folder(tmp_path, _descriptor(metadata_keys="('mybench_path',)", checks=checks),
                       check=CHECK)  # fmt: skip
    metadata = json.dumps({"mybench_path": "bad.json"})
    line = cli_error_line(["run", "--model", "hf", "--model_args", f"pretrained={tiny_lm}",
                           "--tasks", "mybench", "--include_path", mine, "--device", "cpu",
                           "--metadata", metadata], capsys)  # fmt: skip
    assert said in line and constructions == []


# ------------------------------------------------------------------ 13: XDG_CACHE_HOME=""


@pytest.mark.parametrize("value", ["", "relative/cache"])
def test_an_empty_or_relative_xdg_cache_home_is_unset(value, tmp_path, monkeypatch):
    """53.13: ``XDG_CACHE_HOME`` set but empty (or relative, which XDG also calls invalid)
    never puts a cache in the working folder: ``~/.cache/lm_eval_rul`` is used, for every
    cache of the package (they all ask :func:`~lm_eval_rul.questions.cache_dir`)."""
    from lm_eval_rul.questions import cache_dir

    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("LM_EVAL_RUL_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", value)
    monkeypatch.chdir(tmp_path)
    assert cache_dir() == home / ".cache" / "lm_eval_rul"
    assert not (tmp_path / "lm_eval_rul").exists() and not (tmp_path / "relative").exists()
