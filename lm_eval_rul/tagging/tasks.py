"""The tagging task functions the YAMLs point to (via ``tasks/<folder>/utils.py``).

* :func:`load_tagging` (``custom_dataset``): one document per clip (:mod:`.documents`);
* letters (``gtzan``): the package's letter scoring
  (:func:`~lm_eval_rul.mcqa.tasks.process_results`);
* likelihoods: :class:`TagLikelihoodTask` (the YAML's ``class``) makes two loglikelihood
  requests per tag (" yes" and " no" after the per-tag question), every context starting
  with the clip's audio, so an audio model encodes each clip once and scores every tag from
  that prefix; :func:`process_results_likelihood` turns them into the clip's record;
* free text: :func:`process_results_gen` (a tag set), :func:`process_results_genre`
  (exactly one label of the task's vocabulary: a GTZAN genre, an NSynth family or source, a
  Medley-solos-DB instrument; else wrong and unparsed);
* :data:`AGGREGATIONS`: the harness aggregation of each figure over all clip records.
"""

from __future__ import annotations

import copy
import logging
import math
from collections.abc import Mapping, Sequence
from typing import Any

from ..audio.requests import heard_fields
from .documents import make_documents
from .parsing import read_one, read_tags
from .prompts import TAG_SLOT
from .records import (
    GEN_FIGURES,
    LIKELIHOOD_FIGURES,
    gen_figures,
    likelihood_figures,
    likelihood_record,
)

__all__ = [
    "load_tagging",
    "doc_to_text",
    "doc_to_letters",
    "doc_to_yes_no",
    "process_results_likelihood",
    "process_results_gen",
    "process_results_genre",
    "TagLikelihoodTask",
    "TagAggregation",
    "AGGREGATIONS",
    "ANSWERS",
]

logger = logging.getLogger(__name__)

#: The two continuations scored per tag (after the harness's ``target_delimiter``).
ANSWERS: tuple[str, str] = ("yes", "no")


def load_tagging(tagging_task: str, form: str, **metadata: Any) -> dict[str, Any]:
    """``custom_dataset`` of a tagging task (``dataset_kwargs``: ``tagging_task``, ``form``)."""
    import datasets

    docs = make_documents(tagging_task, form, metadata)
    heard = sum(d["audio_ref"] is not None for d in docs)
    logger.info(
        "%s (%s): %d clips, %d tags, %d with audio; window %s s from %s",
        tagging_task,
        form,
        len(docs),
        len(docs[0]["tags"]) if docs else 0,
        heard,
        docs[0]["audio_window"] if docs else "-",
        docs[0]["tagging_offset"] if docs else "-",
    )
    return {"test": datasets.Dataset.from_list(docs)}


def doc_to_text(doc: Mapping[str, Any]) -> str:
    """The document's prompt (for likelihood tasks with the tag slot)."""
    return str(doc["prompt"])


def doc_to_letters(doc: Mapping[str, Any]) -> list[str]:
    """``gtzan``'s option letters."""
    return list(doc["letters"])


def doc_to_yes_no(doc: Mapping[str, Any]) -> list[str]:
    """The two answers of every tag question."""
    return list(ANSWERS)


def process_results_likelihood(doc: dict[str, Any], results: Sequence[Any]) -> dict[str, Any]:
    """The clip record (:func:`~.records.likelihood_record`), the value of every figure."""
    doc.update(heard_fields(doc))
    record = likelihood_record(doc, [tuple(r) for r in results])
    return dict.fromkeys(LIKELIHOOD_FIGURES, record)


def process_results_gen(doc: dict[str, Any], results: Sequence[str]) -> dict[str, Any]:
    """The clip record of a free-text tag answer; the reading is logged as ``parsed``."""
    doc.update(heard_fields(doc))
    reading = read_tags(str(results[0]), str(doc["tagging_task"]), doc["tags"])
    doc["parsed"] = reading.to_log()
    record = {
        "id": str(doc["id"]),
        "task": str(doc["tagging_task"]),
        "gold": list(doc["gold_tags"]),
        "labels": list(reading.tags),
        "unparsed": reading.unparsed,
    }
    return dict.fromkeys(GEN_FIGURES, record)


def process_results_genre(doc: dict[str, Any], results: Sequence[str]) -> dict[str, float]:
    """``acc`` and ``parse_failure`` of a free-text single-label answer (exactly one label of
    the task's vocabulary: GTZAN's genres, NSynth's families or sources, Medley's instruments)."""
    doc.update(heard_fields(doc))
    reading = read_one(str(results[0]), str(doc["tagging_task"]), doc["tags"])
    doc["parsed"] = reading.to_log()
    right = not reading.unparsed and reading.tags[0] == doc["gold_tags"][0]
    return {"acc": float(right), "parse_failure": float(reading.unparsed)}


def _per_tag(task: Any, original: Any) -> Any:
    def construct_requests(doc: dict[str, Any], ctx: Any, **kwargs: Any) -> list[Any]:
        made = original(doc, ctx, **kwargs)
        made = made if isinstance(made, list) else [made]
        out = []
        for t, text in enumerate(doc["tag_texts"]):
            for j, instance in enumerate(made):
                context, *rest = instance.arguments
                if TAG_SLOT not in context:
                    raise ValueError(
                        f"{task.config.task}: the prompt has no {TAG_SLOT} slot for the tag"
                    )
                one = copy.copy(instance)
                one.arguments = (context.replace(TAG_SLOT, text), *rest)
                one.idx = 2 * t + j
                one.resps, one.filtered_resps = [], {}  # its own, not the copied instance's
                out.append(one)
        return out

    return construct_requests


class TagLikelihoodTask:
    """The harness task of a likelihood YAML (its ``class``): building one returns the
    harness's own multiple-choice task (answers :data:`ANSWERS`) whose requests are
    repeated for every tag, the tag written into the prompt's slot (lm-eval 0.4 and 0.5)."""

    def __new__(cls, config: dict[str, Any]) -> Any:  # noqa: D102 - the harness's task
        return _likelihood_task(config)

    def __init__(self, config: dict[str, Any]) -> None:  # the harness reads this signature
        self.config = config


def _likelihood_task(config: dict[str, Any]) -> Any:
    from lm_eval.api import task as harness_task

    config = {k: v for k, v in config.items() if k != "class"}
    from_config = getattr(harness_task.Task, "from_config", None)  # lm-eval 0.5
    made = from_config(config) if from_config else harness_task.ConfigurableTask(config=config)
    made.construct_requests = _per_tag(made, made.construct_requests)
    return made


class TagAggregation:
    """The harness aggregation of one tagging figure: clip records -> the figure.

    Args:
        name: A figure of :data:`~.records.LIKELIHOOD_FIGURES` or :data:`~.records.GEN_FIGURES`.
        form: ``likelihood`` or ``gen``.
    """

    def __init__(self, name: str, form: str) -> None:
        self.name, self.form = name, form
        self.__name__ = f"tagging_{form}_{name}"

    def __call__(self, records: Sequence[Mapping[str, Any]]) -> float:
        if self.form == "likelihood" and len({r["id"] for r in records}) < len(records):
            # a resample of the harness's bootstrap (lm-eval 0.5 bootstraps every
            # aggregation): the ranking figures' intervals over clips are the report's,
            # so a resample is not scored (NaN) rather than costing a ranking per draw
            return math.nan
        figures = likelihood_figures(records) if self.form == "likelihood" else gen_figures(records)
        return float(figures[self.name])

    def __repr__(self) -> str:  # what the results JSON records as the aggregation
        return f"lm_eval_rul.tagging.tasks.TagAggregation({self.name!r}, {self.form!r})"


#: ``"<form>_<figure>"`` -> its harness aggregation.
AGGREGATIONS: dict[str, TagAggregation] = {
    **{f"likelihood_{n}": TagAggregation(n, "likelihood") for n in LIKELIHOOD_FIGURES},
    **{f"gen_{n}": TagAggregation(n, "gen") for n in GEN_FIGURES},
}
