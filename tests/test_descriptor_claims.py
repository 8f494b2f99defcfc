"""What a user's descriptor may claim (``--include_path``): never a built-in benchmark's name,
nor stop a run by exiting at import; every check it declares runs before the model."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")


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


CHECK = (
    "from lm_eval_rul.errors import UserInputError\n"
    "def check(metadata):\n"
    "    if metadata.get('mybench_path') != 'ok.json':\n"
    "        raise UserInputError(f\"mybench_path={metadata.get('mybench_path')!r} is not ok\")\n"
    "def broken(metadata):\n"
    "    raise RuntimeError('no such table')\n"
)


@pytest.mark.parametrize("case", sorted(CLAIMS))
def test_a_user_descriptor_claiming_a_built_in_name_is_refused(case, tmp_path):
    """53.8: a ``benchmark.py`` naming a built-in fold group, question set or report name
    is one line naming the file and the claim; the built-in's votes and names stay."""
    from lm_eval_rul import catalogue
    from lm_eval_rul.catalogue import DescriptorError
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
