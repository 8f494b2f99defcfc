"""The LLM judge: verdict parsing, and judging through lm-eval's ``local-chat-completions``
model against an OpenAI-compatible server on 127.0.0.1; verdicts stored beside the rule
flags, parse and call failures counted, never guessed."""

from __future__ import annotations

import json

import pytest

from lm_eval_rul.diagnose import DiagnoseConfig, run_diagnose
from lm_eval_rul.diagnose.judge import (
    AnswerabilityJudge,
    judge_messages,
    parse_verdict,
    verdict_counts,
)
from lm_eval_rul.questions import Question
from lm_eval_rul.registration import create_lm
from lm_eval_rul.testing.chat import ChatServer


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
