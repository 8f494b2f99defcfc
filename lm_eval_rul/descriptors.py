"""Reading one ``benchmark.py``: loaded by path and checked field by field.

The catalogue (:mod:`lm_eval_rul.catalogue`) scans task folders for these files; a broken
one, in the plugin's folders or a user's ``--include_path`` folder, is one
:class:`DescriptorError` naming the file, the problem and the fix.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from pathlib import Path

from .catalogue import (
    DESCRIPTOR_FILE,
    REPORT_SECTIONS,
    VOTE_METRICS,
    Benchmark,
    PostRunFile,
    Reader,
)
from .errors import UserInputError

__all__ = [
    "DescriptorError", "descriptor_error", "check_fields", "load_descriptor", "descriptor_files",
]  # fmt: skip


class DescriptorError(UserInputError, TypeError):
    """A ``benchmark.py`` that cannot be read: the file, the problem, the fix."""


def descriptor_error(path: Path, problem: str) -> DescriptorError:
    return DescriptorError(
        f"{path}: {problem}; fix this benchmark descriptor (docs/add_a_benchmark.md) or move "
        "it out of the --include_path folder"
    )


#: Benchmark field -> (the types it takes, in words).
_FIELD_TYPES: dict[str, tuple[tuple[type, ...], str]] = {
    "folder": ((str,), "a folder name"), "name": ((str,), "a string"),
    "metadata_keys": ((tuple, str), "a tuple of keys or a 'module:NAME' string"),
    "data_keys": ((Mapping,), "a dict"), "checks": ((tuple,), "a tuple of 'module:function'"),
    "readers": ((tuple,), "a tuple of Reader(...)"), "fold_groups": ((tuple,), "a tuple"),
    "votes": ((tuple,), "a tuple"), "post_run_files": ((tuple,), "a tuple of PostRunFile(...)"),
    "protocol_key": ((str, type(None)), "a key or None"), "protocols": ((tuple,), "a tuple"),
    "report_names": ((Mapping,), "a dict"), "report_section": ((str,), "a string"),
    "category_keys": ((tuple,), "a tuple of keys"),
    "question_sets": ((Mapping,), "a dict"),
}  # fmt: skip


def check_fields(found: Benchmark, path: Path) -> None:
    """Every field of a descriptor has its type (strings where strings are meant)."""
    for name, (types, words) in _FIELD_TYPES.items():
        value = getattr(found, name)
        if not isinstance(value, types):
            raise descriptor_error(path, f"{name}={value!r} must be {words}")
        items = list(value.items()) if isinstance(value, Mapping) else value
        if isinstance(value, tuple | Mapping) and name not in ("readers", "post_run_files"):
            flat = [x for item in items for x in (item if isinstance(item, tuple) else (item,))]
            if not all(isinstance(x, str) for x in flat):
                raise descriptor_error(path, f"{name}={value!r} must hold strings only")
    for name, kind in (("readers", Reader), ("post_run_files", PostRunFile)):
        if not all(isinstance(x, kind) for x in getattr(found, name)):
            raise descriptor_error(path, f"{name} must hold {kind.__name__}(...) entries")
    if unknown := sorted(set(found.votes) - set(VOTE_METRICS)):
        raise descriptor_error(path, f"votes {unknown} are none of {list(VOTE_METRICS)}")
    if found.report_section not in REPORT_SECTIONS:
        raise descriptor_error(path, f"report_section={found.report_section!r} is none of "
                                f"{list(REPORT_SECTIONS)}")  # fmt: skip


def load_descriptor(path: Path) -> Benchmark:
    """``BENCHMARK`` of one ``benchmark.py`` (loaded by path, as the harness loads utils.py).

    Raises:
        DescriptorError: a syntax error, an import that raises, no ``BENCHMARK``, a field
            of the wrong type, or a ``folder`` that is not the folder the file is in.
    """
    name = f"lm_eval_rul_benchmark_{abs(hash(str(path)))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise descriptor_error(path, "cannot be loaded as a Python file")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except SyntaxError as error:
        raise descriptor_error(path, f"line {error.lineno}: syntax error ({error.msg})") from None
    except Exception as error:  # noqa: BLE001 - whatever the user's file raises is named
        raise descriptor_error(
            path, f"importing it raised {type(error).__name__}: {error}"
        ) from None
    found = getattr(module, "BENCHMARK", None)
    if not isinstance(found, Benchmark):
        raise descriptor_error(
            path, "defines no BENCHMARK = lm_eval_rul.catalogue.Benchmark(...)"
        )
    check_fields(found, path)
    if found.folder != path.parent.name:
        raise descriptor_error(
            path, f"folder={found.folder!r}, but the file is in the folder {path.parent.name!r}"
        )
    return found


def descriptor_files(root: Path) -> list[Path]:
    """The ``benchmark.py`` files of a folder of task folders (or of one task folder)."""
    return sorted(
        p for p in root.rglob(DESCRIPTOR_FILE)
        if not any(part.startswith((".", "__")) for part in p.relative_to(root).parts[:-1])
    )  # fmt: skip
