"""Set metrics on hand-computed cases, the FMA same-tree/same-node views, correct vs random."""

from __future__ import annotations

import pytest

from lm_eval_rul.factual.metrics import (
    empty_share,
    genre_metrics,
    item_scores,
    macro_f1,
    mean_set_size,
    micro_scores,
    per_label_scores,
    precision_recall_f1,
    set_metrics,
)
from lm_eval_rul.factual.reading.genres import GenreTree
from lm_eval_rul.report.factual.paired_scores import compare_conditions, pair_by_id

# Three items, computed by hand:
#   1: pred {piano, violin, drums}, gold {piano, violin, viola, cello}: hit 2 -> P 2/3, R 1/2,
#      F1 = 4/7
#   2: pred {}, gold {flute}: P = R = F1 = 0 (empty prediction)
#   3: pred {horn}, gold {horn}: 1, 1, 1
PREDS = [["piano", "violin", "drums"], [], ["horn"]]
GOLDS = [["piano", "violin", "viola", "cello"], ["flute"], ["horn"]]


def test_item_scores_by_hand():
    p, r, f = item_scores(PREDS, GOLDS)
    assert p.tolist() == pytest.approx([2 / 3, 0.0, 1.0])
    assert r.tolist() == pytest.approx([0.5, 0.0, 1.0])
    assert f.tolist() == pytest.approx([4 / 7, 0.0, 1.0])


def test_empty_prediction_scores_zero_and_counts():
    assert precision_recall_f1([], ["a"]) == (0.0, 0.0, 0.0)
    assert precision_recall_f1(["a", "a"], ["a"]) == (1.0, 1.0, 1.0)  # a set: no double count
    assert empty_share(PREDS) == pytest.approx(1 / 3)
    assert mean_set_size(PREDS) == pytest.approx(4 / 3)


def test_micro_by_hand():
    # hits 2 + 0 + 1 = 3, predicted 3 + 0 + 1 = 4, gold 4 + 1 + 1 = 6
    p, r, f = micro_scores(PREDS, GOLDS)
    assert (p, r, f) == pytest.approx((3 / 4, 3 / 6, 6 / 10))


def test_per_label_and_macro_by_hand():
    scores = per_label_scores(PREDS, GOLDS)
    assert scores["piano"].f1 == 1.0 and scores["piano"].support == 1
    assert scores["drums"].f1 == 0.0 and scores["drums"].support == 0
    assert scores["drums"].predicted == 1
    assert scores["viola"].recall == 0.0 and scores["viola"].f1 == 0.0
    # gold labels: piano 1, violin 1, viola 0, cello 0, flute 0, horn 1 -> macro 3/6;
    # drums (predicted only) is listed but not averaged
    assert macro_f1(PREDS, GOLDS) == pytest.approx(0.5)
    assert macro_f1(PREDS, GOLDS, labels=["piano", "drums"]) == pytest.approx(0.5)


def test_set_metrics_collects_everything():
    m = set_metrics(PREDS, GOLDS)
    assert m.n == 3
    assert m.precision == pytest.approx((2 / 3 + 0 + 1) / 3)
    assert m.recall == pytest.approx(0.5)
    assert m.f1 == pytest.approx((4 / 7 + 1) / 3)
    assert m.micro_f1 == pytest.approx(0.6)
    assert m.mean_gold_size == pytest.approx(2.0)
    assert m.to_dict()["per_label"]["horn"]["f1"] == 1.0


def test_metrics_are_order_invariant():
    m1 = set_metrics(PREDS, GOLDS)
    m2 = set_metrics(PREDS[::-1], GOLDS[::-1])
    assert m1.f1 == pytest.approx(m2.f1) and m1.micro_f1 == pytest.approx(m2.micro_f1)
    assert m1.macro_f1 == pytest.approx(m2.macro_f1)


@pytest.mark.parametrize(
    "preds, golds, message",
    [
        ([["a"]], [["a"], ["b"]], "one entry per item"),
        ([], [], "must not be empty"),
        ([["a"], ["b"]], [["a"], []], "gold sets must not be empty"),
    ],
)
def test_bad_input_raises(preds, golds, message):
    with pytest.raises(ValueError, match=message):
        set_metrics(preds, golds)


def test_genre_same_tree_counts_a_subgenre_same_node_does_not():
    tree = GenreTree(
        {12: "Rock", 25: "Punk", 89: "Post-Punk", 4: "Jazz", 74: "Free-Jazz"},
        {12: 0, 25: 12, 89: 25, 4: 0, 74: 4},
        {},
    )
    preds = [["Punk"], ["Rock"], ["Post-Punk", "Jazz"], ["Synthwave"]]
    golds = [["Rock"], ["Post-Punk"], ["Punk"], ["Free-Jazz"]]
    result = genre_metrics(preds, golds, tree)
    assert result["same_node"].f1 == 0.0
    # same-tree: 1, 1, (Rock, Jazz) vs (Rock) -> P 1/2 R 1 F1 2/3, ?Synthwave vs Jazz -> 0
    assert result["same_tree"].f1 == pytest.approx((1 + 1 + 2 / 3 + 0) / 4)
    assert result["same_tree"].precision == pytest.approx((1 + 1 + 0.5 + 0) / 4)
    assert tree.to_roots(["Post-Punk", "Punk"]) == ("Rock",)


def test_compare_conditions_pairs_by_item_and_tests():
    original = {str(i): 1.0 if i % 4 else 0.5 for i in range(40)}
    random = {str(i): 0.0 for i in range(40)}
    random["extra"] = 1.0  # an item only one run has is left out
    result = compare_conditions(original, random, n_resamples=999, seed=1)
    assert result.n == 40
    assert result.difference.estimate == pytest.approx(0.875)
    assert not result.difference.contains_zero
    assert result.pvalue < 1e-6
    same = compare_conditions(original, dict(original), n_resamples=99)
    assert same.difference.contains_zero and same.pvalue == 1.0
    with pytest.raises(ValueError, match="share no item"):
        pair_by_id({"a": 1.0}, {"b": 1.0})


def test_same_tree_judges_each_label_on_its_own_never_the_collapsed_roots():
    """The paper's same-tree: a predicted genre is right when it lies in a gold genre's
    top-level branch, judged label by label. Collapsing both sides to roots first would
    merge "Punk" and "Post-Punk" into one right "Rock" (P 1/2 below, not 2/3), and merge
    gold labels the same way on the recall side (R 1/2, not 2/3)."""
    tree = GenreTree(
        {12: "Rock", 25: "Punk", 89: "Post-Punk", 4: "Jazz", 74: "Free-Jazz"},
        {12: 0, 25: 12, 89: 25, 4: 0, 74: 4},
        {},
    )
    # precision side: Punk and Post-Punk are right (Rock's branch), Jazz is not
    (result,) = [genre_metrics([["Punk", "Post-Punk", "Jazz"]], [["Rock"]], tree)["same_tree"]]
    assert (result.precision, result.recall) == (pytest.approx(2 / 3), 1.0)
    assert result.f1 == pytest.approx(0.8)
    assert set_metrics([tree.to_roots(["Punk", "Post-Punk", "Jazz"])], [["Rock"]]).precision == 0.5
    # recall side: gold Punk and Post-Punk are found (a Rock-branch prediction), Free-Jazz not
    result = genre_metrics([["Rock"]], [["Punk", "Post-Punk", "Free-Jazz"]], tree)["same_tree"]
    assert (result.precision, result.recall) == (1.0, pytest.approx(2 / 3))
    assert result.micro_recall == pytest.approx(2 / 3) and result.micro_precision == 1.0
    assert result.per_label["Free-Jazz"].recall == 0.0 and result.per_label["Punk"].recall == 1.0
    # an unknown title is a root of its own: wrong, and it finds nothing
    result = genre_metrics([["Synthwave", "Free-Jazz"]], [["Jazz"]], tree)["same_tree"]
    assert (result.precision, result.recall) == (0.5, 1.0)
