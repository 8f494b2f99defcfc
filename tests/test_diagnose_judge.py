"""The LLM judge: verdict parsing, and judging through lm-eval's ``local-chat-completions``
model against an OpenAI-compatible server on 127.0.0.1; verdicts stored beside the rule
flags, parse and call failures counted, never guessed."""

from __future__ import annotations

import json

import pytest
from doubles.chat import ChatServer

from lm_eval_rul.diagnose import DiagnoseConfig, run_diagnose
from lm_eval_rul.diagnose.judge import (
    AnswerabilityJudge,
    judge_messages,
    parse_verdict,
    verdict_counts,
)
from lm_eval_rul.questions import Question
from lm_eval_rul.registration import create_lm


@pytest.mark.parametrize(
    "reply, verdict, status",
    [
        ("VERDICT: unanswerable\nREASON: it asks about the caption.", "unanswerable", "ok"),
        ("VERDICT: answerable\nREASON: timbre is audible", "answerable", "ok"),
        ("**Verdict:** Unanswerable", "unanswerable", "ok"),
        ("verdict - answerable", "answerable", "ok"),
        ("VERDICT: answerable or VERDICT: unanswerable\n...\nVERDICT: answerable", "answerable",
         "ok"),  # the template echoed, then the verdict: the last one counts
        ("The question is unanswerable.", None, "parse_failure"),  # no VERDICT line
        ("VERDICT: maybe", None, "parse_failure"),
        ("", None, "parse_failure"),
        (None, None, "parse_failure"),
    ],
)  # fmt: skip
def test_parse_verdict(reply, verdict, status):
    parsed = parse_verdict(reply)
    assert (parsed.verdict, parsed.status) == (verdict, status)
    if verdict and "REASON" in reply:
        assert parsed.reason


def test_judge_prompt_shows_question_options_and_the_format():
    pool = Question("7", "What makes it vintage?", "Effect", tuple(f"d{i}" for i in range(12)))
    system, user = judge_messages(pool, max_distractors=3)
    assert "never a caption" in system["content"]
    text = user["content"]
    assert "Question: What makes it vintage?" in text and "Correct answer: Effect" in text
    assert "- d2\n- ... and 9 more" in text and "- d3" not in text
    assert "VERDICT: answerable or VERDICT: unanswerable" in text


def scripted(body: dict) -> str | int:
    user = body["messages"][-1]["content"]
    if "description" in user:
        return "VERDICT: unanswerable\nREASON: it refers to a description."
    if "Which instrument" in user:
        return "VERDICT: answerable\nREASON: instruments can be heard."
    if "What is the mood" in user:
        return "Hard to say, the mood is subjective."  # no verdict: a parse failure
    return 500  # every call for this question fails


QUESTIONS = [
    Question("1", "Based on the description, which genre is this?", "Gospel", ("Rock", "Pop")),
    Question("2", "Which instrument carries the melody?", "Piano", ("Violin", "Flute")),
    Question("3", "What is the mood of the song?", "Calm", ("Tense", "Dark")),
    Question("4", "What tempo is it?", "Fast", ("Slow", "Moderate")),
]


def chat_lm(url: str):
    return create_lm("local-chat-completions", f"base_url={url},model=judge,max_retries=1")


def test_judge_through_local_chat_completions_counts_failures():
    with ChatServer(scripted) as server:
        judge = AnswerabilityJudge(chat_lm(server.url), retries=1, sleep=lambda _s: None)
        verdicts = judge.judge_all(QUESTIONS, chunk_size=4, progress=False)
    assert [verdicts[i].status for i in "1234"] == ["ok", "ok", "parse_failure", "call_failure"]
    assert verdicts["1"].verdict == "unanswerable" and "description" in verdicts["1"].reason
    assert verdicts["2"].verdict == "answerable"
    assert verdicts["3"].verdict is None and "subjective" in verdicts["3"].reply
    assert verdicts["4"].verdict is None and verdicts["4"].error
    assert verdict_counts(verdicts) == {
        "answerable": 1, "unanswerable": 1, "parse_failure": 1, "call_failure": 1,
    }  # fmt: skip
    # The chunk failed as a whole, then each question was asked alone (question 4 twice).
    assert judge.n_calls == 1 + 3 + 2
    sent = server.requests[-1]
    assert sent["messages"][0]["role"] == "system" and sent["temperature"] == 0


def test_judge_verdicts_sit_beside_the_rule_flags(tmp_path):
    data = tmp_path / "q.json"
    rows = {q.id: {"question": q.question, "correct_answer": q.correct_answer,
                   "distractors": list(q.distractors)} for q in QUESTIONS}  # fmt: skip
    data.write_text(json.dumps(rows))
    with ChatServer(scripted) as server:
        config = DiagnoseConfig(
            datasets=[f"mine={data}"], similarity=False, judge="local-chat-completions",
            judge_args=f"base_url={server.url},model=judge,max_retries=1", judge_retries=0,
            progress=False,
        )  # fmt: skip
        diagnosis = run_diagnose(config)
    by_id = {f["id"]: f for f in diagnosis.findings}
    assert by_id["1"]["rules"] == ["refers_to_description"]
    assert by_id["1"]["judge"]["verdict"] == "unanswerable"
    assert by_id["2"]["rules"] == [] and by_id["2"]["judge"]["verdict"] == "answerable"
    assert by_id["3"]["judge"]["status"] == "parse_failure"
    assert by_id["4"]["judge"]["status"] == "call_failure"
    summary = diagnosis.summary["datasets"][0]["judge"]
    assert summary["judged"] == 4 and summary["parse_failure"] == 1
    assert summary["call_failure"] == 1
    assert summary["unanswerable_among_flagged"] == 1 and summary["n_flagged_judged"] == 1
    assert summary["unanswerable_among_unflagged"] == 0 and summary["judge_only_ids"] == []
    assert diagnosis.summary["judge"]["model"] == "local-chat-completions"


def test_a_wrong_key_stops_the_judge_at_once():
    """401 for every request: one chunk call (the client's own attempt), no sleeping, and
    one JudgeFailure naming the status and what to check; not a call failure per question."""
    from lm_eval_rul.diagnose import JudgeFailure
    from lm_eval_rul.errors import UserInputError

    questions = [Question(str(i), f"Which tempo, {i}?", "Fast", ("Slow",)) for i in range(10)]
    waits: list[float] = []
    with ChatServer(lambda body: 401) as server:
        judge = AnswerabilityJudge(
            chat_lm(server.url), name="local-chat-completions", retries=2, sleep=waits.append
        )
        with pytest.raises(JudgeFailure) as stopped:
            judge.judge_all(questions, chunk_size=4, progress=False)
        assert len(server.requests) == 1 and judge.n_calls == 1
    assert waits == [] and isinstance(stopped.value, UserInputError)
    message = str(stopped.value)
    assert "the judge (local-chat-completions)" in message and "question '0'" in message
    assert "HTTP 401, authentication failed" in message and "--judge_args" in message


def test_the_same_transient_error_on_the_first_questions_stops_the_judge():
    from lm_eval_rul.diagnose import JudgeFailure
    from lm_eval_rul.retries import FAIL_FAST_ITEMS

    questions = [Question(str(i), f"Which tempo, {i}?", "Fast", ("Slow",)) for i in range(10)]
    waits: list[float] = []
    with ChatServer(lambda body: 503) as server:
        judge = AnswerabilityJudge(chat_lm(server.url), retries=1, backoff=0.5, sleep=waits.append)
        with pytest.raises(JudgeFailure, match="each of the first 3 questions with the same"):
            judge.judge_all(questions, chunk_size=10, progress=False)
        # the chunk, then each of the first questions twice (one retry), then stop
        assert len(server.requests) == 1 + FAIL_FAST_ITEMS * 2
    assert waits == [0.5] * FAIL_FAST_ITEMS


def test_diagnose_cli_with_a_wrong_key_exits_2_with_one_message(tmp_path):
    import time

    from lm_eval_rul.testing.harness import run_cli

    data = tmp_path / "q.json"
    rows = {str(i): {"question": f"Which tempo, {i}?", "correct_answer": "Fast",
                     "distractors": ["Slow", "Moderate", "Very slow", "Rubato"]}
            for i in range(10)}  # fmt: skip
    data.write_text(json.dumps(rows))
    with ChatServer(lambda body: 401) as server:
        start = time.monotonic()
        done = run_cli(
            ["diagnose", data, "--no_similarity", "--judge", "local-chat-completions",
             "--judge_args", f"base_url={server.url},model=judge", "--out", tmp_path / "out",
             "--no_progress"],
            check=False,
        )  # fmt: skip
        elapsed = time.monotonic() - start
        posts = len(server.requests)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert "JudgeFailure: diagnose stopped" in done.stderr and "HTTP 401" in done.stderr
    assert posts <= 3  # the harness client's own attempts for the first chunk, nothing more
    assert elapsed < 60
