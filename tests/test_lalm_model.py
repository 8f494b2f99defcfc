"""The ``lalm`` model on tiny random-weight audio LMs of real classes (offline)."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest

from lm_eval_rul.models.families import family_for
from lm_eval_rul.testing.families import family_keys

os.environ.setdefault("HF_HUB_OFFLINE", "1")

#: The ``FAMILIES`` rows with a fast tiny model (generic template, 2-second window); every
#: row's published-conventions model: test_lalm_published.py, test_family_builders.py.
FAST = family_keys(fast=True)


@pytest.fixture(scope="session")
def tiny(tmp_path_factory, tiny_audio_lm) -> dict[str, Path]:
    """Fast tiny models of those rows (plus one with two-token letters), built once."""
    from lm_eval_rul.testing.audio import make_tiny_audio_lm

    root = tmp_path_factory.mktemp("lalm_models")
    models = {"qwen2_audio": tiny_audio_lm}  # conftest's, the same build
    models.update({f: make_tiny_audio_lm(root / f, f) for f in FAST if f not in models})
    models["split_letters"] = make_tiny_audio_lm(
        root / "split_letters", "qwen2_audio", merge_letters=False
    )
    return models


@pytest.fixture(scope="session")
def fixture_data(audio_data) -> dict[str, str]:
    """8 RUL questions, their MuChoMusic CSV (tracks shared by pairs) and 4 clips."""
    return audio_data


def _docs(metadata: dict[str, str], fold: int = 0) -> list[dict]:
    from lm_eval_rul.mcqa.tasks import load_rul_muchomusic

    docs = list(load_rul_muchomusic(fold, **metadata)["test"])
    return sorted(docs, key=lambda d: int(d["id"]))  # the file's order (the tasks': seeded)


def _requests(docs: list[dict]) -> list:
    """One loglikelihood Instance per choice letter, as the harness builds them."""
    from lm_eval.api.instance import Instance

    from lm_eval_rul.mcqa.tasks import doc_to_choice, doc_to_text

    out = []
    for doc in docs:
        for index, letter in enumerate(doc_to_choice(doc)):
            out.append(
                Instance(
                    request_type="loglikelihood",
                    doc=doc,
                    arguments=(doc_to_text(doc), f" {letter}"),
                    idx=index,
                )
            )
    return out


def _model(path: Path, **kwargs):
    from lm_eval_rul.models.lalm import LALM

    return LALM(pretrained=str(path), dtype="float32", device="cpu", **kwargs)


def _logliks(model, requests) -> list[float]:
    return [ll for ll, _ in model.loglikelihood(requests, disable_tqdm=True)]


@pytest.mark.parametrize("family", FAST)
def test_cached_path_equals_full_forward(tiny, fixture_data, family):
    docs = _docs(fixture_data, 0)[:4] + _docs(fixture_data, 1)[:4]
    requests = _requests(docs)
    cached = _model(tiny[family], batch_size=3).loglikelihood(requests, disable_tqdm=True)
    naive = _model(tiny[family], prefix_cache=False).loglikelihood(requests, disable_tqdm=True)
    assert len(cached) == len(requests) == 32
    for (a, greedy_a), (b, greedy_b) in zip(cached, naive, strict=True):
        assert a == pytest.approx(b, abs=1e-4)
        assert greedy_a == greedy_b


@pytest.mark.parametrize(
    ("audio", "extra"),
    [
        ("random", {}),
        ("silence", {"noise_seconds": 1.0, "chat_template": False}),
        # no audio and no template: the prompt has no prefix at all before the question
        ("none", {"chat_template": False}),
    ],
)
def test_cached_path_equals_full_forward_other_conditions(tiny, fixture_data, audio, extra):
    requests = _requests(_docs(fixture_data, 3)[:4])
    path = tiny["qwen2_audio"]
    cached = _logliks(_model(path, audio=audio, batch_size=2, **extra), requests)
    naive = _logliks(_model(path, audio=audio, prefix_cache=False, **extra), requests)
    assert cached == pytest.approx(naive, abs=1e-4)
    if audio == "random":
        original = _logliks(_model(path), requests)
        assert cached != original
        assert cached == _logliks(_model(path, audio=audio), requests)


def test_one_encode_per_clip_and_one_forward_per_question(tiny, fixture_data):
    from lm_eval_rul.testing.counters import ForwardCounter

    docs = [doc for fold in range(4) for doc in _docs(fixture_data, fold)]  # 32 (question, fold)
    clips = {doc["audio_ref"] for doc in docs}
    model = _model(tiny["qwen2_audio"], batch_size=1)
    with ForwardCounter(model.model) as counts:
        results = model.loglikelihood(_requests(docs), disable_tqdm=True)
    assert len(results) == 4 * len(docs)
    assert len(clips) == 4
    assert counts.audio == len(clips)
    assert counts.language == len(clips) + len(docs)  # one prefix per clip + one per question

    naive = _model(tiny["qwen2_audio"], prefix_cache=False)
    with ForwardCounter(naive.model) as naive_counts:
        naive.loglikelihood(_requests(docs[:2]), disable_tqdm=True)
    assert naive_counts.audio == naive_counts.language == 8


def test_audio_reaches_the_model(tiny, fixture_data):
    docs = _docs(fixture_data, 0)
    # fixture questions 0/1 share a track, 2/3 share another one
    assert docs[0]["audio_ref"] == docs[1]["audio_ref"] != docs[2]["audio_ref"]
    other_clip = dict(docs[0], audio_ref=docs[2]["audio_ref"])
    same_clip = dict(docs[0], id="again")
    model = _model(tiny["audioflamingo3"])
    base = _logliks(model, _requests([docs[0]]))
    assert _logliks(model, _requests([same_clip])) == base
    assert _logliks(model, _requests([other_clip])) != base


def test_noise_is_reproducible_from_seed_and_differs_from_original(tiny, fixture_data):
    docs = _docs(fixture_data, 0)[:2]
    path = tiny["qwen2_5_omni_thinker"]
    noise = _logliks(_model(path, audio="noise", noise_seconds=1.0), _requests(docs))
    again = _logliks(_model(path, audio="noise", noise_seconds=1.0), _requests(docs))
    other_seed = _logliks(_model(path, audio="noise", noise_seconds=1.0, seed=7), _requests(docs))
    original = _logliks(_model(path, audio="original"), _requests(docs))
    assert noise == again
    assert noise != other_seed
    assert noise != original


def test_none_puts_no_audio_tokens_in_the_input(tiny, fixture_data):
    from lm_eval_rul.mcqa.tasks import doc_to_text

    doc = _docs(fixture_data, 0)[0]
    none = _model(tiny["qwen2_audio"], audio=None)  # what `audio=none` parses to
    assert none.condition == "none"
    ids = none._model_inputs([none.prompt_text(doc_to_text(doc))], None)["input_ids"][0].tolist()
    assert none._audio_ids and not none._audio_ids.intersection(ids)
    with_audio = _model(tiny["qwen2_audio"])
    assert with_audio._audio_ids.intersection(with_audio._encode(with_audio._parts[0]))
    assert _logliks(none, _requests([doc])) != _logliks(with_audio, _requests([doc]))
    silence = _model(tiny["qwen2_audio"], audio="silence", noise_seconds=1.0)
    assert _logliks(silence, _requests([doc])) != _logliks(none, _requests([doc]))


def test_multi_token_letters_warn_once_and_score_correctly(
    tiny, fixture_data, caplog, monkeypatch
):
    from lm_eval_rul.mcqa import letters

    monkeypatch.setattr(letters, "_ANNOUNCED", set())  # said once per process: start afresh
    docs = _docs(fixture_data, 0)[:3]
    requests = _requests(docs)
    model = _model(tiny["split_letters"], batch_size=2)
    _, cont = model._encode_request(requests[0].args[0], " A")[1:]
    assert len(cont) == 2
    with caplog.at_level(logging.WARNING, logger="lm_eval_rul.models.lalm"):
        cached = _logliks(model, requests)
    warnings = [r.getMessage() for r in caplog.records if "tokens for this" in r.getMessage()]
    assert len(warnings) == 1  # every letter in one line, for all three documents
    assert "continuations ' A', ' B', ' C', ' D' are several tokens" in warnings[0]
    assert "' A' = ['Ġ', 'A']" in warnings[0]
    naive = _logliks(_model(tiny["split_letters"], prefix_cache=False), requests)
    assert cached == pytest.approx(naive, abs=1e-4)


def test_generate_until_batched_honours_until_and_max_gen_toks(tiny, fixture_data):
    from lm_eval.api.instance import Instance

    docs = _docs(fixture_data, 0)[:3]

    def generate(model, **gen_kwargs) -> list[str]:
        requests = [
            Instance("generate_until", doc, (f"Q{doc['id']}: {doc['question']}", gen_kwargs), 0)
            for doc in docs
        ]
        return model.generate_until(requests, disable_tqdm=True)

    batched = _model(tiny["qwen2_audio"], batch_size=3)
    long = generate(batched, until=[], max_gen_toks=12)
    assert long == generate(_model(tiny["qwen2_audio"], batch_size=1), until=[], max_gen_toks=12)
    short = generate(batched, until=[], max_gen_toks=3)
    for s, full in zip(short, long, strict=True):
        assert len(s) < len(full) and full.startswith(s.rstrip("\ufffd"))
    stop = long[0][4:7]
    stopped = generate(batched, until=[stop], max_gen_toks=12)
    assert stopped == [full.split(stop)[0] for full in long]
    assert stop not in stopped[0]
    none = _model(tiny["qwen2_audio"], audio="none", batch_size=3)
    assert generate(none, until=[], max_gen_toks=12) != long


def test_unknown_model_args_are_named(tiny):
    from lm_eval_rul.models.args import UnknownModelArgsError

    with pytest.raises(UnknownModelArgsError, match="unknown model_args audios, nosie_std"):
        _model(tiny["qwen2_audio"], audios="noise", nosie_std=2)


def test_bad_condition_is_named(tiny):
    from lm_eval_rul.errors import UserInputError

    listed = "audio='loud' is not a condition.*original, reversed, noise"
    with pytest.raises(UserInputError, match=listed):
        _model(tiny["qwen2_audio"], audio="loud")


def test_bad_model_arg_values_are_user_errors_raised_before_loading(tmp_path):
    from lm_eval_rul.errors import UserInputError
    from lm_eval_rul.models.args import LALMArgumentError
    from lm_eval_rul.models.lalm import check_model_args

    missing = tmp_path / "no_such_model"  # never opened: the values are checked first
    for bad, match in (
        ({"noise_seconds": "abc"}, "noise_seconds='abc' is not a number"),
        ({"seed": "1.5"}, "seed='1.5' is not an integer"),
        ({"prefix_cache": "maybe"}, "prefix_cache='maybe' is not a boolean"),
        ({"batch_size": "auto"}, "batch_size=auto is not supported"),
        ({"batch_size": 0}, "batch_size=0 must be at least 1"),
    ):
        with pytest.raises(LALMArgumentError, match=match) as caught:
            _model(missing, **bad)
        assert isinstance(caught.value, UserInputError)
    converted = check_model_args(
        {"noise_seconds": "2.5", "seed": 3, "chat_template": "false", "max_audio_seconds": "none"}
    )
    assert converted == {
        "noise_seconds": 2.5,
        "seed": 3,
        "chat_template": False,
        "max_audio_seconds": None,
    }


def test_continuation_score_is_the_one_scoring_rule():
    import torch

    from lm_eval_rul.models.lalm import continuation_score as _continuation_score

    logits = torch.tensor([[2.0, 0.0, 0.0], [0.0, 0.0, 3.0]])
    logprobs = torch.log_softmax(logits, dim=-1)
    total, greedy = _continuation_score(logits, [0, 2])
    assert total == pytest.approx(float(logprobs[0, 0] + logprobs[1, 2])) and greedy
    total, greedy = _continuation_score(logits, [1, 2])
    assert total == pytest.approx(float(logprobs[0, 1] + logprobs[1, 2])) and not greedy


def test_grouping_reads_no_audio_each_clip_decoded_once(tiny, fixture_data, monkeypatch):
    from lm_eval_rul import audio

    docs = [doc for fold in range(4) for doc in _docs(fixture_data, fold)]
    clips = {doc["audio_ref"] for doc in docs}
    model = _model(tiny["qwen2_audio"], batch_size=4)
    audio.clear_audio_cache()
    monkeypatch.setattr(audio.CLIP_CACHE, "max_bytes", 1)  # long clips: one fits in the cache
    model.loglikelihood(_requests(docs), disable_tqdm=True)
    assert audio.decode_count() == len(clips) == 4


def test_unknown_family_lists_the_supported_ones(tmp_path):
    from lm_eval_rul.models.families import UnknownFamilyError
    from lm_eval_rul.testing.text import make_tiny_causal_lm

    path = make_tiny_causal_lm(tmp_path / "text_lm")
    with pytest.raises(UnknownFamilyError) as caught:
        _model(path)
    message = str(caught.value)
    assert "model_type='qwen2'" in message
    for name in ("Qwen2-Audio", "Audio Flamingo 3", "Qwen2.5-Omni", "Voxtral", "Granite Speech"):
        assert name in message


def test_condition_is_in_the_model_info(tiny):
    info = _model(tiny["qwen2_audio"]).get_model_info()
    assert info["audio_condition"] == "original"
    assert info["audio_seed"] == 0 and info["audio_family"] == "Qwen2-Audio"


def _run_cli(
    model: Path, audio: str, data: dict[str, str], out: Path, monkeypatch, extra: str = ""
) -> dict:
    """``python -m lm_eval_rul run ...``, run in-process (same entry point, no re-import)."""
    from lm_eval_rul.cli import main

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    main(
        [
            "run",
            "--model",
            "lalm",
            "--model_args",
            f"pretrained={model},audio={audio},dtype=float32,noise_seconds=1{extra}",
            "--tasks",
            "rul_muchomusic",
            "--metadata",
            json.dumps(data),
            "--log_samples",
            "--output_path",
            str(out),
            "--device",
            "cpu",
            "--batch_size",
            "4",
        ]
    )
    (results_file,) = out.rglob("results_*.json")
    samples = {}
    # lm-eval 0.5 names the files samples_rul_muchomusic::rul_muchomusic_fold0_*
    for path in out.rglob("samples_*rul_muchomusic_fold*.jsonl"):
        for line in path.read_text().splitlines():
            row = json.loads(line)
            samples[(row["doc"]["fold"], row["doc"]["id"])] = [float(r[0][0]) for r in row["resps"]]
    return {"results": json.loads(results_file.read_text()), "samples": samples}


def test_cli_end_to_end_original_and_noise(tiny, fixture_data, tmp_path, monkeypatch):
    model = tiny["qwen2_audio"]
    original = _run_cli(model, "original", fixture_data, tmp_path / "orig", monkeypatch)
    noise = _run_cli(model, "noise", fixture_data, tmp_path / "noise", monkeypatch)
    for run, condition in ((original, "original"), (noise, "noise")):
        config = run["results"]["config"]
        assert config["audio_condition"] == condition
        assert config["model_args"]["audio"] == condition
        assert "rul_muchomusic" in run["results"]["groups"]
        assert len(run["samples"]) == 32  # 8 questions x 4 folds
        assert all(len(lls) == 4 for lls in run["samples"].values())
    assert original["samples"].keys() == noise["samples"].keys()
    differing = [k for k in original["samples"] if original["samples"][k] != noise["samples"][k]]
    assert len(differing) == 32


def test_cli_without_audio_and_without_chat_template(tiny, fixture_data, tmp_path, monkeypatch):
    from lm_eval_rul.mcqa.tasks import doc_to_text

    model = tiny["qwen2_audio"]
    run = _run_cli(model, "none", fixture_data, tmp_path / "none", monkeypatch,
                   ",chat_template=false")  # fmt: skip
    assert run["results"]["config"]["audio_condition"] == "none"
    assert len(run["samples"]) == 32
    # the same numbers as the naive path: the question alone, no audio tokens
    naive = _model(model, audio="none", chat_template=False, prefix_cache=False)
    docs = _docs(fixture_data, 2)[:3]
    assert naive.prompt_text(doc_to_text(docs[0])) == doc_to_text(docs[0])
    expected = _logliks(naive, _requests(docs))
    got = [ll for doc in docs for ll in run["samples"][(2, doc["id"])]]
    assert got == pytest.approx(expected, abs=1e-4)


def test_full_omni_checkpoint_loads_only_its_thinker(tiny, fixture_data, tmp_path):
    from lm_eval_rul.testing.audio import make_tiny_omni_full_checkpoint

    full = make_tiny_omni_full_checkpoint(tmp_path / "omni_full", tiny["qwen2_5_omni_thinker"])
    assert json.loads((full / "config.json").read_text())["model_type"] == "qwen2_5_omni"
    model = _model(full)
    assert type(model.model).__name__ == "Qwen2_5OmniThinkerForConditionalGeneration"
    requests = _requests(_docs(fixture_data, 2)[:2])
    assert _logliks(model, requests) == _logliks(_model(tiny["qwen2_5_omni_thinker"]), requests)


def test_use_cache_is_refused_and_rolling_is_text_only(tiny, tmp_path):
    from lm_eval.api.instance import Instance
    from lm_eval.api.model import CachingLM

    model = _model(tiny["qwen2_audio"])
    with pytest.raises(ValueError, match="does not support --use_cache"):
        CachingLM(model, str(tmp_path / "cache.db"))
    request = Instance("loglikelihood_rolling", {"id": "1"}, ("A calm piano piece.",), 0)
    (value,) = model.loglikelihood_rolling([request], disable_tqdm=True)
    assert value < 0


@pytest.mark.parametrize("family", [f for f in FAST if f != "qwen2_audio"])
def test_cli_end_to_end_other_families(tiny, fixture_data, tmp_path, family, monkeypatch):
    run = _run_cli(tiny[family], "original", fixture_data, tmp_path / family, monkeypatch)
    config = run["results"]["config"]
    assert config["audio_condition"] == "original"
    assert config["audio_family"] == family_for(family).name
    group = run["results"]["groups"]["rul_muchomusic"]
    assert 0.0 <= group["acc,none"] <= 1.0 and 0.0 <= group["perceptual_index,none"] <= 1.0
    assert len(run["samples"]) == 32 and all(len(v) == 4 for v in run["samples"].values())
