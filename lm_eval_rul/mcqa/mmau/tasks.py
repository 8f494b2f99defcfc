"""The MMAU-layout task functions (MMAU, MMAR) the YAMLs of ``tasks/mmau`` and
``tasks/mmar`` point to (via their ``utils.py``): one implementation, given the benchmark's
:class:`~lm_eval_rul.questions.layout.Layout` (``load_mmau = functools.partial(load_layout,
MMAU)``).

``--metadata`` keys (:func:`layout_metadata_keys`; ``lm-eval-rul run`` refuses others), with
``{b}`` the layout's name (``mmau``, ``mmar``):

* ``{b}_data_path``: the released file (default: downloaded once from the authors' GitHub
  repository, :func:`~lm_eval_rul.mcqa.mmau.sources.default_layout_path`); a file without
  answers runs predictions only (one line at the start says so; no acc nor PI);
* ``{b}_split`` (layouts with several files: MMAU's ``test-mini``, default, or ``test``);
* ``{b}_subset``: the layout's subsets (MMAU: ``music`` (default), ``sound``, ``speech``;
  MMAR: ``music``, ``music_any`` ...) or ``all``;
* ``{b}_protocol`` (or ``protocol``): ``rul`` (ours, default), ``official`` (the authors'
  string-match scorer), ``lmms`` (lmms-eval's prompt and letter reading, no random letter);
  see :mod:`.documents` and :mod:`.prompts`;
* ``shuffle_seed`` (the ``rul`` option order), ``parser`` (``rul`` only: ``default`` or
  ``release``);
* the audio keys of :mod:`lm_eval_rul.audio` (``audio_dir`` holding ``{id}.wav`` or the
  release's path such as ``test-mini-audios/{id}.wav`` / ``audio/{id}.wav``;
  ``audio_hf_dataset``, whose rows are joined on their ``id`` column and read from
  ``audio`` unless ``audio_id_column`` / ``audio_column`` say otherwise);
* for ``rul_{b}_music``: ``data_path`` (or ``rul_{b}_data_path``), the file ``lm-eval-rul
  build`` made from the release; ``{b}_data_path`` then gives its items' labels and clips.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from ...audio import AUDIO_METADATA_KEYS
from ...audio.requests import heard_fields
from ...questions import Question, load_questions
from ...questions.layout import (
    Layout,
    LayoutItem,
    read_layout,
    select_subset,
    unanswered_notice,
)
from ...questions.layout_questions import as_question
from ...questions.mmau import MMAU
from .. import task_kit as kit
from ..mmau_parsing import mmau_string_match
from ..reference_parsing import DEFAULT_PARSER, check_parser, parse_with
from ..scoring import choice_probabilities
from .documents import DEFAULT_PROTOCOL, PROTOCOLS, answer_indices, layout_docs
from .prompts import generation_prompt, letter_prompt
from .sources import default_layout_path

__all__ = [
    "MMAU_METADATA_KEYS",
    "layout_metadata_keys",
    "layout_items",
    "load_layout",
    "load_rul_layout",
    "mmau_items",
    "load_mmau",
    "doc_to_text",
    "doc_to_choice",
    "process_results",
    "doc_to_text_gen",
    "process_results_gen",
    "load_rul_mmau_music",
    "check_layout_data",
    "check_mmau_data",
]

#: The parser each protocol's generation task reads answers with (``rul``: ``parser``).
PROTOCOL_PARSERS = {"official": "mmau_official", "lmms": "mmau_lmms"}
#: Where the public Hugging Face copies keep a row's clip and its item id.
HF_DEFAULTS = {"audio_column": "audio", "audio_id_column": "id"}

logger = logging.getLogger(__name__)


def layout_metadata_keys(layout: Layout) -> tuple[str, ...]:
    """The ``--metadata`` keys of a layout's tasks (see the module docstring)."""
    split = (f"{layout.name}_split",) if len(layout.files) > 1 else ()
    return (
        f"{layout.name}_data_path",
        *split,
        f"{layout.name}_subset",
        f"{layout.name}_protocol",
        "protocol",
        "shuffle_seed",
        "parser",
        "data_path",
        f"rul_{layout.name}_data_path",
        *AUDIO_METADATA_KEYS,
    )


MMAU_METADATA_KEYS: tuple[str, ...] = layout_metadata_keys(MMAU)


def _choice(metadata: dict[str, Any], key: str, allowed: tuple[str, ...], default: str) -> str:
    value = metadata.get(key, default)
    if value not in allowed:
        raise kit.TaskMetadataError(
            f"--metadata {key}={value!r}: use one of {', '.join(allowed)} (default {default})"
        )
    return str(value)


def _protocol(layout: Layout, metadata: dict[str, Any]) -> str:
    """``{name}_protocol``, else a bare ``protocol`` (accepted where it is unambiguous)."""
    key = f"{layout.name}_protocol"
    if key in metadata and "protocol" in metadata and metadata[key] != metadata["protocol"]:
        raise kit.TaskMetadataError(
            f"--metadata {key}={metadata[key]!r} and protocol={metadata['protocol']!r} differ; "
            f"keep {key}"
        )
    return _choice(metadata, key if key in metadata else "protocol", PROTOCOLS, DEFAULT_PROTOCOL)


def _parser(protocol: str, metadata: dict[str, Any]) -> str:
    if protocol == "rul":
        return check_parser(metadata.get("parser", DEFAULT_PARSER))
    if "parser" in metadata:
        raise kit.TaskMetadataError(
            f"--metadata parser={metadata['parser']!r} applies to protocol=rul only: "
            f"protocol={protocol} reads answers with its own rule; drop one of them"
        )
    return PROTOCOL_PARSERS[protocol]


@functools.lru_cache(maxsize=8)
def _read_cached(layout: Layout, stamp: tuple[str, float, int]) -> tuple[LayoutItem, ...]:
    return tuple(read_layout(stamp[0], layout))


def _layout_path(layout: Layout, metadata: dict[str, Any]) -> Path:
    splits = tuple(split for split, _ in layout.files)
    split = _choice(metadata, f"{layout.name}_split", splits, splits[0])
    source = metadata.get(f"{layout.name}_data_path")
    key = f"{layout.name}_data_path"
    return kit.existing_file(source, key) if source else default_layout_path(layout, split)


def layout_items(layout: Layout, **metadata: Any) -> list[LayoutItem]:
    """The items of ``{name}_subset`` from ``{name}_data_path`` (see the module docstring)."""
    subset = _choice(metadata, f"{layout.name}_subset", (*layout.subsets, "all"), "music")
    path = _layout_path(layout, metadata)
    return select_subset(_read_cached(layout, kit.file_stamp(path)), subset, path, layout)


def _audio_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    if not metadata.get("audio_hf_dataset"):
        return metadata
    return {**HF_DEFAULTS, **metadata}


@functools.lru_cache(maxsize=8)
def _say_unanswered(line: str) -> None:
    logger.warning(line)  # once per file and command, however many tasks read it


def load_layout(layout: Layout, **metadata: Any) -> dict[str, Any]:
    """``custom_dataset`` of the letter and generation tasks (``mmau_music``,
    ``mmar_music_gen`` ...); a file without answers is said in one line at the start."""
    protocol = _protocol(layout, metadata)
    parser = _parser(protocol, metadata)
    items = layout_items(layout, **metadata)
    if all(item.answer is None for item in items):
        _say_unanswered(unanswered_notice(_layout_path(layout, metadata), layout, len(items)))
    docs = layout_docs(items, layout, protocol=protocol, seed=kit.shuffle_seed(metadata))
    questions = [as_question(item) for item in items]
    return kit.as_dataset(kit.attach_audio(docs, questions, _audio_metadata(metadata)), parser)


def doc_to_text(doc: dict[str, Any]) -> str:
    """The letter prompt of the document's protocol (:func:`.prompts.letter_prompt`)."""
    return letter_prompt(doc["protocol"], doc["question"], doc["options"])


def doc_to_choice(doc: dict[str, Any]) -> list[str]:
    """The option letters shown."""
    return list(doc["letters"])


def process_results(doc: dict[str, Any], results: list[tuple[float, bool]]) -> dict[str, float]:
    """``acc`` and ``perceptual_index`` (1 - p̂ of the answer, summed over its copies) from
    the letters' log-likelihoods; none for an unanswered item (no NaN is aggregated: the
    run is predictions only)."""
    doc.update(heard_fields(doc))
    if int(doc["gold"]) < 0:
        return {}
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

    ``official``: ``acc`` is the authors' string-match rule of the answer (MMAU's, which
    MMAR's scorer applies unchanged:
    :func:`~lm_eval_rul.mcqa.mmau_parsing.mmau_string_match`), exactly; a
    ``parse_failure`` is an answer the rule gives no choice for. ``rul`` / ``lmms``: the
    letter read by the doc's parser must show the answer; an unread answer is wrong and a
    ``parse_failure``, never a random guess. ``parsed_letter`` / ``parse_rule`` are logged.
    An unanswered item has no ``acc``, only ``parse_failure``.
    """
    doc.update(heard_fields(doc))
    response = results[0]
    parsed, index = parse_with(
        doc.get("parser") or DEFAULT_PARSER, response, doc["options"], doc["letters"]
    )
    doc["parsed_letter"] = parsed.letter
    doc["parse_rule"] = parsed.rule
    if int(doc["gold"]) < 0:
        return {"parse_failure": float(index is None)}
    if doc["protocol"] == "official":
        correct = mmau_string_match(doc["answer"], response, doc["choices"])
    else:
        correct = index is not None and doc["options"][index] == doc["answer"]
    return {"acc": float(correct), "parse_failure": float(index is None)}


# ------------------------------------------------------------------ rul_{layout}_music


def _rul_questions(layout: Layout, metadata: dict[str, Any]) -> list[Question]:
    own = f"rul_{layout.name}_data_path"
    key = own if metadata.get(own) else "data_path"
    if not metadata.get(key):
        file = dict(layout.files)[layout.files[0][0]]
        raise kit.TaskMetadataError(
            f"rul_{layout.name}_music reads the file `lm-eval-rul build --data {file}` wrote "
            f"(it has no public copy): give --metadata data_path=/path/to/rul_{layout.name}.json "
            f"(and {layout.name}_data_path={file} for its labels and clip paths)"
        )
    path = kit.existing_file(metadata[key], key, public=False)  # a build output: no copy
    return load_questions(path, n_distractors=4)


def load_rul_layout(layout: Layout, fold: int, **metadata: Any) -> dict[str, Any]:
    """``custom_dataset`` of ``rul_{name}_music_fold{fold}``: a built file in RUL-MuChoMusic's
    four leave-one-out folds (same prompt, letters and votes), labelled from the release."""
    parser = check_parser(metadata.get("parser", DEFAULT_PARSER))
    questions = _rul_questions(layout, metadata)
    by_id: dict[str, LayoutItem] = {}
    if metadata.get(f"{layout.name}_data_path"):
        by_id = {
            i.id: i for i in _read_cached(layout, kit.file_stamp(_layout_path(layout, metadata)))
        }
        questions = [
            replace(q, track=as_question(by_id[q.id]).track) if q.id in by_id else q
            for q in questions
        ]
    benchmark = f"rul_{layout.name}_music"
    docs = kit.make_docs(
        questions, benchmark=benchmark, fold=int(fold), seed=kit.shuffle_seed(metadata)
    )
    for doc in docs:
        item = by_id.get(str(doc["id"]))
        for field in ("sub_category", "difficulty", "category"):
            doc[field] = getattr(item, field) if item else ""
        doc["breakdown_fields"] = list(layout.breakdowns)
    return kit.as_dataset(kit.attach_audio(docs, questions, _audio_metadata(metadata)), parser)


def mmau_items(**metadata: Any) -> list[LayoutItem]:
    """MMAU's items of ``mmau_subset`` (:func:`layout_items`)."""
    return layout_items(MMAU, **metadata)


def load_mmau(**metadata: Any) -> dict[str, Any]:
    """``custom_dataset`` of ``mmau_music`` and ``mmau_music_gen``."""
    return load_layout(MMAU, **metadata)


def load_rul_mmau_music(fold: int, **metadata: Any) -> dict[str, Any]:
    """``custom_dataset`` of ``rul_mmau_music_fold{fold}``."""
    return load_rul_layout(MMAU, fold, **metadata)


def check_layout_data(layout: Layout, metadata: dict[str, Any]) -> None:
    """Read and check, now, the files of ``layout`` that ``metadata`` names
    (``{name}_data_path``, ``rul_{name}_data_path``), as the task loaders will: a
    descriptor's ``checks`` (``lm_eval_rul.task_manager``, before any model loads).

    Raises:
        FileNotFoundError, DataValidationError, TaskMetadataError: as the loaders do.
    """
    if metadata.get(f"{layout.name}_data_path"):
        layout_items(layout, **metadata)
    if metadata.get(f"rul_{layout.name}_data_path"):
        _rul_questions(layout, metadata)


def check_mmau_data(metadata: dict[str, Any]) -> None:
    """MMAU's :func:`check_layout_data` (its descriptor's check)."""
    check_layout_data(MMAU, metadata)
