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
    from lm_eval_rul.registration import MODELS

    installed = _ours("lm_eval.models")
    assert set(installed) == {"lalm", "lalm-api"}
    assert installed["lalm"].load() is LALM
    assert installed["lalm-api"].load() is LALMAPI
    assert _declared("lm_eval.models") == MODELS  # what `import lm_eval_rul` registers


def test_task_entry_point_gives_the_task_folder():
    from lm_eval_rul import tasks_dir

    installed = _ours("lm_eval.tasks")
    assert list(installed) == ["lm_eval_rul"]
    assert installed["lm_eval_rul"].load()() == tasks_dir()
    assert (tasks_dir() / "rul_muchomusic").is_dir()
