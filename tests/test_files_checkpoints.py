"""Output files and checkpoints survive kills and concurrent writers: a torn checkpoint line
is cut before the next append, outputs are written whole under unique temporary names, and
a second build on a busy output is refused."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from lm_eval_rul.distractors import BuildConfig, Checkpoint, CheckpointMismatch, run_build, write_pi
from lm_eval_rul.files import (
    OutputBusyError,
    OutputLock,
    atomic_write,
    repair_torn_tail,
    write_json_atomic,
)
from lm_eval_rul.registration import create_lm
from lm_eval_rul.testing.harness import OFFLINE_ENV, cli_error_line


@pytest.fixture(scope="module")
def hf_lm(tiny_lm):
    return create_lm("hf", f"pretrained={tiny_lm},dtype=float32", device="cpu", batch_size=8)


def _config(folder: Path, pools: Path) -> BuildConfig:
    return BuildConfig(
        output=folder / "out.json", pools=pools, model="hf", model_args="pretrained=tiny",
        progress=False, backoff=0.1,
    )  # fmt: skip


def test_a_torn_checkpoint_line_is_cut_and_the_next_runs_succeed(tmp_path, data_dir, hf_lm):
    """Old code: the second run appended after the torn bytes (gluing two records), and the
    third run stopped with "line N is not valid JSON"."""
    pools = data_dir / "pools.json"
    fresh = _config(tmp_path / "fresh", pools)
    run_build(fresh, lm=hf_lm)
    expected = json.loads(fresh.output.read_text())

    config = _config(tmp_path / "torn", pools)
    checkpoint = config.checkpoint_path("filter")
    full = fresh.checkpoint_path("filter").read_text().splitlines(keepends=True)
    kept = full[:4]  # header + 3 questions, then half of the 4th (a kill mid-write)
    checkpoint.parent.mkdir(parents=True)
    checkpoint.write_text("".join(kept) + full[4][: len(full[4]) // 2])
    run_build(config, lm=hf_lm)  # run: cuts the torn tail, redoes that question
    assert json.loads(config.output.read_text()) == expected
    run_build(config, lm=hf_lm)  # run again: the checkpoint is whole
    assert json.loads(config.output.read_text()) == expected
    lines = checkpoint.read_text().splitlines()
    assert lines[:4] == [line.rstrip("\n") for line in kept]  # nothing lost
    assert len(lines) == 9 and all(json.loads(line) for line in lines)


def test_a_last_line_missing_only_its_newline_is_kept(tmp_path):
    path = tmp_path / "c.ckpt.jsonl"
    Checkpoint(path, {"a": 1}).add({"id": "1", "pi": 0.5})
    path.write_text(path.read_text().rstrip("\n"))  # cut just before the newline
    checkpoint = Checkpoint(path, {"a": 1})
    assert checkpoint.records == {"1": {"id": "1", "pi": 0.5}}
    checkpoint.add({"id": "2", "pi": 0.25})
    assert set(Checkpoint(path, {"a": 1}).records) == {"1", "2"}


def test_a_damaged_middle_line_says_which_line_to_delete(tmp_path):
    path = tmp_path / "c.ckpt.jsonl"
    checkpoint = Checkpoint(path, {"a": 1})
    for qid in "123":
        checkpoint.add({"id": qid, "pi": 0.5})
    lines = path.read_text().splitlines()
    lines[2] = lines[2][:10] + lines[3]  # what the old code wrote: torn bytes + a record
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(CheckpointMismatch) as caught:
        Checkpoint(path, {"a": 1})
    message = str(caught.value)
    assert f"{path}: line 3 is not valid JSON" in message
    assert "Delete line 3 (its question is recomputed) or the file" in message


def test_repair_removes_only_the_partial_line(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_bytes(b'{"id": 1}\n{"id": 2}\n{"id": 3, "va')
    assert repair_torn_tail(path) == len(b'{"id": 3, "va')
    assert path.read_bytes() == b'{"id": 1}\n{"id": 2}\n'
    assert repair_torn_tail(path) == 0


def test_atomic_writes_leave_the_old_file_on_an_error(tmp_path):
    target = tmp_path / "out.json"
    write_json_atomic(target, {"old": True})
    with pytest.raises(RuntimeError), atomic_write(target) as handle:
        handle.write('{"new": ')
        raise RuntimeError("killed mid-write")
    assert json.loads(target.read_text()) == {"old": True}
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]  # no temporary file left


def test_concurrent_writers_use_unique_temporary_files(tmp_path):
    """Old code: every writer used <output>.part; one writer's rename took the other's file
    away (FileNotFoundError ... .part -> out.json)."""
    target = tmp_path / "out.json"
    errors: list[BaseException] = []

    def writer(n: int) -> None:
        try:
            for i in range(40):
                write_json_atomic(target, {"writer": n, "i": i, "pad": "x" * 20_000})
        except BaseException as error:  # noqa: BLE001 - collected for the assertion
            errors.append(error)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert json.loads(target.read_text())["i"] == 39
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


class _Row:
    def __init__(self, n: int):
        self.n = n
        self.pi = self.chance = 0.5
        self.protocol = "release"
        self.source_pi = None

    def to_row(self) -> dict:
        if self.n == 3:
            raise KeyboardInterrupt  # a kill arriving while the rows are written
        return {"id": str(self.n), "pi": self.pi}


def test_a_kill_while_pi_writes_leaves_no_partial_pi_jsonl(tmp_path):
    output = tmp_path / "pi.jsonl"
    with pytest.raises(KeyboardInterrupt):
        write_pi([_Row(n) for n in range(6)], output)
    assert list(tmp_path.iterdir()) == []  # old code: 3 rows of 6 in pi.jsonl
    write_pi([_Row(n) for n in range(3)], output)
    assert len(output.read_text().splitlines()) == 3
    with pytest.raises(KeyboardInterrupt):  # an earlier complete file stays complete
        write_pi([_Row(n) for n in range(6)], output)
    assert len(output.read_text().splitlines()) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pi.jsonl", "pi.summary.json"]


_HOLD = """
import sys, time
from lm_eval_rul.files import OutputLock
with OutputLock(sys.argv[1], command="lm-eval-rul build"):
    print("held", flush=True)
    time.sleep(60)
"""


def test_a_second_build_on_a_busy_output_says_so(tmp_path, data_dir, capsys):
    output = tmp_path / "rul.json"
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(output)], stdout=subprocess.PIPE, text=True,
        env=OFFLINE_ENV,
    )  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "held"
        line = cli_error_line(
            ["build", "--pools", data_dir / "pools.json", "--model", "hf",
             "--model_args", "pretrained=/nonexistent", "--stage", "clean", "--output", output],
            capsys,
        )  # fmt: skip
    finally:
        holder.kill()
        holder.wait()
    assert f"{output} is busy: another lm-eval-rul build (pid {holder.pid})" in line
    assert not output.exists()
    with OutputLock(output):  # the holder is gone: its lock went with it
        pass
    with OutputLock(output), pytest.raises(OutputBusyError), OutputLock(output):
        pass
