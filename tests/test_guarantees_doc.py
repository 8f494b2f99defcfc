"""docs/guarantees.md: every promise names a test, and every test it names exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_test_the_guarantees_page_names_exists():
    text = (ROOT / "docs" / "guarantees.md").read_text(encoding="utf-8")
    cited = set(re.findall(r"`tests/([\w.]+\.py)::(\w+)`", text))
    assert len(cited) >= 30
    missing = [
        f"{name}::{test}"
        for name, test in sorted(cited)
        if not (ROOT / "tests" / name).is_file()
        or f"def {test}(" not in (ROOT / "tests" / name).read_text(encoding="utf-8")
    ]
    assert not missing, f"docs/guarantees.md names tests that do not exist: {missing}"
    promises = [line for line in text.splitlines() if line.startswith("- **")]
    assert promises and all(
        "`tests/" in block for block in re.split(r"\n(?=- \*\*)", text)[1:]
    ), "a promise without a test"
