"""The benchmark catalogue (``lm_eval_rul.catalogue``): one descriptor per task folder, asked
by registration, ``run``, the loaders, the readers and ``report``; per-family protocol keys;
post-run files checked before the model, written beside the model's results, after them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from lm_eval_rul import catalogue
from lm_eval_rul.testing.harness import cli_error_line, read_output, run_cli, text_run_args
from lm_eval_rul.testing.mmau import write_mmau_json

PACKAGE = Path(catalogue.__file__).resolve().parent


def _yaml_names(folder: Path) -> set[str]:
    """Every task and group a task folder's YAMLs declare."""
    names = set()
    for path in folder.glob("*.yaml"):
        names |= set(re.findall(r"^(?:task|group): (\w+)$", path.read_text(), re.M))
    return names


def test_every_task_folder_declares_its_benchmark():
    """A folder of YAMLs without a descriptor would be missing from every list (no votes,
    keys refused): it fails here instead."""
    folders = {p.parent.name for p in catalogue.tasks_dir().glob("*/*.yaml")}
    assert folders == set(catalogue.by_folder()) >= {"rul_muchomusic", "muchomusic", "mmau",
                                                     "factual", "harness_native"}  # fmt: skip


def test_descriptors_name_what_their_folders_hold():
    for benchmark in catalogue.benchmarks():
        names = _yaml_names(catalogue.tasks_dir() / benchmark.folder)
        assert set(benchmark.fold_groups) <= names, benchmark.folder
        assert set(benchmark.report_names) <= names, benchmark.folder
        assert {t for f in benchmark.post_run_files for t in f.tasks} <= names
        for target in (*benchmark.checks, *(f.write for f in benchmark.post_run_files),
                       *(x for r in benchmark.readers for x in (r.detect, r.read))):  # fmt: skip
            assert callable(catalogue.load_function(target)), target
        assert benchmark.keys() and all(isinstance(k, str) for k in benchmark.keys())
    assert catalogue.protocol_keys() == {"mmau": "mmau_protocol", "mmar": "mmar_protocol",
                                         "factual": "factual_protocol",
                                         "mmau_pro": "mmau_pro_protocol"}
    assert catalogue.own_data_key("mmau_music") == "mmau_data_path"
    assert catalogue.for_question_set("rul_mmau_music").folder == "mmau"


def test_no_module_finds_a_benchmark_by_a_name_prefix():
    hits = [
        f"{p.relative_to(PACKAGE)}:{n}"
        for p in PACKAGE.rglob("*.py")
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if re.search(r"startswith\(\s*[\"'](mm|rul_|much|factual)", line)
    ]
    assert hits == []


def test_a_folder_of_ones_own_is_read_too(tmp_path):
    """A ``--include_path`` folder's ``benchmark.py`` joins the plugin's benchmarks."""
    folder = tmp_path / "mine" / "mybench"
    folder.mkdir(parents=True)
    (folder / "benchmark.py").write_text(
        "from lm_eval_rul.catalogue import Benchmark\n"
        "BENCHMARK = Benchmark(folder='mybench', name='Mine', metadata_keys=('mine_path',),\n"
        "                      report_names={'mybench': 'My bench'})\n"
    )
    found = {b.folder: b for b in catalogue.benchmarks(extra_folders=[tmp_path / "mine"])}
    assert found["mybench"].name == "Mine" and "mmau" in found
    assert "mine_path" in catalogue.metadata_keys(found.values())
    (folder / "benchmark.py").write_text("BENCHMARK = 1\n")
    catalogue._scan.cache_clear()
    with pytest.raises(TypeError, match="defines no BENCHMARK"):
        catalogue.benchmarks(extra_folders=[tmp_path / "mine"])
    catalogue._scan.cache_clear()


def hf_run(model: Path, out: Path, tasks: str, metadata: dict) -> list[str]:
    """``run`` of the ``hf`` model on ``tasks`` with exactly ``metadata``, samples logged."""
    argv = text_run_args(model, ".", out, tasks, "--log_samples")
    argv[argv.index("--metadata") + 1] = json.dumps(metadata)
    return argv


@pytest.fixture(scope="module")
def mmau_json(tmp_path_factory) -> Path:
    return write_mmau_json(tmp_path_factory.mktemp("mmau") / "mmau.json")


def test_mmau_and_factual_tasks_each_under_their_own_protocol(
    tiny_lm, mmau_json, factual_metadata, tmp_path
):
    out = tmp_path / "out"
    metadata = {**factual_metadata, "sample_size": 2, "mmau_data_path": str(mmau_json),
                "mmau_protocol": "official", "factual_protocol": "paper"}  # fmt: skip
    run_cli(hf_run(tiny_lm, out, "mmau_music,factual_mood_open", metadata))
    results, samples = read_output(out)
    assert {s["doc"]["protocol"] for s in samples["mmau_music"]} == {"official"}
    assert {s["doc"]["protocol"] for s in samples["factual_mood_open"]} == {"paper"}
    assert results["configs"]["factual_mood_open"]["metadata"]["factual_protocol"] == "paper"
    assert "acc,none" in results["results"]["mmau_music"]


def test_a_bare_protocol_is_refused_when_two_families_read_one(
    tiny_lm, mmau_json, factual_metadata, tmp_path, capsys, constructions
):
    metadata = {**factual_metadata, "mmau_data_path": str(mmau_json), "protocol": "official"}
    line = cli_error_line(hf_run(tiny_lm, tmp_path, "mmau_music,factual_mood_open", metadata),
                          capsys)  # fmt: skip
    assert "protocol='official' is ambiguous" in line
    assert "factual_protocol=..." in line and "mmau_protocol=..." in line
    assert constructions == []


def test_a_users_own_task_named_like_mmau_is_not_mmau(tiny_lm, tmp_path):
    """A ``--include_path`` task ``mmau_mine`` (docs without ``id``) is the user's: the
    run ends with its results, and no MMAU predictions file is made from it."""
    folder = tmp_path / "own"
    folder.mkdir()
    (folder / "utils.py").write_text(
        "import datasets\n"
        "def load(**_):\n"
        "    rows = [{'q': f'Is {i} even?', 'gold': i % 2} for i in range(4)]\n"
        "    return {'test': datasets.Dataset.from_list(rows)}\n"
    )
    (folder / "mmau_mine.yaml").write_text(
        "task: mmau_mine\ndataset_path: ''\ncustom_dataset: !function utils.load\n"
        "test_split: test\noutput_type: multiple_choice\ndoc_to_text: '{{q}}'\n"
        "doc_to_choice: ['yes', 'no']\ndoc_to_target: gold\n"
        "metric_list:\n  - metric: acc\nmetadata:\n  version: 1.0\n"
    )
    out = tmp_path / "out"
    run_cli(["run", "--model", "hf", "--model_args", f"pretrained={tiny_lm},dtype=float32",
             "--tasks", "mmau_mine", "--include_path", str(folder), "--device", "cpu",
             "--output_path", str(out)])  # fmt: skip
    results, _ = read_output(out)
    assert "acc,none" in results["results"]["mmau_mine"]
    assert not list(out.rglob("mmau_predictions_*"))


def test_the_models_results_folder_is_checked_before_the_model(
    tiny_lm, mmau_json, tmp_path, capsys, constructions
):
    """Where the harness and the predictions file will write is taken by a file: one line
    before the model loads, not an error after the whole run."""
    from lm_eval.utils import sanitize_model_name

    out = tmp_path / "out"
    out.mkdir()
    (out / sanitize_model_name(str(tiny_lm))).write_text("not a folder")
    line = cli_error_line(hf_run(tiny_lm, out, "mmau_music", {"mmau_data_path": str(mmau_json)}),
                          capsys)  # fmt: skip
    assert "--output_path" in line and "is a file" in line
    assert constructions == []


def test_a_failing_post_run_file_keeps_the_harness_results(
    tiny_lm, mmau_json, tmp_path, capsys, monkeypatch
):
    """The predictions file cannot be written (a fault injected in its writer): the
    harness's results JSON is there, and the failure is one line naming the file."""
    import lm_eval_rul.mcqa.mmau.predictions as predictions

    def full_disk(*_args, **_kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(predictions, "write_predictions", full_disk)
    out = tmp_path / "out"
    argv = hf_run(tiny_lm, out, "mmau_music", {"mmau_data_path": str(mmau_json)})
    line = cli_error_line(argv, capsys)
    assert "PostRunFileError" in line and "results were written" in line
    assert "MMAU predictions file of mmau_music" in line and "No space left" in line
    results, samples = read_output(out)
    assert "acc,none" in results["results"]["mmau_music"] and samples["mmau_music"]


def test_two_models_into_one_output_path_keep_their_own_files(
    tiny_lm, tiny_lm_split_letters, mmau_json, tmp_path
):
    out = tmp_path / "out"
    for model in (tiny_lm, tiny_lm_split_letters):
        run_cli(hf_run(model, out, "mmau_music", {"mmau_data_path": str(mmau_json)}))
    files = sorted(out.rglob("mmau_predictions_mmau_music_*.json"))
    assert len(files) == 2 and files[0].parent != files[1].parent
    for path in files:  # each beside its model's results, paired by the harness's date id
        (results,) = path.parent.glob("results_*.json")
        assert path.name.endswith(results.name.removeprefix("results"))
