"""lm_eval_rul.harness_compat on the installed harness (CI runs it on 0.4.13 and on 0.5)."""

from __future__ import annotations

import math

import pytest
from lm_eval.tasks import TaskManager, get_task_dict

from lm_eval_rul import harness_compat as compat
from lm_eval_rul.registration import tasks_dir


@pytest.fixture(scope="module")
def manager() -> TaskManager:
    return TaskManager(include_path=str(tasks_dir()), include_defaults=False)


def test_task_index_has_our_tasks_with_their_yaml_paths(manager):
    index = compat.task_index(manager)
    entry = index["rul_muchomusic_fold0"]
    assert entry.yaml_path.parent.name == "rul_muchomusic"
    assert "GROUP" in str(index["rul_muchomusic"].kind)
    assert set(manager.all_tasks) == set(index)  # the public list names the same entries


def test_task_index_of_an_unsupported_harness_is_one_line():
    class NoIndex:  # a TaskManager with neither index
        pass

    with pytest.raises(compat.HarnessAPIError) as error:
        compat.task_index(NoIndex())
    message = str(error.value)
    assert "\n" not in message and ">=0.4.13,<0.6" in message


def test_generation_tasks_build_with_acc(data_dir):
    """The harness checks each metric against the task's output type as it builds it."""
    import lm_eval_rul

    assert compat.accept_generation_metrics() == []  # idempotent: the import did it
    manager = lm_eval_rul.task_manager(
        muchomusic_data_path=str(data_dir / "muchomusic.csv"), include_defaults=False
    )
    task = get_task_dict(["muchomusic_gen"], manager)["muchomusic_gen"]
    assert task.OUTPUT_TYPE == "generate_until"
    assert task.higher_is_better()["acc"] is True


@pytest.mark.parametrize(
    "logged, expected",
    [
        ([["-1.5", "False"], ["-0.5", "True"]], [["-1.5", "False"], ["-0.5", "True"]]),  # 0.4.13
        ([[["-1.5", "False"]], [["-0.5", "True"]]], [["-1.5", "False"], ["-0.5", "True"]]),  # 0.5
        (["The answer is [[B]]"], ["The answer is [[B]]"]),  # 0.4.13 generation
        ([["The answer is [[B]]"]], ["The answer is [[B]]"]),  # 0.5 generation
    ],
)
def test_sample_responses_read_both_log_shapes(logged, expected):
    assert compat.sample_responses({"filtered_resps": logged}) == expected


def test_sample_responses_refuse_several_repeats():
    with pytest.raises(ValueError, match="2 repeats"):
        compat.sample_responses({"filtered_resps": [[["-1", "False"], ["-2", "False"]]]})


def test_sample_size_matches_the_harness_rule():
    class Task:
        eval_docs = list(range(7))

    try:  # 0.4.13's public helper, 0.5's private one: the same rule
        from lm_eval.evaluator_utils import get_sample_size as harness_size
    except ImportError:
        from lm_eval.evaluator_utils import _get_sample_size as harness_size
    for limit in (None, 0.5, 0.01, 3, 3.0, 10):
        assert compat.sample_size(Task(), limit) == harness_size(Task(), limit)
    assert compat.sample_size(Task(), 0.5) == math.ceil(3.5)


def test_plain_results_names_tasks_as_0_4_13_does():
    logged = {
        "results": {"g": {"acc,none": 0.5}, "g::t0": {"acc,none": 0.25}},
        "configs": {"g::t0": {"task": "t0"}},
        "group_subtasks": {"g": ["g::t0"]},
        "config": {"model": "hf"},
    }
    plain, names = compat.plain_results(logged)
    assert plain["results"] == {"g": {"acc,none": 0.5}, "t0": {"acc,none": 0.25}}
    assert plain["group_subtasks"] == {"g": ["t0"]} and plain["config"] == {"model": "hf"}
    assert names["t0"] == "g::t0"  # the samples file's name
    assert compat.plain_results(plain)[0] == plain  # 0.4.13's names are already plain
    with pytest.raises(ValueError, match="both 't0'"):
        compat.plain_results({"results": {"a::t0": {}, "b::t0": {}}})
