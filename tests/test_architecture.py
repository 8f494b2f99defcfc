"""The package's layering (docs/architecture.md): stages import only the stages below them,
and no module imports itself back through others."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "lm_eval_rul"

#: Each stage and the stages it may import (besides itself and the top-level modules of
#: :data:`TOP_LEVEL`).
ALLOWED: dict[str, set[str]] = {
    "questions": set(),
    "audio": {"questions"},
    "mcqa": {"questions", "audio"},
    "models": {"questions", "audio", "mcqa"},
    # what lalm-api reads of a bridge is models.api_http: models never imports the bridge
    "bridge": {"models"},
    "factual": {"questions", "audio"},
    "diagnose": {"questions", "report"},
    "distractors": {"questions", "mcqa"},
    "tagging": {"questions", "audio", "mcqa", "factual"},
    "report": {"questions", "audio", "mcqa", "factual", "tagging"},
    "cli": {
        "questions", "audio", "mcqa", "models", "bridge", "distractors", "report", "factual",
        "diagnose",
    },
    "testing": {"questions", "audio", "mcqa", "models", "factual", "tagging", "cli"},
}
TOP_LEVEL = {
    "errors", "registration", "cache", "progress", "hub", "retries", "paths", "masking", "files",
    "harness_compat", "catalogue", "adapters", "data_keys", "model_flags", "logs", "included",
}
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


#: The task folders (``tasks/<folder>/*.py``: ``utils.py``, ``benchmark.py``), which the
#: harness imports by path.
TASK_FILES = sorted((PACKAGE.parent / "tasks").rglob("*.py"))


def _imported_names(path: Path) -> set[str]:
    """Every module a file imports by absolute name (``import x``, ``from x import y``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.update([node.module, *(f"{node.module}.{a.name}" for a in node.names)])
    return found


@pytest.mark.parametrize(
    "path",
    [PACKAGE / "registration.py", *TASK_FILES],
    ids=lambda p: str(p.relative_to(PACKAGE.parent)),
)
def test_registration_and_task_code_import_nothing_from_the_cli(path):
    """The CLI sits on top: registration (``create_lm``, ``task_manager``) and the task
    folders' code import nothing from it, at any depth (lazy imports included)."""
    assert len(TASK_FILES) >= 14  # utils.py and benchmark.py of every task folder
    imported = _imports(path) if path.is_relative_to(PACKAGE) else _imported_names(path)
    wrong = sorted(m for m in imported if f"{m}.".startswith("lm_eval_rul.cli."))
    assert not wrong, f"{path.relative_to(PACKAGE.parent)} imports the CLI: {wrong}"


def test_models_and_the_bridge_meet_in_one_direction():
    """``models`` imports nothing of the bridge (lalm-api's reading of a bridge is
    ``models.api_http``); the bridge's server file imports nothing of the package (it is
    copied alone)."""
    from_models = {
        target
        for path in sorted((PACKAGE / "models").rglob("*.py"))
        for target in _imports(path)
        if _stage(target) == "bridge"
    }
    assert not from_models
    assert not _imports(PACKAGE / "bridge" / "server.py")


#: The one HTTP server the installed package may hold: the bridge's one-file server, which a
#: user copies into a model's environment. Test doubles are tests/doubles/, not installed.
SERVER_FILES = {"bridge/server.py"}
_SERVER_MODULES = ("http.server", "socketserver", "wsgiref.simple_server", "aiohttp.web")
_SERVER_BASES = ("HTTPServer", "BaseHTTPRequestHandler", "BaseRequestHandler", "TCPServer")


def _serves_http(path: Path) -> list[str]:
    """What in a file makes it a server: an import of a server module, a server base class."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        found += [n for n in names if n.startswith(_SERVER_MODULES)]
        if isinstance(node, ast.ClassDef):
            bases = [ast.unparse(base) for base in node.bases]
            found += [f"class {node.name}({b})" for b in bases if b.endswith(_SERVER_BASES)]
    return found


def test_no_http_server_in_the_installed_package():
    """The wheel ships what a user runs: no loopback servers of the tests (``doubles``)."""
    servers = {
        str(path.relative_to(PACKAGE)): found
        for path in FILES
        if (found := _serves_http(path))
    }
    assert set(servers) == SERVER_FILES, f"HTTP servers outside {SERVER_FILES}: {servers}"
    doubles = Path(__file__).resolve().parent / "doubles"
    assert _serves_http(doubles / "chat.py") and _serves_http(doubles / "scripted_http.py")


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
