"""Each engine's identity stands in its row and its class only (docs/architecture.md, "The
model adapters"): no module besides ``adapters.py`` and the engine's own names an engine,
or one of the harness's ``hf`` aliases; each row's class says the same name."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

from lm_eval_rul.adapters import ADAPTERS, HARNESS_MODELS

PACKAGE = Path(__file__).resolve().parents[1] / "lm_eval_rul"


def _named(names: set[str]) -> dict[str, set[str]]:
    """Module path -> the names of ``names`` it writes as a string constant."""
    found: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in names:
                found.setdefault(path.relative_to(PACKAGE).as_posix(), set()).add(node.value)
    return found


def test_engine_and_harness_model_names_stand_in_their_rows_only():
    own = {}  # an engine's own modules: its module and the ones named after it (api_http)
    for row in ADAPTERS:
        stem = row.module.rsplit(".", 1)[-1]
        own[row.name] = {f"models/{stem}.py"} | {
            p.relative_to(PACKAGE).as_posix() for p in (PACKAGE / "models").glob(f"{stem}_*.py")
        }
    aliases = {name for model in HARNESS_MODELS for name in model.names[1:]}
    for path, names in _named(set(own) | aliases).items():
        if path == "adapters.py" or path.startswith("testing/"):  # the table; test fixtures
            continue
        strays = {name for name in names if name in aliases or path not in own[name]}
        assert not strays, f"{path} names {sorted(strays)}: read them from adapters.py"


def test_each_row_s_class_carries_its_name_and_its_module_checks_its_arguments():
    for row in ADAPTERS:
        module = importlib.import_module(row.module)
        engine = getattr(module, row.target.split(":")[1])
        assert engine.MODEL_NAME == row.name
        assert callable(module.check_model_args)
