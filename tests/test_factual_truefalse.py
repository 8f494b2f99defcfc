"""True/false per label: documents over the whole vocabulary, reading answers, the
inclusive and majority window rules on hand-made chunk answers, and the figures."""

from __future__ import annotations

import math

import pytest

from lm_eval_rul.factual.prompts import TRUEFALSE_TAILS, candidate_labels, truefalse_prompt
from lm_eval_rul.factual.reading.genres import GenreTree
from lm_eval_rul.factual.reading.truefalse import (
    TRUEFALSE_FIGURES,
    aggregate_answers,
    gold_true_labels,
    label_answers,
    read_truefalse_answer,
    truefalse_figures,
)
from lm_eval_rul.factual.study_tasks import (
    TRUEFALSE_AGGREGATIONS,
    load_factual_truefalse,
    process_results_truefalse,
)
from lm_eval_rul.testing.factual import FMA_GENRE_ROWS

TREE = GenreTree({r[0]: r[3] for r in FMA_GENRE_ROWS}, {r[0]: r[2] for r in FMA_GENRE_ROWS}, {})


@pytest.mark.parametrize(
    "answer, expected",
    [
        ("True", True),
        ("false.", False),
        ("Yes, I can hear it.", True),
        ("No.", False),
        ("That is not true: there is no piano.", False),
        ("True or false: false", False),  # an echo of the question is skipped
        ("Incorrect.", False),
        ("I am not sure.", None),
        ("", None),
    ],
)
def test_answers_are_read_or_left_unread(answer, expected):
    assert read_truefalse_answer(answer) == expected


# hand-made chunk answers of four windows: (answers, inclusive, majority)
CASES = [
    ([True, False, False, False], True, False),
    ([True, True, False, None], True, True),  # 2 of the 3 readable windows
    ([True, False, None, None], True, False),  # exactly half: not a majority
    ([False, False, False, False], False, False),
    ([None, None, None, None], None, None),  # unanswered under both rules
]


@pytest.mark.parametrize("answers, inclusive, majority", CASES)
def test_window_rules(answers, inclusive, majority):
    assert aggregate_answers(answers, "inclusive") is inclusive
    assert aggregate_answers(answers, "majority") is majority


def window_records(item_id, label, gold, answers):
    return [
        {"id": item_id, "task": "instrument", "label": label, "chunk": c, "n_chunks": len(answers),
         "gold": gold, "answer": a, "p_true": None}
        for c, a in enumerate(answers)
    ]  # fmt: skip


def test_figures_over_item_label_pairs_by_hand():
    records = []
    # item 1: piano true (gold), violin asked 4 windows: one "true"
    records += window_records("1", "piano", True, [True, True, False, True])
    records += window_records("1", "violin", False, [True, False, False, False])
    # item 2: cello gold but never readable; flute answered false
    records += window_records("2", "cello", True, [None, None, None, None])
    records += window_records("2", "flute", False, [False, False, None, False])
    pairs = label_answers(records)
    assert truefalse_figures(label_answers(reversed(records))) == truefalse_figures(pairs)
    assert [(p.id, p.label) for p in pairs] == [
        ("1", "piano"), ("1", "violin"), ("2", "cello"), ("2", "flute")
    ]  # fmt: skip
    figures = truefalse_figures(pairs)
    assert list(figures) == list(TRUEFALSE_FIGURES)
    # inclusive: piano T(right), violin T(wrong), cello None(wrong), flute F(right)
    assert figures["acc_inclusive"] == 2 / 4
    assert figures["precision_inclusive"] == 1 / 2 and figures["recall_inclusive"] == 1 / 2
    assert figures["true_share_inclusive"] == 2 / 4
    # majority: piano T, violin F, cello None, flute F -> 3 right of 4
    assert figures["acc_majority"] == 3 / 4
    assert figures["precision_majority"] == 1.0 and figures["recall_majority"] == 1 / 2
    assert figures["true_share_majority"] == 1 / 4
    assert figures["base_rate"] == 2 / 4 and figures["parse_failure"] == 1 / 4
    assert TRUEFALSE_AGGREGATIONS["acc_majority"](records) == 3 / 4
    nothing_true = truefalse_figures(label_answers(window_records("3", "oboe", False, [False])))
    assert math.isnan(nothing_true["precision_inclusive"]) and nothing_true["acc_inclusive"] == 1


def test_genre_gold_includes_ancestors():
    assert gold_true_labels(["Post-Punk", "Techno"], TREE) == {
        "Post-Punk", "Punk", "Rock", "Techno", "Electronic"
    }  # fmt: skip
    assert gold_true_labels(["Bach"]) == {"Bach"}


def test_one_document_per_item_window_and_label(factual_metadata):
    docs = list(load_factual_truefalse("instrument", "loglikelihood", **factual_metadata,
                                       chunk_seconds=2)["test"])  # fmt: skip
    labels = candidate_labels("instrument")
    windows = {(d["id"], d["chunk"]) for d in docs}
    assert len(docs) == len(windows) * len(labels) == 16 * 11
    first = [d for d in docs if (d["id"], d["chunk"]) == (docs[0]["id"], 0)]
    assert [d["label"] for d in first] == list(labels)
    for doc in docs:
        assert doc["label_gold"] == (doc["label"] in doc["gold"])
        assert doc["target"] == (0 if doc["label_gold"] else 1)
        statement = truefalse_prompt("instrument", doc["label"], scoring="loglikelihood")
        assert doc["prompt"] == statement and statement.endswith(TRUEFALSE_TAILS["loglikelihood"])
    genre = list(load_factual_truefalse("genre", "generate", **factual_metadata)["test"])
    assert len(genre) == 8 * len(FMA_GENRE_ROWS)
    post_punk = {d["label"] for d in genre if d["id"] == "000141" and d["label_gold"]}
    assert post_punk == {"Post-Punk", "Punk", "Rock"}


def test_process_results_reads_the_likelier_word_or_the_text(factual_metadata):
    docs = list(load_factual_truefalse("mood", "loglikelihood", **factual_metadata)["test"])
    doc = dict(docs[0])
    metrics = process_results_truefalse(doc, [(-0.1, True), (-2.4, False)])
    assert set(metrics) == set(TRUEFALSE_FIGURES)
    record = metrics["acc_inclusive"]
    assert record["answer"] is True and record["label"] == doc["label"]
    assert record["p_true"] == pytest.approx(1 / (1 + math.exp(-2.3)))
    assert record["gold"] == doc["label_gold"]
    gen = dict(list(load_factual_truefalse("mood", "generate", **factual_metadata)["test"])[0])
    assert process_results_truefalse(gen, ["False."])["parse_failure"]["answer"] is False
    assert process_results_truefalse(gen, ["Hmm."])["base_rate"]["answer"] is None


def test_words_without_a_probability_are_no_answer_never_true(factual_metadata):
    docs = list(load_factual_truefalse("timesig", "loglikelihood", **factual_metadata)["test"])
    none = float("-inf")
    records = [
        process_results_truefalse(dict(doc), [(none, False), (none, False)])["base_rate"]
        for doc in docs
    ]
    assert all(r["answer"] is None and r["p_true"] is None for r in records)
    figures = truefalse_figures(label_answers(records))
    assert figures["parse_failure"] == 1.0
    assert figures["true_share_inclusive"] == figures["acc_inclusive"] == 0.0
    only_false = process_results_truefalse(dict(docs[0]), [(none, False), (-4.0, False)])
    assert only_false["acc_majority"]["answer"] is False
    assert only_false["acc_majority"]["p_true"] == 0.0
