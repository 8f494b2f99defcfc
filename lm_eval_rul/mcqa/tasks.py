"""The MuChoMusic / RUL-MuChoMusic task functions the YAMLs point to (via ``utils.py``).

Data location comes from the harness's ``--metadata`` JSON, which lm-eval passes to
``custom_dataset`` as keyword arguments:

* ``data_path``: the task's question file (for ``rul_muchomusic*`` the RUL JSON, or any
  question file with four distractors: JSON lines, a CSV of ``id, question,
  correct_answer, distractors``, parquet; the MuChoMusic CSV for ``muchomusic*``);
  ``rul_data_path`` / ``muchomusic_data_path`` override it per benchmark when one run
  mixes both;
* ``muchomusic_csv``: MuChoMusic's CSV, joined on question id to give RUL rows their
  audio track (needed only by audio runs that look clips up by track);
* ``shuffle_seed``: base seed of the option order (default 1234);
* ``parser``: how the generation tasks read the chosen letter: ``default`` (ours,
  :mod:`.parsing`) or ``release`` (the RUListening authors' extraction,
  :mod:`.reference_parsing`); ``muchomusic_official`` always uses MuChoMusic's scorer;
* ``audio_dir`` / ``audio_layout`` / ``audio_hf_dataset`` (+ ``audio_split``,
  ``audio_column``, ``audio_id_column``, ``audio_question_column``): where audio models
  find each item's clip (see :mod:`lm_eval_rul.audio`); text-only runs leave them out.

These keys are :data:`METADATA_KEYS` (``lm-eval-rul run`` refuses any other key in
``--metadata``); the harness adds its own, and the model arguments, which are ignored.
"""

from __future__ import annotations

import functools
import logging
import os
import re
from pathlib import Path
from typing import Any

from ..audio import AUDIO_METADATA_KEYS
from ..audio.requests import heard_fields
from ..catalogue import own_data_key
from ..questions import (
    DataValidationError,
    Question,
    attach_tracks,
    default_muchomusic_csv,
    default_rul_path,
    load_questions,
    read_muchomusic_csv,
)
from ..questions.file_kinds import question_format, sniff_data_file
from ..questions.metadata_naming import metadata_key
from .prompts import gen_prompt, muchomusic_official_prompt, pi_prompt
from .reference_parsing import DEFAULT_PARSER, check_parser, muchomusic_official_answer, parse_with
from .scoring import is_correct, perceptual_index
from .task_kit import (
    TaskMetadataError,
    as_dataset,
    attach_audio,
    existing_file,
    file_stamp,
    make_docs,
    shuffle_seed,
)

__all__ = [
    "load_rul_muchomusic",
    "load_rul_muchomusic_oneshot",
    "load_muchomusic",
    "load_muchomusic_official",
    "doc_to_text",
    "doc_to_choice",
    "process_results",
    "doc_to_text_gen",
    "doc_to_text_textonly_gen",
    "process_results_gen",
    "doc_to_text_official",
    "process_results_official",
    "rul_questions",
    "muchomusic_questions",
    "TaskMetadataError",
    "METADATA_KEYS",
    "data_path_key",
    "check_task_metadata",
]

#: Every ``--metadata`` key the MuChoMusic / RUL-MuChoMusic tasks read (module docstring).
METADATA_KEYS: tuple[str, ...] = (
    "data_path",
    "rul_data_path",
    "muchomusic_data_path",
    "muchomusic_csv",
    "shuffle_seed",
    "parser",
    *AUDIO_METADATA_KEYS,
)

logger = logging.getLogger(__name__)


@functools.lru_cache(maxsize=8)
def _read_rul_cached(stamp: tuple[str, float, int]) -> tuple[Question, ...]:
    return tuple(load_questions(stamp[0], n_distractors=4))


@functools.lru_cache(maxsize=8)
def _read_muchomusic_cached(stamp: tuple[str, float, int]) -> tuple[Question, ...]:
    return tuple(read_muchomusic_csv(stamp[0]))


#: Which file each benchmark's tasks read, for messages.
_WANTS = {
    "rul_muchomusic": "the RUL-MuChoMusic JSON (RUL-MuchoMusic.json)",
    "muchomusic": "MuChoMusic's CSV (muchomusic.csv from mulab-mir/muchomusic)",
}
_BOTH = '{"rul_data_path": "RUL-MuchoMusic.json", "muchomusic_data_path": "muchomusic.csv"}'


def _check_kind(path: Path, key: str, *, want_csv: bool, benchmark: str) -> None:
    """A question file of the other benchmark (MuChoMusic's CSV for RUL, anything else for
    MuChoMusic), decided from the file's content like every command does
    (:func:`~lm_eval_rul.questions.file_kinds.question_format`), not from its suffix."""
    is_muchomusic_csv = question_format(path) == "muchomusic_csv"
    if is_muchomusic_csv == want_csv:
        return
    other = "muchomusic" if benchmark == "rul_muchomusic" else "rul_muchomusic"
    found = _WANTS[other]
    if not is_muchomusic_csv and question_format(path) not in ("json", "jsonl"):
        found = sniff_data_file(path).description
    raise DataValidationError(
        path,
        [f"{metadata_key(key)} is {found}, but {benchmark}* tasks read {_WANTS[benchmark]}"],
        hint=f"Give that file instead; a run of both benchmarks gives each its own: '{_BOTH}'.",
    )


def _refuse_pools(error: DataValidationError, path: Path, key: str) -> None:
    """A distractor pools file (more than 4 candidates per question) given as RUL data."""
    counts = [re.search(r"expected 4 distractors, found (\d+)", p) for p in error.problems]
    if not counts or not all(m and int(m.group(1)) > 4 for m in counts):
        return
    raise DataValidationError(
        path,
        [
            f"{metadata_key(key)} is a distractor pools file ({len(counts)} questions with more "
            f"than 4 candidates), but rul_muchomusic* tasks read {_WANTS['rul_muchomusic']}"
        ],
        hint="Pools are the input of `lm-eval-rul build --pools`, which picks four distractors.",
    ) from None


def data_path_key(benchmark: str, metadata: dict[str, Any]) -> str:
    """The ``--metadata`` key naming the question file of ``benchmark``'s tasks
    (``rul_muchomusic`` or ``muchomusic``): its own key when given, else ``data_path``."""
    own = own_data_key(benchmark) or "data_path"  # the benchmark's descriptor says
    return own if metadata.get(own) else "data_path"


def rul_questions(**metadata: Any) -> list[Question]:
    """RUL-MuChoMusic questions from ``metadata`` (see the module docstring)."""
    key = data_path_key("rul_muchomusic", metadata)
    source = metadata.get(key)
    path = existing_file(source, key) if source else default_rul_path()
    _check_kind(path, key, want_csv=False, benchmark="rul_muchomusic")
    try:
        questions = list(_read_rul_cached(file_stamp(path)))
    except DataValidationError as error:
        _refuse_pools(error, path, key)
        raise
    if metadata.get("muchomusic_csv"):
        csv = existing_file(metadata["muchomusic_csv"], "muchomusic_csv")
        _check_kind(csv, "muchomusic_csv", want_csv=True, benchmark="muchomusic")
        reference = muchomusic_questions(muchomusic_data_path=str(csv))
        questions = attach_tracks(questions, reference)
    return questions


def muchomusic_questions(**metadata: Any) -> list[Question]:
    """MuChoMusic questions from ``metadata`` (see the module docstring)."""
    key = data_path_key("muchomusic", metadata)
    source = metadata.get(key)
    path = existing_file(source, key) if source else default_muchomusic_csv()
    _check_kind(path, key, want_csv=True, benchmark="muchomusic")
    return list(_read_muchomusic_cached(file_stamp(path)))


def check_task_metadata(metadata: dict[str, Any]) -> None:
    """Read and check, now, every question file ``metadata`` names (and the seed, parser
    and ``audio_dir``), as the task loaders will: ``lm_eval_rul.task_manager`` calls it so
    a typo stops at once, not after ``simple_evaluate`` has loaded the model. A
    ``data_path`` is read as the benchmark its content is (MuChoMusic's CSV or RUL).

    Raises:
        FileNotFoundError, DataValidationError, TaskMetadataError, UnknownParserError:
            the messages the CLI gives, naming the key as the caller gave it
            (:mod:`lm_eval_rul.questions.metadata_naming`).
    """
    shuffle_seed(metadata)
    _parser(metadata)
    if metadata.get("muchomusic_csv"):
        csv = existing_file(metadata["muchomusic_csv"], "muchomusic_csv")
        _check_kind(csv, "muchomusic_csv", want_csv=True, benchmark="muchomusic")
    if metadata.get("rul_data_path"):
        rul_questions(rul_data_path=metadata["rul_data_path"])
    if metadata.get("muchomusic_data_path"):
        muchomusic_questions(muchomusic_data_path=metadata["muchomusic_data_path"])
    if metadata.get("data_path"):
        path = existing_file(metadata["data_path"], "data_path")
        if question_format(path) == "muchomusic_csv":
            muchomusic_questions(data_path=str(path))
        elif not metadata.get("rul_data_path"):
            rul_questions(data_path=str(path))
    audio_dir = metadata.get("audio_dir")
    if audio_dir and not Path(os.path.expanduser(str(audio_dir))).is_dir():
        raise FileNotFoundError(
            f"{metadata_key('audio_dir')}={str(audio_dir)!r}: no such directory. Give the "
            "folder holding one audio file per question id or per MuChoMusic track."
        )


def _parser(metadata: dict[str, Any]) -> str:
    return check_parser(metadata.get("parser", DEFAULT_PARSER))


def _muchomusic_options(metadata: dict[str, Any]) -> dict[str, tuple[str, ...]]:
    """MuChoMusic's own options of each RUL row (``muchomusic_csv``), used to tell apart
    Hugging Face audio rows that share a question (:func:`lm_eval_rul.audio.attach_audio`)."""
    if not metadata.get("muchomusic_csv") or not metadata.get("audio_hf_dataset"):
        return {}
    reference = muchomusic_questions(muchomusic_data_path=metadata["muchomusic_csv"])
    return {q.id: (q.correct_answer, *q.distractors) for q in reference}


def load_rul_muchomusic(fold: int, **metadata: Any) -> dict[str, Any]:
    """``custom_dataset`` of ``rul_muchomusic_fold{fold}`` (and its ``_gen`` twins).

    With ``audio_dir`` / ``audio_hf_dataset`` in ``metadata`` the documents also carry
    the audio fields of :func:`lm_eval_rul.audio.attach_audio`.
    """
    parser = _parser(metadata)
    questions = rul_questions(**metadata)
    docs = make_docs(
        questions, benchmark="rul_muchomusic", fold=int(fold), seed=shuffle_seed(metadata)
    )
    known = _muchomusic_options(metadata)
    return as_dataset(attach_audio(docs, questions, metadata, known_options=known), parser)


def load_rul_muchomusic_oneshot(**metadata: Any) -> dict[str, Any]:
    """``custom_dataset`` of ``rul_muchomusic_oneshot`` (and ``_gen``): all five options.

    The authors' one-shot evaluation: the correct answer and all four distractors
    (letters A-E, chance 0.2), in an order seeded by (``shuffle_seed``, id) that no fold
    shares.
    """
    parser = _parser(metadata)
    questions = rul_questions(**metadata)
    docs = make_docs(questions, benchmark="rul_muchomusic", fold=None, seed=shuffle_seed(metadata))
    known = _muchomusic_options(metadata)
    return as_dataset(attach_audio(docs, questions, metadata, known_options=known), parser)


def load_muchomusic(**metadata: Any) -> dict[str, Any]:
    """``custom_dataset`` of ``muchomusic``: the correct answer and its three distractors."""
    parser = _parser(metadata)
    questions = muchomusic_questions(**metadata)
    docs = make_docs(questions, benchmark="muchomusic", fold=None, seed=shuffle_seed(metadata))
    return as_dataset(attach_audio(docs, questions, metadata), parser)


def load_muchomusic_official(**metadata: Any) -> dict[str, Any]:
    """``custom_dataset`` of ``muchomusic_official``: the ``muchomusic`` documents (same
    option order), always scored by MuChoMusic's official scorer."""
    questions = muchomusic_questions(**metadata)
    docs = make_docs(questions, benchmark="muchomusic", fold=None, seed=shuffle_seed(metadata))
    return as_dataset(attach_audio(docs, questions, metadata), "muchomusic_official")


def doc_to_text(doc: dict[str, Any]) -> str:
    """The paper's letter prompt; the answer letter is the continuation."""
    return pi_prompt(doc["question"], doc["options"])


def doc_to_choice(doc: dict[str, Any]) -> list[str]:
    """The option letters shown (A-D)."""
    return list(doc["letters"])


def process_results(doc: dict[str, Any], results: list[tuple[float, bool]]) -> dict[str, float]:
    """``acc`` and ``perceptual_index`` from the letters' log-likelihoods."""
    doc.update(heard_fields(doc))
    logliks = [float(ll) for ll, *_ in results]
    gold = int(doc["gold"])
    return {
        "acc": float(is_correct(logliks, gold)),
        "perceptual_index": perceptual_index(logliks, gold),
    }


def doc_to_text_gen(doc: dict[str, Any]) -> str:
    """The authors' step-by-step prompt of the generation tasks (answer as ``[[X]]``)."""
    return gen_prompt(doc["question"], doc["options"])


def doc_to_text_textonly_gen(doc: dict[str, Any]) -> str:
    """The paper's generation prompt for text-only LLMs ("You must guess one, ...")."""
    return gen_prompt(doc["question"], doc["options"], preamble="textonly")


def process_results_gen(doc: dict[str, Any], results: list[str]) -> dict[str, float]:
    """``acc`` and ``parse_failure`` of one generated answer.

    Read with the document's ``parser`` (``--metadata parser``: ``default`` is
    :mod:`lm_eval_rul.mcqa.parsing`, ``release`` the authors' extraction). An answer that
    chooses no offered option is wrong and a parse failure, never a random guess. The
    parsed letter and the rule that read it are added to the document as
    ``parsed_letter`` and ``parse_rule``, so ``--log_samples`` shows them.
    """
    doc.update(heard_fields(doc))
    parsed, index = parse_with(
        doc.get("parser") or DEFAULT_PARSER, results[0], doc["options"], doc["letters"]
    )
    doc["parsed_letter"] = parsed.letter
    doc["parse_rule"] = parsed.rule
    return {
        "acc": float(index is not None and index == int(doc["gold"])),
        "parse_failure": float(index is None),
    }


def doc_to_text_official(doc: dict[str, Any]) -> str:
    """MuChoMusic's official prompt: its in-context example, the question and options."""
    return muchomusic_official_prompt(doc["question"], doc["options"])


def process_results_official(doc: dict[str, Any], results: list[str]) -> dict[str, float]:
    """``acc`` and ``unanswered_rate`` by MuChoMusic's official scorer.

    (:func:`~lm_eval_rul.mcqa.reference_parsing.muchomusic_official_answer`; an
    unanswered question is wrong.) ``parsed_letter`` / ``parse_rule`` are logged as for
    the other generation tasks.
    """
    doc.update(heard_fields(doc))
    parsed = muchomusic_official_answer(results[0], doc["options"])
    doc["parsed_letter"] = parsed.letter
    doc["parse_rule"] = parsed.rule
    return {
        "acc": float(parsed.letter == doc["gold_letter"]),
        "unanswered_rate": float(parsed.letter is None),
    }
