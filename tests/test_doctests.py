"""Every docstring example in the package runs and gives what it shows (CI runs them).

Each module of ``lm_eval_rul`` (``__main__`` included: it runs the CLI only as a script)
is imported and its examples run with ``doctest``; a module that could not be doctested
would be listed in :data:`NOT_DOCTESTED` with the reason. None is today.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from pathlib import Path

import pytest

import lm_eval_rul

#: Modules left out, and why (nothing else is skipped).
NOT_DOCTESTED: dict[str, str] = {}

MODULES = sorted(
    info.name
    for info in pkgutil.walk_packages(lm_eval_rul.__path__, prefix="lm_eval_rul.")
    if info.name not in NOT_DOCTESTED
)


def test_every_module_is_collected():
    package = Path(lm_eval_rul.__file__).parent
    # lm_eval_rul/tasks links to the top-level task folder, which rglob does not enter: its
    # __init__ is the one module there (the task folders' utils.py are loaded by path)
    files = set(package.rglob("*.py")) | {package / "tasks" / "__init__.py"}
    assert len(MODULES) + len(NOT_DOCTESTED) == len(files) - 1  # the package's __init__
    assert "lm_eval_rul.mcqa.voting" in MODULES and "lm_eval_rul.__main__" in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"


#: Modules whose examples document their rules: each must keep some.
WITH_EXAMPLES = (
    "mcqa.voting",
    "mcqa.reference_parsing",
    "mcqa.prompts",
    "mcqa.parsing",
    "mcqa.scoring",
    "factual.reading.labels",
    "factual.reading.genres",
    "factual.reading.lexicon",
    "factual.reading.parser",
    "factual.items",
    "factual.chunks",
    "factual.metrics",
    "factual.baselines",
    "factual.prompts",
)


@pytest.mark.parametrize("name", WITH_EXAMPLES)
def test_rule_modules_keep_their_examples(name):
    module = importlib.import_module(f"lm_eval_rul.{name}")
    assert doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE).attempted > 0
