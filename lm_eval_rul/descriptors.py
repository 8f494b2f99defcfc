"""What a benchmark descriptor is (:class:`Benchmark`, :class:`Reader`,
:class:`PostRunFile`) and reading one ``benchmark.py``: loaded by path, checked field by field.

The catalogue (:mod:`lm_eval_rul.catalogue`, which re-exports these classes: a task folder
writes ``from lm_eval_rul.catalogue import Benchmark``) scans task folders for these files;
a broken one, in the plugin's folders or a user's ``--include_path`` folder, is one
:class:`DescriptorError` naming the file, the problem and the fix.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import UserInputError

__all__ = [
    "Benchmark", "Reader", "PostRunFile", "DESCRIPTOR_FILE", "VOTE_METRICS", "REPORT_SECTIONS",
    "DescriptorError", "load_function", "descriptor_error", "check_fields", "load_descriptor",
    "descriptor_files",
]  # fmt: skip

def load_function(target: str) -> Any:
    """The function (or constant) a ``"module:name"`` string names."""
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


#: The file of a task folder that declares its benchmark (a module-level ``BENCHMARK``).
DESCRIPTOR_FILE = "benchmark.py"
#: The votes over leave-one-out folds (:func:`lm_eval_rul.report.majority_from_samples`).
VOTE_METRICS: tuple[str, ...] = ("majority_acc", "plurality_acc_release")
#: The sections of ``report`` a benchmark's runs can appear in.
REPORT_SECTIONS: tuple[str, ...] = ("multiple_choice", "factual", "tagging")


@dataclass(frozen=True)
class Reader:
    """How ``pi``, ``build`` and every question-file reader recognise and read a file layout
    of the benchmark's own (a released file that is not a generic question table).

    Attributes:
        detect: ``"module:function"`` ``(path: Path) -> bool``: the file is in this layout
            (decided from its content, never its name).
        read: ``"module:function"`` ``(path: Path, *, n_distractors: int | None) ->
            list[Question]``.
        describe: ``"module:function"`` ``(path: Path) -> str``: the file in words, for
            messages naming a file given to the wrong key (``"MMAU's released layout
            (...)"``); empty: the benchmark's name is used.
    """

    detect: str
    read: str
    describe: str = ""


@dataclass(frozen=True)
class PostRunFile:
    """A file ``lm-eval-rul run`` writes after the harness has saved its own results.

    Attributes:
        tasks: The task names whose logged samples the file is made from (whole names).
        write: ``"module:function"`` ``(samples: dict[str, list], folder: Path, stamp: str)
            -> list[Path]``: ``samples`` holds only ``tasks``' samples; ``folder`` is where
            the harness wrote this model's results; ``stamp`` the harness's date id of
            them (``results_{stamp}.json``), so each run's file is its own.
        what: What the file is, for messages (``"MMAU predictions file"``).
    """

    tasks: tuple[str, ...]
    write: str
    what: str


@dataclass(frozen=True)
class Benchmark:
    """One benchmark (one task folder) and what the package needs to know about it.

    Attributes:
        folder: Its task folder's name (``tasks/<folder>``).
        name: Display name (``"MMAU-music"``).
        metadata_keys: Every ``--metadata`` key its tasks read (others are refused): the
            keys, or ``"module:NAME"`` naming the tuple where its task code keeps them.
        data_keys: Question set (a task name without fold, as ``report`` names it) ->
            the ``--metadata`` key of its own question file (else ``data_path``).
        checks: ``"module:function"`` ``(metadata: dict) -> None``, each raising a
            :class:`~lm_eval_rul.errors.UserInputError` (or ``FileNotFoundError``) for
            a value its tasks cannot use, before any model loads.
        readers: File layouts of its own that every question reader accepts.
        fold_groups: Groups whose subtasks are leave-one-out folds of one question set.
        votes: The fold votes added to those groups (:data:`VOTE_METRICS`).
        post_run_files: Files ``run`` writes after the harness's results.
        protocol_key: Its ``--metadata`` protocol key (``mmau_protocol``); the bare
            ``protocol`` is read when it is the only family in the run.
        protocols: The protocol names the key accepts (the first is the default).
        question_sets: Task (without fold) -> the question set of ``data_keys`` it asks,
            for tasks not named as their question set (``mmau_music_gen`` ->
            ``mmau_music``): ``report`` reads their question file and PI by it.
        report_names: Question set -> display name in ``report``.
        report_section: The report section its runs appear in (one of
            :data:`REPORT_SECTIONS`).
        category_keys: The ``--metadata`` keys that may name the CSV of its question
            categories (MuChoMusic's: ``muchomusic_csv``...): ``report`` reads categories
            (and offers their breakdowns) only for benchmarks that declare some.
        downloads: The ``--metadata`` keys of question files that have a public copy,
            downloaded when the key is left out (a mistyped path then advises leaving it
            out; a key not listed, e.g. ``mc_data_path``, has no public copy).
    """

    folder: str
    name: str
    metadata_keys: tuple[str, ...] | str
    data_keys: Mapping[str, str] = field(default_factory=dict)
    checks: tuple[str, ...] = ()
    readers: tuple[Reader, ...] = ()
    fold_groups: tuple[str, ...] = ()
    votes: tuple[str, ...] = VOTE_METRICS
    post_run_files: tuple[PostRunFile, ...] = ()
    protocol_key: str | None = None
    protocols: tuple[str, ...] = ()
    report_names: Mapping[str, str] = field(default_factory=dict)
    report_section: str = "multiple_choice"
    category_keys: tuple[str, ...] = ()
    question_sets: Mapping[str, str] = field(default_factory=dict)
    downloads: tuple[str, ...] = ()

    def keys(self) -> tuple[str, ...]:
        """Its ``--metadata`` keys (:attr:`metadata_keys`, resolved)."""
        if isinstance(self.metadata_keys, str):
            return tuple(load_function(self.metadata_keys))
        return tuple(self.metadata_keys)

    def protocol_source(self, metadata: Mapping[str, Any]) -> str:
        """The key its protocol is read from: its own (:attr:`protocol_key`) when given,
        else the bare ``protocol`` (accepted when one family runs, and in old results)."""
        if self.protocol_key and metadata.get(self.protocol_key) not in (None, ""):
            return self.protocol_key
        return "protocol"

    def protocol(self, metadata: Mapping[str, Any]) -> Any:
        """The protocol ``metadata`` asks of this benchmark (None: not given)."""
        return metadata.get(self.protocol_source(metadata))


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
    except SystemExit as error:  # sys.exit()/exit() would end the command in silence
        raise descriptor_error(
            path, f"importing it called exit ({error.code!r}); a benchmark.py only declares "
            "BENCHMARK and must not end the program"
        ) from None
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
