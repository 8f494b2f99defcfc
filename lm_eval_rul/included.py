"""The user's ``--include_path`` folders, checked before any model loads.

``lm-eval-rul run`` / ``ls`` / ``validate`` / ``report`` and
:func:`lm_eval_rul.task_manager` call :func:`check_include_paths` on them:

* each path is a folder that exists (not a YAML file: the harness indexes folders);
* each ``benchmark.py`` in them loads and is well formed
  (:func:`lm_eval_rul.catalogue.include_folders`: a syntax error, an import that raises,
  a field of the wrong type, a claim to a built-in folder such as ``mmau``), and every
  ``"module:function"`` it names exists (its readers, checks, keys, post-run writers);
* no task, group or tag of theirs has the name of one of the plugin's built-in tasks
  (``mmau_music``): the harness would run the user's YAML under the plugin's name, and the
  plugin's files and votes after the run would read it as the built-in.

Each problem is one :class:`~lm_eval_rul.errors.UserInputError` line naming the include
path or the file. :func:`included` then adds the folders' descriptors to the catalogue for
the command's duration, so a fold group of theirs gets its votes, ``task_manager`` checks
their keys and ``report`` names their benchmarks as they declare.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from . import catalogue
from .catalogue import Benchmark, descriptor_error, load_function, tasks_dir
from .errors import UserInputError

__all__ = [
    "IncludePathError",
    "include_paths_of",
    "check_include_paths",
    "included",
    "read_task_yaml",
    "task_names",
    "for_task",
    "run_included_checks",
]


class IncludePathError(UserInputError, ValueError):
    """An ``--include_path`` that is no folder, or whose task shadows a built-in one."""


def include_paths_of(include_path: Any) -> list[str]:
    """``--include_path`` as a list of paths (a string, a list, or None), the plugin's own
    task folder left out."""
    paths = include_path if isinstance(include_path, list | tuple) else [include_path]
    ours = tasks_dir().resolve()
    return [str(p) for p in paths if p not in (None, "") and Path(p).expanduser().resolve() != ours]


def _check_folder(path: str, flag: str) -> None:
    folder = Path(path).expanduser()
    if not folder.exists():
        raise IncludePathError(
            f"{flag} {path}: no such folder; give the folder that holds your task YAMLs "
            "(and their benchmark.py)"
        )
    if not folder.is_dir():
        raise IncludePathError(
            f"{flag} {path}: a file, not a folder (the harness reads every YAML in a folder); "
            f"give the folder that holds it: {flag} {folder.parent}"
        )


def _functions(benchmark: Benchmark) -> list[tuple[str, str]]:
    """(field, ``"module:name"``) for every function a descriptor names."""
    named = (
        [("metadata_keys", benchmark.metadata_keys)]
        if isinstance(benchmark.metadata_keys, str)
        else []
    )
    named += [("checks", c) for c in benchmark.checks]
    for reader in benchmark.readers:
        named += [("readers detect", reader.detect), ("readers read", reader.read)]
    named += [("post_run_files write", f.write) for f in benchmark.post_run_files]
    return named


def _resolve(benchmark: Benchmark) -> None:
    """Every function the descriptor names can be imported."""
    path = catalogue.descriptor_path(benchmark.folder) or Path(benchmark.folder)
    for field, target in _functions(benchmark):
        if not isinstance(target, str) or ":" not in target:
            raise descriptor_error(
                path, f"{field} {target!r} is not a 'module:function' string"
            )
        try:
            load_function(target)
        except (Exception, SystemExit) as error:  # noqa: BLE001 - the user's module, named
            raise descriptor_error(
                path, f"{field} {target!r} names nothing importable ({type(error).__name__}: "
                f"{error})"
            ) from None


@functools.cache
def _loader() -> type:
    """A YAML loader that reads ``!function`` (and any other tag) as None."""
    import yaml

    class Loader(yaml.SafeLoader):
        """SafeLoader with a catch-all tag constructor (added below)."""

    Loader.add_multi_constructor("", lambda loader, suffix, node: None)
    return Loader


def read_task_yaml(path: Path) -> dict[str, Any] | None:
    """A task YAML's top-level mapping (``!function`` values read as None); None when
    the file is not readable YAML or not a mapping (the harness names it itself)."""
    import yaml

    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_loader())  # noqa: S506
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    return data if isinstance(data, dict) else None


def _names(root: Path) -> dict[str, Path]:
    """Task, group and tag name -> the YAML that declares it, under ``root``."""
    found: dict[str, Path] = {}
    for path in sorted([*root.rglob("*.yaml"), *root.rglob("*.yml")]):
        data = read_task_yaml(path)
        if data is None:
            continue
        for key in ("task", "group", "tag"):
            values = data.get(key)
            for name in values if isinstance(values, list) else [values]:
                if isinstance(name, str):
                    found.setdefault(name, path)
    return found


@functools.lru_cache(maxsize=1)
def _built_in_names(root: str) -> dict[str, Path]:
    return _names(Path(root))


@functools.lru_cache(maxsize=64)
def task_names(folder: str) -> frozenset[str]:
    """The task, group and tag names the YAMLs of one task folder declare."""
    return frozenset(_names(Path(folder)))


def _refuse_shadowing(paths: list[str], flag: str) -> None:
    built_in = _built_in_names(str(tasks_dir()))
    for path in paths:
        for name, yaml_path in _names(Path(path).expanduser()).items():
            if name in built_in:
                raise IncludePathError(
                    f"{flag} {path}: {yaml_path.name} declares {name!r}, the name of the "
                    f"plugin's built-in task in {built_in[name].parent}; rename your task (e.g. "
                    f"{name}_mine) so it cannot be taken for the built-in one"
                )


def check_include_paths(include_path: Any, *, flag: str = "--include_path") -> list[str]:
    """Check the ``--include_path`` folders (see the module docstring).

    Returns:
        The paths (:func:`include_paths_of`).

    Raises:
        IncludePathError: a path is missing or a file, or a task of theirs shadows a
            built-in task.
        DescriptorError: a ``benchmark.py`` of theirs is broken.
    """
    paths = include_paths_of(include_path)
    for path in paths:
        _check_folder(path, flag)
    if not paths:
        return paths
    before = {b.folder for b in catalogue.benchmarks()}
    for benchmark in catalogue.benchmarks(extra_folders=paths):
        if benchmark.folder not in before:
            _resolve(benchmark)
    _refuse_shadowing(paths, flag)
    return paths


def for_task(name: str) -> Benchmark | None:
    """The benchmark whose task folder's YAMLs declare the task, group or tag ``name`` (a
    task belongs to the benchmark of the folder its YAML is in); None: no folder does."""
    for benchmark in catalogue.benchmarks():
        path = catalogue.descriptor_path(benchmark.folder)
        if path is not None and name in task_names(str(path.parent)):
            return benchmark
    return None


def run_included_checks(metadata: Any) -> None:
    """Call every ``checks`` function of the ``--include_path`` descriptors in the catalogue
    (:func:`included`) on ``metadata``, as :func:`lm_eval_rul.task_manager` does: ``run``
    calls them before the model loads (the plugin's own benchmarks check in their loaders).

    Raises:
        UserInputError, FileNotFoundError: what a check raised; anything else a check
            raises becomes one :class:`IncludePathError` line naming its file and check.
    """
    given = dict(metadata or {})
    ours = tasks_dir().resolve()
    for benchmark in catalogue.benchmarks():
        path = catalogue.descriptor_path(benchmark.folder)
        if path is None or path.resolve().is_relative_to(ours):
            continue
        for check in benchmark.checks:
            try:
                load_function(check)(dict(given))
            except (UserInputError, FileNotFoundError):
                raise
            except (Exception, SystemExit) as error:  # noqa: BLE001 - the user's check, named
                raise IncludePathError(
                    f"{path}: its check {check!r} refused --metadata "
                    f"({type(error).__name__}: {error}); nothing was loaded"
                ) from None


@contextlib.contextmanager
def included(include_path: Any, *, flag: str = "--include_path") -> Iterator[list[str]]:
    """Check the folders (:func:`check_include_paths`) and, while the block runs, count
    their descriptors as the catalogue's own (:func:`~lm_eval_rul.catalogue.include_folders`)."""
    paths = check_include_paths(include_path, flag=flag)
    kept = list(catalogue._INCLUDED)
    try:
        catalogue.include_folders(paths)
        yield paths
    finally:
        catalogue._INCLUDED[:] = kept

