"""NSynth and Medley-solos-DB as tagging tasks, on fixtures in the releases' layouts: the
readers (only Medley's test subset asked; mirdata's layout accepted; bad files one line), the
one-label reading of free text, and end to end: text-only ``hf``, ``lalm`` under original and
noise with ``report``'s sections, and a served model's scripted answers read independently."""

from __future__ import annotations

import itertools
import json
import shutil
import threading

import numpy as np
import pytest
from doubles.chat import ChatServer

from lm_eval_rul.harness_compat import sample_responses
from lm_eval_rul.tagging.data import TAGGING_METADATA_KEYS, check_tagging_data, task_clips
from lm_eval_rul.tagging.parsing import read_one
from lm_eval_rul.tagging.readers import TaggingDataError
from lm_eval_rul.tagging.releases import read_medley
from lm_eval_rul.tagging.vocab import MEDLEY_INSTRUMENTS, NSYNTH_FAMILIES, NSYNTH_SOURCES
from lm_eval_rul.testing.harness import read_output, run_cli
from lm_eval_rul.testing.tagging import MEDLEY_ROWS, NSYNTH_NOTES, write_medley, write_nsynth


@pytest.fixture(scope="module")
def releases(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("releases")
    medley = write_medley(root / "medley")
    return {
        "nsynth_dir": str(write_nsynth(root / "nsynth")),
        "medley_metadata": str(medley["metadata"]),
        "medley_audio_dir": str(medley["audio"]),
        "test": medley["test"],
    }


def _metadata(releases: dict) -> dict:
    return {k: v for k, v in releases.items() if k in TAGGING_METADATA_KEYS}


def test_readers_ask_the_release_labels_and_only_medley_test_subset(releases, tmp_path):
    metadata = _metadata(releases)
    family = task_clips("nsynth_instrument", metadata)
    source = task_clips("nsynth_source", metadata)
    assert [c.tags[0] for c in family.clips] == [n[0] for n in NSYNTH_NOTES]
    assert [c.tags[0] for c in source.clips] == [n[1] for n in NSYNTH_NOTES]
    assert family.tags == NSYNTH_FAMILIES and source.tags == NSYNTH_SOURCES
    assert all(f is not None and f.name == f"{c.id}.wav" for c, f in zip(
        family.clips, family.files, strict=True))  # fmt: skip
    medley = task_clips("medley_solos", metadata)
    assert [c.id for c in medley.clips] == releases["test"]
    assert len(medley.clips) == sum(s == "test" for s, _ in MEDLEY_ROWS) < len(MEDLEY_ROWS)
    assert all(f is not None and "_test-" in f.name for f in medley.files)
    clips, others = read_medley(releases["medley_metadata"])
    assert others == {"training": 3, "validation": 2} and len(clips) == 10
    # mirdata's layout: the audio dir alone (annotation/ and audio/ inside it)
    home = write_medley(tmp_path / "mirdata", mirdata=True)["home"]
    mirdata = task_clips("medley_solos", {"medley_audio_dir": str(home)})
    assert [c.id for c in mirdata.clips] == releases["test"]
    assert all(f is not None and f.parent.name == "audio" for f in mirdata.files)
    check_tagging_data({"nsynth_dir": releases["nsynth_dir"], "medley_audio_dir": str(home)})


def test_bad_release_files_are_one_line_naming_file_row_and_fix(releases, tmp_path):
    nsynth = tmp_path / "nsynth-test"
    shutil.copytree(releases["nsynth_dir"], nsynth)
    examples = json.loads((nsynth / "examples.json").read_text())
    first = next(iter(examples))
    examples[first]["instrument_family_str"] = "kazoo"
    (nsynth / "examples.json").write_text(json.dumps(examples))
    with pytest.raises(TaggingDataError, match=rf"note '{first}': instrument_family_str 'kazoo'"):
        check_tagging_data({"nsynth_dir": str(nsynth)})
    with pytest.raises(TaggingDataError, match="need --metadata nsynth_dir"):
        task_clips("nsynth_source", {})
    (nsynth / "examples.json").unlink()
    with pytest.raises(TaggingDataError, match="no examples.json in it"):
        check_tagging_data({"nsynth_dir": str(nsynth)})
    csv = tmp_path / "meta.csv"
    lines = open(releases["medley_metadata"], encoding="utf-8").read().splitlines()
    assert lines[3].startswith("test,female singer,2,")  # the fixture's third row
    csv.write_text(
        "\n".join([*lines[:3], lines[3].replace(",female singer,2,", ",female singer,5,")])
    )
    with pytest.raises(
        TaggingDataError, match=r"row 4: instrument_id '5' is not female singer's \(2\)"
    ):
        read_medley(csv)
    csv.write_text("subset,instrument,song_id,uuid4\ntest,piano,0,abc\n")
    with pytest.raises(TaggingDataError, match="row 1: no column 'instrument_id'"):
        read_medley(csv)
    csv.write_text("\n".join(lines[:1] + [x for x in lines[1:] if not x.startswith("test")]))
    with pytest.raises(TaggingDataError, match="no row of the test subset"):
        read_medley(csv)
    audio = tmp_path / "audio"
    audio.mkdir()
    with pytest.raises(TaggingDataError, match=r"medley_solos: 10 of 10 clips have no audio"):
        check_tagging_data({"medley_metadata": releases["medley_metadata"],
                            "medley_audio_dir": str(audio)})  # fmt: skip


def test_free_text_is_read_into_exactly_one_label():
    assert read_one("A synth lead, I think.", "nsynth_instrument", NSYNTH_FAMILIES).tags == (
        "synth_lead",
    )
    assert read_one("Bowed strings.", "nsynth_instrument", NSYNTH_FAMILIES).tags == ("string",)
    assert read_one("Not a flute: a reed.", "nsynth_instrument", NSYNTH_FAMILIES).tags == ("reed",)
    assert read_one("Synthesized.", "nsynth_source", NSYNTH_SOURCES).tags == ("synthetic",)
    assert read_one("a tenor sax solo", "medley_solos", MEDLEY_INSTRUMENTS).tags == (
        "tenor saxophone",
    )
    for answer, vocabulary, labels in (
        ("a bass guitar", "nsynth_instrument", NSYNTH_FAMILIES),  # two families: not guessed
        ("I cannot tell.", "nsynth_instrument", NSYNTH_FAMILIES),
        ("acoustic or electronic", "nsynth_source", NSYNTH_SOURCES),
        ("piano and violin", "medley_solos", MEDLEY_INSTRUMENTS),
    ):
        reading = read_one(answer, vocabulary, labels)
        assert reading.unparsed and reading.tags == ()


def test_text_only_letters_one_prompt_for_every_clip(tiny_lm, releases, tmp_path):
    out = tmp_path / "text"
    run_cli(["run", "--model", "hf", "--model_args", f"pretrained={tiny_lm},dtype=float32",
             "--tasks", "nsynth_instrument,nsynth_source,medley_solos",
             "--metadata", json.dumps(_metadata(releases)), "--device", "cpu",
             "--batch_size", "16", "--output_path", str(out), "--log_samples"])  # fmt: skip
    results, samples = read_output(out)
    assert [r["doc"]["id"] for r in samples["medley_solos"]] == releases["test"]
    for task, n_options, n_clips in (("nsynth_instrument", 11, 8), ("nsynth_source", 3, 8),
                                     ("medley_solos", 8, 10)):  # fmt: skip
        rows = samples[task]
        assert len(rows) == n_clips and len(sample_responses(rows[0])) == n_options
        first = [float(r[0]) for r in sample_responses(rows[0])]
        assert all(np.allclose([float(x[0]) for x in sample_responses(r)], first) for r in rows)
        assert results["results"][task]["acc,none"] == pytest.approx(
            np.mean([r["acc"] for r in rows])
        )


def test_lalm_original_and_noise_then_report_sections(tiny_audio_lm, releases, tmp_path):
    letters = {}
    metadata = {**_metadata(releases), "tagging_seconds": 1.5}  # the tiny model hears 2 s
    for condition in ("original", "noise"):
        out = tmp_path / condition
        run_cli(["run", "--model", "lalm", "--model_args",
                 f"pretrained={tiny_audio_lm},audio={condition},noise_seconds=1,"
                 "results_cache=none", "--tasks", "nsynth_instrument,medley_solos", "--limit", "3",
                 "--batch_size", "8", "--metadata", json.dumps(metadata),
                 "--device", "cpu", "--output_path", str(out), "--log_samples"])  # fmt: skip
        _, samples = read_output(out)
        rows = samples["nsynth_instrument"]
        assert [r["doc"]["audio_window"] for r in rows] == [[0.0, 1.5]] * 3
        heard = rows[0]["doc"]["audio_heard"]
        assert (f"{rows[0]['doc']['id']}.wav" in heard) == (condition == "original")
        assert all("_test-" in r["doc"]["audio_path"] for r in samples["medley_solos"])
        letters[condition] = [float(x[0]) for t in ("nsynth_instrument", "medley_solos")
                              for r in samples[t] for x in sample_responses(r)]  # fmt: skip
    assert not np.allclose(letters["original"], letters["noise"])
    report_dir = tmp_path / "report"
    run_cli(["report", str(tmp_path / "original"), str(tmp_path / "noise"), "--out",
             str(report_dir), "--n-resamples", "99"])  # fmt: skip
    tagging = json.loads((report_dir / "report.json").read_text())["tagging"]
    text = (report_dir / "report.md").read_text()
    for task, name in (("nsynth_instrument", "NSynth instrument"),
                       ("medley_solos", "Medley-solos-DB")):  # fmt: skip
        section = tagging["tasks"][task]
        assert section["name"] == name and section["metric"] == "acc"
        assert [r["condition"] for r in section["rows"]] == ["original", "noise"]
        (gain,) = section["gains"]
        assert gain["versus"] == "noise" and gain["n"] == 3 and gain["low"] <= gain["high"]
        assert gain["estimate"] == pytest.approx(
            section["rows"][0]["acc"] - section["rows"][1]["acc"]
        )
        assert len(section["baseline"]["tags"]) == 1
        assert f"### {name}" in text


#: Scripted replies -> the label each names in (NSynth families, NSynth sources, Medley),
#: written out by hand (the independent reading); None: none or several named.
REPLIES = {
    "It sounds like a keyboard.": ("keyboard", None, None),
    "Strings, bowed; acoustic.": ("string", "acoustic", None),
    "A distorted electric guitar, electronic": (
        "guitar", "electronic", "distorted electric guitar"),
    "Piano or violin, hard to say": (None, None, None),
    "synthetic synth lead": ("synth_lead", "synthetic", None),
    "Female singer.": (None, None, "female singer"),
    "I hear a flute": ("flute", None, "flute"),
    "Not a trumpet: a tenor sax.": (None, None, "tenor saxophone"),
    "Brass, not electronic but acoustic": ("brass", "acoustic", None),
}  # fmt: skip


def test_served_free_text_answers_scored_as_read_independently(releases, tmp_path):
    lock, cycle = threading.Lock(), itertools.cycle(REPLIES)

    def reply(body: dict) -> str:
        with lock:
            return next(cycle)

    out = tmp_path / "served"
    with ChatServer(reply) as server:
        run_cli(["run", "--model", "local-chat-completions", "--model_args",
                 f"base_url={server.url},model=stand-in,max_retries=1", "--apply_chat_template",
                 "--tasks", "nsynth_instrument_gen,nsynth_source_gen,medley_solos_gen",
                 "--metadata", json.dumps(_metadata(releases)), "--output_path", str(out),
                 "--log_samples"])  # fmt: skip
    results, samples = read_output(out)
    for column, task in enumerate(("nsynth_instrument_gen", "nsynth_source_gen",
                                   "medley_solos_gen")):  # fmt: skip
        rows = samples[task]
        named = [REPLIES[r["resps"][0][0]][column] for r in rows]
        gold = [r["doc"]["gold_tags"][0] for r in rows]
        figures = results["results"][task]
        assert figures["acc,none"] == pytest.approx(
            np.mean([n == g for n, g in zip(named, gold, strict=True)])
        )
        assert figures["parse_failure,none"] == pytest.approx(np.mean([n is None for n in named]))
    assert len(samples["medley_solos_gen"]) == 10
    report_dir = tmp_path / "report"
    run_cli(["report", str(out), "--out", str(report_dir), "--n-resamples", "99"])
    tagging = json.loads((report_dir / "report.json").read_text())["tagging"]
    (medley,) = tagging["tasks"]["medley_solos_gen"]["rows"]
    assert medley["parse_failure"] == pytest.approx(
        results["results"]["medley_solos_gen"]["parse_failure,none"]
    )
    table = tagging["understanding"]
    (row,) = table["rows"]
    for column, task in (("NSynth instrument", "nsynth_instrument_gen"),
                         ("NSynth source", "nsynth_source_gen"),
                         ("Medley-solos-DB", "medley_solos_gen")):  # fmt: skip
        assert column in table["columns"]
        assert row[column] == pytest.approx(results["results"][task]["acc,none"])
