"""The benchmark catalogue: one :class:`Benchmark` per task folder, declared in that folder.

A benchmark is its task folder: the YAMLs the harness indexes plus ``benchmark.py``, whose
``BENCHMARK`` describes what the rest of the package needs to know about it (display
names, ``--metadata`` keys and their checks, the reader ``pi``/``build`` use for its
question file, fold groups and their votes, files written after a run, the report's
names). Registration, ``lm-eval-rul run``, the task loaders, the question readers and
``report`` ask :func:`benchmarks` instead of keeping lists, and no module finds a
benchmark by the prefix of a task name (a task belongs to the benchmark of the folder its
YAML is in).

Functions are named as ``"module:function"`` strings, imported only when called, so the
catalogue loads without torch or the harness and every stage may ask it.

Adding a benchmark: a folder in ``tasks/`` (or a ``--include_path`` folder, read with
``benchmarks(extra_folders=...)``) holding its YAMLs and a ``benchmark.py``::

    from lm_eval_rul.catalogue import Benchmark

    BENCHMARK = Benchmark(
        folder="mybench",
        name="My benchmark",
        metadata_keys=("mybench_data_path", "shuffle_seed"),
        data_keys={"mybench": "mybench_data_path"},
        report_names={"mybench": "My benchmark", "mybench_gen": "My benchmark (generation)"},
    )

What a descriptor is (:class:`Benchmark`, :class:`Reader`, :class:`PostRunFile`) and how one
``benchmark.py`` is read (loaded by path, checked field by field) stand here too: a broken
one, in the plugin's folders or a user's ``--include_path`` folder, is one
:class:`DescriptorError` naming the file, the problem and the fix.
"""

from __future__ import annotations

import difflib
import functools
import importlib
import importlib.util
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import UserInputError

__all__ = [
    "Benchmark",
    "include_folders",
    "descriptor_path",
    "Reader",
    "PostRunFile",
    "DESCRIPTOR_FILE",
    "VOTE_METRICS",
    "REPORT_SECTIONS",
    "tasks_dir",
    "folder_task_names",
    "plugin_task_names",
    "known_task_names",
    "benchmarks",
    "by_folder",
    "for_question_set",
    "metadata_keys",
    "own_data_key",
    "fold_groups",
    "report_names",
    "downloads",
    "protocol_keys",
    "load_function",
    "unknown_keys_text",
    "DescriptorError",
    "descriptor_error",
    "check_fields",
    "load_descriptor",
    "descriptor_files",
]


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
    "folder": ((str,), "a folder name"),
    "name": ((str,), "a string"),
    "metadata_keys": ((tuple, str), "a tuple of keys or a 'module:NAME' string"),
    "data_keys": ((Mapping,), "a dict"),
    "checks": ((tuple,), "a tuple of 'module:function'"),
    "readers": ((tuple,), "a tuple of Reader(...)"),
    "fold_groups": ((tuple,), "a tuple"),
    "votes": ((tuple,), "a tuple"),
    "post_run_files": ((tuple,), "a tuple of PostRunFile(...)"),
    "protocol_key": ((str, type(None)), "a key or None"),
    "protocols": ((tuple,), "a tuple"),
    "report_names": ((Mapping,), "a dict"),
    "report_section": ((str,), "a string"),
    "category_keys": ((tuple,), "a tuple of keys"),
    "question_sets": ((Mapping,), "a dict"),
}


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
        raise descriptor_error(
            path, f"report_section={found.report_section!r} is none of {list(REPORT_SECTIONS)}"
        )


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
        p
        for p in root.rglob(DESCRIPTOR_FILE)
        if not any(part.startswith((".", "__")) for part in p.relative_to(root).parts[:-1])
    )


def tasks_dir() -> Path:
    """The folder holding the plugin's task folders: ``lm_eval_rul/tasks``.

    In a clone (an editable install) ``lm_eval_rul/tasks`` is a link to the top-level
    ``tasks/`` folder, where the YAMLs live; a wheel holds a copy. Where links are not
    checked out as links (Windows without symlinks), the top-level folder is used.
    """
    here = Path(__file__).resolve().parent
    for candidate in (here / "tasks", here.parent / "tasks"):
        if (candidate / "rul_muchomusic").is_dir():
            return candidate
    raise FileNotFoundError(
        f"lm-eval-rul task folder not found next to {here}; reinstall the package "
        "(pip install --force-reinstall lm-eval-rul)."
    )


@functools.lru_cache(maxsize=8)
def folder_task_names(folders: tuple[str, ...]) -> frozenset[str]:
    """Every task, group and tag the harness indexes in ``folders`` (folders of task
    folders, as ``--include_path`` gives them; the harness's own tasks not included)."""
    from lm_eval.tasks import TaskManager

    manager = TaskManager(include_path=list(folders), include_defaults=False)
    return frozenset(manager.all_tasks)


def plugin_task_names() -> list[str]:
    """Every task, group and tag the plugin's task folder defines."""
    return sorted(folder_task_names((str(tasks_dir()),)))


def known_task_names() -> frozenset[str]:
    """Every task, group and tag of the plugin's folders and of the ``--include_path``
    folders this process included (:func:`include_folders`)."""
    return folder_task_names((str(tasks_dir()), *_INCLUDED))


def _claims(benchmark: Benchmark) -> list[tuple[str, str, str]]:
    """(field, key, name) of every group, question set, report entry and title a
    descriptor declares; a title (a name the report shows) is keyed apart from task names
    and regardless of case (``RUL-MuchoMusic`` is RUL-MuChoMusic to a reader)."""
    titles = [("name", benchmark.name)]
    titles += [("report_names", title) for title in benchmark.report_names.values()]
    return [
        *(("fold_groups", g, g) for g in benchmark.fold_groups),
        *(("data_keys", q, q) for q in benchmark.data_keys),
        *(("question_sets", t, t) for t in benchmark.question_sets),
        *(("report_names", q, q) for q in benchmark.report_names),
        *((field, f"title:{title.casefold()}", title) for field, title in titles),
    ]


@functools.lru_cache(maxsize=8)
def _scan(roots: tuple[str, ...]) -> tuple[Benchmark, ...]:
    found: list[Benchmark] = []
    where: dict[str, Path] = {}
    claimed: dict[str, Path] = {}  # a group, question set or report name -> who declares it
    for number, root in enumerate(roots):
        for path in descriptor_files(Path(root)):
            benchmark = load_descriptor(path)
            if benchmark.folder in where:
                raise descriptor_error(
                    path,
                    f"folder={benchmark.folder!r} is the benchmark of "
                    f"{where[benchmark.folder].parent}; name your folder otherwise",
                )
            for field_name, key, name in _claims(benchmark):
                owner = claimed.get(key)
                if number and owner is not None and owner != path:
                    # another folder's votes, names and question file would become this one's
                    raise descriptor_error(
                        path,
                        f"{field_name} claims {name!r}, declared "
                        f"by {owner}; a benchmark.py may declare only its own tasks and "
                        "titles: name yours otherwise",
                    )
                claimed.setdefault(key, path)
            where[benchmark.folder] = path
            _PATHS[benchmark.folder] = path
            found.append(benchmark)
    return tuple(found)


#: Benchmark folder -> its ``benchmark.py`` (for messages).
_PATHS: dict[str, Path] = {}
#: ``--include_path`` folders whose descriptors :func:`benchmarks` adds (:func:`include_folders`).
_INCLUDED: list[str] = []


def include_folders(folders: Iterable[str | Path]) -> tuple[Benchmark, ...]:
    """Read the descriptors of ``--include_path`` ``folders`` (each checked:
    :func:`load_descriptor`) and add them to :func:`benchmarks` for
    this process: their names, keys, checks, readers and fold votes count as the plugin's own.

    Returns:
        The benchmarks the folders declare.

    Raises:
        DescriptorError: one of their descriptors is broken or
            claims a taken folder.
    """
    roots = [str(Path(p).expanduser().resolve()) for p in folders]
    ours = str(tasks_dir().resolve())
    roots = [r for r in roots if r != ours and r not in _INCLUDED]
    before = {b.folder for b in benchmarks()}
    _scan((ours, *_INCLUDED, *roots))  # raises before anything is kept
    _INCLUDED.extend(roots)
    return tuple(b for b in benchmarks() if b.folder not in before)


def descriptor_path(folder: str) -> Path | None:
    """The ``benchmark.py`` that declared the benchmark of ``folder`` (None: unknown)."""
    return _PATHS.get(folder)


def benchmarks(extra_folders: Iterable[str | Path] = ()) -> tuple[Benchmark, ...]:
    """Every benchmark of the plugin's task folders, of the ``--include_path`` folders
    given to :func:`include_folders`, and of ``extra_folders`` (folders of task folders,
    as ``--include_path`` gives them), in folder order."""
    ours = str(tasks_dir().resolve())
    extra = (str(Path(p).expanduser().resolve()) for p in extra_folders)
    roots = (ours, *_INCLUDED, *extra)
    return _scan(tuple(dict.fromkeys(roots)))


def by_folder() -> dict[str, Benchmark]:
    """Task folder name -> its benchmark (the plugin's folders)."""
    return {b.folder: b for b in benchmarks()}


def for_question_set(name: str) -> Benchmark | None:
    """The benchmark a question set (``mmau_music_gen``, ``rul_muchomusic``) belongs to."""
    return next((b for b in benchmarks() if name in b.report_names or name in b.data_keys), None)


def metadata_keys(chosen: Iterable[Benchmark] | None = None) -> tuple[str, ...]:
    """The ``--metadata`` keys of ``chosen`` benchmarks (default all), sorted."""
    return tuple(
        sorted({k for b in (benchmarks() if chosen is None else chosen) for k in b.keys()})
    )


def own_data_key(question_set: str) -> str | None:
    """The ``--metadata`` key of a question set's own question file (None: ``data_path``)."""
    for benchmark in benchmarks():
        if question_set in benchmark.data_keys:
            return benchmark.data_keys[question_set]
    return None


def fold_groups() -> dict[str, tuple[str, ...]]:
    """Fold group -> the votes its folds get, over every benchmark."""
    return {g: b.votes for b in benchmarks() for g in b.fold_groups}


def downloads(key: str) -> bool:
    """Whether a question file named by ``--metadata key`` has a public copy (some
    benchmark's descriptor lists it in :attr:`Benchmark.downloads`)."""
    return any(key in b.downloads for b in benchmarks())


def report_names() -> dict[str, str]:
    """Question set -> display name, over every benchmark."""
    return {k: v for b in benchmarks() for k, v in b.report_names.items()}


def protocol_keys() -> dict[str, str]:
    """Benchmark folder -> its ``--metadata`` protocol key, for the families that have one."""
    return {b.folder: b.protocol_key for b in benchmarks() if b.protocol_key}


def unknown_keys_text(unknown: Sequence[str], known: Sequence[str]) -> str:
    """``'shufle_seed' (did you mean 'shuffle_seed'?), 'x'``: each unknown key with the
    closest known one (the one wording of ``run --metadata`` and ``task_manager``)."""
    shown = []
    for key in unknown:
        close = difflib.get_close_matches(key, sorted(set(known)), n=1, cutoff=0.6)
        shown.append(f"{key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    return ", ".join(shown)
