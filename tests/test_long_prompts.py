"""A scoring prompt longer than the model's context is never cut from the left: an error
naming the questions, or (when asked) skipped and counted. Tiny real Qwen2 LM, offline."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import pytest

from lm_eval_rul.mcqa import PromptTooLongError, overlong_prompts, pi_prompt
from lm_eval_rul.questions import DEFAULT_SEED, limited_sample
from lm_eval_rul.testing.harness import run_cli

CONTEXT = 80  # tokens: the fixture's filter prompts (7 options) are longer, PI prompts not all


@pytest.fixture(scope="module")
def short_lm(tiny_lm):
    from lm_eval_rul.registration import create_lm

    return create_lm("hf", f"pretrained={tiny_lm},max_length={CONTEXT}", device="cpu")


def test_flags_exactly_the_prompts_the_harness_would_cut(short_lm, caplog):
    """Against the harness itself: a prompt is flagged iff ``hf`` logs "Truncating" for it."""
    from lm_eval_rul.mcqa.letter_scoring import letter_instances

    options = ["violin", "a very long and winding description of a cello"] * 4
    contexts = [pi_prompt("Which instrument?", options[:n], style="release") for n in range(2, 9)]
    flagged, limit = overlong_prompts(short_lm, contexts, [2] * len(contexts))
    assert limit == CONTEXT and flagged and len(flagged) < len(contexts)
    for index, context in enumerate(contexts):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="lm_eval.models.huggingface"):
            short_lm.loglikelihood(letter_instances([context], [2]), disable_tqdm=True)
        cut = any("Truncating" in record.getMessage() for record in caplog.records)
        assert cut == (index in flagged), (index, flagged)


def test_generation_flags_exactly_the_contexts_the_harness_would_cut(short_lm, caplog):
    """Against the harness itself: a ``generate_until`` context is flagged iff ``hf`` logs
    "Left truncation applied" for it (the room is ``max_length - max_gen_toks``)."""
    from lm_eval.api.instance import Instance

    from lm_eval_rul.cli.long_prompts import check_generation_fits
    from lm_eval_rul.mcqa import gen_prompt

    gen_kwargs = {"until": [], "max_gen_toks": 16, "do_sample": False}
    options = ["violin", "a cello"]
    questions = ["Which?", "Which instrument plays?", "Which instrument plays the tune?"]
    contexts = [gen_prompt(q, options) for q in questions]
    contexts += [c[: len(c) // 2] for c in contexts]
    flagged = []
    for index, context in enumerate(contexts):
        request = Instance("generate_until", {"benchmark": "b", "id": str(index)},
                           (context, gen_kwargs), idx=0)  # fmt: skip
        try:
            check_generation_fits(short_lm, [request])
        except PromptTooLongError as error:
            flagged.append(index)
            assert error.limit == CONTEXT - 16 and f"b:{index}" in error.lengths
            assert "a generation prompt longer than the 64 tokens the model's context of 80" in (
                str(error)
            )
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="lm_eval.models.huggingface"):
            short_lm.generate_until([request], disable_tqdm=True)
        cut = any("Left truncation applied" in r.getMessage() for r in caplog.records)
        assert cut == (index in flagged), (index, flagged)
    assert flagged and len(flagged) < len(contexts)


def test_run_stops_before_generating_from_a_prompt_it_would_cut(tiny_lm, data_dir, tmp_path):
    from lm_eval_rul.testing.harness import text_run_args

    args = text_run_args(tiny_lm, data_dir, tmp_path, "rul_muchomusic_gen", "--limit", "2")
    args[args.index("--model_args") + 1] += ",max_length=580"  # 580 - 512 to generate = 68
    done = run_cli(args, check=False)
    assert done.returncode == 2 and "Left truncation" not in done.stderr
    (line,) = [x for x in done.stderr.splitlines() if "error:" in x]
    assert "PromptTooLongError" in line and "a generation prompt longer than the 68 tokens" in line
    assert "ids rul_muchomusic:" in line and "--gen_kwargs max_gen_toks=N" in line
    assert not list(tmp_path.rglob("results_*.json"))
    # less room for the answer: the same prompts fit and the run goes through
    run_cli([*args, "--gen_kwargs", "max_gen_toks=4"])
    assert list(tmp_path.rglob("results_*.json"))


def _build(tiny_lm, data_dir, tmp_path, *extra: str):
    return [
        "build", "--pools", data_dir / "pools.json", "--model", "hf", "--model_args",
        f"pretrained={tiny_lm},max_length={CONTEXT}", "--output", tmp_path / "rul.json",
        "--no_progress", *extra,
    ]  # fmt: skip


def test_build_with_a_short_context_names_the_questions_then_skips_them(
    tiny_lm, data_dir, tmp_path
):
    done = run_cli(_build(tiny_lm, data_dir, tmp_path), check=False)
    assert done.returncode == 2
    assert "Truncating" not in done.stderr
    (line,) = [x for x in done.stderr.splitlines() if "error:" in x]
    assert "PromptTooLongError" in line and f"context of {CONTEXT} tokens: ids " in line
    named = [part.split(" (")[0] for part in line.split("ids ", 1)[1].split("). ")[0].split(", ")]
    checkpoint = tmp_path / "rul.json.filter.ckpt.jsonl"
    done_ids = [json.loads(x)["id"] for x in checkpoint.read_text().splitlines()[1:]]
    pools = json.loads((data_dir / "pools.json").read_text())
    assert named and done_ids and sorted(named + done_ids, key=int) == sorted(pools, key=int)
    assert not (tmp_path / "rul.json").exists()

    skipped = run_cli(_build(tiny_lm, data_dir, tmp_path, "--long_prompts", "skip"))
    assert "Truncating" not in skipped.stderr
    report = json.loads((tmp_path / "rul.report.json").read_text())
    failed = {f["id"]: f["error"] for f in report["failures"]}
    assert sorted(failed) == sorted(named) and report["n_written"] == len(done_ids)
    assert all(f"longer than the scorer's context of {CONTEXT}" in e for e in failed.values())
    assert_docs_build_lines_match(skipped.stdout.strip().splitlines()[-1])


def assert_docs_build_lines_match(printed: str) -> None:
    """The build example of docs/pi_build.md (a tiny model, whose context is too short for
    some released prompts) passes --long_prompts skip and shows lines shaped like
    ``printed``."""
    section = (Path(__file__).parents[1] / "docs" / "pi_build.md").read_text(encoding="utf-8")
    command = section.split("pretrained=TINY_MODEL", 1)[1].split("```", 1)[0]
    assert "--long_prompts skip" in command
    shape = re.sub(r"\d+(\.\d+)?", "<n>", re.sub(r" to \S+;", " to <file>;", printed))
    shown = re.findall(r"wrote \d+ of \d+ questions.*?PI \d\.\d+", " ".join(section.split()))
    assert len(shown) >= 2, "the page shows the full and the 8-question build's line"
    for line in shown:
        assert re.sub(r"\d+(\.\d+)?", "<n>", re.sub(r" to \S+;", " to <file>;", line)) == shape


def test_pi_errors_before_scoring_or_skips_and_lists_the_questions(tiny_lm, data_dir, tmp_path):
    args = [
        "pi", "--data", data_dir / "rul.json", "--model", "hf", "--model_args",
        f"pretrained={tiny_lm},max_length=60", "--output", tmp_path / "pi.jsonl",
    ]  # fmt: skip
    done = run_cli(args, check=False)
    assert done.returncode == 2 and "PromptTooLongError" in done.stderr
    assert not (tmp_path / "pi.jsonl").exists()
    run_cli([*args, "--long_prompts", "skip"])
    summary = json.loads((tmp_path / "pi.summary.json").read_text())
    skipped = summary["skipped"]["long_prompts"]
    rows = [json.loads(x) for x in (tmp_path / "pi.jsonl").read_text().splitlines()]
    assert skipped["limit"] == 60 and skipped["n"] == len(skipped["tokens"]) > 0
    assert all(n > 61 for n in skipped["tokens"].values())
    assert len(rows) + skipped["n"] == 8 and not {r["id"] for r in rows} & set(skipped["tokens"])


def test_pi_skip_with_every_question_too_long_stops_before_writing(tiny_lm, data_dir, tmp_path):
    """Nothing left to score is an error (exit 2, one line), not an empty summary crash."""
    args = [
        "pi", "--data", data_dir / "rul.json", "--model", "hf", "--model_args",
        f"pretrained={tiny_lm},max_length=20", "--output", tmp_path / "pi.jsonl",
        "--long_prompts", "skip",
    ]  # fmt: skip
    done = run_cli(args, check=False)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    (line,) = [x for x in done.stderr.splitlines() if "error:" in x]
    assert "PromptTooLongError: 8 question(s)" in line
    assert "--long_prompts skip would leave no question to score" in line
    assert not list(tmp_path.iterdir())  # neither rows nor a summary


def test_build_limit_takes_the_seeded_sample(tiny_lm, data_dir, tmp_path):
    """``build --limit 3`` builds the three questions a task's ``--limit 3`` runs (the
    seeded sample with the default seed), not the file's first three."""
    run_cli(
        ["build", "--pools", data_dir / "pools.json", "--model", "hf", "--model_args",
         f"pretrained={tiny_lm}", "--output", tmp_path / "rul.json", "--limit", "3",
         "--no_progress"]
    )  # fmt: skip
    written = json.loads((tmp_path / "rul.json").read_text())
    ids = list(json.loads((data_dir / "pools.json").read_text()))
    sample = limited_sample(ids, limit=3, seed=DEFAULT_SEED, item_id=str)
    assert sorted(written) == sorted(sample) and sorted(written) != sorted(ids[:3])
    assert json.loads((tmp_path / "rul.report.json").read_text())["n_questions"] == 3


def test_error_lists_ten_and_counts_the_rest():
    error = PromptTooLongError({str(i): 100 + i for i in range(12)}, 64)
    assert str(error).startswith("12 question(s) have a scoring prompt longer than the model")
    assert "9 (109 tokens) and 2 more" in str(error)


def test_run_stops_before_scoring_a_prompt_it_would_cut(tiny_lm, data_dir, tmp_path):
    from lm_eval_rul.testing.harness import text_run_args

    args = text_run_args(tiny_lm, data_dir, tmp_path, "rul_muchomusic", batch_size=2)
    args[args.index("--model_args") + 1] += ",max_length=64"
    done = run_cli(args, check=False)
    assert done.returncode == 2 and "Truncating" not in done.stderr
    (line,) = [x for x in done.stderr.splitlines() if "error:" in x]
    assert "PromptTooLongError" in line and "context of 64 tokens: ids rul_muchomusic:" in line
    assert not list(tmp_path.rglob("results_*.json"))


def test_the_no_tokenizing_shortcut_never_lets_a_long_prompt_through(short_lm):
    """``fits_surely`` skips tokenizing short prompts: check it against the real tokenizer on
    texts that tokenize badly (non-ASCII, digits, emoji), around the limit."""
    import random

    from lm_eval_rul.mcqa.letter_scoring import fits_surely, request_tokens

    rng = random.Random(0)
    alphabet = "aé中🎵 7.,'(\n" + "Which instrument?"
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 120)))
        if fits_surely(text + " A", CONTEXT):
            assert request_tokens(short_lm, text, " A") <= CONTEXT + 1, text


def test_a_huge_question_is_tokenised_once_before_its_error(short_lm, monkeypatch):
    """A 1 MB question text: the PI's 16 prompts x 4 letters were each encoded twice (128
    tokenisations, minutes) before ``PromptTooLongError``; now the question is measured
    once, and a prompt near the limit still exactly as the harness encodes it."""
    from lm_eval_rul.distractors import long_prompt_questions
    from lm_eval_rul.mcqa.letter_scoring import longest_request_tokens, request_tokens
    from lm_eval_rul.questions import Question

    huge = "Which instrument plays the opening bars of this very long piece? " * 16_000
    questions = [
        Question(id="huge", question=huge, correct_answer="violin",
                 distractors=["cello", "flute", "oboe"]),
        Question(id="short", question="Which?", correct_answer="violin",
                 distractors=["cello", "flute", "oboe"]),
    ]  # fmt: skip
    encoded: list[int] = []
    original = type(short_lm).tok_encode

    def counting(self, string, *args, **kwargs):
        encoded.append(len(string))
        return original(self, string, *args, **kwargs)

    monkeypatch.setattr(type(short_lm), "tok_encode", counting)
    lengths, limit = long_prompt_questions(short_lm, questions)
    assert list(lengths) == ["huge"] and lengths["huge"] > 200_000 and limit == CONTEXT
    assert sum(encoded) < 2 * len(huge)  # read once (it was 128 times)
    # near the limit the count is the harness's own, letter by letter
    near = "Which instrument plays? " * 6
    assert longest_request_tokens(short_lm, near, [" A", " B"], CONTEXT) == max(
        request_tokens(short_lm, near, " A"), request_tokens(short_lm, near, " B")
    )
