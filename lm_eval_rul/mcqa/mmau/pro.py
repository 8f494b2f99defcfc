"""MMAU-Pro-music's task functions (``tasks/mmau_pro``): its closed-form music items
(:mod:`lm_eval_rul.questions.mmau_pro`) as MMAU-layout documents, each hearing EVERY clip
of its item in order (:mod:`lm_eval_rul.audio.clips`).

``--metadata`` keys (:data:`MMAU_PRO_METADATA_KEYS`):

* ``mmau_pro_data`` (required): ``test.parquet``, a ``save_to_disk`` folder, or the hub
  name ``gamma-lab-umd/MMAU-Pro`` already in the ``datasets`` cache; ``mmau_pro_split``
  (default ``test``);
* ``mmau_pro_audio_dir``: the folder holding the release's ``data/`` (``data.zip``
  unpacked); without it the tasks run text-only models only;
* ``mmau_pro_protocol``: ``ours`` (default: letters; ``mmau_pro_music_gen`` asks for
  ``[[X]]`` and reads letters with ``parser``, an unread answer wrong and counted in
  ``parse_failure``) or ``official`` (the choices in the release's order;
  ``mmau_pro_music_gen`` matches the free text to the most similar choice with
  ``mmau_pro_embedder``, the authors' rule: :mod:`.embedding_match`);
* ``mmau_pro_embedder`` (``official`` only; default ``nvidia/NV-Embed-v2``), ``shuffle_seed``,
  ``parser`` (``ours`` only).
"""

from __future__ import annotations

import functools
import json
import logging
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from ...audio.clips import CLIPS_FIELD, part_id
from ...audio.requests import heard_fields
from ...questions.layout_questions import as_question
from ...questions.mmau_pro import MMAU_PRO, ProItems, describe_selection, read_mmau_pro
from .. import task_kit as kit
from ..prompts import gen_prompt, letters_for
from ..reference_parsing import DEFAULT_PARSER, check_parser, parse_with
from .documents import layout_docs
from .embedding_match import DEFAULT_EMBEDDER, matched_choice
from .tasks import doc_to_choice, doc_to_text, process_results

__all__ = [
    "MMAU_PRO_METADATA_KEYS",
    "MMAU_PRO_PROTOCOLS",
    "check_mmau_pro_data",
    "load_mmau_pro",
    "load_mmau_pro_gen",
    "official_prompt",
    "doc_to_text",
    "doc_to_choice",
    "process_results",
    "doc_to_text_gen",
    "process_results_gen",
]

#: ``--metadata mmau_pro_protocol`` values, the default first.
MMAU_PRO_PROTOCOLS: tuple[str, ...] = ("ours", "official")
MMAU_PRO_METADATA_KEYS: tuple[str, ...] = (
    "mmau_pro_data",
    "mmau_pro_split",
    "mmau_pro_audio_dir",
    "mmau_pro_protocol",
    "mmau_pro_embedder",
    "shuffle_seed",
    "parser",
)
#: The document protocol each of ours maps to (:mod:`.documents`: option order, prompts).
_DOC_PROTOCOL = {"ours": "rul", "official": "official"}

logger = logging.getLogger(__name__)


def _protocol(metadata: dict[str, Any]) -> str:
    value = metadata.get("mmau_pro_protocol", MMAU_PRO_PROTOCOLS[0])
    if value not in MMAU_PRO_PROTOCOLS:
        raise kit.TaskMetadataError(
            f"--metadata mmau_pro_protocol={value!r}: use one of {', '.join(MMAU_PRO_PROTOCOLS)} "
            f"(default {MMAU_PRO_PROTOCOLS[0]})"
        )
    return str(value)


def _parser(protocol: str, metadata: dict[str, Any]) -> str:
    if protocol == "ours":
        return check_parser(metadata.get("parser", DEFAULT_PARSER))
    if "parser" in metadata:
        raise kit.TaskMetadataError(
            f"--metadata parser={metadata['parser']!r} applies to mmau_pro_protocol=ours only: "
            "official matches the answer to a choice by embeddings; drop one of them"
        )
    return "mmau_pro_official"


def _embedder(protocol: str, metadata: dict[str, Any]) -> str:
    given = metadata.get("mmau_pro_embedder")
    if given and protocol != "official":
        raise kit.TaskMetadataError(
            f"--metadata mmau_pro_embedder={given!r} applies to mmau_pro_protocol=official "
            "only; drop it or add mmau_pro_protocol=official"
        )
    name = str(given or DEFAULT_EMBEDDER)
    local = Path(os.path.expanduser(name))
    if (name.startswith((".", "/", "~")) or local.exists()) and not local.is_dir():
        raise kit.TaskMetadataError(
            f"--metadata mmau_pro_embedder={name!r}: no such folder; give a saved "
            "transformers checkpoint (or a hub name in your cache)"
        )
    return str(local) if local.is_dir() else name


def _source(metadata: dict[str, Any]) -> str:
    source = metadata.get("mmau_pro_data")
    if not source:
        raise kit.TaskMetadataError(
            "mmau_pro_music reads MMAU-Pro as released: give --metadata "
            "mmau_pro_data=/path/to/test.parquet (or its save_to_disk folder, or "
            "gamma-lab-umd/MMAU-Pro from your datasets cache) and mmau_pro_audio_dir= the "
            "folder holding its data/"
        )
    local = Path(os.path.expanduser(str(source)))
    return str(local) if local.exists() else str(source)


@functools.lru_cache(maxsize=4)
def _read_cached(source: str, split: str, stamp: tuple[Any, ...]) -> ProItems:
    read = read_mmau_pro(source, split=split)
    logger.warning(describe_selection(source, read))  # once per file and command
    return read


def _read(metadata: dict[str, Any]) -> ProItems:
    source = _source(metadata)
    path = Path(source)
    stamp = kit.file_stamp(path) if path.is_file() else (source,)
    return _read_cached(source, str(metadata.get("mmau_pro_split", "test")), stamp)


def _track(path: str) -> str:
    """``data/<uuid>`` for ``data/<uuid>.wav``: the clip's path in the audio folder without
    its extension (the audio layouts try every extension)."""
    while path.startswith("./"):
        path = path[2:]
    return path.rsplit(".", 1)[0] if "." in Path(path).name else path


def _attach_clips(docs: list[dict[str, Any]], read: ProItems, audio_dir: str) -> None:
    """Each document's clips (:data:`~lm_eval_rul.audio.clips.CLIPS_FIELD`), resolved in
    ``audio_dir``, the ``random`` pool being every clip of the release's music items."""
    questions, parts = [], []
    for item in read.items:
        base = as_question(item)
        for index, path in enumerate(read.clips[item.id]):
            questions.append(replace(base, id=part_id(item.id, index), track=_track(path)))
            parts.append({"id": part_id(item.id, index), "audio_clip": path})
    kit.attach_audio(parts, questions, {"audio_dir": audio_dir})
    by_part = {p["id"]: p for p in parts}
    for doc in docs:
        clips = [by_part[part_id(doc["id"], i)] for i in range(len(read.clips[doc["id"]]))]
        for field in ("audio_ref", "audio_track", "audio_tried", "audio_pool"):
            doc[field] = clips[0][field]  # one-clip readers find the first clip
        doc[CLIPS_FIELD] = json.dumps(clips)


def load_mmau_pro(**metadata: Any) -> dict[str, Any]:
    """``custom_dataset`` of ``mmau_pro_music`` and ``mmau_pro_music_gen``."""
    protocol = _protocol(metadata)
    parser = _parser(protocol, metadata)
    embedder = _embedder(protocol, metadata)
    read = _read(metadata)
    docs = layout_docs(
        read.items, MMAU_PRO, protocol=_DOC_PROTOCOL[protocol], seed=kit.shuffle_seed(metadata)
    )
    for doc in docs:
        doc["mmau_pro_protocol"] = protocol
        doc["embedder"] = embedder if protocol == "official" else ""
        doc["clips"] = list(read.clips[doc["id"]])
    if metadata.get("mmau_pro_audio_dir"):
        audio_dir = Path(os.path.expanduser(str(metadata["mmau_pro_audio_dir"])))
        if not audio_dir.is_dir():
            raise kit.TaskMetadataError(
                f"--metadata mmau_pro_audio_dir={str(audio_dir)!r}: no such folder; give the "
                "folder holding MMAU-Pro's data/ (its data.zip unpacked)"
            )
        _attach_clips(docs, read, str(audio_dir))
    return kit.as_dataset(docs, parser)


def load_mmau_pro_gen(**metadata: Any) -> dict[str, Any]:
    """``custom_dataset`` of ``mmau_pro_music_gen``: under ``official``, its embedder must be
    on this machine (a folder, or in the Hugging Face cache), said now rather than after the
    model has answered every question."""
    from ...hub import checkpoint_config

    protocol = _protocol(metadata)
    embedder = _embedder(protocol, metadata)
    if protocol == "official" and checkpoint_config(embedder) is None:
        raise kit.TaskMetadataError(
            f"--metadata mmau_pro_embedder={embedder!r} (mmau_pro_protocol=official scores "
            "mmau_pro_music_gen with it) is neither a saved checkpoint folder nor in your "
            f"Hugging Face cache: download it first (huggingface-cli download {embedder}) or "
            "name a local checkpoint"
        )
    return load_mmau_pro(**metadata)


def check_mmau_pro_data(metadata: dict[str, Any]) -> None:
    """Read and check, now, what ``metadata`` names (the descriptor's check, before any
    model loads)."""
    _embedder(_protocol(metadata), metadata)
    if metadata.get("mmau_pro_data"):
        _read(metadata)


def official_prompt(question: str, options: list[str]) -> str:
    """The prompt of ``mmau_pro_music_gen`` under ``official``: NeMo-Skills' MMAU-Pro
    closed-form prompt (``mmau-pro/prepare.py``: the question, a blank line, ``A. choice``
    lines); the authors publish no other.

    >>> official_prompt("Tempo?", ["Slow", "Fast"])
    'Tempo?\\n\\nA. Slow\\nB. Fast'
    """
    lines = "\n".join(f"{x}. {o}" for x, o in zip(letters_for(len(options)), options, strict=True))
    return f"{question}\n\n{lines}"


def doc_to_text_gen(doc: dict[str, Any]) -> str:
    """The generation prompt of the document's protocol."""
    if doc["mmau_pro_protocol"] == "official":
        return official_prompt(doc["question"], doc["options"])
    return gen_prompt(doc["question"], doc["options"])


def process_results_gen(doc: dict[str, Any], results: list[str]) -> dict[str, float]:
    """``acc`` and ``parse_failure`` of one free-text answer.

    ``official``: the choice most similar to the answer (:func:`.matched_choice`) must be
    the released answer; ``parse_failure`` counts the empty answers (matched all the same,
    as the authors' script matches them). ``ours``: the letter read by the document's parser
    must show the answer; an unread answer is wrong and a ``parse_failure``, never a guess.
    """
    doc.update(heard_fields(doc))
    response = results[0]
    if doc["mmau_pro_protocol"] == "official":
        index, score = matched_choice(doc["embedder"], response, doc["choices"])
        doc["matched_choice"] = doc["choices"][index]
        doc["match_score"] = score
        return {
            "acc": float(doc["choices"][index] == doc["answer"]),
            "parse_failure": float(not response.strip()),
        }
    parsed, index = parse_with(
        doc["parser"] or DEFAULT_PARSER, response, doc["options"], doc["letters"]
    )
    doc["parsed_letter"] = parsed.letter
    doc["parse_rule"] = parsed.rule
    correct = index is not None and doc["options"][index] == doc["answer"]
    return {"acc": float(correct), "parse_failure": float(index is None)}
