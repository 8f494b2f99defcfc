"""True/false per label: every label of a task's vocabulary asked about, one at a time.

Asked label by label, models tend to say "true" to almost everything; accuracy over
(item, label) pairs hides this behind the many negative pairs, so the precision and
recall of the "true" answers and the share of pairs answered "true" are reported beside
it. Our decisions:

* **vocabulary**: the task's candidate labels, the ones its list prompt enumerates
  (genre: every FMA title);
* **gold**: a label is true for an item when it is one of the item's gold labels, and for
  genre also when it is an ancestor of one in the FMA tree (a Punk track is a Rock track);
* **reading a generated answer** (:func:`~lm_eval_rul.factual.reading.answers.read_truefalse`):
  the verdict ("true", "false", "correct", "incorrect"; "not true" reads false) outside
  an echo of "true or false", a question, or a polite phrase ("No problem!", "no doubt"),
  else the first answer word ("yes", "nope", "absolutely", "definitely not"...); none,
  or "yes and no": unreadable (never guessed);
* **windows** (recordings longer than the model's window): *inclusive*, true when any
  window says true; *majority*, true when more than half of the windows with a readable
  answer say true. Both are reported. A pair without any readable window is unanswered:
  wrong under both, counted in ``parse_failure``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..items import id_order
from .answers import read_truefalse
from .genres import GenreTree

__all__ = [
    "TRUEFALSE_RULES",
    "TRUEFALSE_FIGURES",
    "gold_true_labels",
    "read_truefalse_answer",
    "aggregate_answers",
    "LabelAnswer",
    "label_answers",
    "truefalse_figures",
]

#: How the windows' answers of one (item, label) pair are combined.
TRUEFALSE_RULES: tuple[str, ...] = ("inclusive", "majority")
#: Figures over (item, label) pairs, as the harness names them.
TRUEFALSE_FIGURES: tuple[str, ...] = (
    *(
        f"{figure}_{rule}"
        for figure in ("acc", "precision", "recall", "true_share")
        for rule in TRUEFALSE_RULES
    ),
    "base_rate",
    "parse_failure",
)



def gold_true_labels(gold: Iterable[str], tree: GenreTree | None = None) -> frozenset[str]:
    """The labels a true/false question should be answered "true" for.

    Examples
    --------
    >>> tree = GenreTree({12: "Rock", 25: "Punk", 89: "Post-Punk"}, {12: 0, 25: 12, 89: 25}, {})
    >>> sorted(gold_true_labels(["Post-Punk"], tree))
    ['Post-Punk', 'Punk', 'Rock']
    """
    out = set(gold)
    if tree is not None:
        for title in list(out):
            if title not in tree.titles.values():
                continue
            genre_id = tree.id_of(title)
            while tree.parents.get(genre_id, 0) != 0:
                genre_id = tree.parents[genre_id]
                out.add(tree.titles[genre_id])
    return frozenset(out)


def read_truefalse_answer(answer: str) -> bool | None:
    """True, False, or None when the answer says neither.

    Examples
    --------
    >>> read_truefalse_answer("True or false: ... False, there is no piano.")
    False
    >>> read_truefalse_answer("That is not true."), read_truefalse_answer("Yes.")
    (False, True)
    >>> read_truefalse_answer("I cannot tell.") is None
    True
    """
    value = read_truefalse(str(answer)).value
    return None if value is None else bool(value)


def aggregate_answers(answers: Sequence[bool | None], rule: str) -> bool | None:
    """One pair's answer from its windows' answers (None: no readable window).

    Examples
    --------
    >>> aggregate_answers([False, True, None], "inclusive")
    True
    >>> aggregate_answers([False, True, None], "majority")
    False
    >>> aggregate_answers([True, True, False], "majority")
    True
    """
    if rule not in TRUEFALSE_RULES:
        raise ValueError(f"rule must be one of {', '.join(TRUEFALSE_RULES)}, got {rule!r}")
    read = [a for a in answers if a is not None]
    if not read:
        return None
    if rule == "inclusive":
        return any(read)
    return 2 * sum(read) > len(read)


@dataclass(frozen=True)
class LabelAnswer:
    """The answers about one label of one item.

    Attributes:
        id: Item id.
        task: Task key.
        label: The label asked about.
        gold: Whether the label is true for the item (:func:`gold_true_labels`).
        per_chunk: Each answered window's answer (None: unreadable), in window order.
        n_chunks: Windows the recording has.
    """

    id: str
    task: str
    label: str
    gold: bool
    per_chunk: tuple[bool | None, ...]
    n_chunks: int

    def answer(self, rule: str) -> bool | None:
        return aggregate_answers(self.per_chunk, rule)


def label_answers(records: Iterable[Mapping[str, Any]]) -> list[LabelAnswer]:
    """Group true/false window records by (item, label), in item then record order.

    Raises:
        ValueError: A record lacks a field, or the windows of a pair disagree on its gold.
    """
    by_pair: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for record in records:
        try:
            by_pair.setdefault((str(record["id"]), str(record["label"])), []).append(record)
        except (KeyError, TypeError):
            raise ValueError(f"not a true/false record (no 'id'/'label'): {record!r}") from None
    out = []
    for (item_id, label), chunks in sorted(by_pair.items(), key=lambda kv: id_order(kv[0][0])):
        chunks = sorted(chunks, key=lambda r: int(r["chunk"]))
        if len({bool(r["gold"]) for r in chunks}) > 1:
            raise ValueError(f"item {item_id}, label {label!r}: its windows disagree on the gold")
        out.append(
            LabelAnswer(
                id=item_id,
                task=str(chunks[0]["task"]),
                label=label,
                gold=bool(chunks[0]["gold"]),
                per_chunk=tuple(None if r["answer"] is None else bool(r["answer"]) for r in chunks),
                n_chunks=int(chunks[0]["n_chunks"]),
            )
        )
    return out


def _ratio(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator else math.nan


def truefalse_figures(pairs: Sequence[LabelAnswer]) -> dict[str, float]:
    """The :data:`TRUEFALSE_FIGURES` over (item, label) pairs.

    Per rule: ``acc`` (unanswered pairs are wrong), ``precision`` and ``recall`` of the
    "true" answers (precision NaN when nothing was answered "true"), ``true_share`` (share
    of all pairs answered "true"); ``base_rate`` is the share of gold-true pairs (the
    accuracy of always answering "true"), ``parse_failure`` the share of unanswered pairs.

    Raises:
        ValueError: No pairs.
    """
    if not pairs:
        raise ValueError("no (item, label) pairs to score")
    n = len(pairs)
    out: dict[str, float] = {}
    for rule in TRUEFALSE_RULES:
        answers = [(p.answer(rule), p.gold) for p in pairs]
        said_true = sum(a is True for a, _ in answers)
        hits = sum(a is True and g for a, g in answers)
        out[f"acc_{rule}"] = sum(a is not None and a == g for a, g in answers) / n
        out[f"precision_{rule}"] = _ratio(hits, said_true)
        out[f"recall_{rule}"] = _ratio(hits, sum(g for _, g in answers))
        out[f"true_share_{rule}"] = said_true / n
    out["base_rate"] = sum(p.gold for p in pairs) / n
    out["parse_failure"] = sum(p.answer("inclusive") is None for p in pairs) / n
    return {name: out[name] for name in TRUEFALSE_FIGURES}
