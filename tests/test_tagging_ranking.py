"""The array ROC-AUC, average precision and micro-F1 (every tag, every resample at once)
against scikit-learn's roc_auc_score / average_precision_score / f1_score, called per tag
and per resample as the report did before, on random scores with ties and with tags that
have no positive or no negative clip."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, f1_score, roc_auc_score

from lm_eval_rul.questions.seeding import derive_seed
from lm_eval_rul.report.settings import ReportSettings
from lm_eval_rul.report.tagging.bootstrap import CHUNK_CELLS, clip_counts, resampled_figure
from lm_eval_rul.report.tagging.sections import _gain
from lm_eval_rul.tagging.metrics import macro_auc
from lm_eval_rul.tagging.ranking import ResampledAuc, average_precision_columns, roc_auc_columns


def _data(seed: int, n: int = 30, tags: int = 7):
    """Scores on a coarse grid (many ties), a tag with every clip positive, one with none."""
    rng = np.random.default_rng(seed)
    scores = np.round(rng.normal(size=(n, tags)), 1)
    scores[:, 1] = 0.25  # one score for every clip: ROC-AUC exactly 0.5
    truth = rng.random((n, tags)) < rng.uniform(0.1, 0.6, tags)
    truth[:, 2], truth[:, 3] = True, False
    truth[0, 1], truth[1, 1] = True, False
    return scores, truth


def _sklearn(function, truth, scores):
    """Per tag, NaN where a tag lacks a class (the tags macro means leave out)."""
    return np.array([
        function(truth[:, j], scores[:, j]) if 0 < truth[:, j].sum() < len(truth) else np.nan
        for j in range(truth.shape[1])
    ])  # fmt: skip


@pytest.mark.parametrize("seed", range(5))
def test_columns_equal_sklearn_per_tag(seed):
    scores, truth = _data(seed)
    for ours, theirs in ((roc_auc_columns, roc_auc_score),
                         (average_precision_columns, average_precision_score)):  # fmt: skip
        expected = _sklearn(theirs, truth, scores)
        got = ours(scores, truth)
        assert np.array_equal(np.isnan(got), np.isnan(expected))
        assert np.nanmax(np.abs(got - expected)) < 1e-9
    assert np.isnan(roc_auc_columns(scores, truth)[[2, 3]]).all()
    assert roc_auc_columns(scores, truth)[1] == 0.5


def test_macro_auc_leaves_out_one_class_tags_as_before():
    scores, truth = _data(7)
    tags = [f"t{j}" for j in range(truth.shape[1])]
    gold = [[t for t, hit in zip(tags, row, strict=True) if hit] for row in truth]
    result = macro_auc(tags, scores, gold)
    assert result.skipped == ("t2", "t3")
    expected_roc = _sklearn(roc_auc_score, truth, scores)
    expected_ap = _sklearn(average_precision_score, truth, scores)
    assert abs(result.roc_auc - np.nanmean(expected_roc)) < 1e-9
    assert abs(result.pr_auc - np.nanmean(expected_ap)) < 1e-9
    assert np.isnan(macro_auc(["a"], [[0.1], [0.2]], [["a"], ["a"]]).roc_auc)


def test_non_finite_scores_are_refused_as_scikit_learn_refuses_them():
    with pytest.raises(ValueError, match="Input contains"):
        roc_auc_score([1, 0], [0.1, np.nan])
    with pytest.raises(ValueError, match="1 are NaN \\(tags b\\)"):
        macro_auc(["a", "b"], [[0.1, np.nan], [0.2, 0.3]], [["a"], ["b"]])
    # an answer left out of a served model's top tokens (±inf) ranks past every score
    ranked = macro_auc(["a", "b"], [[0.1, -np.inf], [0.2, 0.3]], [["a"], ["b"]])
    finite = macro_auc(["a", "b"], [[0.1, -9.0], [0.2, 0.3]], [["a"], ["b"]])
    assert ranked.per_tag == finite.per_tag


def test_resampled_auc_equals_sklearn_on_the_resampled_clips():
    scores, truth = _data(3, n=25)
    rng = np.random.default_rng(11)
    picks = rng.integers(0, 25, (40, 25))
    counts = np.stack([np.bincount(p, minlength=25) for p in picks])
    got = ResampledAuc(scores, truth).per_tag(counts)
    for b, pick in enumerate(picks):
        expected = _sklearn(roc_auc_score, truth[pick], scores[pick])
        assert np.array_equal(np.isnan(got[b]), np.isnan(expected))
        assert np.nanmax(np.abs(got[b] - expected)) < 1e-9


def test_counts_draw_as_the_loop_drew_and_chunk(monkeypatch):
    monkeypatch.setattr("lm_eval_rul.report.tagging.bootstrap.CHUNK_CELLS", 30)
    assert CHUNK_CELLS > 30
    chunks = list(clip_counts(np.random.default_rng(5), 7, 10))
    assert [len(c) for c in chunks] == [4, 4, 2]
    loop = np.random.default_rng(5)
    expected = [np.bincount(loop.integers(0, 7, 7), minlength=7) for _ in range(10)]
    assert np.array_equal(np.vstack(chunks), np.stack(expected))


def _likelihood_clips(scores, truth, shift=0.0):
    tags = [f"t{j}" for j in range(truth.shape[1])]
    return [{"id": f"c{i}", "task": "x", "form": "likelihood", "tags": tags,
             "gold": [t for t, hit in zip(tags, truth[i], strict=True) if hit],
             "scores": list(scores[i] + shift), "predicted": []}
            for i in range(len(truth))]  # fmt: skip


def test_micro_f1_of_resamples_equals_sklearn():
    rng = np.random.default_rng(2)
    tags = [f"t{j}" for j in range(6)]
    gold = [list(rng.choice(tags, rng.integers(0, 3), replace=False)) for _ in range(20)]
    labels = [list(rng.choice(tags, rng.integers(0, 4), replace=False)) for _ in range(20)]
    clips = [{"id": str(i), "form": "gen", "gold": g, "labels": p}
             for i, (g, p) in enumerate(zip(gold, labels, strict=True))]  # fmt: skip
    picks = rng.integers(0, 20, (15, 20))
    counts = np.stack([np.bincount(p, minlength=20) for p in picks])
    got = resampled_figure(clips, "micro_f1")(counts)
    binary = lambda sets: np.array([[t in s for t in tags] for s in sets])  # noqa: E731
    for b, pick in enumerate(picks):
        expected = f1_score(binary([gold[i] for i in pick]), binary([labels[i] for i in pick]),
                            average="micro", zero_division=0.0)  # fmt: skip
        assert abs(got[b] - expected) < 1e-9


def _macro(per_tag: np.ndarray) -> float:
    """The macro mean over the tags with both classes (NaN when there is none)."""
    scored = per_tag[np.isfinite(per_tag)]
    return float(scored.mean()) if scored.size else np.nan


def test_gain_interval_equals_the_per_resample_sklearn_loop():
    """The whole gain: the same resamples as the loop over sklearn calls it replaced, and
    the same percentile interval (resamples where no tag has both classes left out)."""
    scores, truth = _data(4, n=12, tags=5)
    noise = np.round(np.random.default_rng(9).normal(size=scores.shape), 1)
    a, b = _likelihood_clips(scores, truth), _likelihood_clips(noise, truth)
    settings = ReportSettings(n_resamples=60, seed=3)
    got = _gain(a, b, settings, ("x", "m", "noise"))
    rng = np.random.default_rng(derive_seed("tagging-gain", 3, "x", "m", "noise"))
    draws = []
    for _ in range(60):
        pick = rng.integers(0, 12, 12)
        one = (_macro(_sklearn(roc_auc_score, truth[pick], scores[pick]))
               - _macro(_sklearn(roc_auc_score, truth[pick], noise[pick])))  # fmt: skip
        if np.isfinite(one):
            draws.append(one)
    low, high = np.quantile(draws, [0.025, 0.975])
    estimate = _macro(_sklearn(roc_auc_score, truth, scores)) - _macro(
        _sklearn(roc_auc_score, truth, noise)
    )
    assert abs(got["estimate"] - estimate) < 1e-9
    assert abs(got["low"] - low) < 1e-9 and abs(got["high"] - high) < 1e-9
    assert got["n"] == 12 and got["contains_zero"] == bool(low <= 0 <= high)
