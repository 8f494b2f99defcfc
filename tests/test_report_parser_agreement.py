"""Parser agreement statistics on hand-computed cases."""

from __future__ import annotations

import math

import pytest
from scipy import stats

from lm_eval_rul.factual.records import ItemPrediction
from lm_eval_rul.report.factual.parser_agreement import compare_items, jaccard, kendall_tau


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


def test_malformed_parser_replies_are_left_out_and_counted(
    tiny_audio_lm, factual_metadata, tmp_path
):
    """``reparse`` with a parser whose replies to some answers stay malformed: those windows
    have no labels (not an empty prediction), are left out of the copy's figures, and are
    counted in its output and in the report's parser agreement."""
    import json

    from doubles.chat import ChatServer

    from lm_eval_rul.factual.records import item_figures, item_predictions
    from lm_eval_rul.testing.harness import read_output, run_cli

    run, parsed, report = tmp_path / "run", tmp_path / "parsed", tmp_path / "report"
    run_cli([
        "run", "--model", "lalm", "--model_args", f"pretrained={tiny_audio_lm}",
        "--tasks", "factual_instrument_open", "--device", "cpu", "--gen_kwargs",
        "max_gen_toks=6", "--metadata", json.dumps({**factual_metadata, "sample_size": 4}),
        "--output_path", str(run), "--log_samples",
    ])  # fmt: skip
    # a random-weight model says the same thing in every window: give each window its own
    # answer in the log (the parser reads only the logged answers)
    (log,) = run.rglob("samples_factual_instrument_open_*.jsonl")
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    for row in rows:
        text = f"Window {row['doc']['chunk']} of {row['doc']['id']}: a piano, I think."
        row["resps"], row["filtered_resps"] = [[text]], [text]
    log.write_text("".join(json.dumps(row) + "\n" for row in rows))
    answer = {id(r): r["filtered_resps"][0] for r in rows}
    by_item: dict[str, list[dict]] = {}
    for row in rows:
        by_item.setdefault(row["doc"]["id"], []).append(row)
    # the parser cannot read the answers of one whole item and of one window of another
    items = sorted(by_item, key=lambda i: len(by_item[i]))
    hopeless = {answer[id(r)] for r in by_item[items[0]]} | {answer[id(by_item[items[-1]][0])]}

    def reply(body) -> str:
        text = body["messages"][0]["content"].split("Response: ", 1)[1].rsplit("\n\n", 1)[0]
        return "I think the response is unclear, sorry!" if text in hopeless else "piano"

    with ChatServer(reply) as server:
        done = run_cli([
            "reparse", str(run), "--out", str(parsed), "--parser_model",
            "local-chat-completions", "--parser_args", f"base_url={server.url},model=p",
            "--no_cache", "--retries", "1", "--no_progress",
        ])  # fmt: skip
    unread = [r for r in rows if answer[id(r)] in hopeless]
    left_out = {i for i, group in by_item.items() if all(r in unread for r in group)}
    assert unread and left_out and len(left_out) < len(by_item)
    assert (
        f"factual_instrument_open: {len(rows)} windows, {len(unread)} malformed (left out of "
        f"the figures, never scored as empty; {len(left_out)} item"
    ) in done.stdout
    results, copied = read_output(parsed)
    records = [r["f1"] for r in copied["factual_instrument_open"]]
    assert sum(r["labels"] is None for r in records) == len(unread)
    assert {r["parse_status"] for r in records if r["labels"] is None} == {"malformed"}
    predictions = item_predictions(records)
    assert {p.id for p in predictions} == set(by_item) - left_out
    read_only = item_figures([r for r in records if r["labels"] is not None])
    printed = results["results"]["factual_instrument_open"]
    assert printed["f1,none"] == pytest.approx(read_only["f1"])
    assert printed["empty_share,none"] == pytest.approx(read_only["empty_share"])
    counts = results["configs"]["factual_instrument_open"]["factual_parser"]
    assert counts["malformed_windows"] == len(unread) and counts["items_left_out"] == len(left_out)
    run_cli(["report", str(run), "--parsed", f"p={parsed}", "--out", str(report),
             "--n-resamples", "99"])  # fmt: skip
    (pair,) = json.loads((report / "report.json").read_text())["factual"]["studies"]["parsers"]
    (row,) = pair["rows"]
    assert row["malformed_windows"] == len(unread) and row["items_left_out"] == len(left_out)
    assert row["n"] == len(by_item) - len(left_out)
    assert f"| {len(unread)} / {len(left_out)} |" in (report / "report.md").read_text()
