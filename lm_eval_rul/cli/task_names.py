"""Task names for ``run``: a fast index for the plugin's tasks, close matches for typos.

The harness indexes all of its ~15,000 task configs (about 8 s) on every run. When each
requested task is found in the ``--include_path`` folders (the plugin's own tasks are
there), :func:`task_name_hooks` lets the harness index only those folders. A name that
matches nothing becomes one :class:`UnknownTaskError` line naming the closest task
names, instead of the harness's ``ValueError`` traceback (lm-eval 0.4.13) or its
``KeyError`` traceback (0.5, whose ``match_tasks`` keeps a name that matches nothing, for
its loader to try as a path).

A task name that is also a folder in the current directory (``--tasks mmau`` beside the
clips folder ``mmau/``) runs the task, with one warning line: lm-eval 0.4.13 does so too,
0.5.0.dev1 reads the folder's YAML files instead and stops on "No tasks specified".
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import logging
import re
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ..catalogue import folder_task_names
from ..errors import UserInputError

__all__ = [
    "DuplicateTaskError",
    "UnknownTaskError",
    "close_task_names",
    "plugin_entry_names",
    "task_name_hooks",
]

_NOT_FOUND = "Tasks not found: "

logger = logging.getLogger(__name__)


class UnknownTaskError(UserInputError, ValueError):
    """``--tasks`` names a task that no task folder defines."""

    def __init__(self, missing: Sequence[str], known: Iterable[str]) -> None:
        known = sorted(set(known))
        parts = []
        for name in missing:
            close = close_task_names(name, known)
            hint = f" (closest: {', '.join(close)})" if close else ""
            parts.append(f"{name!r}{hint}")
        plugin = ", ".join(plugin_entry_names())
        super().__init__(
            f"unknown task {'; '.join(parts)}. This plugin's groups and tasks: {plugin}; "
            "`lm-eval-rul ls tasks` lists every task, the groups' own included."
        )


class DuplicateTaskError(UserInputError, ValueError):
    """``--tasks`` reaches one task twice, e.g. a group and one of its own tasks."""

    def __init__(self, harness_message: str) -> None:
        # the harness says: Duplicate task 'T': found in both 'A' and 'B'
        names = re.findall(r"'([^']+)'", harness_message)
        if len(names) == 3:
            task, first, second = names
            detail = f"task {task!r} is part of both {first!r} and {second!r}"
            advice = f"drop one of {first!r} and {second!r}"
        else:
            detail, advice = harness_message, "drop one of the names that contain it"
        super().__init__(
            f"--tasks names one task twice: {detail}. The harness runs each task once; "
            f"{advice} (a group runs all of its tasks)."
        )


def close_task_names(name: str, known: Iterable[str], n: int = 4) -> list[str]:
    """The task names closest to ``name`` (difflib ratio >= 0.6), best first."""
    return difflib.get_close_matches(name, list(known), n=n, cutoff=0.6)


@functools.lru_cache(maxsize=1)
def plugin_entry_names() -> tuple[str, ...]:
    """The plugin's groups, and its tasks that no group of it contains (what a user starts
    from); a group stays an entry when a larger group holds it (``rul_muchomusic`` in
    ``music_understanding``)."""
    from lm_eval.tasks import TaskManager

    from ..harness_compat import task_index
    from ..registration import tasks_dir

    index = task_index(TaskManager(include_path=[str(tasks_dir())], include_defaults=False))
    inside = {
        member if isinstance(member, str) else member.get("task")
        for entry in index.values()
        if "GROUP" in str(entry.kind)
        for member in (entry.cfg or {}).get("task", [])
    }
    return tuple(
        sorted(
            name
            for name, entry in index.items()
            if name not in inside or "GROUP" in str(entry.kind)
        )
    )


def _requested(tasks: Any) -> list[str]:
    if isinstance(tasks, str):
        return [t for t in tasks.split(",") if t]
    return [t for item in tasks or [] for t in str(item).split(",") if t]


def _in_include_paths(include_path: Any, names: list[str]) -> bool:
    """Whether every name is a task of the ``--include_path`` folders (no globs, no files;
    a folder of the same name is no file: :func:`names_over_folders`)."""
    if not include_path or not names:
        return False
    paths = include_path if isinstance(include_path, list | tuple) else [include_path]
    if any(n.endswith(".yaml") or "*" in n for n in names):
        return False
    known = folder_task_names(tuple(str(p) for p in paths))
    return all(name in known for name in names)


def _known_name(name: str, include_path: Any) -> bool:
    """Whether ``name`` is a task, group or tag of the ``--include_path`` folders or of the
    harness (the harness's index, ~8 s, is built only when the plugin's has no such name)."""
    paths = include_path if isinstance(include_path, list | tuple) else [include_path]
    if name in folder_task_names(tuple(str(p) for p in paths if p)):
        return True
    from lm_eval.tasks import TaskManager

    return name in TaskManager(include_path=[str(p) for p in paths if p]).all_tasks


def _exact_pattern(name: str) -> str:
    """A glob the harness matches to ``name`` alone, which is no folder's name
    (``mmau`` -> ``mma[u]``)."""
    return f"{name[:-1]}[{name[-1]}]"


def names_over_folders(tasks: Any, include_path: Any) -> Any:
    """``--tasks`` with a lone task name that is also a folder here made to mean the task.

    lm-eval 0.5.0.dev1 reads a lone ``--tasks`` value that is an existing folder as a folder
    of task YAML files, before any task name (0.4.13 checks the names first): ``--tasks
    mmau`` beside a clips folder ``mmau/`` then runs nothing. The name is returned as a
    glob matching that task only, and one warning says what happened; other values are
    returned as given.
    """
    names = _requested(tasks)
    if len(names) != 1 or not Path(names[0]).is_dir() or any(c in names[0] for c in "*?[]/"):
        return tasks
    name = names[0]
    if not _known_name(name, include_path):
        return tasks  # a folder of task files, as the harness reads it
    logger.warning(
        "--tasks %s: a folder named %r is in the current directory; running the task %s, "
        "not the folder's YAML files (for those, give --tasks '%s/*.yaml')",
        name,
        name,
        name,
        name,
    )
    return _exact_pattern(name)


def unresolved_names(resolved: Any, known: Iterable[str]) -> list[str]:
    """The strings of a processed ``--tasks`` list that name no task and no file.

    0.4.13 drops such names and reports them itself; 0.5's ``match_tasks`` keeps them
    (they may be YAML paths or ``group::task`` paths its loader resolves), so they are
    found here, before its loader's ``KeyError``.
    """
    known = set(known)
    return [
        name
        for name in resolved or []
        if isinstance(name, str)
        and name not in known
        and "::" not in name
        and "@" not in name
        and not Path(name).exists()
    ]


@contextlib.contextmanager
def task_name_hooks() -> Iterator[None]:
    """While a ``run`` executes: the fast index, and unknown names as one clear line."""
    import lm_eval.tasks as harness_tasks
    from lm_eval.config.evaluate_config import EvaluatorConfig

    original_process = EvaluatorConfig.process_tasks
    original_manager = harness_tasks.TaskManager

    def process_tasks(self: Any, metadata: dict | None = None) -> Any:
        requested = _requested(self.tasks)
        self.tasks = names_over_folders(self.tasks, self.include_path)
        only_included = _in_include_paths(self.include_path, requested)
        made: list[Any] = []

        class RecordingTaskManager(original_manager):  # type: ignore[misc, valid-type]
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                if only_included:
                    kwargs["include_defaults"] = False
                super().__init__(*args, **kwargs)
                made.append(self)

        harness_tasks.TaskManager = RecordingTaskManager
        try:
            manager = original_process(self, metadata)
        except ValueError as error:
            text = str(error)
            if not text.startswith(_NOT_FOUND) or not made:
                raise
            missing = [name.strip() for name in text[len(_NOT_FOUND) :].split(",")]
            raise UnknownTaskError(missing, made[-1].all_tasks) from None
        finally:
            harness_tasks.TaskManager = original_manager
        missing = unresolved_names(self.tasks, manager.all_tasks) if made else []
        if missing:
            raise UnknownTaskError(missing, manager.all_tasks)
        return manager

    EvaluatorConfig.process_tasks = process_tasks
    try:
        yield
    finally:
        EvaluatorConfig.process_tasks = original_process
