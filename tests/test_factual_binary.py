"""Binary choice: the pairs, exactly half gold-first over every sample and --limit prefix,
reading generated answers, and the windows' plurality."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from lm_eval_rul.factual.errors import FactualInputError
from lm_eval_rul.factual.items import Item, sample_items
from lm_eval_rul.factual.prompts import BINARY_TASKS, binary_prompt, candidate_labels
from lm_eval_rul.factual.reading.binary import (
    BINARY_FIGURES,
    binary_figures,
    binary_items,
    binary_pairs,
    read_binary_answer,
)
from lm_eval_rul.factual.reading.lexicon import lexicon_for
from lm_eval_rul.factual.reading.parser import parse_labels
from lm_eval_rul.factual.study_tasks import (
    BINARY_AGGREGATIONS,
    load_factual_binary,
    process_results_binary,
)
from lm_eval_rul.testing.factual import FMA_GENRE_ROWS

INSTRUMENTS = candidate_labels("instrument")


def items(n: int, task: str = "instrument") -> list[Item]:
    rng = random.Random(n)
    return [
        Item(f"{100 + i}", task, "musicnet", Path(f"{i}.wav"), tuple(rng.sample(INSTRUMENTS, 2)))
        for i in range(n)
    ]


def within_one_of_half(flags) -> bool:
    flags = list(flags)
    return abs(2 * sum(flags) - len(flags)) <= 1


@pytest.mark.parametrize("n", [1, 2, 7, 40])
def test_every_prefix_of_the_balanced_order_is_half_gold_first(n):
    pairs = binary_pairs(items(n), INSTRUMENTS, seed=3)
    assert [p.position for p in pairs] == list(range(n))
    assert sum(p.gold_first for p in pairs) == math.ceil(n / 2)
    assert all(within_one_of_half(p.gold_first for p in pairs[:k]) for k in range(n + 1))
    gold = {it.id: it.gold for it in items(n)}
    for pair in pairs:
        assert pair.gold in gold[pair.item_id] and pair.distractor not in gold[pair.item_id]
        assert pair.options[pair.gold_index] == pair.gold


def test_pairs_do_not_depend_on_file_order_and_samples_are_prefixes():
    every = items(40)
    pairs = binary_pairs(every, INSTRUMENTS, seed=3)
    shuffled = every[::-1]
    assert binary_pairs(shuffled, INSTRUMENTS, seed=3) == pairs
    gold = {it.id: set(it.gold) for it in every}
    for pair in pairs:
        assert pair.distractor not in gold[pair.item_id]
    # every sample_size sample is a prefix of the order: same pairs, exactly balanced
    for size in (1, 5, 12, 33):
        sample = sample_items(every, size, seed=3)
        sub = binary_pairs(sample, INSTRUMENTS, seed=3)
        assert sub == [p for p in pairs if p.position < size]
        assert sum(p.gold_first for p in sub) == math.ceil(size / 2)
    assert binary_pairs(every, INSTRUMENTS, seed=4) != pairs


def test_genre_distractor_comes_from_another_root():
    roots = {r[3]: next(x[3] for x in FMA_GENRE_ROWS if x[0] == r[4]) for r in FMA_GENRE_ROWS}
    titles = list(roots)
    found = [
        Item(str(i), "genre", "fma", Path(f"{i}.mp3"), (title,)) for i, title in enumerate(titles)
    ]
    for pair in binary_pairs(found, titles, seed=0, group_of=roots.get):
        assert roots[pair.distractor] != roots[pair.gold]


def test_no_wrong_label_left_is_an_error():
    full = [Item("1", "composer", "musicnet", Path("1.wav"), ("Bach", "Ravel"))]
    with pytest.raises(FactualInputError, match="cover every candidate"):
        binary_pairs(full, ["Bach", "Ravel"])


@pytest.mark.parametrize(
    "answer, expected",
    [
        ("Violin.", 1),
        ("I'd say the oboe", 0),
        ("It is the violin rather than the oboe.", 1),
        ("Not the oboe: a violin.", 1),
        ("Between oboe and violin, I think violin", 1),  # the echo is set aside
        ("Both the oboe and the violin.", None),  # both named: unreadable
        ("A guitar.", None),
        ("", None),
    ],
)
def test_generated_answers_are_read_never_guessed(answer, expected):
    assert read_binary_answer(answer, ["oboe", "violin"], lexicon_for("instrument")) == expected


def record(item_id, chunk, n_chunks, choice, gold_index=0, options=("a", "b")):
    return {
        "id": item_id,
        "task": "composer",
        "chunk": chunk,
        "n_chunks": n_chunks,
        "gold_index": gold_index,
        "options": list(options),
        "choice": choice,
        "p_first": None,
    }


def test_windows_vote_by_plurality_ties_to_the_earliest():
    records = [
        record("1", 0, 3, 1), record("1", 1, 3, 0), record("1", 2, 3, 1),  # B wins 2-1
        record("2", 1, 2, 0, gold_index=1), record("2", 0, 2, 1, gold_index=1),  # tie: window 0
        record("3", 0, 2, None, gold_index=1), record("3", 1, 2, 1, gold_index=1),  # one unreadable
        record("4", 0, 1, None),  # no readable window: unanswered
    ]  # fmt: skip
    found = {it.id: it for it in binary_items(records)}
    assert [found[k].choice for k in "1234"] == [1, 1, 1, None]
    assert found["2"].per_chunk == (1, 0)
    figures = binary_figures(list(found.values()))
    assert {name: figures[name] for name in BINARY_FIGURES} == {
        "acc": 2 / 4,  # items 2 and 3 right; 1 wrong; 4 unanswered counts wrong
        "first_share": 0.0,
        "gold_first_share": 2 / 4,
        "parse_failure": 1 / 4,
    }
    assert BINARY_AGGREGATIONS["acc"](records) == 0.5
    with pytest.raises(ValueError, match="different pairs"):
        binary_items([record("1", 0, 2, 0), record("1", 1, 2, 0, options=("a", "c"))])


def test_documents_are_balanced_over_every_limit_prefix(factual_metadata):
    for task in BINARY_TASKS:
        options = {**factual_metadata, "chunk_seconds": 2}
        docs = list(load_factual_binary(task, "loglikelihood", **options)["test"])
        assert docs == list(load_factual_binary(task, "loglikelihood", **options)["test"])
        for k in range(1, len(docs) + 1):  # --limit k: the items whose windows it reaches
            flags = {d["id"]: d["gold_index"] == 0 for d in docs[:k]}
            assert within_one_of_half(flags.values()), (task, k)
        for doc in docs:
            assert doc["options"][doc["gold_index"]] == doc["binary_gold"] in doc["gold"]
            assert doc["distractor"] not in doc["gold"]
            assert doc["prompt"] == binary_prompt(task, *doc["options"], scoring="loglikelihood")
        by_id = {d["id"]: d for d in docs}
        for size in (1, 2, 3):
            sample = list(
                load_factual_binary(task, "generate", **factual_metadata, sample_size=size)["test"]
            )
            assert sum(d["gold_index"] == 0 for d in sample) == math.ceil(size / 2)
            for doc in sample:  # the same pair as in the full run
                assert doc["options"] == by_id[doc["id"]]["options"]


def test_process_results_reads_letters_and_text(factual_metadata):
    docs = list(load_factual_binary("composer", "loglikelihood", **factual_metadata)["test"])
    doc = dict(docs[0])
    metrics = process_results_binary(doc, [(-2.0, False), (-0.5, True)])
    assert set(metrics) == {"acc", "first_share", "gold_first_share", "parse_failure"}
    rec = metrics["acc"]
    assert rec["choice"] == 1 and rec["p_first"] == pytest.approx(1 / (1 + math.exp(1.5)))
    assert doc["parsed"] == {"choice": doc["options"][1], "labels": [doc["options"][1]]}
    gen = dict(list(load_factual_binary("genre", "generate", **factual_metadata)["test"])[0])
    named = gen["options"][0]
    metrics = process_results_binary(gen, [f"I'm sure it's {named.lower()}."])
    assert metrics["parse_failure"]["choice"] == 0
    assert process_results_binary(dict(gen), ["No idea."])["acc"]["choice"] is None


@pytest.mark.parametrize(
    ("scores", "choice", "p_first"),
    [
        ((float("-inf"), float("-inf")), None, None),  # no letter in an API's top-k: no choice
        ((float("-inf"), -3.0), 1, 0.0),  # the only letter given a probability is chosen
        ((-3.0, float("-inf")), 0, 1.0),
        ((float("nan"), -1.0), 1, 0.0),
    ],
)
def test_letters_without_a_probability_are_no_choice_never_a(factual_metadata, scores, choice,
                                                              p_first):  # fmt: skip
    docs = list(load_factual_binary("composer", "loglikelihood", **factual_metadata)["test"])
    doc = dict(docs[0])
    record = process_results_binary(doc, [(s, False) for s in scores])["parse_failure"]
    assert record["choice"] == choice and record["p_first"] == p_first
    assert doc["parsed"]["choice"] == (None if choice is None else doc["options"][choice])
    figures = binary_figures(binary_items([record]))
    assert figures["parse_failure"] == (1.0 if choice is None else 0.0)
    assert figures["acc"] == float(choice == doc["gold_index"])


@pytest.mark.parametrize(
    ("answers", "scores"),
    [
        (["the oboe"], (1.0, 1.0, 1.0)),  # the gold option
        (["the violin"], (0.0, 0.0, 0.0)),  # the other one
        (["both the oboe and the violin"], (0.5, 1.0, 2 / 3)),  # both: acc counts it wrong
        (["a guitar, clearly"], (0.0, 0.0, 0.0)),  # another label only
        (["no idea"], (0.0, 0.0, 0.0)),  # nothing named: an empty prediction
        (["both the oboe and the violin", "the violin"], (0.0, 0.0, 0.0)),  # a window chose
    ],
)
def test_binary_precision_recall_f1_score_the_answers_labels_against_the_gold(answers, scores):
    """The paper's binary figure: the parsed answer's labels against the gold label, beside
    acc (which counts an answer naming both options, or none, wrong)."""
    lexicon = lexicon_for("instrument")
    records = []
    for chunk, answer in enumerate(answers):
        choice = read_binary_answer(answer, ["oboe", "violin"], lexicon)
        labels = list(parse_labels(answer, lexicon).labels) if choice is None else []
        rec = record("7", chunk, len(answers), choice, options=("oboe", "violin"))
        records.append(
            {**rec, "labels": labels if choice is None else [("oboe", "violin")[choice]]}
        )
    figures = binary_figures(binary_items(records))
    assert (figures["precision"], figures["recall"], figures["f1"]) == pytest.approx(scores)
    assert figures["acc"] == float(scores == (1.0, 1.0, 1.0))
    assert BINARY_AGGREGATIONS["f1"](records) == pytest.approx(scores[2])


def test_generated_binary_windows_record_the_answers_labels(factual_metadata):
    gen = dict(list(load_factual_binary("composer", "generate", **factual_metadata)["test"])[0])
    first, second = gen["options"]
    metrics = process_results_binary(gen, [f"Either {first} or {second}, I cannot tell."])
    assert set(metrics) == {*BINARY_FIGURES, "precision", "recall", "f1"}
    assert metrics["f1"]["choice"] is None and metrics["f1"]["labels"] == [first, second]
