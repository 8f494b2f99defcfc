"""Per-clip records of a tagging run and the figures they add up to.

A tagging task's metric value per document is its **clip record** (kept in the sample
log), and the harness's aggregation functions score all clips at once:

* likelihood tasks: ``{"id", "task", "tags", "gold", "scores", "predicted", "unscored"}``,
  ``scores`` one per tag (:func:`tag_score`), ``predicted`` the tags scored above 0 (yes
  more likely than no), ``unscored`` the tags no score could be formed for; figures
  ``roc_auc``, ``pr_auc``, ``micro_f1`` (:func:`likelihood_figures`);
* free-text tasks: ``{"id", "task", "gold", "labels", "unparsed"}``; figures
  ``micro_f1``, ``micro_precision``, ``micro_recall``, ``samples_f1`` and
  ``parse_failure`` (:func:`gen_figures`; an unparsed answer is an empty prediction).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from .metrics import macro_auc, set_scores

__all__ = [
    "LIKELIHOOD_FIGURES",
    "GEN_FIGURES",
    "tag_score",
    "likelihood_record",
    "likelihood_figures",
    "gen_figures",
    "score_matrix",
]

LIKELIHOOD_FIGURES: tuple[str, ...] = ("roc_auc", "pr_auc", "micro_f1")
GEN_FIGURES: tuple[str, ...] = (
    "micro_f1",
    "micro_precision",
    "micro_recall",
    "samples_f1",
    "parse_failure",
)


def tag_score(loglik_yes: float, loglik_no: float) -> float:
    """A tag's score on a clip: ``log p(yes) − log p(no)`` (the log-odds of yes between
    the two answers; above 0: the tag is predicted). An answer a served model's top tokens
    leave out has ``log p = -inf``: the score is then ``±inf`` (the other answer is the
    likelier), and NaN when both are left out (no score can be formed: counted, see
    :func:`likelihood_record`).

    >>> tag_score(-0.5, -1.5), tag_score(-0.5, float("-inf"))
    (1.0, inf)
    """
    yes, no = float(loglik_yes), float(loglik_no)
    if math.isinf(yes) and math.isinf(no) and yes == no:
        return math.nan  # -inf - -inf: neither answer was scored
    return yes - no


def likelihood_record(doc: Mapping[str, Any], results: Sequence[Sequence[float]]) -> dict[str, Any]:
    """The clip record of one document from its ``2 × tags`` results (yes, no per tag)."""
    tags = list(doc["tags"])
    if len(results) != 2 * len(tags):
        raise ValueError(
            f"clip {doc.get('id')!r}: {len(results)} results for {len(tags)} tags (2 per tag)"
        )
    scores = [tag_score(results[2 * i][0], results[2 * i + 1][0]) for i in range(len(tags))]
    # a tag with no score (neither answer among a served model's top tokens) is listed
    # in ``unscored``, scored 0 (no evidence either way) and not predicted
    unscored = [t for t, s in zip(tags, scores, strict=True) if math.isnan(s)]
    scores = [0.0 if math.isnan(s) else s for s in scores]
    return {
        "id": str(doc["id"]),
        "task": str(doc["tagging_task"]),
        "tags": tags,
        "gold": list(doc["gold_tags"]),
        "scores": scores,
        "predicted": [t for t, s in zip(tags, scores, strict=True) if s > 0],
        "unscored": unscored,
    }


def score_matrix(records: Sequence[Mapping[str, Any]]) -> tuple[list[str], np.ndarray, list]:
    """(tags, clips × tags scores, each clip's gold) of likelihood records.

    Raises:
        ValueError: Records of different vocabularies.
    """
    tags = list(records[0]["tags"])
    if any(list(r["tags"]) != tags for r in records):
        raise ValueError("tagging records of different vocabularies cannot be scored together")
    return tags, np.array([r["scores"] for r in records], dtype=float), [r["gold"] for r in records]


def likelihood_figures(records: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """``roc_auc``, ``pr_auc`` (macro over the tags with both classes) and ``micro_f1``."""
    records = list(records)
    if not records:
        return dict.fromkeys(LIKELIHOOD_FIGURES, math.nan)
    tags, matrix, gold = score_matrix(records)
    auc = macro_auc(tags, matrix, gold)
    sets = set_scores([r["predicted"] for r in records], gold)
    return {"roc_auc": auc.roc_auc, "pr_auc": auc.pr_auc, "micro_f1": sets.micro_f1}


def gen_figures(records: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """The free-text figures of :data:`GEN_FIGURES`."""
    records = list(records)
    if not records:
        return dict.fromkeys(GEN_FIGURES, math.nan)
    sets = set_scores([r["labels"] for r in records], [r["gold"] for r in records])
    return {
        "micro_f1": sets.micro_f1,
        "micro_precision": sets.micro_precision,
        "micro_recall": sets.micro_recall,
        "samples_f1": sets.samples_f1,
        "parse_failure": float(np.mean([bool(r["unparsed"]) for r in records])),
    }
