"""The package's layering (docs/architecture.md): stages import only the stages below them,
no module imports itself back through others, and no module grows past ~400 lines."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "lm_eval_rul"

#: Each stage and the stages it may import (besides itself and the top-level modules
#: ``errors``, ``registration``, ``cache``, ``progress``, ``hub``, ``retries``, ``paths``,
#: ``masking``, ``files``, ``harness_compat`` and ``catalogue``).
ALLOWED: dict[str, set[str]] = {
    "questions": set(),
    "audio": {"questions"},
    "mcqa": {"questions", "audio"},
    "models": {"questions", "audio", "mcqa"},
    "factual": {"questions", "audio"},
    "diagnose": {"questions", "report"},
    "distractors": {"questions", "mcqa"},
    "tagging": {"questions", "audio", "mcqa", "factual"},
    "report": {"questions", "audio", "mcqa", "factual", "tagging"},
    "cli": {"questions", "audio", "mcqa", "models", "distractors", "report", "factual", "diagnose"},
    "testing": {"questions", "audio", "mcqa", "models", "factual", "tagging", "cli"},
}
TOP_LEVEL = {
    "errors", "registration", "cache", "progress", "hub", "retries", "paths", "masking", "files",
    "harness_compat", "catalogue",
}
MAX_LINES = 400
# The bridge server is one file by contract: `lm-eval-rul bridge --write` copies it alone into
# a research model's own environment, so it cannot be split into modules it would import.
ONE_FILE_LIMITS = {"models/bridge_server.py": 700}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every ``lm_eval_rul`` module a file imports, at any depth (lazy imports included)."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("lm_eval_rul"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("lm_eval_rul"):
                continue
            for alias in node.names:  # `from . import x` may import the submodule x
                candidate = f"{target}.{alias.name}"
                found.add(candidate if _exists(candidate) else target)
    return found


def _exists(module: str) -> bool:
    relative = Path(*module.split(".")[1:])
    return (PACKAGE / relative).with_suffix(".py").is_file() or (PACKAGE / relative).is_dir()


def _stage(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


FILES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_stages_import_only_lower_stages(path):
    stage = _stage(_module_name(path))
    if stage not in ALLOWED:  # top-level modules: errors, registration, __init__, __main__
        return
    wrong = sorted(
        target
        for target in _imports(path)
        if (other := _stage(target)) not in (None, stage, *TOP_LEVEL)
        and other not in ALLOWED[stage]
    )
    assert not wrong, f"{path.relative_to(PACKAGE)} ({stage}) imports higher stages: {wrong}"


def test_no_import_cycles():
    graph = {_module_name(p): {t for t in _imports(p) if t != _module_name(p)} for p in FILES}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(module: str) -> None:
        state[module] = 1
        stack.append(module)
        for target in sorted(graph.get(module, ())):
            if target not in graph:
                continue
            if state.get(target) == 1:
                pytest.fail("import cycle: " + " -> ".join(stack[stack.index(target) :] + [target]))
            elif target not in state:
                visit(target)
        stack.pop()
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_modules_stay_small(path):
    lines = len(path.read_text(encoding="utf-8").splitlines())
    limit = ONE_FILE_LIMITS.get(path.relative_to(PACKAGE).as_posix(), MAX_LINES)
    assert lines <= limit, f"{path.relative_to(PACKAGE)} has {lines} lines; split it by job"


def test_every_subpackage_documents_its_public_names():
    for init in sorted(PACKAGE.glob("*/__init__.py")):
        tree = ast.parse(init.read_text(encoding="utf-8"))
        doc = ast.get_docstring(tree)
        assert doc and len(doc.splitlines()) >= 2, f"{init} needs a docstring saying its job"
        exported = next(
            (
                ast.literal_eval(node.value)
                for node in tree.body
                if isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
            ),
            None,
        )
        assert exported, f"{init} lists no public names in __all__"
        missing = [name for name in exported if name not in doc]
        assert not missing, f"{init}: docstring does not mention {missing}"


#: Where the repository's text lives: the package, task folders, docs, tests, benchmarks.
ROOT = PACKAGE.parent
_TEXT_SUFFIXES = {".py", ".md", ".yaml", ".yml", ".txt", ".toml", ""}


def _repository_texts() -> list[Path]:
    found = [ROOT / "README.md"]
    for folder in ("lm_eval_rul", "tasks", "docs", "tests", "benchmarks"):
        found += [
            p
            for p in sorted((ROOT / folder).rglob("*"))
            if p.is_file() and p.suffix in _TEXT_SUFFIXES and "__pycache__" not in p.parts
        ]
    return found


def test_docstrings_point_inside_the_repository():
    """Nothing cites the design notes or the shared folder outside the repository: the
    method is docs/method.md (and docs/factual.md)."""
    outside = [
        str(p.relative_to(ROOT))
        for p in _repository_texts()
        if p != Path(__file__).resolve()
        and any(word in p.read_text(encoding="utf-8") for word in ("DESIGN.md", "../shared"))
    ]
    assert len(_repository_texts()) > 100  # the scan really covers the repository
    assert not outside, f"files citing documents outside the repository: {outside}"
