"""What tells runs of one model apart: every input that changes its numbers.

Two harness results files of one model, dtype and audio condition are parts of one run
only when they agree on

* the audio settings ``lalm`` writes into the results' ``config``
  (:data:`AUDIO_SETTINGS`),
* every ``--metadata`` key the task's benchmark declares (:func:`settings_of`: its
  question file, subset, protocol, option seed, ``benchmark_name``...; every key for a task
  of no catalogue benchmark), read from ``configs[task].metadata``,
* for a task both hold, the content of its logged questions (:func:`content_digest`), so
  one name on two files (or two subsets of one file) is never taken for a repeat, and
* the question file of every benchmark both hold: the ``--metadata`` path the task
  read (``rul_data_path`` / ``muchomusic_data_path``, else ``data_path``; ``""`` for the
  public release), recorded by the harness in ``configs[task].metadata``, and the content
  of the questions both logged (:func:`item_digest` of each logged document), so a file
  rebuilt in place under the same name is told apart too.

Paired comparisons (:mod:`.comparisons`) use :func:`question_set_mismatch` to refuse
pairing runs made on different question sets.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..audio import condition_parameters
from ..errors import UserInputError
from ..mcqa.tasks import data_path_key
from .asked import ASKED_NAMES, asked_text

#: :class:`lm_eval_rul.report.runs.Run` and :class:`~.samples.Sample`, which import this
#: module (the architecture test counts typing-only imports as cycles too).
Run = Any
Sample = Any

__all__ = [
    "AUDIO_SETTINGS",
    "RELEASE_LABEL",
    "audio_settings_of",
    "question_file_of",
    "question_file_label",
    "item_digest",
    "question_set_mismatch",
    "name_variants",
    "same_questions",
    "same_run",
    "question_files_note",
    "base_benchmark",
    "settings_of",
    "descriptor_of",
    "content_digest",
    "report_key",
    "dtype_of",
    "differing_settings",
]

#: Audio settings that tell runs of one model and condition apart: the results ``config``
#: key ``lalm`` writes -> (the ``model_args`` name users type, its type).
AUDIO_SETTINGS: dict[str, tuple[str, type]] = {
    "audio_seed": ("seed", int),
    "audio_noise_seconds": ("noise_seconds", float),
    "audio_noise_std": ("noise_std", float),
    "audio_max_seconds": ("max_audio_seconds", float),
    # a condition's own parameters, recorded only by runs of that condition (excerpt_seconds)
    **{
        f"audio_{p.name}": (p.name, p.kind)
        for p in condition_parameters().values()
        if not p.recorded
    },
}
#: The settings every run has (None when unrecorded); the others only where recorded.
_ALWAYS = ("audio_seed", "audio_noise_seconds", "audio_noise_std", "audio_max_seconds")
#: How a run on the default question file (no ``--metadata`` path) is named.
RELEASE_LABEL = "the public release"


def audio_settings_of(
    args: Mapping[str, Any], config: Mapping[str, Any], where: Path, error: type[UserInputError]
) -> dict[str, Any]:
    """The :data:`AUDIO_SETTINGS` of a run: from ``config`` (``lalm``), else ``model_args``.

    Raises:
        error: A recorded setting is not a number.
    """
    settings: dict[str, Any] = {}
    for key, (name, kind) in AUDIO_SETTINGS.items():
        value = config[key] if key in config else args.get(name)
        if value in (None, "", "None"):
            if key in _ALWAYS:
                settings[name] = None  # not recorded (text-only models) or the model's default
            continue
        if kind is str:
            settings[name] = str(value)
            continue
        try:
            number = kind(float(value))
        except (TypeError, ValueError):
            raise error(
                f"{where}: {key if key in config else name}={value!r} is not a number; "
                "fix the results file's config or rerun"
            ) from None
        settings[name] = number
    return settings


def base_benchmark(benchmark: str) -> str:
    """The question set a task asks: itself when a benchmark's descriptor gives it a
    question file (``data_keys``), else what a descriptor's ``question_sets`` maps it to
    (every protocol of one: ``_gen``, ``_textonly_gen``, ``_oneshot``, ``_official``), else
    itself. No name is matched by its prefix.

    >>> base_benchmark("rul_muchomusic_oneshot_gen"), base_benchmark("muchomusic_official")
    ('rul_muchomusic', 'muchomusic')
    """
    from ..catalogue import benchmarks

    if any(benchmark in b.data_keys for b in benchmarks()):
        return benchmark
    for descriptor in benchmarks():
        if benchmark in descriptor.question_sets:
            return descriptor.question_sets[benchmark]
    return benchmark


def descriptor_of(question_set: str) -> Any:
    """The benchmark of the folder whose YAMLs declare the task (or its fold group)."""
    from ..catalogue import for_question_set
    from ..included import for_task

    return for_task(question_set) or for_question_set(base_benchmark(question_set))


def settings_of(question_set: str, metadata: Mapping[str, Any]) -> tuple[str, tuple[Any, ...]]:
    """``(folder, ((key, value), ...))``: the ``--metadata`` a task of ``question_set``
    (its name without fold, before any ``benchmark_name``) ran with, restricted to the keys
    its benchmark's descriptor declares (every key but ``version`` for a task of no
    catalogue benchmark, folder ``""``); empty values left out."""
    descriptor = descriptor_of(question_set)
    keys = set(descriptor.keys()) if descriptor is not None else set(metadata) - {"version"}
    given = tuple(
        (key, json.dumps(metadata[key], sort_keys=True, default=str))
        for key in sorted(keys)
        if key in metadata and metadata[key] not in (None, "")
    )
    return (descriptor.folder if descriptor is not None else "", given)


def content_digest(samples: Iterable[Sample]) -> str:
    """A hash of the questions a task logged (each question's :func:`item_digest`, fold-
    and order-independent): the question file's content as the task read it."""
    digests = sorted({f"{s.id}:{s.digest}" for s in samples})
    return hashlib.sha1("\n".join(digests).encode("utf-8")).hexdigest()[:12]


def report_key(question_set: str, named: str) -> str:
    """The report's key of a task's benchmark: ``named`` (its ``benchmark_name``), or
    ``named (question_set)`` when a user's name is one of the catalogue's question sets
    (``benchmark_name: mmau_music`` is never MMAU's table)."""
    if named == question_set:
        return named
    from ..catalogue import benchmarks

    taken = {s for b in benchmarks() for s in (*b.report_names, *b.data_keys)}
    return f"{named} ({question_set})" if named in taken else named


def dtype_of(results: Mapping[str, Any], args: Mapping[str, Any]) -> str | None:
    """The dtype a run used: the model's own record (``model_dtype``, from
    ``get_model_info``), else ``dtype=`` of ``model_args``; None when neither says."""
    config = results.get("config") or {}
    for value in (results.get("model_dtype"), config.get("model_dtype"), args.get("dtype")):
        if value not in (None, "", "None"):
            return str(value).removeprefix("torch.")
    return None


def _data_keys() -> set[str]:
    from ..catalogue import benchmarks

    return {"data_path", *(k for b in benchmarks() for k in b.data_keys.values())}


def differing_settings(group: Sequence[Run]) -> list[str]:
    """The declared ``--metadata`` keys (question files and protocols aside: they are named
    ``questions=`` and ``protocol=``) whose values differ between runs of ``group`` on one
    benchmark folder, sorted."""
    from ..catalogue import benchmarks

    named_elsewhere = _data_keys() | {"protocol"} | {
        b.protocol_key for b in benchmarks() if b.protocol_key
    }
    found: set[str] = set()
    folders = {f for run in group for f in run.settings}
    for folder in folders:
        values = [dict(run.settings[folder]) for run in group if folder in run.settings]
        for key in {k for v in values for k in v} - named_elsewhere:
            if len({v.get(key) for v in values}) > 1:
                found.add(key)
    return sorted(found)


def _setting_value(run: Run, key: str) -> str:
    for given in run.settings.values():
        if key in dict(given):
            value = json.loads(dict(given)[key])
            return _setting_text(value)
    return "none"


def question_file_of(benchmark: str, metadata: Mapping[str, Any]) -> str:
    """The question file a task of ``benchmark`` read (``""``: the public release)."""
    path = metadata.get(data_path_key(base_benchmark(benchmark), metadata))
    return os.path.normpath(str(path)) if path not in (None, "") else ""


def question_file_label(path: str) -> str:
    """``rul_tiny.json`` for a path, :data:`RELEASE_LABEL` for ``""``."""
    return Path(path).name if path else RELEASE_LABEL


def item_digest(doc: Mapping[str, Any]) -> str | None:
    """A fold- and order-independent hash of one logged question: its text, correct answer
    and every option it offers (shown ones and the fold's dropped distractor).

    ``None`` when the document lacks the question or its options.
    """
    if "question" not in doc or "options" not in doc:
        return None
    options = [str(o) for o in doc["options"]]
    if doc.get("dropped_distractor") not in (None, ""):
        options.append(str(doc["dropped_distractor"]))
    content = [str(doc["question"]), str(doc.get("correct_answer")), sorted(options)]
    return hashlib.sha1(json.dumps(content).encode("utf-8")).hexdigest()[:12]


def _differing_items(left: Iterable[Sample], right: Iterable[Sample]) -> list[str]:
    """Question ids both sides logged whose content differs, in id order."""
    mine = {s.id: s.digest for s in left if s.digest}
    theirs = {s.id: s.digest for s in right if s.digest}
    return sorted((q for q in mine.keys() & theirs.keys() if mine[q] != theirs[q]), key=str)


def question_set_mismatch(a: Run, b: Run, benchmark: str) -> str | None:
    """Why runs ``a`` and ``b`` did not answer the same questions of ``benchmark``, or None.

    They differ when the tasks read different question files, or when questions both
    logged under one id differ in text, answer or options (the file changed in between).
    """
    file_a, file_b = a.question_file(benchmark), b.question_file(benchmark)
    if file_a != file_b:
        return (
            f"they were run on different question files ({file_a or RELEASE_LABEL} and "
            f"{file_b or RELEASE_LABEL})"
        )
    differing = _differing_items(a.samples_of(benchmark), b.samples_of(benchmark))
    if differing:
        return (
            f"{len(differing)} questions differ in text or options under the same id "
            f"(e.g. question {differing[0]}): {file_a or RELEASE_LABEL} changed between the runs"
        )
    return None


def question_files_note(runs: Sequence[Run], benchmark: str, name: str) -> str | None:
    """A note naming the question files when ``runs`` of ``benchmark`` used more than one."""
    files: dict[str, list[str]] = {}
    for run in runs:
        if run.tasks_of(benchmark):
            files.setdefault(run.question_file(benchmark) or "", []).append(run.label)
    if len(files) < 2:
        return None
    listed = "; ".join(
        f"{path or RELEASE_LABEL}: {', '.join(labels)}" for path, labels in sorted(files.items())
    )
    return (
        f"{name}: the runs used {len(files)} different question files ({listed}). Their "
        "accuracies are not comparable across files, and runs are paired only within one file."
    )


def same_run(a: Run, b: Run) -> bool:
    """Whether results files ``a`` and ``b`` are parts of one run: one model, dtype,
    condition and audio settings, the same declared ``--metadata`` for every benchmark
    folder both ran, the same questions for every task and benchmark both hold."""
    if a.merge_key != b.merge_key:
        return False
    if any(a.settings[f] != b.settings[f] for f in a.settings.keys() & b.settings.keys()):
        return False
    if any(a.tasks[t].identity != b.tasks[t].identity for t in a.tasks.keys() & b.tasks.keys()):
        return False
    return same_questions(a, b) and (a.protocol == b.protocol or None in (a.protocol, b.protocol))


def same_questions(a: Run, b: Run) -> bool:
    """Whether ``a`` and ``b`` agree on the question set of every benchmark both hold."""
    shared = set(a.benchmarks()) & set(b.benchmarks())
    return all(question_set_mismatch(a, b, benchmark) is None for benchmark in shared)


def name_variants(runs: Sequence[Run]) -> None:
    """Set :attr:`Run.variant` where runs of one model and condition differ: the audio
    settings that differ, ``protocol=...`` when their factual protocols differ, and
    ``questions=FILE`` when their question files differ."""
    siblings: dict[tuple[str, str, str], list[Run]] = {}
    for run in runs:
        siblings.setdefault((run.pretrained, run.model_type, run.condition), []).append(run)
    for group in siblings.values():
        if len(group) < 2:
            continue
        differing = [
            name
            for name, _ in AUDIO_SETTINGS.values()
            if len({repr(run.audio_settings.get(name)) for run in group}) > 1
        ]
        dtypes = len({run.dtype for run in group}) > 1
        keys = differing_settings(group)
        benchmarks = sorted({b for run in group for b in run.benchmarks()})
        split = [  # benchmarks whose runs in the group read different question files
            b for b in benchmarks if len({r.question_file(b) for r in group if r.tasks_of(b)}) > 1
        ]
        protocols = {run.protocol for run in group} - {None}
        asked = [n for n in ASKED_NAMES if len({dict(r.asked).get(n) for r in group}) > 1]
        for run in group:
            parts = [f"{name}={_setting_text(run.audio_settings.get(name))}" for name in differing]
            parts += [f"{name}={asked_text(run, name)}" for name in asked]
            parts += [f"dtype={run.dtype}"] if dtypes else []
            parts += [f"{key}={_setting_value(run, key)}" for key in keys]
            if len(protocols) > 1 and run.protocol is not None:  # factual: rul vs paper
                parts.append(f"protocol={run.protocol}")
            files = sorted(
                {question_file_label(run.question_file(b) or "") for b in split if run.tasks_of(b)}
            )
            if files:
                parts.append(f"questions={'+'.join(files)}")
            run.variant = ", ".join(parts)
        _tell_rebuilt_files_apart(group)


def _tell_rebuilt_files_apart(group: Sequence[Run]) -> None:
    """Runs still labelled alike read one file name whose content changed in between:
    add a hash of the questions they logged (``questions=rul.json#1a2b3c``)."""
    labels = [run.variant for run in group]
    for run in group:
        if labels.count(run.variant) < 2:
            continue
        digests = sorted(s.digest or "" for b in run.benchmarks() for s in run.samples_of(b))
        names = sorted({question_file_label(run.question_file(b) or "") for b in run.benchmarks()})
        if not digests:  # tagging clips, factual windows: the items each task logged
            digests = sorted(task.content for task in run.tasks.values())
        content = hashlib.sha1("".join(digests).encode("utf-8")).hexdigest()[:6]
        marker = f"questions={'+'.join(names)}#{content}" if names else f"items#{content}"
        run.variant = f"{run.variant}, {marker}" if run.variant else marker
    labels = [run.variant for run in group]
    for number, run in enumerate(group, start=1):  # still alike: told apart by their files
        if labels.count(run.variant) > 1:
            marker = f"run {number} ({run.results_files[0].name})"
            run.variant = f"{run.variant}, {marker}" if run.variant else marker


def _setting_text(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)
