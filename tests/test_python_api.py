"""The Python API as docs/python_api.md shows it: its notebook cells run verbatim."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "python_api.md"


def doc_cells() -> list[str]:
    """The ```python blocks of docs/python_api.md, in order."""
    return re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)


def test_import_registers_the_models_without_importing_torch():
    code = (
        "import sys, lm_eval_rul\n"
        "assert 'torch' not in sys.modules, 'import lm_eval_rul imported torch'\n"
        "from lm_eval.api.registry import get_model\n"
        "from lm_eval_rul.models.lalm import LALM\n"
        "from lm_eval_rul.models.api import LALMAPI\n"
        "assert get_model('lalm') is LALM and get_model('lalm-api') is LALMAPI\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


@pytest.fixture(scope="module")
def notebook(tiny_lm, tiny_audio_lm, audio_data, tmp_path_factory) -> dict:
    """Run the doc's cells, the first (settings) cell replaced by the test's tiny ones."""
    cells = doc_cells()
    assert cells[0].startswith("# Settings")
    out = tmp_path_factory.mktemp("notebook")
    settings: dict = {}
    exec(compile(cells[0], str(DOC), "exec"), settings)  # noqa: S102 - the doc's own code
    namespace: dict = {
        "TEXT_LM": str(tiny_lm),
        "AUDIO_LM": str(tiny_audio_lm),
        "DATA": {k: audio_data[k] for k in settings["DATA"]},  # the doc's keys, no more
        "DEVICE": "cpu",
        "OUT": str(out),
    }
    for cell in cells[1:]:
        exec(compile(cell, str(DOC), "exec"), namespace)  # noqa: S102 - the doc's own code
    return namespace


def test_notebook_cells_run_and_report(notebook):
    assert 0.0 <= notebook["text"]["results"]["rul_muchomusic"]["acc,none"] <= 1.0
    assert notebook["heard"]["config"]["audio_condition_by_task"]["rul_muchomusic_fold0"] == (
        "original"
    )
    report = notebook["report"]
    assert report["benchmarks"], "the report found no benchmark in the saved runs"
    assert Path(notebook["paths"]["markdown"]).read_text().strip()


def test_simple_evaluate_gives_the_cli_numbers(notebook, tiny_lm, audio_data, tmp_path):
    from lm_eval_rul.testing.harness import read_output, run_cli

    data = {k: audio_data[k] for k in ("rul_data_path", "muchomusic_csv", "audio_dir")}
    run_cli(
        [
            "run", "--model", "hf", "--model_args", f"pretrained={tiny_lm}",
            "--tasks", "rul_muchomusic", "--metadata", json.dumps(data),
            "--device", "cpu", "--output_path", str(tmp_path),
        ]
    )  # fmt: skip
    from lm_eval_rul.harness_compat import plain_results

    cli, _ = read_output(tmp_path)
    api = plain_results(notebook["text"])[0]["results"]  # the tasks' names on lm-eval 0.5
    for task in [f"rul_muchomusic_fold{k}" for k in range(4)]:
        for metric in ("acc,none", "perceptual_index,none"):
            assert api[task][metric] == pytest.approx(cli["results"][task][metric], abs=1e-9)


def test_a_misspelt_task_manager_keyword_is_refused_with_the_closest(data_dir):
    import lm_eval_rul
    from lm_eval_rul.registration import UnknownTaskMetadataError

    says = r"'rul_data_pth' \(did you mean 'rul_data_path'\?\)"
    with pytest.raises(UnknownTaskMetadataError, match=says):
        lm_eval_rul.task_manager(rul_data_pth="bench/rul.json")
    rul = str(data_dir / "rul.json")
    manager = lm_eval_rul.task_manager(rul_data_path=rul, audio="none")
    assert manager.metadata["rul_data_path"] == rul  # known keys pass


@pytest.mark.parametrize(
    ("metadata", "says"),
    [
        ({"rul_data_path": "rul_smal.json"},
         "lm_eval_rul.task_manager keyword rul_data_path='rul_smal.json': no such file"),
        ({"data_path": "nowhere.csv"},
         "lm_eval_rul.task_manager keyword data_path='nowhere.csv': no such file"),
        ({"rul_data_path": "{dir}/muchomusic.csv"},
         "lm_eval_rul.task_manager keyword rul_data_path is MuChoMusic's CSV"),
        ({"data_path": "{dir}/rul.json", "audio_dir": "no_clips/"},
         "lm_eval_rul.task_manager keyword audio_dir='no_clips/': no such directory"),
        ({"shuffle_seed": "x"},
         "lm_eval_rul.task_manager keyword shuffle_seed must be an integer"),
    ],
)  # fmt: skip
def test_task_manager_checks_its_files_at_the_call(metadata, says, data_dir, constructions):
    """Wrong paths stop at ``task_manager(...)`` with the CLI's line, naming the keyword
    (not ``--metadata``), before ``simple_evaluate`` could load a model."""
    import lm_eval_rul

    given = {k: v.format(dir=data_dir) for k, v in metadata.items()}
    with pytest.raises(Exception) as raised:  # noqa: PT011 - the message is what is checked
        lm_eval_rul.task_manager(**given)
    message = str(raised.value)
    assert says in message and "--metadata" not in message and "\n" not in message.strip()
    assert constructions == []
