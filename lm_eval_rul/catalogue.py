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
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Iterable, Sequence
from pathlib import Path

from .descriptors import (
    DESCRIPTOR_FILE,
    REPORT_SECTIONS,
    VOTE_METRICS,
    Benchmark,
    PostRunFile,
    Reader,
    descriptor_error,
    descriptor_files,
    load_descriptor,
    load_function,
)

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
]

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
                    path, f"folder={benchmark.folder!r} is the benchmark of "
                    f"{where[benchmark.folder].parent}; name your folder otherwise"
                )  # fmt: skip
            for field_name, key, name in _claims(benchmark):
                owner = claimed.get(key)
                if number and owner is not None and owner != path:
                    # another folder's votes, names and question file would become this one's
                    raise descriptor_error(
                        path, f"{field_name} claims {name!r}, declared "
                        f"by {owner}; a benchmark.py may declare only its own tasks and "
                        "titles: name yours otherwise"
                    )  # fmt: skip
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
    :func:`lm_eval_rul.descriptors.load_descriptor`) and add them to :func:`benchmarks` for
    this process: their names, keys, checks, readers and fold votes count as the plugin's own.

    Returns:
        The benchmarks the folders declare.

    Raises:
        lm_eval_rul.descriptors.DescriptorError: one of their descriptors is broken or
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
    return tuple(sorted({k for b in (benchmarks() if chosen is None else chosen)
                         for k in b.keys()}))  # fmt: skip


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
