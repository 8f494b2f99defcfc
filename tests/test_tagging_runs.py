"""Music tagging end to end, one run per path: text-only ``hf`` (the listening test's
floor: ROC-AUC exactly 0.5), ``lalm`` under original and noise (every tag scored after the
clip's audio, the window logged), and a served model answering the free-text tasks with
scripted replies, its ``acc`` and ``micro_f1`` recomputed independently from the answers."""

from __future__ import annotations

import itertools
import json
import threading

import numpy as np
import pytest
from doubles.chat import ChatServer

from lm_eval_rul.harness_compat import sample_responses
from lm_eval_rul.testing.harness import read_output, run_cli
from lm_eval_rul.testing.tagging import write_gtzan, write_mtg, write_mtt


@pytest.fixture(scope="module")
def tagging_data(tmp_path_factory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("tagging")
    gtzan, mtg = write_gtzan(root / "gtzan", per_genre=1), write_mtg(root / "mtg")
    mtt = write_mtt(root / "mtt")
    return {
        "gtzan_split_file": str(gtzan["split"]), "gtzan_audio_dir": str(gtzan["audio"]),
        "mtg_data_dir": str(mtg["data"]), "mtg_audio_dir": str(mtg["audio"]),
        "mtt_annotations": str(mtt["annotations"]), "mtt_split_file": str(mtt["split"]),
        "mtt_audio_dir": str(mtt["audio"]), "tagging_seconds": 1.5,
    }  # fmt: skip


def _scores(row: dict) -> list[float]:
    """yes − no per tag, from the logged responses (the harness's own numbers)."""
    lls = [float(r[0]) for r in sample_responses(row)]
    return [lls[i] - lls[i + 1] for i in range(0, len(lls), 2)]


def test_text_only_model_ranks_tags_at_chance(tiny_lm, tagging_data, tmp_path):
    out = tmp_path / "text"
    run_cli(["run", "--model", "hf", "--model_args", f"pretrained={tiny_lm},dtype=float32",
             "--tasks", "gtzan,mtg_top50", "--metadata", json.dumps(tagging_data),
             "--device", "cpu", "--batch_size", "16", "--output_path", str(out),
             "--log_samples"])  # fmt: skip
    results, samples = read_output(out)
    figures = results["results"]["mtg_top50"]
    rows = samples["mtg_top50"]
    tags = rows[0]["doc"]["tags"]
    assert len(rows) == 8 and len(sample_responses(rows[0])) == 2 * len(tags) == 2 * 18
    contexts = [a["arg_0"] for a in rows[0]["arguments"].values()]
    assert [c for c in contexts[::2]] == contexts[1::2]  # yes and no share a context
    texts = rows[0]["doc"]["tag_texts"]
    assert all(f'"{t}"' in c for t, c in zip(texts, contexts[::2], strict=True))
    # one prompt for every clip: each tag the same score everywhere, so chance ranking
    assert all(np.allclose(_scores(r), _scores(rows[0])) for r in rows)
    assert figures["roc_auc,none"] == 0.5
    gold = [set(r["doc"]["gold_tags"]) for r in rows]
    both = [t for t in tags if 0 < sum(t in g for g in gold) < len(gold)]
    assert figures["pr_auc,none"] == pytest.approx(
        np.mean([sum(t in g for g in gold) / len(gold) for t in both])
    )
    predicted = [{t for t, s in zip(tags, _scores(r), strict=True) if s > 0} for r in rows]
    tp = sum(len(p & g) for p, g in zip(predicted, gold, strict=True))
    fp = sum(len(p - g) for p, g in zip(predicted, gold, strict=True))
    fn = sum(len(g - p) for p, g in zip(predicted, gold, strict=True))
    assert figures["micro_f1,none"] == pytest.approx(2 * tp / (2 * tp + fp + fn))
    assert results["results"]["gtzan"]["acc,none"] == pytest.approx(
        np.mean([r["acc"] for r in samples["gtzan"]])
    )
    assert len(sample_responses(samples["gtzan"][0])) == 10  # letters A-J, one forward


def test_lalm_hears_each_clip_once_per_tag_set_and_conditions_differ(
    tiny_audio_lm, tagging_data, tmp_path
):
    scores = {}
    for condition in ("original", "noise"):
        out = tmp_path / condition
        run_cli(["run", "--model", "lalm", "--model_args",
                 f"pretrained={tiny_audio_lm},audio={condition},noise_seconds=1,"
                 "results_cache=none", "--tasks", "mtg_top50", "--limit", "3", "--batch_size", "32",
                 "--metadata", json.dumps(tagging_data), "--device", "cpu",
                 "--output_path", str(out), "--log_samples"])  # fmt: skip
        results, samples = read_output(out)
        rows = samples["mtg_top50"]
        assert {r["doc"]["audio_window"] == [0.0, 1.5] for r in rows} == {True}
        assert set(results["results"]["mtg_top50"]) >= {"roc_auc,none", "pr_auc,none"}
        heard = rows[0]["doc"]["audio_heard"]
        assert ("14/214.mp3 [0-1.5 s]" in heard) == (condition == "original")
        scores[condition] = [s for r in rows for s in _scores(r)]
    assert not np.allclose(scores["original"], scores["noise"])
    report_dir = tmp_path / "report"
    run_cli(["report", str(tmp_path / "original"), str(tmp_path / "noise"), "--out",
             str(report_dir), "--n-resamples", "99"])  # fmt: skip
    tagging = json.loads((report_dir / "report.json").read_text())["tagging"]
    section = tagging["tasks"]["mtg_top50"]
    assert [r["condition"] for r in section["rows"]] == ["original", "noise"]
    assert section["rows"][0]["n"] == 3 and section["baseline"]["micro_f1"] > 0
    (gain,) = section["gains"]
    assert gain["versus"] == "noise" and gain["metric"] == "roc_auc" and gain["n"] == 3
    assert gain["low"] <= gain["high"]
    assert gain["estimate"] == pytest.approx(
        section["rows"][0]["roc_auc"] - section["rows"][1]["roc_auc"]
    )
    assert len(section["per_tag"]["original"]) == len(section["per_tag"]["tags"]) > 0
    assert (report_dir / tagging["figures"]["mtg_top50"]).is_file()
    text = (report_dir / "report.md").read_text()
    assert "## Music tagging" in text and "Popularity baseline" in text
    assert "![per-tag ROC-AUC, original vs noise](figures/tagging_per_tag_auc_mtg_top50_" in text


#: Scripted replies and what each names, written out by hand (the independent reading).
GENRE_REPLIES = {
    "Hip-hop.": {"hiphop"}, "pop or rock": set(), "It is blues": {"blues"},
    "Jazz, I think.": {"jazz"}, "": set(), "Not country: metal": {"metal"},
}  # fmt: skip
#: reply -> (tags it names in the MTG-Jamendo top-50 fixture, in MagnaTagATune's top 50):
#: MagnaTagATune reads exact forms only ("guitars" is not "guitar": it has vocal and vocals).
TAG_REPLIES = {
    "Alternative rock with electric guitars.": (
        {"genre---alternativerock", "instrument---electricguitar"}, {"rock"}),
    "I hear hip hop and electronic music, not rock.": (
        {"genre---hiphop", "genre---electronic"}, {"electronic"}),
    "Sorry, I cannot tell without hearing it.": (set(), set()),
    "ambient, piano, relaxing; no drums": (
        {"genre---ambient", "instrument---piano", "mood/theme---relaxing"}, {"ambient", "piano"}),
    "Classical and film music, sad.": ({"genre---classical", "mood/theme---film"}, {"classical"}),
    "No vocals, a sitar, slow; not techno": (set(), {"no vocals", "sitar", "slow"}),
    "Loud rock guitar and a male vocal.": (
        {"genre---rock"}, {"loud", "rock", "guitar", "male vocal"}),
}  # fmt: skip


def test_served_free_text_answers_are_scored_on_their_parsed_sets(tagging_data, tmp_path):
    lock = threading.Lock()
    genre_cycle, tag_cycle = itertools.cycle(GENRE_REPLIES), itertools.cycle(TAG_REPLIES)

    def reply(body: dict) -> str:
        with lock:
            gtzan = "Identify the genre" in body["messages"][-1]["content"]
            return next(genre_cycle) if gtzan else next(tag_cycle)

    out = tmp_path / "served"
    with ChatServer(reply) as server:
        run_cli(["run", "--model", "local-chat-completions", "--model_args",
                 f"base_url={server.url},model=stand-in,max_retries=1", "--apply_chat_template",
                 "--tasks", "gtzan_gen,mtg_top50_gen,magnatagatune_gen",
                 "--metadata", json.dumps(tagging_data), "--output_path", str(out),
                 "--log_samples"])  # fmt: skip
    results, samples = read_output(out)
    rows = samples["gtzan_gen"]
    named = [GENRE_REPLIES[r["resps"][0][0]] for r in rows]
    gold = [set(r["doc"]["gold_tags"]) for r in rows]
    right = [len(n) == 1 and n == g for n, g in zip(named, gold, strict=True)]
    assert results["results"]["gtzan_gen"]["acc,none"] == pytest.approx(np.mean(right))
    assert results["results"]["gtzan_gen"]["parse_failure,none"] == pytest.approx(
        np.mean([len(n) != 1 for n in named])
    )
    for column, task in enumerate(("mtg_top50_gen", "magnatagatune_gen")):
        rows = samples[task]
        pairs = [(TAG_REPLIES[r["resps"][0][0]][column], set(r["doc"]["gold_tags"])) for r in rows]
        tp = sum(len(p & g) for p, g in pairs)
        fp = sum(len(p - g) for p, g in pairs)
        fn = sum(len(g - p) for p, g in pairs)
        figures = results["results"][task]
        assert figures["micro_f1,none"] == pytest.approx(2 * tp / (2 * tp + fp + fn))
        assert figures["micro_precision,none"] == pytest.approx(tp / (tp + fp))
        assert figures["parse_failure,none"] == pytest.approx(np.mean([not p for p, _ in pairs]))
    assert any(not TAG_REPLIES[r["resps"][0][0]][0] for r in samples["mtg_top50_gen"])


def _top_reply(top: list[tuple[str, float]]):
    import json

    from doubles.scripted_http import Answer

    entries = [{"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in top]
    first = {**entries[0], "top_logprobs": entries}
    choice = {"index": 0, "message": {"role": "assistant", "content": top[0][0]},
              "logprobs": {"content": [first]}, "finish_reason": "length"}  # fmt: skip
    return Answer(200, json.dumps({"id": "x", "object": "chat.completion",
                                   "choices": [choice]}).encode())  # fmt: skip


def test_tag_likelihoods_over_top_tokens_match_case_variants_and_stay_finite(tmp_path):
    import itertools
    import json
    import math
    import threading

    from doubles.scripted_http import Answer, ScriptedServer

    from lm_eval_rul.testing.harness import read_output, run_cli

    mtg = write_mtg(tmp_path / "mtg")
    tops = itertools.cycle([
        [(" yes", -0.2), ("Yes", -1.8)],  # "no" left out: yes is the likelier
        [("Yes", -0.5), ("No", -1.0)],  # both, capitalised, no space
        [("NO", -0.3), (" no", -2.0)],
        [("Maybe", -0.1), ("Sure", -2.5)],  # neither: no score can be formed
    ])  # fmt: skip
    lock = threading.Lock()

    def answer(request) -> Answer:
        if request.method == "GET":
            return Answer(200, b'{"object": "list", "data": []}')
        with lock:
            return _top_reply(next(tops))

    out = tmp_path / "out"
    metadata = {"mtg_data_dir": str(mtg["data"]), "mtg_audio_dir": str(mtg["audio"]),
                "tagging_seconds": 1.5}  # fmt: skip
    with ScriptedServer(answer) as server:  # 53.4
        run_cli(["run", "--model", "lalm-api", "--model_args",
                 f"base_url={server.url},model=tiny-audio,logprobs=top,results_cache=none,"
                 "retry_backoff=0,num_concurrent=1", "--tasks", "mtg_genre",
                 "--metadata", json.dumps(metadata), "--output_path", str(out),
                 "--log_samples"])  # fmt: skip
    results, samples = read_output(out)
    figures = results["results"]["mtg_genre"]
    assert all(math.isfinite(figures[f"{name},none"]) for name in ("roc_auc", "pr_auc", "micro_f1"))
    records = [row["roc_auc"] for row in samples["mtg_genre"]]
    n_tags = len(records[0]["tags"])
    scores = [s for r in records for s in r["scores"]]
    assert len(scores) == 8 * n_tags
    unscored = sum(len(r["unscored"]) for r in records)
    assert unscored == len(scores) // 4  # every fourth reply: counted, scored 0
    assert sum(s == math.inf for s in scores) == len(scores) // 4
    assert sum(s == -math.inf for s in scores) == len(scores) // 4
    assert sum(s == 0.5 for s in scores) == len(scores) // 4  # "Yes"/"No" matched
    missing = {k: v for k, v in results["config"].items() if "missing_from_top" in str(k)}
    assert missing, results["config"].keys()
    from lm_eval_rul.models.api_payload import top_path_scores

    # a word's case variants add up; a letter keeps its case ("a" is a word, not option A)
    assert top_path_scores([("Yes", -2.0), (" yes", -2.0), ("a", -0.5)], [" yes", " A"]) == [
        (pytest.approx(math.log(2 * math.exp(-2.0))), False), None]
