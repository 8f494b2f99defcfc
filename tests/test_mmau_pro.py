"""MMAU-Pro-music: only the closed-form music items of the released ``test.parquet`` are
asked (the others counted), ``mmau_pro_protocol=official`` agrees with the authors'
embedding-matching rule on replayed answers (a tiny stand-in embedder), and a two-clip item
is heard whole: another second clip changes that item's letters and no other's, each
clip's heard seconds logged, a clip over the model's limit cut and said so per sample."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import numpy as np
import pytest
from doubles.chat import ChatServer

from lm_eval_rul.harness_compat import sample_responses
from lm_eval_rul.mcqa.mmau.pro import load_mmau_pro
from lm_eval_rul.testing.audio import synth_clip, write_clip
from lm_eval_rul.testing.families import family_keys
from lm_eval_rul.testing.harness import read_output, run_cli
from lm_eval_rul.testing.mmau_pro import (
    authors_closed_form_accuracy,
    mmau_pro_rows,
    write_mmau_pro_audio,
    write_mmau_pro_parquet,
    write_tiny_embedder,
)

ROWS = mmau_pro_rows()
ASKED = [r for r in ROWS if r["category"] == "music" and len(r["choices"]) > 1]
TWO_CLIPS = next(r for r in ASKED if len(r["audio_path"]) == 2)
#: Free text by question: a choice's words, a choice among other words, a bare letter,
#: an empty answer.
SCRIPTED = {
    "Which instrument plays the melody?": "I think it is the violin",
    "Is the second recording faster than the first?": "No",
    "What is the metre?": "B",
    "Which clip is in a minor key?": "",
}


@pytest.fixture(scope="session")
def mmau_pro_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("mmau_pro")
    write_mmau_pro_parquet(root / "test.parquet")
    write_mmau_pro_audio(root / "release")  # the release's data/<uuid>.wav
    return root


def test_only_closed_form_music_items_are_asked_and_the_rest_counted(mmau_pro_dir, caplog):
    data = str(mmau_pro_dir / "test.parquet")
    with caplog.at_level(logging.WARNING):
        docs = load_mmau_pro(mmau_pro_data=data, mmau_pro_audio_dir=str(mmau_pro_dir / "release"),
                             shuffle_seed=7)["test"]  # fmt: skip
    assert sorted(d["id"] for d in docs) == [r["id"] for r in ASKED]
    assert (f"{data}: asking MMAU-Pro's 4 closed-form music items (2 of them over several "
            "clips) of 8 rows; not asked: category sound: 1; instruction following: 1; music "
            "without 2 choices: 1; open: 1") in caplog.text  # fmt: skip
    doc = next(d for d in docs if d["id"] == TWO_CLIPS["id"])
    clips = json.loads(doc["audio_clips"])
    assert [c["id"] for c in clips] == [doc["id"], f"{doc['id']}#1"]
    assert [Path(json.loads(c["audio_ref"])["path"]).name for c in clips] == [
        Path(p).name for p in TWO_CLIPS["audio_path"]
    ]
    assert doc["audio_ref"] == clips[0]["audio_ref"]
    assert doc["options"][doc["gold"]] == TWO_CLIPS["answer"]
    # random: each clip is replaced by another clip of the pool, drawn per clip
    from lm_eval_rul.audio import AudioSpec
    from lm_eval_rul.audio.requests import RequestAudio

    parts = tuple(json.loads(doc["audio_clips"]))
    key = RequestAudio("plugin", parts).key(AudioSpec(16_000, None, "random"))
    drawn = [part[1] for part in key[1:]]
    assert key[0] == "clips" and len(drawn) == 2
    assert not set(drawn) & {c["audio_ref"] for c in clips}
    others = {json.loads(d["audio_clips"])[i]["audio_ref"] for d in docs
              for i in range(len(json.loads(d["audio_clips"]))) if d["id"] != doc["id"]}
    assert set(drawn) <= others  # clips of the other items
    # official's embedder is looked for when the generation task loads, before any model
    from lm_eval_rul.mcqa.mmau.pro import load_mmau_pro_gen
    from lm_eval_rul.mcqa.tasks import TaskMetadataError

    with pytest.raises(TaskMetadataError, match="'nvidia/NV-Embed-v2' .* neither a saved "
                       "checkpoint folder nor in your Hugging Face cache"):  # fmt: skip
        load_mmau_pro_gen(mmau_pro_data=data, mmau_pro_protocol="official")


def _scripted(body: dict) -> str:
    text = json.dumps(body["messages"])
    return next(reply for question, reply in SCRIPTED.items() if question in text)


def test_official_protocol_is_the_authors_embedding_match(mmau_pro_dir, tmp_path):
    import torch
    from transformers import AutoModel, AutoTokenizer

    embedder = write_tiny_embedder(tmp_path / "embedder")
    out = tmp_path / "official"
    metadata = {"mmau_pro_data": str(mmau_pro_dir / "test.parquet"),
                "mmau_pro_protocol": "official", "mmau_pro_embedder": str(embedder)}
    with ChatServer(_scripted) as server:
        run_cli(["run", "--model", "local-chat-completions", "--model_args",
                 f"base_url={server.url},model=stand-in,max_retries=1", "--apply_chat_template",
                 "--tasks", "mmau_pro_music_gen", "--metadata", json.dumps(metadata),
                 "--output_path", str(out), "--log_samples"])  # fmt: skip
    results, samples = read_output(out)
    rows = samples["mmau_pro_music_gen"]
    sent = [body["messages"][-1]["content"] for body in server.requests]
    assert "What is the metre?\n\nA. Duple\nB. Triple\nC. Quadruple" in sent  # release order

    model = AutoModel.from_pretrained(embedder).eval()
    tokenizer = AutoTokenizer.from_pretrained(embedder)

    def embed(texts):  # one text at a time: no padding at all
        out = []
        for text in texts:
            ids = tokenizer(text, return_tensors="pt")
            with torch.no_grad():
                hidden = model(**ids).last_hidden_state[0]
            vector = hidden.mean(0).numpy()
            out.append(vector / np.linalg.norm(vector))
        return np.stack(out)

    predictions = {r["id"]: SCRIPTED[r["question"]] for r in ASKED}
    expected = authors_closed_form_accuracy(ROWS, predictions, embed)
    assert results["results"]["mmau_pro_music_gen"]["acc,none"] == pytest.approx(expected)
    assert results["results"]["mmau_pro_music_gen"]["parse_failure,none"] == pytest.approx(1 / 4)
    for row in rows:  # item by item, the matched choice is the authors'
        doc = row["doc"]
        said = embed([predictions[doc["id"]]])
        scores = said @ embed(doc["choices"]).T
        assert doc["matched_choice"] == doc["choices"][int(np.argmax(scores))]
    report_dir = tmp_path / "report"
    run_cli(["report", str(out), "--out", str(report_dir), "--n-resamples", "99"])
    report = json.loads((report_dir / "report.json").read_text())
    assert report["benchmarks"]["mmau_pro_music_gen"]["name"] == "MMAU-Pro-music (generation)"
    (row,) = report["tagging"]["understanding"]["rows"]  # the reports' music table grows
    assert row["MMAU-Pro-music"] == pytest.approx(expected)


def test_two_clip_item_is_heard_whole_under_lalm(tiny_lm, tiny_audio_lm, mmau_pro_dir,
                                                 tmp_path):  # fmt: skip
    data = str(mmau_pro_dir / "test.parquet")
    out = tmp_path / "text"
    run_cli(["run", "--model", "hf", "--model_args", f"pretrained={tiny_lm},dtype=float32",
             "--tasks", "mmau_pro_music", "--metadata", json.dumps({"mmau_pro_data": data}),
             "--device", "cpu", "--output_path", str(out), "--log_samples"])  # fmt: skip
    _, samples = read_output(out)
    assert sorted(len(r["filtered_resps"]) for r in samples["mmau_pro_music"]) == [2, 3, 3, 4]
    changed = tmp_path / "changed"
    shutil.copytree(mmau_pro_dir / "release", changed)
    write_clip(changed / TWO_CLIPS["audio_path"][1], synth_clip("clicks", seconds=2.0, seed=9))

    def letters(audio_dir: Path, condition: str, extra: str = "") -> dict[str, list]:
        out = tmp_path / f"{audio_dir.name}_{condition}{extra.replace('=', '')}"
        metadata = json.dumps({"mmau_pro_data": data, "mmau_pro_audio_dir": str(audio_dir)})
        done = run_cli(["run", "--model", "lalm", "--model_args",
                 f"pretrained={tiny_audio_lm},audio={condition},noise_seconds=1{extra}",
                 "--tasks", "mmau_pro_music", "--metadata", metadata, "--device", "cpu",
                 "--output_path", str(out), "--log_samples"])  # fmt: skip
        _, samples = read_output(out)
        letters.said = done.stdout + done.stderr
        letters.rows = {r["doc"]["id"]: r["doc"] for r in samples["mmau_pro_music"]}
        return {r["doc"]["id"]: [float(x[0]) for x in sample_responses(r)]
                for r in samples["mmau_pro_music"]}  # fmt: skip

    original = letters(mmau_pro_dir / "release", "original")
    heard = letters.rows[TWO_CLIPS["id"]]
    assert heard["audio_seconds"] == [1.0, 1.0] and heard["audio_clip_seconds"] == [1.0, 1.0]
    assert heard["audio_heard"].count(" + ") == 1  # both clips, in order
    # another second clip, 2 s long, heard up to a limit of 1.5 s (the others are 1 s long)
    other = letters(changed, "original", ",max_audio_seconds=1.5")
    for item, values in original.items():
        same = np.allclose(values, other[item])
        assert same != (item == TWO_CLIPS["id"]), item  # that item's letters, no other's
    heard = letters.rows[TWO_CLIPS["id"]]
    assert heard["audio_seconds"] == [1.0, 1.5] and heard["audio_clip_seconds"] == [1.0, 2.0]
    assert "longer than the model's limit of 1.5 s were trimmed to their first 1.5 s" in (
        letters.said
    )  # and the run says it once
    noise = letters(mmau_pro_dir / "release", "noise")
    assert letters.rows[TWO_CLIPS["id"]]["audio_seconds"] == [1.0, 1.0]  # one noise per clip
    assert not np.allclose(noise[TWO_CLIPS["id"]], original[TWO_CLIPS["id"]])


@pytest.mark.parametrize("family", family_keys(in_ci=True, content="typed"))
def test_two_clip_prompt_is_each_processors_own_rendering(family_models, mmau_pro_dir, family):
    """Every family that writes audio as chat items: ``lalm``'s two-clip prompt, expanded by
    its processor path, is token for token the processor's own rendering of both clips; a
    family whose template writes one audio a turn refuses two-clip items before it loads."""
    import torch

    from lm_eval_rul.cli.preflight import SeveralClipsError, check_clip_counts
    from lm_eval_rul.models.args import LALMArgumentError
    from lm_eval_rul.models.core import chat_messages
    from lm_eval_rul.models.lalm import LALM
    from lm_eval_rul.models.prompts import audio_item

    lm = LALM(pretrained=str(family_models[family]), dtype="float32", device="cpu")
    rate = lm.spec.sampling_rate
    waves = [synth_clip("tone", seconds=1.0, seed=1), synth_clip("clicks", seconds=0.5, seed=2)]
    question = "Is the second recording faster than the first?"
    if lm.family.max_clips == 1:  # its template writes one audio marker, however many given
        parts = [{"type": "audio", "audio": w} for w in waves]
        rendered = lm.processor.apply_chat_template(chat_messages(question, audio_parts=parts),
                                                    add_generation_prompt=True, tokenize=False)
        assert rendered.count(lm.placeholder) == 1
        with pytest.raises(LALMArgumentError, match="1 clip a prompt .* the 2 clips of this doc"):
            lm.prompt_text(question, clips=2)
        docs = list(load_mmau_pro(mmau_pro_data=str(mmau_pro_dir / "test.parquet"),
                                  mmau_pro_audio_dir=str(mmau_pro_dir / "release"))["test"])
        with pytest.raises(SeveralClipsError) as refused:  # before any model loads
            check_clip_counts("lalm", {"pretrained": str(family_models[family])}, docs)
        two = ", ".join(sorted(r["id"] for r in ASKED if len(r["audio_path"]) == 2))
        assert f"2 item(s) ({two})" in str(refused.value)
        assert "\n" not in str(refused.value)
        check_clip_counts("lalm", {"pretrained": str(family_models[family]), "audio": "none"},
                          docs)  # no clip is played: nothing to refuse
        return
    ours = lm._model_inputs([lm.prompt_text(question, clips=2)], waves)["input_ids"]
    if lm.family.prompts == "mistral":
        parts = [audio_item(w, rate) for w in waves]
        theirs = lm.processor.apply_chat_template(
            chat_messages(question, audio_parts=parts), add_generation_prompt=True
        )
    else:
        theirs = lm.processor.apply_chat_template(
            chat_messages(question, audio_parts=[{"type": "audio", "audio": w} for w in waves]),
            add_generation_prompt=True, tokenize=True, return_dict=True, return_tensors="pt",
            processor_kwargs={"sampling_rate": rate},
        )  # fmt: skip
    assert torch.equal(ours, theirs["input_ids"])
    one = lm._model_inputs([lm.prompt_text(question, clips=1)], waves[:1])["input_ids"]
    audio = [sum(t in lm._audio_ids for t in ids[0].tolist()) for ids in (one, ours)]
    assert 0 < audio[0] < audio[1]  # the second clip is in the prompt too
