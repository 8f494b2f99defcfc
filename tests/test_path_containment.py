"""Paths built from data stay inside the folder the user named (``lm_eval_rul.paths``).

Question ids are audio file names: an id ``../outside/1740``, ``../../x`` or an absolute
path must stop the run before any model loads, naming the id, and read nothing outside
``audio_dir`` (nor, with ``lalm-api``, send anything). The same holds for a Hugging Face
dataset's file paths, OverClocked ReMix names from a URL and task names from a results
file.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from lm_eval_rul.paths import PathEscapeError, contained_path, safe_name
from lm_eval_rul.testing.audio import synth_clip, write_clip
from lm_eval_rul.testing.fixtures import fixture_rows, write_rul_json
from lm_eval_rul.testing.harness import cli_error_line

#: Every file opened below an ``outside`` folder while a test runs (Python's ``open``
#: audit event, and every ``soundfile.SoundFile``, which libsndfile opens in C).
_OPENED: list[str] = []
_HOOKED: list[bool] = []


def _audit(event: str, args: tuple) -> None:
    if event == "open" and args and isinstance(args[0], (str, bytes, Path)):
        name = str(args[0])
        if "outside" in name:
            _OPENED.append(name)


@pytest.fixture
def opened(monkeypatch) -> list[str]:
    import soundfile

    if not _HOOKED:  # audit hooks cannot be removed: one for the session
        sys.addaudithook(_audit)
        _HOOKED.append(True)
    original = soundfile.SoundFile.__init__

    def recording(self, file, *args, **kwargs):
        if isinstance(file, (str, Path)) and "outside" in str(file):
            _OPENED.append(str(file))
        original(self, file, *args, **kwargs)

    monkeypatch.setattr(soundfile.SoundFile, "__init__", recording)
    _OPENED.clear()
    return _OPENED


@pytest.mark.parametrize(
    "name", ["../outside/1740.wav", "../../x.wav", "sub/../../x.wav", "/etc/passwd", ".."]
)
def test_a_name_that_leaves_the_folder_is_refused(tmp_path, name):
    with pytest.raises(PathEscapeError, match="points outside"):
        contained_path(tmp_path / "audio", name, item="question id 'x'")


def test_names_inside_the_folder_and_links_the_user_placed_are_kept(tmp_path):
    root = tmp_path / "audio"
    (root / "sub").mkdir(parents=True)
    (tmp_path / "store").mkdir()
    (root / "linked.wav").symlink_to(tmp_path / "store" / "blob.wav")
    assert contained_path(root, "sub/../12.wav", item="x") == root / "sub/../12.wav"
    # a link inside the folder is the user's own choice (the HF cache is made of them)
    assert contained_path(root, "linked.wav", item="x") == root / "linked.wav"
    assert safe_name("../../etc/x") == ".._.._etc_x" and "/" not in safe_name("a/b")


def _hostile_benchmark(root: Path, ids: list[str]) -> dict[str, str]:
    """A RUL file whose ids lead out of ``root/audio``; every clip they name exists, and
    ``audio/`` lists each base name (the old check looked at base names only)."""
    root.mkdir(parents=True)
    rows = dict(zip(ids, fixture_rows(len(ids)).values(), strict=True))
    write_rul_json(root / "rul.json", rows=rows)
    wave = synth_clip("tone", sr=16_000)
    for qid in ids:
        base = Path(qid).name
        write_clip(root / "audio" / f"{base}.wav", wave, 16_000)
        target = Path(qid) if Path(qid).is_absolute() else root / "audio" / qid
        write_clip(target.with_name(f"{base}.wav"), wave, 16_000)
    return {"rul_data_path": str(root / "rul.json"), "audio_dir": str(root / "audio")}


def _run_args(model: str, model_args: str, metadata: dict[str, str], out: Path) -> list[str]:
    return [
        "run", "--model", model, "--model_args", model_args, "--tasks", "rul_muchomusic_fold0",
        "--metadata", json.dumps(metadata), "--device", "cpu", "--output_path", str(out),
    ]  # fmt: skip


def test_lalm_with_hostile_ids_stops_before_the_model_and_reads_nothing_outside(
    tiny_audio_lm, tmp_path, capsys, opened, constructions
):
    outside = tmp_path / "outside"
    ids = ["2", "../outside/1740", f"{outside}/abs"]
    metadata = _hostile_benchmark(tmp_path / "data", ids)
    opened.clear()  # the clips written above
    line = cli_error_line(
        _run_args("lalm", f"pretrained={tiny_audio_lm},dtype=float32", metadata, tmp_path / "o"),
        capsys,
    )
    assert "question id '../outside/1740'" in line and "points outside --metadata audio_dir" in line
    assert opened == [] and constructions == []
    assert not (tmp_path / "o").exists()


def test_lalm_api_with_hostile_ids_sends_nothing(tiny_audio_lm, tmp_path, capsys):
    from doubles.openai_server import OpenAIAudioServer

    metadata = _hostile_benchmark(tmp_path / "data", ["5", "../../x"])
    with OpenAIAudioServer(tiny_audio_lm, served_model="tiny-audio") as server:
        args = f"base_url={server.url},model=tiny-audio,results_cache=none"
        line = cli_error_line(_run_args("lalm-api", args, metadata, tmp_path / "o"), capsys)
        assert server.posts == 0
    assert "question id '../../x'" in line


def test_a_dataset_row_naming_a_file_outside_its_folder_is_named_in_the_audio_check(
    tmp_path, monkeypatch
):
    import datasets

    from lm_eval_rul.audio.preflight import UnreadableAudioError, preflight_clips
    from lm_eval_rul.audio.sources import hf_ref

    wave = synth_clip("tone", sr=16_000)
    write_clip(tmp_path / "outside" / "secret.wav", wave, 16_000)
    write_clip(tmp_path / "src" / "ok.wav", wave, 16_000)
    monkeypatch.chdir(tmp_path / "src")  # (the old reader took relative paths from here)
    folder = tmp_path / "ds"
    paths = ["ok.wav", "../outside/secret.wav", str(tmp_path / "outside" / "secret.wav")]
    cell = {"bytes": datasets.Value("binary"), "path": datasets.Value("string")}
    features = datasets.Features({"context": cell, "instruction": datasets.Value("string")})
    rows = {"context": [{"path": p, "bytes": None} for p in paths], "instruction": ["q"] * 3}
    # saved as plain {bytes, path} records (an Audio column would embed the files); the
    # audio layer reads the column as Audio(decode=False), paths and all
    datasets.Dataset.from_dict(rows, features=features).save_to_disk(str(folder))
    write_clip(folder / "ok.wav", wave, 16_000)  # relative paths: from the dataset folder
    refs = [hf_ref(str(tmp_path / "ds"), "test", "context", row) for row in range(3)]
    with pytest.raises(UnreadableAudioError) as caught:
        preflight_clips(refs, progress=False)
    assert caught.value.problems and len(caught.value.problems) == 2
    assert all("points outside" in why for why in caught.value.problems.values())


def test_an_ocremix_url_cannot_name_a_file_outside_the_audio_folder(tmp_path):
    from lm_eval_rul.factual.datasets.ocremix import ocremix_audio_path

    assert ocremix_audio_path(tmp_path, "https://x/files/A%20B.mp3").parent == tmp_path
    with pytest.raises(PathEscapeError, match="ocr_id 7"):
        ocremix_audio_path(tmp_path, "https://x/files/..%2F..%2Fsecret.mp3", item="ocr_id 7")
