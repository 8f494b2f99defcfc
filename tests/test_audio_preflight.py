"""Audio pre-flight: every clip a run may play is looked at before any model loads."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from lm_eval_rul.audio import (
    UnreadableAudioError,
    clip_header_problem,
    preflight_clips,
    refs_to_check,
)
from lm_eval_rul.audio.sources import file_ref

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture
def clips(tmp_path) -> dict[str, Path]:
    """Good wav/flac/mp3 clips, and an empty, a junk mp3 and a truncated flac file."""
    from lm_eval_rul.testing.audio import synth_clip, write_clip

    good = {
        ext: write_clip(tmp_path / f"good.{ext}", synth_clip("chord", seed=i), 16_000)
        for i, ext in enumerate(("wav", "flac", "mp3"))
    }
    empty = tmp_path / "empty.wav"
    empty.write_bytes(b"")
    junk = tmp_path / "junk.mp3"
    junk.write_bytes(b"\x01\xfe this is not audio\n" * 50)  # binary junk (text: test_audio.py)
    truncated = tmp_path / "truncated.flac"
    truncated.write_bytes(good["flac"].read_bytes()[: good["flac"].stat().st_size // 3])
    return {**good, "empty": empty, "junk": junk, "truncated": truncated}


def test_header_check_names_what_is_wrong_with_each_file(clips):
    for name in ("wav", "flac", "mp3", "truncated"):  # a cut flac still has its header
        assert clip_header_problem(file_ref(clips[name])) is None, name
    assert clip_header_problem(file_ref(clips["empty"])) == "empty (0 bytes)"
    assert clip_header_problem(file_ref(clips["junk"])).startswith("not a readable audio file")


def test_every_bad_file_is_named_at_once_with_the_count(clips):
    refs = [file_ref(clips[n]) for n in ("wav", "empty", "flac", "junk", "mp3", "truncated")]
    with pytest.raises(UnreadableAudioError) as caught:
        preflight_clips(refs + refs, progress=False)  # duplicates are checked once
    message = str(caught.value)
    assert message.startswith("2 of 6 audio files cannot be used:")
    assert f"{clips['empty']}: empty (0 bytes)" in message and str(clips["junk"]) in message
    assert set(caught.value.problems) == {str(clips["empty"]), str(clips["junk"])}
    with pytest.raises(UnreadableAudioError) as decoded:
        preflight_clips(refs, level="decode", progress=False)
    assert str(decoded.value).startswith("3 of 6 audio files cannot be used:")
    assert str(clips["truncated"]) in decoded.value.problems
    assert preflight_clips(refs, level="none") == 0
    assert preflight_clips(refs[:1] + refs[2:3], level="decode", progress=False) == 2


def test_long_lists_go_to_a_file(tmp_path):
    bad = []
    for i in range(25):
        path = tmp_path / f"{i}.wav"
        path.write_bytes(b"")
        bad.append(file_ref(path))
    listing = tmp_path / "bad.json"
    with pytest.raises(UnreadableAudioError) as caught:
        preflight_clips(bad, progress=False, listing=listing)
    assert "... and 5 more (all 25 listed in" in str(caught.value)
    assert len(json.loads(listing.read_text())) == 25


def test_random_checks_the_whole_pool(tmp_path):
    from lm_eval_rul.mcqa.tasks import load_rul_muchomusic
    from lm_eval_rul.testing.audio import write_audio_dir
    from lm_eval_rul.testing.fixtures import write_rul_json

    rul = write_rul_json(tmp_path / "rul.json", n=4)
    ids = list(json.loads(rul.read_text()))
    write_audio_dir(tmp_path / "audio", ids)
    docs = list(
        load_rul_muchomusic(0, data_path=str(rul), audio_dir=str(tmp_path / "audio"))["test"]
    )
    first = docs[:1]  # --limit 1
    assert refs_to_check(first, "original") == [first[0]["audio_ref"]]
    assert sorted(refs_to_check(first, "random")) == sorted(d["audio_ref"] for d in docs)
    assert refs_to_check(docs, "noise") == []


def _lalm_run(tmp_path: Path, audio_dir: Path, *extra: str) -> list[str]:
    from lm_eval_rul.testing.fixtures import write_rul_json

    rul = write_rul_json(tmp_path / "rul.json", n=4)
    model = tmp_path / "model"  # never loaded: every check runs before the model
    model.mkdir(exist_ok=True)
    (model / "config.json").write_text("{}")
    return [
        "run", "--model", "lalm", "--model_args", f"pretrained={model}", "--tasks",
        "rul_muchomusic", "--metadata", json.dumps({"data_path": str(rul),
                                                    "audio_dir": str(audio_dir)}),
        *extra,
    ]  # fmt: skip


def test_lalm_run_names_every_bad_clip_before_any_model(tmp_path, capsys, monkeypatch):
    from lm_eval.models.huggingface import HFLM

    from lm_eval_rul.cli import main
    from lm_eval_rul.testing.audio import write_audio_dir

    built = []
    monkeypatch.setattr(HFLM, "__init__", lambda self, *a, **k: built.append(self))
    audio = tmp_path / "audio"
    write_audio_dir(audio, ["2", "5", "8", "11"], exts=("wav",))  # the fixture's four ids
    (audio / "5.wav").write_bytes(b"")
    (audio / "11.wav").write_bytes(b"RIFF....WAVEjunk")
    for random in (False, True):
        argv = _lalm_run(tmp_path, audio)
        if random:  # one question, but the draw may land on any clip of the benchmark
            argv[argv.index("--model_args") + 1] += ",audio=random"
            argv += ["--limit", "1"]
        with pytest.raises(SystemExit) as exited:
            main(argv)
        err = capsys.readouterr().err
        assert exited.value.code == 2
        assert "UnreadableAudioError: 2 of 4 audio files cannot be used:" in err
        assert f"{audio / '5.wav'}: empty (0 bytes)" in err and str(audio / "11.wav") in err
    assert built == []


def test_a_symlink_loop_named_as_a_clip_is_named_with_the_unreadable_clips(
    tiny_audio_lm, audio_data, tmp_path, capsys
):
    """Named in the list of unreadable clips before any model loads (issue 36 item 17: a
    loop once stopped the run alone, hiding the other bad clips)."""
    import shutil

    from lm_eval_rul.cli import main

    own = {**audio_data, "audio_dir": str(tmp_path / "audio")}
    shutil.copytree(audio_data["audio_dir"], own["audio_dir"])
    loop = tmp_path / "audio" / "1000.wav"
    loop.unlink()
    loop.symlink_to("1000.wav")  # a link to itself
    with pytest.raises(SystemExit) as stopped:
        main(["run", "--model", "lalm", "--model_args",
              f"pretrained={tiny_audio_lm},results_cache=none",
              "--tasks", "rul_muchomusic_fold0", "--metadata", json.dumps(own)])  # fmt: skip
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and "Traceback" not in err
    assert "UnreadableAudioError: 1 of 4 audio files cannot be used" in err
    assert f"{loop}: a symbolic link that leads back to itself" in err


def test_every_unreadable_clip_is_named_in_one_pass(tiny_audio_lm, audio_data, tmp_path, capsys):
    """A symbolic link loop beside a clip whose name is a folder: only the first was
    named, then the run stopped; a corrupt clip beside them is named as before."""
    import shutil

    from lm_eval_rul.cli import main

    own = {**audio_data, "audio_dir": str(tmp_path / "audio")}
    shutil.copytree(audio_data["audio_dir"], own["audio_dir"])
    clips = sorted((tmp_path / "audio").iterdir())
    loop, folder, corrupt = clips[0], clips[1], clips[2]
    loop.unlink()
    loop.symlink_to(loop.name)  # a link to itself
    folder.unlink()
    folder.mkdir()
    corrupt.write_bytes(b"RIFF not really a wave file")
    with pytest.raises(SystemExit) as stopped:
        main(["run", "--model", "lalm", "--model_args",
              f"pretrained={tiny_audio_lm},results_cache=none", "--tasks", "rul_muchomusic_fold0",
              "--metadata", json.dumps(own)])  # fmt: skip
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert "3 of 4 audio files cannot be used" in err, err
    for clip in (loop, folder, corrupt):
        assert clip.name in err
    assert "a symbolic link that leads back to itself" in err and "is a folder" in err
