"""The MMAU task functions the YAMLs of ``tasks/mmau`` point to (via ``utils.py``).

``--metadata`` keys (:data:`MMAU_METADATA_KEYS`; ``lm-eval-rul run`` refuses others):

* ``mmau_data_path``: MMAU's released JSON (default: ``mmau_split``'s file downloaded
  from github.com/Sakshi113/MMAU once, :func:`~lm_eval_rul.mcqa.mmau.sources.default_mmau_path`);
* ``mmau_split``: ``test-mini`` (default; with answers) or ``test`` (no answers: the run
  writes the authors' predictions file, :mod:`.predictions`);
* ``mmau_subset``: ``music`` (default), ``sound``, ``speech`` or ``all``;
* ``protocol``: ``rul`` (ours, default), ``official`` (MMAU's scorer), ``lmms``
  (lmms-eval's prompt and letter reading, no random letter); see :mod:`.documents` and
  :mod:`.prompts`;
* ``shuffle_seed`` (the ``rul`` option order), ``parser`` (``rul`` only: ``default`` or
  ``release``);
* the audio keys of :mod:`lm_eval_rul.audio` (``audio_dir`` holding ``{id}.wav`` or the
  release's ``test-mini-audios/{id}.wav``; ``audio_hf_dataset``, whose rows are joined on
  their ``id`` column and read from ``audio`` unless ``audio_id_column`` /
  ``audio_column`` say otherwise);
* for ``rul_mmau_music``: ``data_path`` (or ``rul_mmau_data_path``), the file
  ``lm-eval-rul build`` made from MMAU; ``mmau_data_path`` then gives its items'
  sub-category, difficulty and clip path.
"""

from __future__ import annotations

import functools
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from ...audio import AUDIO_METADATA_KEYS, attach_audio
from ...audio.requests import heard_fields
from ...questions import Question, load_questions
from ...questions.mmau import MMAU_SUBSETS, MMAUItem, as_question, read_mmau_json, select_subset
from ..folds import make_docs
from ..mmau_parsing import mmau_string_match
from ..reference_parsing import DEFAULT_PARSER, check_parser, parse_with
from ..scoring import choice_probabilities
from ..tasks import TaskMetadataError, _as_dataset, _existing, _seed, _stamp
from .documents import DEFAULT_PROTOCOL, PROTOCOLS, answer_indices, mmau_docs
from .prompts import generation_prompt, letter_prompt
from .sources import MMAU_SPLITS, default_mmau_path

__all__ = [
    "MMAU_METADATA_KEYS",
    "mmau_items",
    "load_mmau",
    "doc_to_text",
    "doc_to_choice",
    "process_results",
    "doc_to_text_gen",
    "process_results_gen",
    "load_rul_mmau_music",
    "check_mmau_data",
]

MMAU_METADATA_KEYS: tuple[str, ...] = (
    "mmau_data_path",
    "mmau_split",
    "mmau_subset",
    "protocol",
    "shuffle_seed",
    "parser",
    "data_path",
    "rul_mmau_data_path",
    *AUDIO_METADATA_KEYS,
)
#: The parser each protocol's generation task reads answers with (``rul``: ``parser``).
PROTOCOL_PARSERS = {"official": "mmau_official", "lmms": "mmau_lmms"}
#: Where MMAU's public Hugging Face copies keep a row's clip and its item id.
HF_DEFAULTS = {"audio_column": "audio", "audio_id_column": "id"}


def _choice(metadata: dict[str, Any], key: str, allowed: tuple[str, ...], default: str) -> str:
    value = metadata.get(key, default)
    if value not in allowed:
        raise TaskMetadataError(
            f"--metadata {key}={value!r}: use one of {', '.join(allowed)} (default {default})"
        )
    return str(value)


def _protocol(metadata: dict[str, Any]) -> str:
    return _choice(metadata, "protocol", PROTOCOLS, DEFAULT_PROTOCOL)


def _parser(protocol: str, metadata: dict[str, Any]) -> str:
    if protocol == "rul":
        return check_parser(metadata.get("parser", DEFAULT_PARSER))
    if "parser" in metadata:
        raise TaskMetadataError(
            f"--metadata parser={metadata['parser']!r} applies to protocol=rul only: "
            f"protocol={protocol} reads answers with its own rule; drop one of them"
        )
    return PROTOCOL_PARSERS[protocol]


@functools.lru_cache(maxsize=8)
def _read_cached(stamp: tuple[str, float, int]) -> tuple[MMAUItem, ...]:
    return tuple(read_mmau_json(stamp[0]))


def _mmau_path(metadata: dict[str, Any]) -> Path:
    split = _choice(metadata, "mmau_split", MMAU_SPLITS, "test-mini")
    source = metadata.get("mmau_data_path")
    return _existing(source, "mmau_data_path") if source else default_mmau_path(split)


def mmau_items(**metadata: Any) -> list[MMAUItem]:
    """The items of ``mmau_subset`` from ``mmau_data_path`` (see the module docstring)."""
    subset = _choice(metadata, "mmau_subset", (*MMAU_SUBSETS, "all"), "music")
    path = _mmau_path(metadata)
    return select_subset(_read_cached(_stamp(path)), subset, path)


def _audio_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    if not metadata.get("audio_hf_dataset"):
        return metadata
    return {**HF_DEFAULTS, **metadata}


def load_mmau(**metadata: Any) -> dict[str, Any]:
    """``custom_dataset`` of ``mmau_music`` and ``mmau_music_gen``."""
    protocol = _protocol(metadata)
    parser = _parser(protocol, metadata)
    items = mmau_items(**metadata)
    docs = mmau_docs(items, protocol=protocol, seed=_seed(metadata))
    questions = [as_question(item) for item in items]
    return _as_dataset(attach_audio(docs, questions, _audio_metadata(metadata)), parser)


def doc_to_text(doc: dict[str, Any]) -> str:
    """The letter prompt of the document's protocol (:func:`.prompts.letter_prompt`)."""
    return letter_prompt(doc["protocol"], doc["question"], doc["options"])


def doc_to_choice(doc: dict[str, Any]) -> list[str]:
    """The option letters shown."""
    return list(doc["letters"])


def process_results(doc: dict[str, Any], results: list[tuple[float, bool]]) -> dict[str, float]:
    """``acc`` and ``perceptual_index`` (1 - p̂ of the answer, summed over its copies) from
    the letters' log-likelihoods; NaN for an unanswered (``test``) item."""
    doc.update(heard_fields(doc))
    if int(doc["gold"]) < 0:
        return {"acc": math.nan, "perceptual_index": math.nan}
    logliks = [float(ll) for ll, *_ in results]
    probs = choice_probabilities(logliks)
    right = answer_indices(doc["options"], doc["answer"])
    chosen = int(np.argmax(logliks)) if np.isfinite(logliks).any() else None
    return {
        "acc": float(chosen in right),
        "perceptual_index": float(1.0 - probs[right].sum()),
    }


def doc_to_text_gen(doc: dict[str, Any]) -> str:
    """The generation prompt of the document's protocol (:func:`.prompts.generation_prompt`)."""
    return generation_prompt(doc["protocol"], doc["question"], doc["options"])


def process_results_gen(doc: dict[str, Any], results: list[str]) -> dict[str, float]:
    """``acc`` and ``parse_failure`` of one generated answer, under the doc's protocol.

    ``official``: ``acc`` is MMAU's string-match rule of the answer
    (:func:`~lm_eval_rul.mcqa.mmau_parsing.mmau_string_match`), exactly; a
    ``parse_failure`` is an answer the rule gives no choice for. ``rul`` / ``lmms``: the
    letter read by the doc's parser must show the answer; an unread answer is wrong and a
    ``parse_failure``, never a random guess. ``parsed_letter`` / ``parse_rule`` are logged.
    """
    doc.update(heard_fields(doc))
    response = results[0]
    parsed, index = parse_with(doc.get("parser") or DEFAULT_PARSER, response, doc["options"],
                               doc["letters"])  # fmt: skip
    doc["parsed_letter"] = parsed.letter
    doc["parse_rule"] = parsed.rule
    if int(doc["gold"]) < 0:
        return {"acc": math.nan, "parse_failure": float(index is None)}
    if doc["protocol"] == "official":
        correct = mmau_string_match(doc["answer"], response, doc["choices"])
    else:
        correct = index is not None and doc["options"][index] == doc["answer"]
    return {"acc": float(correct), "parse_failure": float(index is None)}


# ------------------------------------------------------------------ rul_mmau_music


def _rul_mmau_questions(metadata: dict[str, Any]) -> list[Question]:
    key = "rul_mmau_data_path" if metadata.get("rul_mmau_data_path") else "data_path"
    if not metadata.get(key):
        raise TaskMetadataError(
            "rul_mmau_music reads the file `lm-eval-rul build --data mmau-test-mini.json` "
            "wrote (it has no public copy): give --metadata data_path=/path/to/rul_mmau.json "
            "(and mmau_data_path=mmau-test-mini.json for sub-categories and clip paths)"
        )
    return load_questions(_existing(metadata[key], key), n_distractors=4)


def load_rul_mmau_music(fold: int, **metadata: Any) -> dict[str, Any]:
    """``custom_dataset`` of ``rul_mmau_music_fold{fold}``: a built RUL-MMAU-music file in
    RUL-MuChoMusic's four leave-one-out folds (same prompt, letters and votes)."""
    parser = check_parser(metadata.get("parser", DEFAULT_PARSER))
    questions = _rul_mmau_questions(metadata)
    by_id: dict[str, MMAUItem] = {}
    if metadata.get("mmau_data_path"):
        by_id = {i.id: i for i in _read_cached(_stamp(_mmau_path(metadata)))}
        questions = [
            replace(q, track=as_question(by_id[q.id]).track) if q.id in by_id else q
            for q in questions
        ]
    docs = make_docs(questions, benchmark="rul_mmau_music", fold=int(fold), seed=_seed(metadata))
    for doc in docs:
        item = by_id.get(str(doc["id"]))
        doc["sub_category"] = item.sub_category if item else ""
        doc["difficulty"] = item.difficulty if item else ""
    return _as_dataset(attach_audio(docs, questions, _audio_metadata(metadata)), parser)


def check_mmau_data(metadata: dict[str, Any]) -> None:
    """Read and check, now, the MMAU files ``metadata`` names (``mmau_data_path``,
    ``rul_mmau_data_path``), as the task loaders will (``lm_eval_rul.task_manager``).

    Raises:
        FileNotFoundError, DataValidationError, TaskMetadataError: as the loaders do.
    """
    if metadata.get("mmau_data_path"):
        mmau_items(**metadata)
    if metadata.get("rul_mmau_data_path"):
        _rul_mmau_questions(metadata)
