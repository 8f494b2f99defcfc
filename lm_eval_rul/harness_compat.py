"""Every difference between the lm-eval releases the plugin supports, in one place.

The plugin runs on lm-eval 0.4.13 and 0.5.0.dev1 (``lm-eval>=0.4.13,<0.6``). Where their
APIs differ, the rest of the code asks this module instead of the harness:

- the task index of a ``TaskManager`` (:func:`task_index`): 0.4.13's public
  ``task_index``, 0.5's ``_task_index`` (no public name yet);
- the metrics a ``generate_until`` task may declare (:func:`accept_generation_metrics`):
  0.5.0.dev1 refuses ``acc`` and ``f1`` there, which 0.4.13 accepts (and which the
  harness's own ``mmmu`` and ``agieval`` tasks declare too);
- the logged responses of a sample (:func:`sample_responses`): 0.5 wraps each request's
  filtered response in a list (one item per repeat);
- the documents ``--limit`` selects (:func:`sample_size`): 0.4.13's public
  ``get_sample_size`` is private in 0.5;
- metrics whose values come from a task's ``process_results``
  (:func:`register_task_metric`): 0.5 looks each ``metric_list`` name up in its metric
  registry and warns for every task naming one it lacks; 0.4.13 never looks;
- the logger of the harness's task module (:func:`task_logger_name`): 0.4.13's
  ``lm_eval.api.task``, 0.5's ``lm_eval.api.task._task``.

Nothing here reaches into a private attribute without a public fallback first, and each
function is tested on both releases (tests/test_harness_compat.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .errors import UserInputError

__all__ = [
    "register_process_results_metrics",
    "quiet_git_hash",
    "GENERATION_METRICS",
    "HarnessAPIError",
    "harness_version",
    "task_index",
    "accept_generation_metrics",
    "sample_responses",
    "sample_size",
    "register_task_metric",
    "task_logger_name",
]

#: Registered harness metrics our generation tasks name, whose values come from the tasks'
#: ``process_results`` (the registered function is never called for them).
GENERATION_METRICS = ("acc", "f1")

SUPPORTED = "lm-eval>=0.4.13,<0.6"


class HarnessAPIError(UserInputError, RuntimeError):
    """The installed lm-eval lacks an API the plugin needs (an unsupported release)."""


def harness_version() -> str:
    """The installed lm-eval's version string (``0.4.13``, ``0.5.0.dev1``...)."""
    from importlib.metadata import version

    return version("lm_eval")


def task_index(manager: Any) -> Mapping[str, Any]:
    """``name -> entry`` of every task, group and tag a harness ``TaskManager`` indexed.

    Each entry has ``yaml_path``, ``kind`` and ``cfg`` on both releases.

    Raises:
        HarnessAPIError: The manager has neither index (a harness release not supported).
    """
    for name in ("task_index", "_task_index"):  # public (0.4.13) first, then 0.5's
        index = getattr(manager, name, None)
        if isinstance(index, Mapping):
            return index
    raise HarnessAPIError(
        f"lm-eval {harness_version()}: its TaskManager has no task index (neither "
        f"task_index nor _task_index); lm-eval-rul supports {SUPPORTED}: "
        f"pip install 'lm-eval[hf,api]>=0.4.13,<0.6'"
    )


def accept_generation_metrics() -> list[str]:
    """Let ``generate_until`` tasks declare :data:`GENERATION_METRICS` (lm-eval 0.5).

    lm-eval 0.5.0.dev1 checks each ``metric_list`` name against the registered metric's
    output types and refuses ``acc`` (and ``f1``) for ``generate_until`` tasks, although a
    task's ``process_results`` computes them (0.4.13 accepts this; the harness's own
    ``mmmu`` task is refused the same way). The registered metric's output types are
    widened to ``generate_until``; its function, aggregation and every other task's
    behaviour are unchanged. Idempotent; nothing to do on 0.4.13.

    Returns:
        The metric names widened by this call (empty when nothing needed it).
    """
    try:
        from lm_eval.api.registry import metric_registry
    except ImportError:  # 0.4.13: a plain dict registry, no output-type check
        return []
    widened = []
    for name in GENERATION_METRICS:
        metric = metric_registry.get(name, None)
        output_types = getattr(metric, "output_type", None)
        if isinstance(output_types, set) and "generate_until" not in output_types:
            output_types.add("generate_until")
            widened.append(name)
    return widened


def register_task_metric(
    name: str, fn: Callable[..., Any], *, higher_is_better: bool, output_type: str
) -> bool:
    """Register ``fn`` as the harness metric ``name`` (aggregated by its mean), unless known.

    lm-eval 0.5 resolves each ``metric_list`` name of a task in its metric registry and
    logs "Metric 'NAME' not found in registry. Using a placeholder" for each task naming an
    unknown one (the values still come from the task's ``process_results``). The same
    ``register_metric`` call works on 0.4.13, which reads the task's own aggregation.

    Returns:
        Whether this call registered it (False when the name was already registered).
    """
    import lm_eval.api.metrics  # noqa: F401 - registers the harness's aggregations ("mean")
    from lm_eval.api.registry import metric_registry, register_metric

    if name in metric_registry:
        return False
    register_metric(
        metric=name, higher_is_better=higher_is_better, aggregation="mean", output_type=output_type
    )(fn)
    return True


def register_process_results_metrics(metrics: Mapping[str, bool]) -> list[str]:
    """Register each metric a task's ``process_results`` computes (name -> higher is
    better) that lm-eval 0.5's registry lacks, so it logs no "Metric 'NAME' not found in
    registry" per task. The registered function is never called (the values come from
    ``process_results``; it raises if it is) and the aggregation is the mean the tasks
    declare. Nothing to do on 0.4.13, which reads a task's own metrics without a lookup.

    Returns:
        The names registered by this call.
    """
    import lm_eval.api.metrics  # noqa: F401 - registers the harness's aggregations ("mean")
    from lm_eval.api.registry import metric_registry, register_metric

    if not isinstance(getattr(metric_registry.get("acc", None), "output_type", None), set):
        return []  # 0.4.13: no Metric objects, no lookup of metric_list names
    added = []
    for name, higher in sorted(metrics.items()):
        if name in metric_registry:
            continue

        def computed_by_process_results(*_: Any, _name: str = name, **__: Any) -> Any:
            raise RuntimeError(f"metric {_name!r} is computed by the task's process_results")

        register_metric(
            metric=name,
            higher_is_better=higher,
            aggregation="mean",
            output_type=["multiple_choice", "generate_until"],
        )(computed_by_process_results)
        added.append(name)
    return added


def task_logger_name() -> str:
    """The logger of the harness module that defines its tasks (it warns per task)."""
    from lm_eval.api.task import ConfigurableTask

    return ConfigurableTask.__module__


def sample_responses(sample: Mapping[str, Any]) -> list[Any]:
    """A logged sample's filtered responses, one per request, in 0.4.13's shape.

    0.4.13 logs ``[response, ...]``; 0.5 logs ``[[response], ...]`` (each request's
    responses, one per repeat). The plugin's tasks run one repeat, so 0.5's list of one is
    unwrapped; a request with several repeats is refused rather than one being picked.
    """
    responses = list(sample["filtered_resps"])
    if harness_logs_repeats(responses):
        if any(len(r) != 1 for r in responses):
            raise ValueError(
                f"{max(len(r) for r in responses)} repeats of one request; the plugin's "
                "tasks run one repeat"
            )
        return [r[0] for r in responses]
    return responses


def harness_logs_repeats(responses: list[Any]) -> bool:
    """Whether logged responses are 0.5's per-request lists (not 0.4.13's values).

    0.4.13: ``"text"`` (generation) or ``[loglik, is_greedy]`` (two scalars). 0.5: the
    same inside a list, ``["text"]`` or ``[[loglik, is_greedy]]``.
    """
    return bool(responses) and all(_wrapped(r) for r in responses)


def _wrapped(response: Any) -> bool:
    if not isinstance(response, (list, tuple)) or not response:
        return False
    first = response[0]
    return isinstance(first, (list, tuple)) or (len(response) == 1 and isinstance(first, str))


def sample_size(task: Any, limit: int | float | None) -> int | None:
    """How many of a task's documents ``--limit`` evaluates (None: all), as the harness counts.

    0.4.13's public ``get_sample_size`` became 0.5's private ``_get_sample_size``; the rule is
    the same in both (a fraction below 1 of the documents, rounded up, else a count), so it
    is written here once and compared with the harness's in the tests.
    """
    import math

    if limit is None:
        return None
    return int(math.ceil(len(task.eval_docs) * limit)) if limit < 1.0 else int(limit)


#: The sections of a results JSON keyed by task or group name.
_NAMED_SECTIONS = (
    "results",
    "groups",
    "configs",
    "versions",
    "n-shot",
    "higher_is_better",
    "n-samples",
    "group_subtasks",
)


def plain_task_name(name: str) -> str:
    """A task's own name: 0.5 logs a group's members as ``group::task``, 0.4.13 as ``task``."""
    return name.rsplit("::", 1)[-1]


def plain_results(results: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """A results JSON with 0.4.13's task names, and ``plain name -> name as logged``.

    The logged name is the one in the ``samples_<name>_<time>.jsonl`` file names.

    Raises:
        ValueError: Two logged names give one plain name (two groups holding one task).
    """
    logged: dict[str, str] = {}
    for section in _NAMED_SECTIONS:
        for name in results.get(section) or {}:
            plain = plain_task_name(name)
            if logged.setdefault(plain, name) != name:
                raise ValueError(f"tasks {logged[plain]!r} and {name!r} are both {plain!r}")
    plain = dict(results)
    for section in _NAMED_SECTIONS:
        if isinstance(results.get(section), dict):
            plain[section] = {plain_task_name(k): v for k, v in results[section].items()}
    if isinstance(plain.get("group_subtasks"), dict):
        plain["group_subtasks"] = {
            group: [plain_task_name(t) for t in members]
            for group, members in plain["group_subtasks"].items()
        }
    return plain, logged


class HarnessAudioUnsupportedError(UserInputError, RuntimeError):
    """The installed harness cannot hand a ``doc_to_audio`` task's audio to a model."""


def doc_to_audio_blocked() -> bool:
    """Whether the installed harness stops or drops ``doc_to_audio`` tasks' audio.

    lm-eval 0.5.0.dev1: ``Task._build_multimodal_kwargs`` asserts the task *class* flag
    ``MULTIMODAL`` (False for YAML tasks) instead of the task's own ``_multimodal``, so
    every ``generate_until`` task with ``doc_to_audio`` stops with ``AssertionError``
    before any model call; its ``multiple_choice`` tasks build no audio argument at all.
    No model flag changes either (docs/harness_audio.md).
    """
    import inspect

    try:
        from lm_eval.api.task import Task

        source = inspect.getsource(Task._build_multimodal_kwargs)
    except (ImportError, AttributeError, OSError, TypeError):  # 0.4.13: no such method
        return False
    # the bug itself, so that a release that fixes it runs the tasks again
    return "assert self.MULTIMODAL" in source


def refuse_doc_to_audio_tasks(names: list[str]) -> None:
    """One line, before the model loads, when ``names`` (doc_to_audio tasks) cannot run."""
    if not names or not doc_to_audio_blocked():
        return
    shown = ", ".join(sorted(names)[:3]) + (" ..." if len(names) > 3 else "")
    raise HarnessAudioUnsupportedError(
        f"task(s) {shown} declare their audio with doc_to_audio, which lm-eval "
        f"{harness_version()} cannot pass to any model (its Task._build_multimodal_kwargs "
        "checks the class flag MULTIMODAL, not the task's own _multimodal); run them with "
        "lm-eval 0.4.13 (pip install 'lm-eval[hf,api]==0.4.13'), or run this plugin's "
        "tasks without _native in their name (docs/harness_audio.md)."
    )


def quiet_git_hash() -> str | None:
    """lm-eval's ``get_git_commit_hash`` (the working directory's commit), without git's
    error output on the terminal."""
    import os
    import subprocess

    from lm_eval.loggers.utils import get_commit_from_path

    try:
        done = subprocess.run(
            ["git", "describe", "--always"],  # noqa: S607 - what the harness runs
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout.strip() or None
    except (subprocess.CalledProcessError, FileNotFoundError, OSError):
        return get_commit_from_path(os.getcwd())
