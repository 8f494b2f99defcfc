"""Parser agreement statistics on hand-computed cases."""

from __future__ import annotations

import math

import pytest
from scipy import stats

from lm_eval_rul.factual.records import ItemPrediction
from lm_eval_rul.report.parser_agreement import compare_items, jaccard, kendall_tau


def item(item_id: str, labels, gold) -> ItemPrediction:
    labels = tuple(labels)
    return ItemPrediction(item_id, "instrument", tuple(gold), labels, (labels,), 1, {})


@pytest.mark.parametrize(
    "a, b, expected",
    [
        (["piano"], ["piano"], 1.0),
        (["piano", "violin"], ["violin", "cello"], 1 / 3),
        ([], ["piano"], 0.0),
        ([], [], 1.0),
    ],
)
def test_jaccard(a, b, expected):
    assert jaccard(a, b) == pytest.approx(expected)


def test_kendall_tau_by_hand():
    # 3 models: pairs (1,2) concordant, (1,3) concordant, (2,3) discordant -> (2 - 1) / 3
    tau, p = kendall_tau([0.1, 0.2, 0.3], [0.1, 0.3, 0.2])
    assert tau == pytest.approx(1 / 3)
    assert p == pytest.approx(stats.kendalltau([0.1, 0.2, 0.3], [0.1, 0.3, 0.2]).pvalue)
    assert kendall_tau([0.4, 0.6], [0.5, 0.7])[0] == 1.0  # two models, same order
    assert kendall_tau([0.4, 0.6], [0.7, 0.5])[0] == -1.0
    assert all(math.isnan(v) for v in kendall_tau([0.5], [0.5]))
    assert math.isnan(kendall_tau([0.5, 0.5], [0.1, 0.2])[0])  # a constant side: undefined
    with pytest.raises(ValueError, match="paired"):
        kendall_tau([0.1], [0.1, 0.2])


def test_compare_items_by_hand():
    gold = ["piano", "violin"]
    a = [item("1", ["piano"], gold), item("2", ["piano", "violin"], gold), item("3", [], gold)]
    b = [
        item("2", ["piano", "violin"], gold),
        item("1", ["piano", "cello"], gold),
        item("3", [], gold),
        item("4", ["oboe"], gold),  # only in b: left out
    ]
    out = compare_items(a, b, n_resamples=999)
    assert out["n"] == 3
    # Jaccard 1/2, 1, 1 (both empty)
    assert out["mean_jaccard"] == pytest.approx((0.5 + 1 + 1) / 3)
    assert out["identical_share"] == pytest.approx(2 / 3)
    # F1: item 1 a = 2/3, b = 2*1/(2+2) = 1/2; item 2 both 1; item 3 both 0
    assert out["f1_a"] == pytest.approx((2 / 3 + 1) / 3)
    assert out["f1_b"] == pytest.approx((1 / 2 + 1) / 3)
    assert out["difference"]["estimate"] == pytest.approx((1 / 2 - 2 / 3) / 3)
    assert out["difference"]["low"] <= out["difference"]["estimate"] <= out["difference"]["high"]
    with pytest.raises(ValueError, match="share no item"):
        compare_items(a, [item("9", [], gold)])
