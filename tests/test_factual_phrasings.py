"""The phrasing study: four phrasings per task from one table, and the study groups resolve
through the harness's own TaskManager into the tasks they name."""

from __future__ import annotations

import pytest
from lm_eval.tasks import TaskManager, get_task_dict

from lm_eval_rul.factual.prompts import BINARY_TASKS, PHRASINGS, TEMPLATES, prompt
from lm_eval_rul.factual.reading.labels import TASKS
from lm_eval_rul.harness_compat import task_index
from lm_eval_rul.registration import tasks_dir


def test_four_phrasings_three_open_and_the_list():
    assert set(PHRASINGS) == {"instrument", "composer", "genre"}
    for task, phrasings in PHRASINGS.items():
        assert phrasings == ("open_casual", "open", "open_formal", "list")
        texts = [TEMPLATES[task][p] for p in phrasings]
        assert len(set(texts)) == 4 and "{labels}" in texts[3]
        assert all("{" not in prompt(task, p) for p in phrasings[:3])
    assert all("truefalse" in TEMPLATES[t] for t in TASKS)
    assert all("binary" in TEMPLATES[t] for t in BINARY_TASKS)
    with pytest.raises(ValueError, match="binary_prompt"):
        prompt("composer", "binary")


def leaves(tree) -> dict:
    out = {}
    for key, value in tree.items():
        out.update(leaves(value) if isinstance(value, dict) else {key: value})
    return out


def group_leaves(index, name) -> list[str]:
    entry = index[name]
    if entry.kind.name != "GROUP":
        return [name]
    return [leaf for child in entry.cfg["task"] for leaf in group_leaves(index, child)]


@pytest.fixture(scope="module")
def manager(factual_metadata) -> TaskManager:
    return TaskManager(
        include_path=str(tasks_dir()), include_defaults=False, metadata=factual_metadata
    )


def test_study_groups_name_their_tasks(manager):
    index = task_index(manager)
    assert group_leaves(index, "factual_instrument_phrasings") == [
        "factual_instrument_open_casual",
        "factual_instrument_open",
        "factual_instrument_open_formal",
        "factual_instrument_list",
    ]
    assert len(group_leaves(index, "factual_phrasings")) == 12
    assert group_leaves(index, "factual_binary") == [f"factual_{t}_binary" for t in BINARY_TASKS]
    assert group_leaves(index, "factual_truefalse_gen") == [
        f"factual_{t}_truefalse_gen" for t in TASKS
    ]
    robustness = group_leaves(index, "factual_robustness")
    assert len(robustness) == len(set(robustness)) == 12 + 3 + 3 + 6 + 6
    assert robustness[:12] == group_leaves(index, "factual_phrasings")


def test_phrasing_group_builds_with_each_phrasing_as_its_prompt(manager):
    tasks = leaves(get_task_dict(["factual_phrasings"], manager))
    assert len(tasks) == 12
    for name, task in tasks.items():
        docs = list(task.eval_docs)
        factual_task, variant = docs[0]["factual_task"], docs[0]["variant"]
        assert name == f"factual_{factual_task}_{variant}"
        assert variant in PHRASINGS[factual_task]
        assert task.doc_to_text(docs[0]) == docs[0]["prompt"]
        if factual_task != "genre":
            assert docs[0]["prompt"] == prompt(factual_task, variant)
