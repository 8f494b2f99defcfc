"""Binary choice: "Between A and B, ..." with one gold label and one distractor.

A forced choice between a right and a wrong label strips the answer of every way out
(no list to copy, no "it could be anything"); chance is 0.5. Our decisions:

* **the pair**: one of the item's gold labels and one candidate label outside its gold
  set, each drawn with a seed from (seed, task, item id), so the pair does not depend on
  the sample or the order of the files. For genre the distractor also comes from a root
  none of the gold genres belong to (it is wrong under same-tree too); when no such
  candidate exists, from any non-gold candidate;
* **the order** (exactly half gold-first): the evaluated items are ordered by their sample
  key (:func:`~lm_eval_rul.factual.items.sample_key`, the order whose prefixes
  ``sample_size`` takes) and the gold label comes first at the even positions of that
  order. The binary tasks list their documents in this order too, so every ``sample_size``
  sample and every ``--limit`` prefix holds ``ceil(n / 2)`` gold-first items of its ``n``;
* **reading a generated answer** (:func:`~lm_eval_rul.factual.reading.answers.read_choice`): the
  lexicon parser finds the two offered labels in it; an echo of both ("Between A and B,
  ...", "A or B?") is set aside; exactly one named (and not negated or hedged) is the
  choice, else the one named after a verdict cue ("I'd say"), else the other of one
  refused option, else an ordinal ("the first one", "the latter"); none or both is
  unparsed (a parse failure, never a guess);
* **windows**: each window of a long recording chooses; the item's choice is the option
  chosen by most windows with a readable choice, a tie going to the choice of the earliest
  window (the plurality rule of the RUListening release); an item with no readable window
  is unanswered: wrong, and counted in ``parse_failure``;
* **the paper's figure** (it reports binary choice as F1, chance 0.5): precision, recall
  and F1 of the answer's labels against the gold label, beside ``acc``. The answer's
  labels are its choice when it has one; otherwise every label the parser reads in it
  (both options for an answer naming both: P 1/2, R 1, F1 2/3, where ``acc`` counts it
  wrong; nothing, or only other labels: 0). Per item (its windows: the choice, else the
  union of their labels), averaged over items.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...questions import DEFAULT_SEED, item_rng
from ..errors import FactualInputError
from ..items import Item, id_order, sample_key
from ..metrics import precision_recall_f1
from .answers import read_choice
from .lexicon import Lexicon

__all__ = [
    "BinaryPair",
    "binary_pairs",
    "read_binary_answer",
    "BinaryItem",
    "binary_items",
    "binary_figures",
    "BINARY_FIGURES",
    "BINARY_SET_FIGURES",
]

#: Item-level figures of a binary task. ``parse_failure``: items without a readable choice
#: (a generated answer naming neither or both labels; with log-likelihood scoring, windows
#: where neither letter has a probability, as on an API's top-k path).
BINARY_FIGURES: tuple[str, ...] = ("acc", "first_share", "gold_first_share", "parse_failure")
#: The paper's figures of a generated binary answer: its labels against the gold label.
BINARY_SET_FIGURES: tuple[str, ...] = ("precision", "recall", "f1")


@dataclass(frozen=True)
class BinaryPair:
    """The two labels one item is asked to choose between.

    Attributes:
        item_id: Item id.
        gold: The gold label offered.
        distractor: The wrong label offered.
        gold_first: Whether the gold label is named first (option A).
        position: The item's position in the balanced order.
    """

    item_id: str
    gold: str
    distractor: str
    gold_first: bool
    position: int

    @property
    def options(self) -> tuple[str, str]:
        """The labels in the order they are offered."""
        return (self.gold, self.distractor) if self.gold_first else (self.distractor, self.gold)

    @property
    def gold_index(self) -> int:
        """0 when the gold label is offered first, else 1."""
        return 0 if self.gold_first else 1


def binary_pairs(
    items: Sequence[Item],
    candidates: Sequence[str],
    *,
    seed: int = DEFAULT_SEED,
    group_of: Callable[[str], str | None] | None = None,
) -> list[BinaryPair]:
    """The pair of every item, in the balanced order (see the module docstring).

    Args:
        items: The evaluated items of one task.
        candidates: The task's candidate labels (distractors are drawn from them).
        seed: Base seed.
        group_of: For genre, the FMA root of a label: the distractor's root must differ
            from every gold label's root when possible.

    Raises:
        FactualInputError: An item whose gold set covers every candidate.

    Examples
    --------
    >>> from pathlib import Path
    >>> items = [Item(str(i), "composer", "musicnet", Path(f"{i}.wav"), ("Bach",))
    ...          for i in range(6)]
    >>> pairs = binary_pairs(items, ["Bach", "Mozart", "Ravel"], seed=1)
    >>> sum(p.gold_first for p in pairs), {p.gold for p in pairs}
    (3, {'Bach'})
    """
    out = []
    ordered = sorted(items, key=lambda it: sample_key(it, seed))
    for position, item in enumerate(ordered):
        rng = item_rng("factual-binary", seed, item.task, item.id)
        gold = item.gold[int(rng.integers(len(item.gold)))]
        wrong = [c for c in candidates if c not in item.gold]
        if group_of is not None:
            roots = {group_of(g) for g in item.gold}
            elsewhere = [c for c in wrong if group_of(c) not in roots]
            wrong = elsewhere or wrong
        if not wrong:
            raise FactualInputError(
                f"{item.task} item {item.id}: its gold labels {list(item.gold)} cover every "
                "candidate label, so there is no wrong label to offer"
            )
        distractor = wrong[int(rng.integers(len(wrong)))]
        out.append(BinaryPair(item.id, gold, distractor, position % 2 == 0, position))
    return out


def read_binary_answer(answer: str, options: Sequence[str], lexicon: Lexicon) -> int | None:
    """The option (0 or 1) a generated ``answer`` names, or None when it names none or both.

    Examples
    --------
    >>> from lm_eval_rul.factual.reading.lexicon import lexicon_for
    >>> lex = lexicon_for("instrument")
    >>> read_binary_answer("I hear a violin, not an oboe.", ["oboe", "violin"], lex)
    1
    >>> read_binary_answer("Both oboe and violin.", ["oboe", "violin"], lex) is None
    True
    """
    value = read_choice(answer, options, lexicon).value
    return None if value is None else int(value)


@dataclass(frozen=True)
class BinaryItem:
    """One item's choice, aggregated over its windows.

    Attributes:
        id: Item id.
        task: Task key.
        gold_index: 0 when the gold label was offered first, else 1.
        choice: The chosen option (0 or 1), None when no window gave a readable choice.
        per_chunk: Each answered window's choice (None: unreadable), in window order.
        n_chunks: Windows the recording has.
        options: The two labels offered, in order ("" when an old log lacks them).
        labels: The answer's labels: the chosen option, or when no window chose, every
            label its windows' answers name (both options, other labels, or none).
    """

    id: str
    task: str
    gold_index: int
    choice: int | None
    per_chunk: tuple[int | None, ...]
    n_chunks: int
    options: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()

    def scores(self) -> tuple[float, float, float]:
        """P, R, F1 of :attr:`labels` against the gold option (empty: all zero)."""
        return precision_recall_f1(self.labels, [self.options[self.gold_index]])

    @property
    def correct(self) -> bool:
        return self.choice == self.gold_index


def _plurality(choices: Iterable[int | None]) -> int | None:
    read = [c for c in choices if c is not None]
    if not read:
        return None
    counts = Counter(read)
    top = max(counts.values())
    return next(c for c in read if counts[c] == top)  # a tie goes to the earliest window


def binary_items(records: Iterable[Mapping[str, Any]]) -> list[BinaryItem]:
    """Group binary window records by item and aggregate their choices, in id order.

    Raises:
        ValueError: A record lacks a field, or the windows of an item disagree on the pair.
    """
    by_item: dict[str, list[Mapping[str, Any]]] = {}
    for record in records:
        try:
            by_item.setdefault(str(record["id"]), []).append(record)
        except (KeyError, TypeError):
            raise ValueError(f"not a binary-choice record (no 'id'): {record!r}") from None
    out = []
    for item_id in sorted(by_item, key=id_order):
        chunks = sorted(by_item[item_id], key=lambda r: int(r["chunk"]))
        if len({(int(r["gold_index"]), tuple(r["options"])) for r in chunks}) > 1:
            raise ValueError(f"item {item_id}: its windows were offered different pairs")
        choices = tuple(None if r["choice"] is None else int(r["choice"]) for r in chunks)
        choice, options = _plurality(choices), tuple(str(o) for o in chunks[0]["options"])
        if choice is not None:
            labels: tuple[str, ...] = (options[choice],)
        else:  # no window chose: what the answers named (both options, others, nothing)
            named = (label for r in chunks for label in r.get("labels") or ())
            labels = tuple(dict.fromkeys(named))
        out.append(
            BinaryItem(
                id=item_id,
                task=str(chunks[0]["task"]),
                gold_index=int(chunks[0]["gold_index"]),
                choice=choice,
                per_chunk=choices,
                n_chunks=int(chunks[0]["n_chunks"]),
                options=options,
                labels=labels,
            )
        )
    return out


def binary_figures(items: Sequence[BinaryItem]) -> dict[str, float]:
    """Item-level figures of :data:`BINARY_FIGURES` and :data:`BINARY_SET_FIGURES`.

    ``acc`` (unanswered items are wrong), ``first_share`` (share of the answered items
    choosing the first option: position bias; NaN when none answered),
    ``gold_first_share`` (0.5 by construction, up to one item), ``parse_failure``
    (share of unanswered items), and the mean ``precision``, ``recall``, ``f1`` of the
    items' labels against their gold label (:meth:`BinaryItem.scores`).

    Raises:
        ValueError: No items.
    """
    if not items:
        raise ValueError("no items to score")
    answered = [it for it in items if it.choice is not None]
    n = len(items)
    scores = [it.scores() for it in items]
    return {
        **{name: sum(s[i] for s in scores) / n for i, name in enumerate(BINARY_SET_FIGURES)},
        "acc": sum(it.correct for it in items) / n,
        "first_share": (
            sum(it.choice == 0 for it in answered) / len(answered) if answered else math.nan
        ),
        "gold_first_share": sum(it.gold_index == 0 for it in items) / n,
        "parse_failure": (n - len(answered)) / n,
    }
