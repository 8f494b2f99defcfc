"""A user's own multiple-choice benchmark: the ``music_mc`` / ``music_mc_gen`` /
``rul_music_mc`` task functions (``tasks/music_mc``).

``--metadata`` keys (:data:`MUSIC_MC_METADATA_KEYS`):

* ``mc_data_path`` (required): any question file the readers accept
  (:func:`~lm_eval_rul.questions.load_questions`: JSON lines, CSV or parquet of ``id,
  question, correct_answer, distractors``, the RUL JSON, MMAU/MMAR's releases ...); items
  may have 2 to 26 options (``rul_music_mc``'s folds need four distractors each);
* ``benchmark_name``: how ``report`` names it (default ``music_mc``); every document
  carries it, so two runs on two files with two names are two benchmarks in the report;
* ``mc_columns``: a JSON object role -> column for a table whose column names the readers
  do not recognise (roles ``id``, ``question``, ``choices``, ``answer``, ``audio``);
* ``mc_answer_base``: where a numeric answer column counts from (0 or 1), for a file that
  does not settle it itself (no answer 0, none equal to its item's number of options, no
  numbered choice columns): such a file is refused rather than read from a guessed base;
* ``mc_split``: the split of a dataset with several (default: its only one, else ``test``);
* ``mc_subset``: for a file in MMAU's or MMAR's layout, the items of one ``task`` /
  ``modality`` value (default ``all``: the file is read whole);
* ``shuffle_seed``, ``parser`` and the audio keys, as for RUL-MuChoMusic.

Only the data changes the numbers: each item's options are shown in an order seeded by
``shuffle_seed``, the question's text and its set of options
(:func:`~.folds.content_shuffled`), never by the file's shape, the order it lists the
options in, its ids or ``benchmark_name``.

Scoring is RUL-MuChoMusic's (:mod:`.tasks`): letters after the paper's prompt (``acc``,
``perceptual_index`` against each item's own chance), the ``[[X]]`` generation prompt.
"""

from __future__ import annotations

from typing import Any

from ..audio import AUDIO_METADATA_KEYS
from ..questions import Question, load_questions
from ..questions.published import is_dataset_source
from .reference_parsing import DEFAULT_PARSER, check_parser
from .task_kit import (
    TaskMetadataError,
    as_dataset,
    attach_audio,
    existing_file,
    make_docs,
    shuffle_seed,
)

__all__ = [
    "MUSIC_MC_METADATA_KEYS",
    "BENCHMARK_TASK",
    "check_music_mc_data",
    "load_music_mc",
    "load_rul_music_mc",
]

MUSIC_MC_METADATA_KEYS: tuple[str, ...] = (
    "mc_data_path",
    "mc_columns",
    "mc_split",
    "mc_subset",
    "mc_answer_base",
    "benchmark_name",
    "shuffle_seed",
    "parser",
    *AUDIO_METADATA_KEYS,
)
#: The task name ``report`` replaces with ``benchmark_name`` (``music_mc_gen`` ->
#: ``{benchmark_name}_gen``, ``rul_music_mc`` -> ``rul_{benchmark_name}``).
BENCHMARK_TASK = "music_mc"


def _questions(metadata: dict[str, Any], n_distractors: int | None) -> list[Question]:
    if not metadata.get("mc_data_path"):
        raise TaskMetadataError(
            "music_mc reads your own multiple-choice file: give --metadata "
            '\'{"mc_data_path": "/path/to/questions.jsonl", "benchmark_name": "My-Bench"}\' '
            "(docs/your_own_benchmark.md)"
        )
    source = str(metadata["mc_data_path"])
    if not is_dataset_source(source):
        source = str(existing_file(source, "mc_data_path"))
    return load_questions(
        source,
        n_distractors=n_distractors,
        columns=metadata.get("mc_columns"),
        split=str(metadata["mc_split"]) if metadata.get("mc_split") else None,
        subset=str(metadata.get("mc_subset") or "all"),
        subset_key="mc_subset",
        answer_base=metadata.get("mc_answer_base"),
    )


def check_music_mc_data(metadata: dict[str, Any]) -> None:
    """The benchmark's check (its descriptor's ``checks``): ``mc_data_path``, when given,
    is read now as the tasks will read it, so a file the readers cannot place is one line
    before any model loads."""
    if metadata.get("mc_data_path"):
        shuffle_seed(metadata)
        check_parser(metadata.get("parser", DEFAULT_PARSER))
        _questions(metadata, None)


def _named(docs: list[dict[str, Any]], metadata: dict[str, Any]) -> list[dict[str, Any]]:
    name = str(metadata.get("benchmark_name") or BENCHMARK_TASK)
    for doc in docs:
        doc["benchmark_name"] = name
        doc["benchmark_task"] = BENCHMARK_TASK
    return docs


def load_music_mc(**metadata: Any) -> dict[str, Any]:
    """``custom_dataset`` of ``music_mc`` and ``music_mc_gen``: every option shown, in an
    order seeded from (``shuffle_seed``, the question, its set of options)."""
    parser = check_parser(metadata.get("parser", DEFAULT_PARSER))
    questions = _questions(metadata, None)
    name = str(metadata.get("benchmark_name") or BENCHMARK_TASK)
    docs = _named(
        make_docs(questions, benchmark=name, fold=None, seed=shuffle_seed(metadata),
                  by_content=True),
        metadata,
    )
    return as_dataset(attach_audio(docs, questions, metadata), parser)


def load_rul_music_mc(fold: int, **metadata: Any) -> dict[str, Any]:
    """``custom_dataset`` of ``rul_music_mc_fold{fold}``: RUL-MuChoMusic's leave-one-out
    folds of a file with four distractors per question (a ``build`` output)."""
    parser = check_parser(metadata.get("parser", DEFAULT_PARSER))
    questions = _questions(metadata, 4)
    name = f"rul_{metadata.get('benchmark_name') or BENCHMARK_TASK}"
    docs = make_docs(questions, benchmark=name, fold=int(fold), seed=shuffle_seed(metadata),
                     by_content=True)
    return as_dataset(attach_audio(_named(docs, metadata), questions, metadata), parser)
