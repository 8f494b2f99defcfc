"""The build pipeline: pools -> filter -> dataset + report, generation through a loopback
chat-completions server, checkpoints, resume, retries and per-question failures."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_distractors import chat_lm, scripted_server

from lm_eval_rul.distractors import BuildConfig, CheckpointMismatch, run_build, with_retries
from lm_eval_rul.questions import (
    DEFAULT_SEED,
    DataValidationError,
    normalize_answer,
    read_pools,
    sample_order,
)
from lm_eval_rul.questions import load_questions_without_distractors as load_generation_questions
from lm_eval_rul.registration import create_lm
from lm_eval_rul.testing.fixtures import fixture_rows


class CountingLM:
    """Forwards ``loglikelihood`` to a real model, counting calls; raises after ``fail_after``."""

    def __init__(self, lm, fail_after: int | None = None):
        self.lm = lm
        self.fail_after = fail_after
        self.calls = 0

    def loglikelihood(self, requests, disable_tqdm=False):
        if self.fail_after is not None and self.calls >= self.fail_after:
            raise RuntimeError("scorer crashed (simulated interruption)")
        self.calls += 1
        return self.lm.loglikelihood(requests, disable_tqdm=disable_tqdm)


@pytest.fixture(scope="module")
def hf_lm(tiny_lm):
    return create_lm("hf", f"pretrained={tiny_lm},dtype=float32", device="cpu", batch_size=8)


def _config(tmp: Path, **kwargs) -> BuildConfig:
    defaults = dict(model="hf", model_args="pretrained=tiny", progress=False, backoff=0.1)
    return BuildConfig(output=tmp / "out.json", **{**defaults, **kwargs})


def _load(path: Path) -> dict:
    return json.loads(path.read_text())


def test_with_retries_backs_off_then_raises():
    delays: list[float] = []
    attempts = []

    def flaky():
        attempts.append(1)
        if len(attempts) < 3:
            raise ConnectionError("down")
        return "ok"

    assert with_retries(flaky, retries=3, backoff=0.5, what="x", sleep=delays.append) == "ok"
    assert delays == [0.5, 1.0]

    def broken():
        raise ConnectionError("still down")

    delays.clear()
    with pytest.raises(ConnectionError, match="still down"):
        with_retries(broken, retries=2, backoff=1.0, what="x", sleep=delays.append)
    assert delays == [1.0, 2.0]


def test_pools_build_writes_released_schema_sorted_by_pi(tmp_path, data_dir, hf_lm):
    pools_path = data_dir / "pools.json"
    config = _config(tmp_path, pools=pools_path, reference=data_dir / "rul.json", strategy="paper")
    lm = CountingLM(hf_lm)
    report = run_build(config, lm=lm)
    out = _load(config.output)
    pools = {q.id: q for q in read_pools(pools_path)[0]}
    assert set(out) == set(pools) and report["n_written"] == 8 and report["n_failed"] == 0
    pis = [row["PI"] for row in out.values()]
    assert pis == sorted(pis, reverse=True)
    for qid, row in out.items():
        assert set(row) == {"question", "caption", "correct_answer", "distractors", "PI"}
        norm = [normalize_answer(d) for d in row["distractors"]]
        assert len(set(norm)) == 4 and normalize_answer(row["correct_answer"]) not in norm
        assert set(row["distractors"]) <= set(pools[qid].distractors)
    # Cleaning counts (fixture pool "2" holds its correct answer and a duplicate) and PI before.
    assert report["cleaning"]["equal_to_correct"] == {"2": 1}
    assert report["cleaning"]["duplicates"] == {"2": 1}
    assert report["pi_change"]["n"] == 8 and len(report["per_question"]) == 8
    assert "## PI before" in config.output.with_name("out.report.md").read_text()
    # A checkpoint made with other arguments is refused, naming what differs.
    with pytest.raises(CheckpointMismatch, match="strategy: checkpoint 'paper', now 'release'"):
        run_build(_config(tmp_path, pools=pools_path, reference=data_dir / "rul.json"), lm=lm)
    # Rerun with the same arguments: nothing recomputed; --stage write alone rebuilds the file.
    calls = lm.calls
    run_build(config, lm=lm)
    assert lm.calls == calls
    config.output.unlink()
    again = run_build(_config(tmp_path, pools=pools_path, stage="write", strategy="paper"))
    assert _load(config.output) == out and again["n_written"] == 8


def test_interrupted_build_resumes_without_recomputing(tmp_path, data_dir, hf_lm):
    pools_path = data_dir / "pools.json"
    fresh = CountingLM(hf_lm)
    run_build(_config(tmp_path / "fresh", pools=pools_path), lm=fresh)
    expected = _load(tmp_path / "fresh" / "out.json")

    config = _config(tmp_path / "resumed", pools=pools_path)
    crashing = CountingLM(hf_lm, fail_after=7)
    with pytest.raises(RuntimeError, match="simulated interruption"):
        run_build(config, lm=crashing)
    lines = config.checkpoint_path("filter").read_text().splitlines()
    done = len(lines) - 1
    assert 0 < done < 8
    rerun = CountingLM(hf_lm)
    run_build(config, lm=rerun)
    assert _load(config.output) == expected
    # Each question costs the same calls, so the rerun did exactly the unfinished ones.
    per_question = fresh.calls / 8
    assert rerun.calls == pytest.approx(per_question * (8 - done))
    assert config.checkpoint_path("filter").read_text().splitlines()[: done + 1] == lines


def test_limited_build_resumes_the_same_sample(tmp_path, data_dir, hf_lm):
    """``--limit 3`` builds the tasks' seeded sample of 3; an interrupted rerun with the same
    ``--limit`` resumes those very questions, and a run without it adds only the others."""
    pools_path = data_dir / "pools.json"
    ids = [q.id for q in read_pools(pools_path)[0]]
    sample = sample_order(ids, seed=DEFAULT_SEED, item_id=str)[:3]
    assert set(sample) != set(ids[:3])  # else the test could not tell sample from prefix
    config = _config(tmp_path, pools=pools_path, limit=3)
    crashing = CountingLM(hf_lm, fail_after=2)
    with pytest.raises(RuntimeError, match="simulated interruption"):
        run_build(config, lm=crashing)
    checkpoint = config.checkpoint_path("filter")
    done = [json.loads(line)["id"] for line in checkpoint.read_text().splitlines()[1:]]
    assert 0 < len(done) < 3 and set(done) <= set(sample)
    rerun = CountingLM(hf_lm)
    report = run_build(config, lm=rerun)
    assert set(_load(config.output)) == set(sample) and report["n_written"] == 3
    per_question = rerun.calls / (3 - len(done))
    whole = CountingLM(hf_lm)
    run_build(_config(tmp_path, pools=pools_path), lm=whole)
    assert set(_load(config.output)) == set(ids)
    assert whole.calls == pytest.approx(per_question * (len(ids) - 3))


def test_small_pools_get_failure_records(tmp_path, hf_lm):
    rows = fixture_rows(3)
    first = next(iter(rows))
    rows[first]["distractors"] = rows[first]["distractors"][:3]
    for qid in list(rows)[1:]:
        rows[qid]["distractors"] = ["a", "b", "c", "d", "e", "f", "g"]
    pools_path = tmp_path / "pools.json"
    pools_path.write_text(json.dumps(rows))
    report = run_build(_config(tmp_path, pools=pools_path, strategy="paper"), lm=hf_lm)
    assert report["n_written"] == 2 and report["n_failed"] == 1
    (failure,) = report["failures"]
    assert failure["id"] == first and "3 clean candidate(s), 4 needed" in failure["error"]
    assert first not in _load(tmp_path / "out.json")
    assert "## Failures" in (tmp_path / "out.report.md").read_text()


def test_generation_build_through_chat_completions_server(tmp_path, data_dir, hf_lm):
    tags = "".join(f"<distractor>{d}</distractor>" for d in ("Harp", "Oboe", "Tuba"))
    script = {
        0: ["No tags here.", tags + "<distractor>Banjo</distractor>", tags],
        1: [503],  # always fails: a failure record, then retried by the next run
        2: ["<distractor>Harp</distractor><distractor>harp</distractor>"],  # too few
        3: [tags + "<distractor>Lute</distractor><distractor>Sitar</distractor>"],
    }
    rows = dict(list(fixture_rows(4).items()))
    data = tmp_path / "questions.json"
    data.write_text(json.dumps(rows))
    delays: list[float] = []
    with scripted_server(script) as server:
        config = _config(
            tmp_path,
            data=data,
            generator="local-chat-completions",
            generator_args=f"base_url={server.url},model=fake-llm,max_retries=1",
            n_batches=3,
            retries=2,
        )
        generator = chat_lm(server.url)
        report = run_build(config, lm=hf_lm, generator_lm=generator, sleep=delays.append)
        assert delays == [0.1, 0.2]  # the failing call: two retries with backoff
        gen = report["generation"]
        assert gen["replies"] == 9 and gen["replies_without_candidates"] == 1
        assert list(gen["failed_calls"]) == ["5"]
        failures = {f["id"]: f["stage"] for f in report["failures"]}
        assert failures == {"5": "generate", "8": "filter"}
        out = _load(config.output)
        assert set(out) == {"2", "11"} and report["pi_change"]["n"] == 2
        assert set(out["2"]["distractors"]) <= {"Harp", "Oboe", "Tuba", "Banjo"}
        # The server recovers; the rerun asks only for the failed question.
        server.script[1] = [tags + "<distractor>Lyre</distractor>"]
        n_requests = len(server.requests)
        report = run_build(config, lm=hf_lm, generator_lm=generator, sleep=delays.append)
        assert len(server.requests) - n_requests == 3
    assert set(_load(config.output)) == {"2", "5", "11"}
    assert report["n_failed"] == 1 and report["generation"]["failed_calls"] == {}


def test_generation_input_may_omit_distractors(tmp_path):
    path = tmp_path / "q.jsonl"
    rows = [
        {"id": 1, "question": "Mood?", "correct_answer": "calm", "caption": "Soft."},
        {"id": 2, "question": "Tempo?", "correct_answer": "fast"},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows))
    questions = load_generation_questions(path)
    assert [(q.id, q.distractors, q.caption) for q in questions] == [
        ("1", (), "Soft."),
        ("2", (), None),
    ]
    path.write_text(json.dumps(rows[0]) + "\n" + json.dumps({"id": 3, "question": "Key?"}))
    with pytest.raises(DataValidationError, match="id '3'.*missing field.*correct_answer"):
        load_generation_questions(path)


def test_generation_input_reuses_the_readers_validation(tmp_path):
    path = tmp_path / "q.json"
    # A repeated id in a JSON object used to be merged silently by json.loads.
    path.write_text(
        '{"1": {"question": "Mood?", "correct_answer": "calm"},'
        ' "1": {"question": "Tempo?", "correct_answer": "fast"}}'
    )
    with pytest.raises(DataValidationError, match="id '1': appears more than once"):
        load_generation_questions(path)
    path.write_text(
        json.dumps(
            {
                "1": {"question": "Mood?", "correct_answer": "calm"},
                "2": {"question": "Key?", "correct_answer": "D", "distractors": ["d", "E"]},
            }
        )
    )
    with pytest.raises(DataValidationError, match="id '2': distractor 'd' equals the correct"):
        load_generation_questions(path)


GEN_SCRIPT = {
    0: ["<distractor>Harp</distractor><distractor>Oboe</distractor>"
        "<distractor>Tuba</distractor><distractor>Banjo</distractor>"],
    1: [503],  # the generator call fails: a generate failure
    2: ["No tags at all."],  # no parsable candidate: an empty pool, a filter failure
    3: ["<distractor>Lute</distractor><distractor>Sitar</distractor><distractor>Harp"
        "</distractor><distractor>Oboe</distractor><distractor>Tuba</distractor>"],
}  # fmt: skip


def test_staged_build_carries_every_question_and_failure_to_the_report(tmp_path, hf_lm):
    data = tmp_path / "questions.json"
    data.write_text(json.dumps(fixture_rows(4)))
    staged, whole = tmp_path / "staged", tmp_path / "whole"
    with scripted_server(GEN_SCRIPT) as server:
        gen = dict(
            generator="local-chat-completions",
            generator_args=f"base_url={server.url},model=fake-llm,max_retries=1",
            n_batches=1,
            retries=0,
        )
        generator = chat_lm(server.url)
        expected = run_build(_config(whole, data=data, **gen), lm=hf_lm, generator_lm=generator)
        run_build(
            BuildConfig(
                output=staged / "gen.json", data=data, stage="generate", progress=False, **gen
            ),
            generator_lm=generator,
        )
    pools = _load(staged / "gen.json")
    assert list(pools) == ["2", "5", "8", "11"]  # nothing left out, in order
    assert pools["8"]["distractors"] == [] and pools["5"]["build_failure"]["stage"] == "generate"
    clean = BuildConfig(output=staged / "clean.json", pools=staged / "gen.json", stage="clean")
    run_build(clean)  # an empty pool no longer refuses the whole file
    filtered = _config(staged, pools=staged / "clean.json", reference=data, stage="filter")
    run_build(filtered, lm=hf_lm)
    report = run_build(_config(staged, pools=staged / "clean.json", stage="write"))
    assert {f["id"]: f["stage"] for f in report["failures"]} == {"5": "generate", "8": "filter"}
    assert "0 clean candidate(s), 4 needed" in report["failures"][1]["error"]
    assert report["n_questions"] == 4 and report["missing"] == [] and report["n_written"] == 2
    assert report["generation"]["failed_calls"].keys() == {"5"}
    assert report["generation"]["questions_without_candidates"] == ["8"]
    assert report["cleaning"] == expected["cleaning"]
    for key in ("n_written", "n_failed", "failures", "missing", "per_question"):
        assert report[key] == expected[key], key
    assert _load(staged / "out.json") == _load(whole / "out.json")


def test_share_above_chance_uses_each_questions_option_count(tmp_path, data_dir, hf_lm):
    # originals with two distractors (3 options, chance 2/3); the built ones have four, and
    # both protocols score four options per prompt (chance 0.75)
    rows = [
        {"id": qid, "question": r["question"], "correct_answer": r["correct_answer"],
         "distractors": r["distractors"][:2]}
        for qid, r in fixture_rows(8).items()
    ]  # fmt: skip
    reference = tmp_path / "two_distractors.jsonl"
    reference.write_text("".join(json.dumps(r) + "\n" for r in rows))
    config = _config(
        tmp_path, pools=data_dir / "pools.json", reference=reference, protocol="paper"
    )
    report = run_build(config, lm=hf_lm)
    assert report["pi_after"]["chance"] == pytest.approx(0.75)
    assert report["pi_before"]["chance"] == pytest.approx(2 / 3)
    lines = config.checkpoint_path("filter").read_text().splitlines()[1:]
    records = {r["id"]: r for r in map(json.loads, lines)}
    pis = [r["pi"] for r in records.values()]
    assert report["pi_after"]["share_above_chance"] == pytest.approx(
        sum(pi > 0.75 for pi in pis) / len(pis)
    )
    assert all(r["chance"] == pytest.approx(0.75) for r in records.values())
    change = report["pi_change"]
    assert change["same_option_count"] is False and "different option counts" in change["note"]
    assert change["mean_above_chance_after"] == pytest.approx(change["mean_after"] - 0.75)
    assert "different option counts" in (tmp_path / "out.report.md").read_text()


def test_prompt_style_is_its_own_option(tmp_path, data_dir, hf_lm):
    class Recording(CountingLM):
        contexts: list[str] = []

        def loglikelihood(self, requests, disable_tqdm=False):
            self.contexts += [r.arguments[0] for r in requests]
            return super().loglikelihood(requests, disable_tqdm)

    assert BuildConfig(output=tmp_path / "x.json", strategy="paper").prompt_style == "paper"
    config = _config(tmp_path, pools=data_dir / "pools.json", prompt_style="paper", stage="filter")
    lm = Recording(hf_lm)
    run_build(config, lm=lm)
    filter_prompts = [c for c in lm.contexts if "(A) " in c]
    assert filter_prompts and all("; B. " not in c for c in filter_prompts)
    header = json.loads(config.checkpoint_path("filter").read_text().splitlines()[0])
    assert header["fingerprint"]["prompt_style"] == "paper"


def test_release_filter_shows_the_correct_answer_last_and_refuses_older_checkpoints(
    tmp_path, data_dir, hf_lm
):
    """``release`` shows ``chunk + [correct_answer]`` as the released code does; a filter
    checkpoint of the earlier ``release`` (correct answer anywhere) is not resumed."""

    class Recording(CountingLM):
        def __init__(self, lm):
            super().__init__(lm)
            self.contexts: list[str] = []

        def loglikelihood(self, requests, disable_tqdm=False):
            self.contexts += [r.arguments[0] for r in requests]
            return super().loglikelihood(requests, disable_tqdm)

    pools = {q.id: q for q in read_pools(data_dir / "pools.json")[0]}
    config = _config(tmp_path, pools=data_dir / "pools.json", stage="filter", strategy="release")
    lm = Recording(hf_lm)
    run_build(config, lm=lm)
    chunk_prompts = [c for c in lm.contexts if "; G. " in c and "; H. " not in c]
    assert chunk_prompts
    corrects = {q.correct_answer for q in pools.values()}
    for context in chunk_prompts:
        last = context.split("; G. ", 1)[1].split(". Answer without the parenthesis.")[0]
        assert last in corrects  # option G of a full chunk is the correct answer
    path = config.checkpoint_path("filter")
    lines = path.read_text().splitlines()
    header = json.loads(lines[0])
    assert header["fingerprint"]["release_option_order"].endswith("correct answer last")
    del header["fingerprint"]["release_option_order"]  # as the earlier release wrote it
    path.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    with pytest.raises(CheckpointMismatch, match="release_option_order: checkpoint None"):
        run_build(config, lm=lm)


# ------------------------------------------------------------------ failing fast, not slowly


def test_errors_no_retry_can_fix_are_raised_at_once():
    import requests

    from lm_eval_rul.distractors import permanent_error

    response = requests.Response()
    response.status_code = 401
    unauthorized = requests.HTTPError("401 Client Error: Unauthorized", response=response)
    delays: list[float] = []

    def call():
        raise unauthorized

    with pytest.raises(requests.HTTPError):
        with_retries(call, retries=5, backoff=1.0, what="x", sleep=delays.append)
    assert delays == []  # no sleeping on a wrong key
    assert "authentication failed" in permanent_error(unauthorized)
    response.status_code = 404
    assert "check base_url" in permanent_error(unauthorized)
    assert "programming error (TypeError)" in permanent_error(TypeError("bad keyword"))
    for transient in (503, 429, 500):
        response.status_code = transient
        assert permanent_error(unauthorized) is None
    assert permanent_error(TimeoutError("slow")) is None


def test_build_against_a_server_answering_401_stops_within_seconds(tmp_path):
    import time

    from lm_eval_rul.testing.harness import run_cli

    data = tmp_path / "questions.json"
    data.write_text(json.dumps(fixture_rows(4)))
    with scripted_server({k: [401] for k in range(4)}) as server:
        start = time.monotonic()
        done = run_cli(
            ["build", "--data", data, "--stage", "generate", "--generator",
             "local-chat-completions", "--generator_args",
             f"base_url={server.url},model=fake-llm", "--output", tmp_path / "pools.json"],
            check=False,
        )  # fmt: skip
        elapsed = time.monotonic() - start
        tracks = [int(re.findall(r"track (\d+)", r["messages"][-1]["content"])[-1])
                  for r in server.requests]  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "GeneratorFailure: build stopped" in done.stderr
    assert "HTTP 401, authentication failed" in done.stderr and "question '2'" in done.stderr
    # only the first question's call was made (the harness's own 3 attempts), no backoff
    assert set(tracks) == {0} and len(tracks) <= 3
    assert elapsed < 60  # the default retries/backoff would sleep 2+4+8 s per question


def test_the_same_error_on_the_first_questions_stops_the_run(tmp_path):
    from lm_eval_rul.distractors import FAIL_FAST_QUESTIONS, GeneratorFailure

    data = tmp_path / "questions.json"
    data.write_text(json.dumps(fixture_rows(6)))
    delays: list[float] = []
    with scripted_server({k: [503] for k in range(6)}) as server:  # transient, but always
        config = BuildConfig(
            output=tmp_path / "pools.json", data=data, stage="generate", progress=False,
            generator="local-chat-completions",
            generator_args=f"base_url={server.url},model=fake-llm,max_retries=1",
            n_batches=1, retries=1, backoff=0.1,
        )  # fmt: skip
        with pytest.raises(GeneratorFailure, match="each of the first 3 questions") as error:
            run_build(config, generator_lm=chat_lm(server.url), sleep=delays.append)
        assert len(server.requests) == FAIL_FAST_QUESTIONS * 2  # one retry each, then stop
    assert delays == [0.1] * FAIL_FAST_QUESTIONS
    assert "503" in str(error.value) and "rerun the same command" in str(error.value)
    records = config.checkpoint_path("generate").read_text().splitlines()[1:]
    assert [json.loads(r)["retryable"] for r in records] == [True] * FAIL_FAST_QUESTIONS


# ------------------------------------------------------------------ secrets in model_args


@pytest.mark.parametrize(
    "name",
    ["api_key", "key", "token", "auth_token", "access_token", "hf_token", "secret", "password",
     "openai_api_key", "my_key", "client_secret", "header", "API_KEY"],
)  # fmt: skip
def test_credentials_are_masked(name):
    from lm_eval_rul.distractors import redact_args

    assert redact_args(f"model=m,{name}=s3cr3t") == f"model=m,{name}=***"


@pytest.mark.parametrize(
    "name",
    ["tokenizer", "add_bos_token", "think_end_token", "pad_token", "max_gen_toks",
     "tokenizer_mode", "tokenized_requests", "pretrained", "base_url", "max_length"],
)  # fmt: skip
def test_settings_that_merely_mention_tokens_are_kept(name):
    from lm_eval_rul.distractors import redact_args

    assert redact_args(f"model=m,{name}=v1") == f"model=m,{name}=v1"


def test_a_checkpoint_made_with_another_tokenizer_is_refused(tmp_path):
    from lm_eval_rul.distractors import Checkpoint, redact_args

    path = tmp_path / "x.filter.ckpt.jsonl"
    Checkpoint(path, {"model_args": redact_args("pretrained=m,tokenizer=a,api_key=k1")})
    Checkpoint(path, {"model_args": redact_args("pretrained=m,tokenizer=a,api_key=k2")})  # same
    with pytest.raises(CheckpointMismatch, match="tokenizer=a.*tokenizer=b"):
        Checkpoint(path, {"model_args": redact_args("pretrained=m,tokenizer=b,api_key=k1")})
