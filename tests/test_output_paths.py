"""Output paths that cannot be written (a folder, below a file, a read-only or full disk) are
one line before any work, and a disk filling up leaves nothing half written."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _pi_args(tiny_lm, data: Path, output: Path) -> list:
    return ["pi", "--data", data, "--model", "hf", "--model_args", f"pretrained={tiny_lm}",
            "--device", "cpu", "--output", output]  # fmt: skip


def _read_only_folder(tmp_path: Path, monkeypatch) -> Path:
    """A folder on a read-only file system: a read-only tmpfs when this process may mount
    one, else a folder without write permission, else (root without mounts) the check's
    own view of one."""
    import subprocess

    folder = tmp_path / "ro"
    folder.mkdir()
    if os.geteuid() != 0:
        folder.chmod(0o555)
        return folder
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k,ro", "tmpfs", str(folder)],
        capture_output=True,
    )
    if mounted.returncode == 0:
        monkeypatch.setattr(_read_only_folder, "mounted", folder, raising=False)
        return folder
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **k: Path(p) != folder and real(p, mode))
    return folder


@pytest.mark.parametrize("where", ["a folder", "below a file", "summary is a folder"])
def test_pi_output_that_cannot_be_written_stops_before_the_model(
    where, tiny_lm, data_dir, tmp_path, capsys, constructions
):
    from lm_eval_rul.testing.harness import cli_error_line

    output = {
        "a folder": tmp_path,
        "below a file": tmp_path / "notes.txt" / "pi.jsonl",
        "summary is a folder": tmp_path / "pi.jsonl",
    }[where]
    (tmp_path / "notes.txt").write_text("a file")
    if where == "summary is a folder":
        (tmp_path / "pi.summary.json").mkdir()
    line = cli_error_line(_pi_args(tiny_lm, data_dir / "rul.json", output), capsys)
    assert "OutputPathError" in line and "--output" in line
    expected = {"a folder": "is a folder", "below a file": "notes.txt is a file"}
    assert expected.get(where, "pi.summary.json is a folder") in line
    assert constructions == []  # no model was loaded for a run that could not be kept
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"] + (
        ["pi.summary.json"] if where == "summary is a folder" else []
    )


def test_run_output_path_below_a_file_stops_before_the_model(
    tiny_lm, data_dir, tmp_path, capsys, constructions
):
    """The harness writes --output_path only after the whole run: checked first."""
    from lm_eval_rul.testing.harness import cli_error_line

    (tmp_path / "notes.txt").write_text("a file")
    line = cli_error_line(
        ["run", "--model", "hf", "--model_args", f"pretrained={tiny_lm}", "--device", "cpu",
         "--tasks", "rul_muchomusic_fold0", "--metadata",
         json.dumps({"rul_data_path": str(data_dir / "rul.json")}),
         "--output_path", tmp_path / "notes.txt" / "runs"],  # fmt: skip
        capsys,
    )
    assert "OutputPathError: --output_path" in line and "notes.txt is a file" in line
    assert constructions == []


def test_report_out_on_a_read_only_disk_is_one_line(tmp_path, capsys, monkeypatch):
    from lm_eval_rul.testing.harness import cli_error_line

    folder = _read_only_folder(tmp_path, monkeypatch)
    try:
        line = cli_error_line(["report", tmp_path, "--out", folder / "report"], capsys)
    finally:
        if getattr(_read_only_folder, "mounted", None) == folder:
            import subprocess

            subprocess.run(["umount", str(folder)], check=True)
    assert "OutputPathError: --out" in line and "cannot be written" in line
    assert str(folder) in line


def test_an_output_disk_without_room_is_refused_before_any_work(tmp_path, monkeypatch):
    from lm_eval_rul.files import OutputPathError, check_output_file

    class Full:
        f_bavail, f_frsize = 0, 4096

    monkeypatch.setattr(os, "statvfs", lambda _path: Full())
    with pytest.raises(OutputPathError, match=r"the disk of .* is full \(0 bytes free\)"):
        check_output_file(tmp_path / "pi.jsonl")


def test_a_disk_filling_up_while_pi_writes_leaves_nothing_half_written(tmp_path, monkeypatch):
    """ENOSPC at the last moment (``fsync``, where a full disk surfaces): one line naming
    the file; the old rows stay as they were, no temporary file is left."""
    import errno

    from lm_eval_rul.distractors import write_pi
    from lm_eval_rul.distractors.pi import PIResult
    from lm_eval_rul.files import OutputPathError

    output = tmp_path / "pi.jsonl"
    output.write_text('{"old": true}\n')

    def no_room(_fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", no_room)
    result = PIResult(id="1", pi=0.5, p_correct=[0.5], n_prompts=1, protocol="release",
                      chance=0.75, prompts=[])  # fmt: skip
    with pytest.raises(OutputPathError) as caught:
        write_pi([result], output)
    message = str(caught.value)
    assert f"could not write {output}: No space left on device" in message
    assert "\n" not in message
    assert output.read_text() == '{"old": true}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pi.jsonl"]
