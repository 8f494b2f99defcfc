"""The examples in the factual modules' docstrings run and give what they show."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "labels",
    "genres",
    "lexicon",
    "parser",
    "items",
    "chunks",
    "metrics",
    "baselines",
    "prompts",
    "binary",
    "truefalse",
    "llm_parser",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(f"lm_eval_rul.factual.{name}")
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0
