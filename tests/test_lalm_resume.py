"""``lalm`` keeps its results on disk: an interrupted run resumes, a changed setting never
reads a stale entry (offline, tiny real Qwen2-Audio, forward passes counted with hooks)."""

from __future__ import annotations

import functools
import json
import os
import shutil
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="module")
def data(audio_data) -> dict[str, str]:
    """8 RUL questions whose MuChoMusic tracks pair them up: 4 clips, 8 documents each."""
    return audio_data


class Models:
    """Every ``LALM`` built while installed, each with a :class:`ForwardCounter` attached."""

    def __init__(self, monkeypatch) -> None:
        from lm_eval_rul.models.lalm import LALM
        from lm_eval_rul.testing.counters import ForwardCounter

        self.built: list = []
        self.counters: list = []
        original = LALM.__init__

        @functools.wraps(original)  # keeps the signature lalm's argument check reads
        def counting_init(model, *args, **kwargs):
            original(model, *args, **kwargs)
            self.built.append(model)
            self.counters.append(ForwardCounter(model.model).__enter__())

        monkeypatch.setattr(LALM, "__init__", counting_init)

    def suffix_passes(self) -> int:
        """LM forwards over question suffixes: LM calls minus one prefix call per encode."""
        (counter,) = self.counters
        return counter.language - counter.audio


def run(model: Path, data: dict, out: Path, cache: Path | str, **model_args) -> dict:
    """``lm-eval-rul run --model lalm ...`` in-process; the logged samples by (fold, id)."""
    from lm_eval_rul.cli import main

    args = {"pretrained": model, "dtype": "float32", "results_cache": cache, **model_args}
    main(
        [
            "run", "--model", "lalm", "--model_args", ",".join(f"{k}={v}" for k, v in args.items()),
            "--tasks", "rul_muchomusic", "--metadata", json.dumps(data), "--device", "cpu",
            "--batch_size", "4", "--log_samples", "--output_path", str(out),
        ]
    )  # fmt: skip
    samples = {}
    for path in out.rglob("samples_rul_muchomusic_fold*.jsonl"):
        for line in path.read_text().splitlines():
            row = json.loads(line)
            samples[(row["doc"]["fold"], row["doc"]["id"])] = row["resps"]
    return samples


def interrupt_after(monkeypatch, n_batches: int) -> None:
    """Simulate Ctrl-C while batch ``n_batches + 1`` is scored: its results are never written."""
    from lm_eval_rul.models.core import StoredResults

    original = StoredResults.store
    calls = {"n": 0}

    def store(self, items):
        calls["n"] += 1
        if calls["n"] > n_batches:
            raise KeyboardInterrupt
        original(self, items)

    monkeypatch.setattr(StoredResults, "store", store)


def test_interrupted_run_resumes_with_only_the_remaining_forward_passes(
    tiny_audio_lm, data, tmp_path, monkeypatch, capsys
):
    cache = tmp_path / "results.sqlite"
    # uninterrupted reference, no results cache: 4 clips x 8 documents, 2 batches per clip
    with monkeypatch.context() as patch:
        full_models = Models(patch)
        full = run(tiny_audio_lm, data, tmp_path / "full", "none")
    assert len(full) == 32 and full_models.counters[0].audio == 4
    assert full_models.suffix_passes() == 8

    with monkeypatch.context() as patch:
        first = Models(patch)
        interrupt_after(patch, 3)  # 3 batches written, the 4th lost in flight
        capsys.readouterr()
        with pytest.raises(SystemExit) as stopped:
            run(tiny_audio_lm, data, tmp_path / "first", cache)
    assert stopped.value.code == 130  # Ctrl-C: one line saying what was kept, no traceback
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.strip().splitlines()[-1] == (
        f"lm-eval-rul run: interrupted; 48 results kept in {cache}: rerun the same command to "
        "resume (only the rest is computed)"
    )
    assert first.suffix_passes() == 4
    assert first.built[0]._stored.cache is not None and len(first.built[0]._stored.cache) == 48

    with monkeypatch.context() as patch:
        second = Models(patch)
        resumed = run(tiny_audio_lm, data, tmp_path / "second", cache)
    assert second.built[0]._stored.reused == 48
    assert second.suffix_passes() == 8 - 3  # only the batches never written
    assert second.counters[0].audio == 3  # clip 2 (half done), clips 3 and 4
    assert resumed == full  # identical log-likelihoods, every document

    with monkeypatch.context() as patch:
        third = Models(patch)
        assert run(tiny_audio_lm, data, tmp_path / "third", cache) == full
    assert third.suffix_passes() == 0 and third.counters[0].audio == 0


@pytest.mark.parametrize("changed", [{"audio": "noise"}, {"audio": "noise", "noise_std": 2.0}])
def test_another_audio_setting_reuses_nothing(tiny_audio_lm, data, tmp_path, monkeypatch, changed):
    cache = tmp_path / "results.sqlite"
    run(tiny_audio_lm, data, tmp_path / "first", cache, audio="noise", noise_seconds=1)
    if changed == {"audio": "noise"}:
        changed = {"audio": "original"}  # from noise back to the clips
    with monkeypatch.context() as patch:
        models = Models(patch)
        run(tiny_audio_lm, data, tmp_path / "other", cache, noise_seconds=1, **changed)
    assert models.built[0]._stored.reused == 0
    assert models.suffix_passes() == 8


def _model(path: Path, cache: Path, **kwargs):
    from lm_eval_rul.models.lalm import LALM

    return LALM(
        pretrained=str(path), dtype="float32", device="cpu", results_cache=str(cache), **kwargs
    )


def _requests(docs: list[dict]) -> list:
    from lm_eval.api.instance import Instance

    from lm_eval_rul.mcqa.tasks import doc_to_choice, doc_to_text

    return [
        Instance("loglikelihood", doc, (doc_to_text(doc), f" {letter}"), i)
        for doc in docs
        for i, letter in enumerate(doc_to_choice(doc))
    ]


def test_an_edited_clip_is_scored_again(tiny_audio_lm, data, tmp_path):
    import soundfile as sf

    from lm_eval_rul.audio import clear_audio_cache
    from lm_eval_rul.mcqa.tasks import load_rul_muchomusic
    from lm_eval_rul.testing.counters import ForwardCounter

    own = {**data, "audio_dir": str(tmp_path / "audio")}  # this test edits a file
    shutil.copytree(data["audio_dir"], own["audio_dir"])
    docs = list(load_rul_muchomusic(0, **own)["test"])
    cache = tmp_path / "results.sqlite"
    first = _model(tiny_audio_lm, cache).loglikelihood(_requests(docs), disable_tqdm=True)
    edited = Path(json.loads(docs[0]["audio_ref"])["path"])
    wave, rate = sf.read(edited)
    sf.write(edited, wave[::-1].copy(), rate)  # same length, other content
    clear_audio_cache()
    model = _model(tiny_audio_lm, cache)
    with ForwardCounter(model.model) as counts:
        second = model.loglikelihood(_requests(docs), disable_tqdm=True)
    same_clip = [d for d in docs if d["audio_ref"] == docs[0]["audio_ref"]]
    # that clip only: one encode, one suffix pass per document (batch_size 1)
    assert counts.audio == 1 and counts.language - counts.audio == len(same_clip) == 2
    assert model._stored.reused == 4 * (len(docs) - len(same_clip))
    changed = {i for i, (a, b) in enumerate(zip(first, second, strict=True)) if a != b}
    assert changed and changed <= {i for i, r in enumerate(_requests(docs)) if r.doc in same_clip}


def test_generation_is_stored_and_read_back(tiny_audio_lm, data, tmp_path):
    from lm_eval.api.instance import Instance

    from lm_eval_rul.mcqa.tasks import doc_to_text_gen, load_rul_muchomusic
    from lm_eval_rul.testing.counters import ForwardCounter

    docs = list(load_rul_muchomusic(0, **data)["test"])[:3]
    gen = {"until": [], "max_gen_toks": 6}
    requests = [
        Instance("generate_until", d, (doc_to_text_gen(d), gen), i) for i, d in enumerate(docs)
    ]
    cache = tmp_path / "results.sqlite"
    first = _model(tiny_audio_lm, cache, batch_size=2).generate_until(requests, disable_tqdm=True)
    model = _model(tiny_audio_lm, cache, batch_size=2)
    with ForwardCounter(model.model) as counts:
        again = model.generate_until(requests, disable_tqdm=True)
    assert again == first and counts.language == 0 and model._stored.reused == 3
    longer = [
        Instance("generate_until", d, (r.args[0], {**gen, "max_gen_toks": 7}), 0)
        for d, r in zip(docs, requests, strict=True)
    ]
    other = _model(tiny_audio_lm, cache, batch_size=2)
    other.generate_until(longer, disable_tqdm=True)
    assert other._stored.reused == 0  # other generation settings, other entries


def test_two_clips_swapped_by_name_are_each_scored_as_themselves(tiny_audio_lm, data, tmp_path):
    """``mv``, ``cp -p`` and ``tar`` keep sizes and modification times: the identity of a
    clip is its content, so a file put in another's place is never read from its entries."""
    from lm_eval_rul.audio import clear_audio_cache
    from lm_eval_rul.mcqa.tasks import load_rul_muchomusic
    from lm_eval_rul.testing.counters import ForwardCounter

    own = {**data, "audio_dir": str(tmp_path / "audio")}
    shutil.copytree(data["audio_dir"], own["audio_dir"])
    docs = list(load_rul_muchomusic(0, **own)["test"])
    cache = tmp_path / "results.sqlite"
    _model(tiny_audio_lm, cache).loglikelihood(_requests(docs), disable_tqdm=True)
    refs = sorted({d["audio_ref"] for d in docs if d["audio_ref"].endswith('.wav"}')})
    first, second = (Path(json.loads(ref)["path"]) for ref in refs)
    assert first.stat().st_size == second.stat().st_size  # what (path, size, mtime) missed
    assert first.read_bytes() != second.read_bytes()
    stamps = first.stat().st_mtime_ns, second.stat().st_mtime_ns
    parked = first.with_name("parked")
    first.rename(parked)  # mv: names change, sizes and modification times do not
    second.rename(first)
    parked.rename(second)
    os.utime(first, ns=(stamps[0], stamps[0]))  # and each name keeps its old mtime (cp -p)
    os.utime(second, ns=(stamps[1], stamps[1]))
    clear_audio_cache()
    model = _model(tiny_audio_lm, cache)
    with ForwardCounter(model.model) as counts:
        swapped = model.loglikelihood(_requests(docs), disable_tqdm=True)
    moved = [d for d in docs if d["audio_ref"] in refs]
    assert counts.audio == 2  # the two swapped clips are heard again, nothing else
    assert model._stored.reused == 4 * (len(docs) - len(moved))
    clear_audio_cache()
    fresh = _model(tiny_audio_lm, "none").loglikelihood(_requests(docs), disable_tqdm=True)
    assert swapped == fresh  # every score is that of the clip now under each name
