"""The benchmark catalogue (``lm_eval_rul.catalogue``): one descriptor per task folder, asked
by registration, ``run``, the loaders, the readers and ``report``; per-family protocol keys;
post-run files checked before the model, written beside the model's results, after them."""

from __future__ import annotations

import json
import logging
import os
import re
from pathlib import Path

import pytest
from doubles.harness_runs import fake_run
from doubles.harness_runs import mc_doc as _doc

from lm_eval_rul import catalogue
from lm_eval_rul.testing.harness import cli_error_line, read_output, run_cli, text_run_args
from lm_eval_rul.testing.mmau import write_mmau_json

os.environ.setdefault("HF_HUB_OFFLINE", "1")

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


@pytest.mark.parametrize(
    "key, what",
    [("mmau_data_path", "file"), ("rul_mmau_data_path", "file"), ("musicnet_dir", "directory"),
     ("ocremix_tags", "file")],  # fmt: skip
)
def test_every_data_key_of_every_benchmark_is_checked_at_the_task_manager_call(
    key, what, tmp_path
):
    import lm_eval_rul

    missing = tmp_path / "nowhere"
    with pytest.raises(FileNotFoundError) as caught:
        lm_eval_rul.task_manager(include_defaults=False, **{key: str(missing)})
    message = str(caught.value)
    assert f"lm_eval_rul.task_manager keyword {key}='{missing}': no such {what}" in message


ROOT = Path(__file__).resolve().parents[1]




def user_folder(root: Path, descriptor: str | None = None, *, name: str = "mybench") -> Path:
    """``root/mine/<name>/``: a fold group of two tasks and (``descriptor``) its benchmark.py."""
    folder = root / "mine" / name
    folder.mkdir(parents=True)
    (folder / f"_{name}.yaml").write_text(
        f"group: {name}_folds\ntask:\n  - {name}_fold0\n  - {name}_fold1\n"
        "aggregate_metric_list: []\n"
    )
    for fold in (0, 1):
        (folder / f"{name}_fold{fold}.yaml").write_text(
            f"task: {name}_fold{fold}\ndataset_path: ''\ncustom_dataset: !function utils.load\n"
            "output_type: multiple_choice\ndoc_to_text: '{{q}}'\ndoc_to_choice: [a, b]\n"
            "doc_to_target: 0\n"
        )
    if descriptor is not None:
        (folder / "benchmark.py").write_text(descriptor)
    return root / "mine"


GOOD = (
    "from lm_eval_rul.catalogue import Benchmark\n"
    "BENCHMARK = Benchmark(folder='mybench', name='My bench', metadata_keys=('mybench_path',),\n"
    "    fold_groups=('mybench_folds',), report_names={'mybench': 'My own bench'})\n"
)


BROKEN = {
    "syntax": ("BENCHMARK = Benchmark(\n", "line 1: syntax error"),
    "raises": ("import lm_eval_rul_no_such_module\n", "importing it raised ModuleNotFoundError"),
    "field type": (GOOD.replace("name='My bench'", "name=3"), "name=3 must be a string"),
    "reader": (
        "from lm_eval_rul.catalogue import Benchmark, Reader\n"
        "BENCHMARK = Benchmark(folder='mybench', name='x', metadata_keys=(),\n"
        "    readers=(Reader(detect='lm_eval_rul.questions.mmau:no_such', read='x:y'),))\n",
        "readers detect 'lm_eval_rul.questions.mmau:no_such' names nothing importable",
    ),
    "built-in folder": (GOOD.replace("folder='mybench'", "folder='mmau'"),
                        "folder='mmau', but the file is in the folder 'mybench'"),  # fmt: skip
}


def test_an_include_path_descriptor_gives_votes_names_and_keys(tmp_path):
    """44.5: the folder's benchmark.py counts: its fold group gets the votes, report names
    its benchmark as declared, task_manager checks its keys."""
    from lm_eval_rul import catalogue, task_manager
    from lm_eval_rul.cli import main
    from lm_eval_rul.cli.run import add_majority_acc
    from lm_eval_rul.included import included
    from lm_eval_rul.registration import UnknownTaskMetadataError

    mine = user_folder(tmp_path, GOOD)
    samples = {
        f"mybench_fold{f}": [
            {"doc": _doc(i, f"q{i}", 2, fold=f), "filtered_resps": [[-0.1, False], [-3.0, False]],
             "filter": "none"} for i in range(3)
        ] for f in (0, 1)
    }  # fmt: skip
    results = {"results": {"mybench_folds": {}}, "groups": {"mybench_folds": {}},
               "group_subtasks": {"mybench_folds": list(samples)}, "samples": samples}  # fmt: skip
    assert "mybench_folds" not in catalogue.fold_groups()
    with included(str(mine)):
        assert catalogue.fold_groups()["mybench_folds"] == catalogue.VOTE_METRICS
        add_majority_acc(results)
    assert results["groups"]["mybench_folds"]["majority_acc,none"] == 1.0
    assert "mybench" not in catalogue.report_names()  # only while a command includes it
    typo = "'mybench_pth' \\(did you mean 'mybench_path'"
    with pytest.raises(UnknownTaskMetadataError, match=typo):
        task_manager(include_path=str(mine), mybench_pth="x.json")
    # report --include_path: the section is named as the descriptor says
    runs = fake_run(tmp_path / "runs", "mybench", [_doc(i, f"q{i}") for i in range(4)])
    main(["report", str(runs), "--out", str(tmp_path / "report"), "--include_path", str(mine),
          "--n-resamples", "50"])  # fmt: skip
    assert "## My own bench" in (tmp_path / "report" / "report.md").read_text()


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_broken_include_path_descriptor_is_one_line_before_the_model(
    case, tiny_lm, tmp_path, capsys, constructions
):
    """44.6: each broken benchmark.py is one line naming the file and the problem, exit 2."""
    from lm_eval_rul.testing.harness import cli_error_line

    text, problem = BROKEN[case]
    mine = user_folder(tmp_path, text)
    line = cli_error_line(["run", "--model", "hf", "--model_args", f"pretrained={tiny_lm}",
                           "--tasks", "mybench_fold0", "--include_path", mine, "--device", "cpu"],
                          capsys)  # fmt: skip
    assert str(mine / "mybench" / "benchmark.py") in line and problem in line
    assert constructions == []


def test_a_user_folder_named_like_a_built_in_one_is_refused(tmp_path):
    """44.6: a benchmark.py in a folder ``mmau`` claims MMAU's folder: refused."""
    from lm_eval_rul.catalogue import DescriptorError
    from lm_eval_rul.included import check_include_paths

    mine = user_folder(tmp_path, GOOD.replace("mybench", "mmau"), name="mmau")
    with pytest.raises(DescriptorError, match="folder='mmau' is the benchmark of .*mmau"):
        check_include_paths(str(mine))


def test_a_user_task_named_like_a_built_in_is_refused_before_the_model(
    tiny_lm, tmp_path, capsys, constructions
):
    """44.9: the user's mmau_music would run under the plugin's name: one line, renamed."""
    from lm_eval_rul.testing.harness import cli_error_line

    folder = tmp_path / "own"
    folder.mkdir()
    (folder / "mmau_music.yaml").write_text("task: mmau_music\ndataset_path: ''\n")
    line = cli_error_line(["run", "--model", "hf", "--model_args", f"pretrained={tiny_lm}",
                           "--tasks", "mmau_music", "--include_path", folder, "--device", "cpu"],
                          capsys)  # fmt: skip
    assert "'mmau_music'" in line and "built-in task in" in line and "mmau" in line
    assert "rename your task" in line and "KeyError" not in line
    assert constructions == []
    from lm_eval_rul.catalogue import tasks_dir
    from lm_eval_rul.included import check_include_paths

    # the plugin's own folder given again (lm-eval-rul tasks-dir, or its real path) is no user's
    assert check_include_paths([str(tasks_dir()), str(tasks_dir().resolve())]) == []


@pytest.mark.parametrize("kind", ["missing", "yaml file"])
def test_an_include_path_that_is_no_folder_names_the_include_path(
    kind, tiny_lm, tmp_path, capsys, constructions
):
    """44.10: not "unknown task 'qa_mine' (closest: qa4mre...)"."""
    from lm_eval_rul.testing.harness import cli_error_line

    path = tmp_path / "nowhere"
    if kind == "yaml file":
        path = tmp_path / "qa_mine.yaml"
        path.write_text("task: qa_mine\n")
    line = cli_error_line(["run", "--model", "hf", "--model_args", f"pretrained={tiny_lm}",
                           "--tasks", "qa_mine", "--include_path", path, "--device", "cpu"],
                          capsys)  # fmt: skip
    assert f"--include_path {path}" in line and "closest" not in line
    assert ("no such folder" if kind == "missing" else f"--include_path {tmp_path}") in line
    assert constructions == []


def test_every_plugin_metric_is_registered_and_every_group_declares_its_aggregation(
    tmp_path, data_dir
):
    """44.15: loading MMAU's and the fold tasks logs neither "Metric ... not found in
    registry" nor "has no aggregate_metric_list" (lm-eval 0.5; 0.4.13 logs neither)."""
    from lm_eval.api.registry import metric_registry
    from lm_eval.tasks import TaskManager

    from lm_eval_rul.catalogue import tasks_dir
    from lm_eval_rul.included import read_task_yaml
    from lm_eval_rul.mcqa.harness_metric import task_file_metrics
    from lm_eval_rul.testing.mmau import write_mmau_json

    groups = [p for p in tasks_dir().glob("*/*.yaml") if "group" in (read_task_yaml(p) or {})]
    assert groups and all("aggregate_metric_list" in read_task_yaml(p) for p in groups)
    metrics = task_file_metrics()
    assert {"parse_failure", "perceptual_index", "micro_f1"} <= set(metrics)
    on_next = isinstance(getattr(metric_registry.get("acc", None), "output_type", None), set)
    if on_next:
        assert all(name in metric_registry for name in metrics)
    records: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: records.append(record.getMessage())  # type: ignore[method-assign]
    harness_log = logging.getLogger("lm_eval")
    harness_log.addHandler(handler)
    try:
        manager = TaskManager(include_path=str(tasks_dir()), include_defaults=False,
                              metadata={"mmau_data_path": str(write_mmau_json(tmp_path / "m.json")),
                                        "rul_data_path": str(data_dir / "rul.json")})  # fmt: skip
        manager.load_task_or_group(["mmau", "rul_muchomusic_gen"])
    finally:
        harness_log.removeHandler(handler)
    assert not [r for r in records if "not found in registry" in r or "aggregate_metric_list" in r]


def test_the_reports_name_rules_are_the_descriptors():
    """Issue 42, item 3: categories by declared keys, question sets by declared names, file
    kinds by every descriptor's reader: no name rule inside the report."""
    summary = (ROOT / "lm_eval_rul" / "report" / "summary.py").read_text()
    breakdowns = (ROOT / "lm_eval_rul" / "report" / "breakdowns.py").read_text()
    kinds = (ROOT / "lm_eval_rul" / "questions" / "file_kinds.py").read_text()
    assert '"muchomusic" in' not in summary and "_CSV_KEYS" not in breakdowns
    assert "looks_like_mmau" not in kinds
    run_keys = (ROOT / "lm_eval_rul" / "report" / "run_keys.py").read_text()
    assert "startswith(base" not in run_keys and 'removesuffix("_gen")' not in run_keys
    from lm_eval_rul.included import for_task
    from lm_eval_rul.report.run_keys import base_benchmark

    assert base_benchmark("mmau_music_gen") == "mmau_music"  # declared: question_sets
    assert base_benchmark("mmau_mine_gen") == "mmau_mine_gen"  # no descriptor names it: itself
    assert for_task("rul_muchomusic_native_gen").folder == "harness_native"  # its YAML's folder
    from lm_eval_rul.report.breakdowns import category_keys

    assert "muchomusic_csv" in category_keys("rul_muchomusic_gen")
    assert category_keys("mmau_music") == () and category_keys("Bench-A") == ()
