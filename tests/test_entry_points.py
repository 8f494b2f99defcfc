"""The plugin's entry points, read as a harness that loads plugins reads them."""

from __future__ import annotations

import re
from importlib.metadata import entry_points
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def _ours(group: str) -> dict[str, object]:
    return {
        ep.name: ep
        for ep in entry_points(group=group)
        if ep.dist is not None and ep.dist.name.replace("_", "-") == "lm-eval-rul"
    }


def _declared(group: str) -> dict[str, str]:
    """The ``name = "target"`` lines of one entry-point table of pyproject.toml (no tomllib
    on Python 3.10)."""
    text = PYPROJECT.read_text()
    table = text.split(f'[project.entry-points."{group}"]', 1)[1].split("\n[", 1)[0]
    pairs = re.findall(r'^([\w.-]+)\s*=\s*"([^"]+)"', table, flags=re.M)
    return dict(pairs)


def test_model_entry_points_resolve_to_the_classes():
    from lm_eval_rul.models.api import LALMAPI
    from lm_eval_rul.models.lalm import LALM
    from lm_eval_rul.models.lalm_vllm import LALMVLLM  # imports no vLLM until built
    from lm_eval_rul.registration import MODELS

    installed = _ours("lm_eval.models")
    assert set(installed) == {"lalm", "lalm-api", "lalm-vllm"}
    assert installed["lalm"].load() is LALM
    assert installed["lalm-api"].load() is LALMAPI
    assert installed["lalm-vllm"].load() is LALMVLLM
    assert _declared("lm_eval.models") == MODELS  # what `import lm_eval_rul` registers


def _yamls(folder: Path) -> set[str]:
    """The task YAMLs below a folder, found as lm-eval's task index finds them."""
    return {p.relative_to(folder).as_posix() for p in folder.glob("**/*.yaml")}


def test_task_entry_point_read_whole_gives_the_task_folder():
    """A harness that loads ``module:attr`` and calls it."""
    from lm_eval_rul import tasks_dir

    installed = _ours("lm_eval.tasks")
    assert list(installed) == ["lm_eval_rul"]
    assert installed["lm_eval_rul"].value == _declared("lm_eval.tasks")["lm_eval_rul"]
    assert installed["lm_eval_rul"].load()() == tasks_dir()
    assert (tasks_dir() / "rul_muchomusic").is_dir()


def test_task_entry_point_read_as_a_module_gives_the_task_folder():
    """A harness that imports only the module part and indexes the module's folder."""
    import importlib

    from lm_eval.tasks import TaskManager

    from lm_eval_rul import tasks_dir
    from lm_eval_rul.harness_compat import task_index

    entry = _ours("lm_eval.tasks")["lm_eval_rul"]
    folder = Path(importlib.import_module(entry.module).__file__).parent
    top_level = PYPROJECT.parent / "tasks"
    assert _yamls(folder) == _yamls(top_level) and len(_yamls(folder)) > 50
    index = task_index(TaskManager(include_path=str(folder), include_defaults=False))
    assert {"rul_muchomusic", "rul_muchomusic_gen_fold0", "muchomusic"} <= set(index)
    assert folder.samefile(tasks_dir())
