"""MMAU-layout items (MMAU, MMAR) as harness documents, under one protocol's option order.

Built by the same :func:`lm_eval_rul.mcqa.folds.make_docs` as the MuChoMusic documents
(option order seeded from (``shuffle_seed``, the layout's name, item id), whatever the data
order or ``--limit``); the ``official`` and ``lmms`` protocols then show the choices in the
release's order. Each document also carries the item's released fields (``sub_category``,
``difficulty``, ``category``, ``{layout}_{subset field}`` such as ``mmau_task`` or
``mmar_modality``, ``choices``, ``answer``, ``audio_id``, ``layout``, ``breakdown_fields``,
and as JSON ``release_extra`` and ``release_layout``), read by the breakdowns, the
always-letter baselines and the predictions file. Items have 2 to 26 options: letters and
PI follow each item's count.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ...questions.layout import Layout, LayoutItem
from ...questions.layout_questions import as_question
from ..folds import make_docs
from ..prompts import letters_for

__all__ = [
    "PROTOCOLS",
    "DEFAULT_PROTOCOL",
    "layout_docs",
    "subset_key",
    "answer_indices",
]

#: ``--metadata {layout}_protocol`` values: ours, the authors' scorer, lmms-eval's task.
PROTOCOLS: tuple[str, ...] = ("rul", "official", "lmms")
DEFAULT_PROTOCOL = "rul"


def subset_key(layout: Layout) -> str:
    """The document key of the layout's subset field (``mmau_task``, ``mmar_modality``)."""
    return f"{layout.name}_{layout.subset_field}"


def answer_indices(options: Sequence[str], answer: str | None) -> list[int]:
    """Every shown position of the answer (the release repeats a few choices)."""
    return [] if answer is None else [i for i, o in enumerate(options) if o == answer]


def _released_fields(item: LayoutItem, layout: Layout, protocol: str) -> dict[str, Any]:
    return {
        "protocol": protocol,
        "layout": layout.name,
        subset_key(layout): item.task,
        "sub_category": item.sub_category,
        "difficulty": item.difficulty,
        "category": item.category,
        "split": item.split,
        "audio_id": item.audio_id,
        "choices": list(item.choices),
        "answer": item.answer,
        "release_extra": json.dumps(dict(item.extra)),
        "release_layout": json.dumps(layout.release_keys()),  # JSON: Arrow needs one shape
        "breakdown_fields": list(layout.breakdowns),
    }


def layout_docs(
    items: Sequence[LayoutItem], layout: Layout, *, protocol: str, seed: int
) -> list[dict[str, Any]]:
    """One document per item, in the seeded sample order ``--limit`` takes from
    (:func:`~lm_eval_rul.mcqa.folds.make_docs`); ``release_position`` keeps the item's place
    in the file, for the predictions file.

    An unanswered item gets ``gold`` -1, ``gold_letter`` "" and ``correct_answer`` None.
    """
    questions = [as_question(item) for item in items]
    docs = make_docs(questions, benchmark=layout.name, fold=None, seed=seed)
    # make_docs lists the documents in the seeded sample order, not the items' order
    by_id = {item.id: (position, item) for position, item in enumerate(items)}
    for doc in docs:
        position, item = by_id[doc["id"]]
        doc["release_position"] = position
        if protocol != "rul":
            doc["options"] = list(item.choices)
            doc["letters"] = list(letters_for(len(item.choices)))
            doc["gold"] = item.gold if item.gold is not None else -1
        elif item.answer is None:  # shuffled all the same; the first choice is no answer
            doc["gold"] = -1
        doc["gold_letter"] = doc["letters"][doc["gold"]] if doc["gold"] >= 0 else ""
        doc["correct_answer"] = item.answer
        doc.update(_released_fields(item, layout, protocol))
    return docs
