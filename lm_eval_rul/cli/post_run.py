"""The files ``lm-eval-rul run`` writes after the harness's own results (the benchmarks'
:attr:`~lm_eval_rul.catalogue.Benchmark.post_run_files`, e.g. MMAU's predictions file).

* Which: a requested task or group whose YAML is in a benchmark's task folder that
  declares post-run files (never a task whose name only looks like one: a user's own
  ``--include_path`` task ``mmau_mine`` gets none).
* Where: beside the model's own results, in the folder the harness writes them to
  (``{output_path}/{model}/``, or the folder of a ``.json`` ``--output_path``), named with
  the harness's date id of them (``..._{date_id}.json``, as ``results_{date_id}.json``), so
  two models, or two runs, into one ``--output_path`` never overwrite each other's file.
* When: after the harness has written its results JSON (:func:`write_files`, called as
  ``run`` ends), so a file that cannot be written never costs the harness's results; the
  failure is one line naming the file and saying the results were kept
  (:class:`PostRunFileError`).
* Checked before the model loads (:func:`check_output_places`): the model's results
  folder can be made and written, as ``--output_path`` itself.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import UserInputError

__all__ = [
    "PostRunFileError",
    "requested_files",
    "model_folder",
    "check_output_places",
    "write_files",
]

logger = logging.getLogger(__name__)


class PostRunFileError(UserInputError, OSError):
    """A post-run file could not be written (the harness's results were written first)."""


def requested_files(names: Sequence[str]) -> list[Any]:
    """The :class:`~lm_eval_rul.catalogue.PostRunFile` of the benchmarks whose task
    folders hold one of ``names`` (tasks or groups)."""
    from ..catalogue import by_folder
    from .run_inputs import task_folders

    catalogue = by_folder()
    folders = {f for f in task_folders(list(names)).values() if f in catalogue}
    return [pf for folder in sorted(folders) for pf in catalogue[folder].post_run_files]


def model_folder(output_path: str | Path, model_args: Any) -> Path:
    """Where the harness writes one model's results under ``--output_path``."""
    from lm_eval.loggers.evaluation_tracker import GeneralConfigTracker
    from lm_eval.utils import sanitize_model_name

    path = Path(output_path).expanduser()
    if path.suffix == ".json":
        return path.parent
    # the harness's own naming (GeneralConfigTracker.log_experiment_args)
    return path / str(sanitize_model_name(GeneralConfigTracker._get_model_name(model_args)))


def check_output_places(output_path: str | None, model_args: Any) -> None:
    """The model's results folder (where the harness and the post-run files write) can be
    made and written, before any model loads.

    Raises:
        OutputPathError: A file where the folder goes, a read-only or full disk.
    """
    if not output_path:
        return
    from ..files import check_output_folder

    check_output_folder(model_folder(output_path, model_args), flag="--output_path")


def write_files(
    files: Sequence[Any], samples: Mapping[str, list[dict[str, Any]]], tracker: Any
) -> list[Path]:
    """Write every post-run file of ``files`` from the run's ``samples``, beside the
    results the harness's ``tracker`` (its ``EvaluationTracker``) has saved.

    Raises:
        PostRunFileError: One line per file that failed (the others are written).
    """
    from ..catalogue import load_function

    output_path = getattr(tracker, "output_path", None)
    written: list[Path] = []
    failed: list[str] = []
    for post_run in files:
        chosen = {t: samples[t] for t in post_run.tasks if samples.get(t)}
        if not chosen:
            continue
        if not output_path:
            logger.warning(
                "no --output_path: the %s of %s not written", post_run.what, ", ".join(chosen)
            )
            continue
        model = getattr(
            getattr(tracker, "general_config_tracker", None), "model_name_sanitized", None
        )
        path = Path(output_path)
        folder = path.parent if path.suffix == ".json" else path / str(model)
        try:
            written += load_function(post_run.write)(chosen, folder, str(tracker.date_id))
        except Exception as error:  # noqa: BLE001 - whatever failed, the results are kept
            failed.append(
                f"{post_run.what} of {', '.join(chosen)} in {folder}: "
                f"{type(error).__name__}: {error}"
            )
    if failed:
        raise PostRunFileError(
            "the harness's results were written, but "
            + "; ".join(failed)
            + ". Free the place (or choose another --output_path) and rerun to get it."
        )
    return written
