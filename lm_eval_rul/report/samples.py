"""The harness's per-sample logs (``samples_<task>_*.jsonl``) read as per-question records.

Each logged sample of this plugin's multiple-choice tasks becomes a :class:`Sample`: the
question, the fold, whether it was right and which option text the model chose
(:func:`sample_answer`: the highest letter log-likelihood, or the letter parsed from a
generation, read with the parser the document names). :func:`majority_from_samples` turns
the four folds' samples into the fold votes that ``lm-eval-rul run`` adds to the fold
groups: ``majority_acc`` (ours, strict) and ``plurality_acc_release`` (the authors').
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import UserInputError
from ..harness_compat import sample_responses
from ..mcqa.reference_parsing import DEFAULT_PARSER, parse_with
from ..mcqa.voting import majority_from_answers, plurality_from_answers
from .run_keys import item_digest

__all__ = [
    "RunReadError",
    "Sample",
    "read_samples",
    "read_rows",
    "iter_rows",
    "sample_from_row",
    "sample_answer",
    "majority_from_samples",
]


#: Document fields read as breakdown labels when a document names none in its
#: ``breakdown_fields`` (MMAU's; MMAR's documents name ``category``, ``sub_category``).
BREAKDOWN_FIELDS: tuple[str, ...] = ("sub_category", "difficulty")


class RunReadError(UserInputError, ValueError):
    """A run folder or file that cannot be read as harness output."""


@dataclass(frozen=True)
class Sample:
    """One logged (question, fold) of one task.

    Attributes:
        id: Question id.
        fold: Fold (-1 for the single-fold ``muchomusic``).
        correct: The sample's ``acc`` (1.0 or 0.0).
        correct_answer: Text of the correct option.
        answer: Text of the option the model chose (None: unparsed or not logged).
        n_options: Options shown (chance is ``1 / n_options``).
        pi: The sample's ``perceptual_index`` metric (multiple choice only).
        source_pi: The PI stored in the dataset (``source_pi`` of the doc), if any.
        track: The question's audio track, if the doc has one.
        parse_failure: The sample's ``parse_failure`` (generation tasks only;
            ``unanswered_rate`` for ``muchomusic_official``).
        digest: :func:`~.run_keys.item_digest` of the question's content (None: unknown).
        labels: (dimension, label) pairs the document carries for breakdowns (MMAU's
            ``sub_category`` and ``difficulty``).
        answer_letters: The letters showing the correct answer (several when a choice is
            repeated), for the always-the-same-letter baseline.
        order: How the options were ordered: the doc's ``protocol`` (MMAU), else ``seeded``.
    """

    id: str
    fold: int
    correct: float
    correct_answer: str | None
    answer: str | None
    n_options: int
    pi: float | None = None
    source_pi: float | None = None
    track: str | None = None
    parse_failure: float | None = None
    digest: str | None = None
    labels: tuple[tuple[str, str], ...] = ()
    answer_letters: tuple[str, ...] = ()
    order: str = "seeded"

    @property
    def key(self) -> tuple[str, int]:
        return (self.id, self.fold)



def sample_answer(sample: Mapping[str, Any]) -> str | None:
    """The option text a logged harness sample (``--log_samples``) chose.

    Generation samples (one generated string) are read with the parser the document
    names (``doc["parser"]``, :data:`lm_eval_rul.mcqa.reference_parsing.PARSERS`; the
    default parser when absent), or are the ``matched_choice`` logged when they were scored
    (MMAU-Pro's embedding match, :mod:`lm_eval_rul.mcqa.mmau.embedding_match`);
    multiple-choice samples (one log-likelihood per letter)
    choose the highest one. ``None`` when no offered option was chosen, or when no letter
    has a finite log-likelihood (``lalm-api``'s top-k path found none).
    """
    doc = sample["doc"]
    options, letters = list(doc["options"]), list(doc["letters"])
    responses = sample_responses(sample)  # 0.4.13's shape on either harness
    if len(responses) == 1 and isinstance(responses[0], str):
        if doc.get("matched_choice") is not None:  # matched by embeddings when scored
            return str(doc["matched_choice"])  # (MMAU-Pro's official rule): not re-run here
        parser = doc.get("parser") or DEFAULT_PARSER
        _, index = parse_with(parser, responses[0], options, letters)
        return None if index is None else options[index]
    if len(responses) != len(options):
        raise ValueError(
            f"sample of item {doc.get('id')!r}: {len(responses)} responses for "
            f"{len(options)} options; expected one generation or one log-likelihood per option"
        )
    logliks = [float(r[0] if isinstance(r, (list, tuple)) else r) for r in responses]
    if not np.isfinite(logliks).any():  # no letter got any probability: no answer
        return None
    return options[int(np.argmax(logliks))]


def majority_from_samples(fold_samples: Iterable[Sequence[Mapping[str, Any]]]) -> dict[str, Any]:
    """Both fold votes from the harness's logged samples (:mod:`lm_eval_rul.mcqa.voting`).

    Args:
        fold_samples: For each fold task, its logged samples (``results["samples"][task]``
            or the rows of its ``samples_*.jsonl`` file).

    Returns:
        ``{"majority_acc": float, "plurality_acc_release": float, "n_items": int,
        "n_folds": int}``: our strict majority
        (:func:`~lm_eval_rul.mcqa.voting.majority_from_answers`) and the authors'
        plurality, ties to the earliest fold (by the documents' ``fold``)
        (:func:`~lm_eval_rul.mcqa.voting.plurality_from_answers`); items missing from
        some folds vote with the folds they have.
    """
    rows: list[tuple[str, int, str | None, str]] = []
    n_folds = 0
    for samples in fold_samples:
        n_folds += 1
        for sample in samples:
            doc = sample["doc"]
            rows.append(
                (
                    str(doc["id"]),
                    int(doc.get("fold", -1)),
                    sample_answer(sample),
                    str(doc["correct_answer"]),
                )
            )
    vote = majority_from_answers((item, answer, right) for item, _, answer, right in rows)
    plurality = plurality_from_answers(rows)
    return {
        "majority_acc": vote["majority_acc"],
        "plurality_acc_release": plurality["plurality_acc_release"],
        "n_items": vote["n_items"],
        "n_folds": n_folds,
    }


def _float_or_none(value: Any) -> float | None:
    if value is None or value == "":
        return None
    result = float(value)
    return None if math.isnan(result) else result


def _answer(row: dict[str, Any], where: str) -> str | None:
    """The option text the sample chose (None: an unparsed generation)."""
    try:
        return sample_answer(row)
    except (KeyError, TypeError, ValueError, IndexError) as error:
        raise RunReadError(
            f"{where}: cannot read the chosen option of item {row['doc'].get('id')!r} "
            f"({type(error).__name__}: {error}); the report reads samples logged by this "
            "plugin's tasks, whose documents carry 'options' and 'letters'"
        ) from None



def sample_from_row(row: dict[str, Any], where: str) -> Sample:
    """The :class:`Sample` of one logged multiple-choice sample (``where`` names it in errors)."""
    doc = row.get("doc") or {}
    missing = [k for k in ("id", "options") if k not in doc]
    if missing or "acc" not in row:
        raise RunReadError(
            f"{where}: logged sample doc_id={row.get('doc_id')} lacks "
            f"{missing + ([] if 'acc' in row else ['acc'])}; the report reads the documents of "
            "this plugin's tasks (muchomusic, rul_muchomusic, their _gen variants)"
        )
    try:
        options = list(doc["options"])
        gold = doc.get("gold")
        correct_answer = doc.get("correct_answer")
        if correct_answer is None and gold is not None and 0 <= int(gold) < len(options):
            correct_answer = options[int(gold)]
        track = doc.get("track")
        sample = Sample(
            id=str(doc["id"]),
            fold=int(doc["fold"]) if doc.get("fold") is not None else -1,
            correct=float(row["acc"]),
            correct_answer=correct_answer,
            answer=_answer(row, where),
            n_options=len(options),
            pi=_float_or_none(row.get("perceptual_index")),
            source_pi=_float_or_none(doc.get("source_pi")),
            track=None if track in (None, "") else str(track),
            parse_failure=_float_or_none(row.get("parse_failure", row.get("unanswered_rate"))),
            digest=item_digest(doc),
            labels=tuple(
                (dim, str(doc[dim]))
                for dim in doc.get("breakdown_fields") or BREAKDOWN_FIELDS
                if doc.get(dim) not in (None, "")
            ),
            answer_letters=tuple(
                letter
                for letter, option in zip(doc.get("letters") or (), options, strict=False)
                if option == correct_answer
            ),
            order=str(doc.get("protocol") or "seeded"),
        )
    except RunReadError:
        raise
    except (TypeError, ValueError) as error:
        raise RunReadError(
            f"{where}: logged sample of item {doc.get('id')!r} has a malformed value "
            f"({type(error).__name__}: {error}); was the file edited? rerun with --log_samples"
        ) from None
    if not 0.0 <= sample.correct <= 1.0 or not options:
        raise RunReadError(
            f"{where}: logged sample of item {sample.id!r} has acc={row['acc']!r} and "
            f"{len(options)} options; expected acc in [0, 1] and at least one option"
        )
    return sample


def iter_rows(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(where, row)`` of each logged sample of a ``samples_*.jsonl`` as it is read
    (where = file:line), so that a caller keeping less than the row holds one at a time.

    Raises:
        RunReadError: A line is not JSON.
    """
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield f"{path}:{number}", json.loads(line)
            except json.JSONDecodeError as error:
                raise RunReadError(f"{path}:{number}: not JSON ({error.msg})") from None


def read_rows(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """``(where, row)`` of every logged sample of a ``samples_*.jsonl`` (where = file:line).

    Raises:
        RunReadError: A line is not JSON.
    """
    return list(iter_rows(path))


def read_samples(path: Path) -> list[Sample]:
    return [sample_from_row(row, where) for where, row in read_rows(path)]
