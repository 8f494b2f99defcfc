"""The LLM parser through lm-eval's real ``local-chat-completions`` client against a
loopback server: well-formed, malformed and empty replies, bounded re-asks, the disk
cache (counted requests), and calls that fail."""

from __future__ import annotations

import pytest
from doubles.chat import ChatServer

from lm_eval_rul.cache import ResultCache
from lm_eval_rul.factual.prompts import PARSER_PROMPT_VERSION, parser_prompt, parser_reply_terms
from lm_eval_rul.factual.reading.lexicon import lexicon_for
from lm_eval_rul.factual.reading.llm_parser import (
    LLMParser,
    ParserCallError,
    ParserQuery,
    parser_scope,
    reply_problem,
)
from lm_eval_rul.registration import create_lm


def response_of(body) -> str:
    """The evaluated answer inside the parser prompt of a request."""
    first = body["messages"][0]["content"]
    return first.split("Response: ", 1)[1].rsplit("\n\n", 1)[0]


def scripted(body):
    """Well-formed for most answers; prose first (then a list when re-asked); never a list;
    empty for an answer that names nothing; off the closed list for one mood answer."""
    answer, reasked = response_of(body), len(body["messages"]) > 1
    if "prose" in answer:
        return "violin, cello" if reasked else "Sure! The response mentions a violin and a cello."
    if "hopeless" in answer:
        return "I really cannot tell which instruments are mentioned in this one, sorry!"
    if "nothing" in answer:
        return ""
    if "Egyptian" in answer:
        return "Middle Eastern" if reasked else "Egyptian pop"
    return "Instruments: piano, J.S. Bach" if "piano" in answer else "- violin\n- flute"


def no_wait(seconds: float) -> None:
    """Tests do not sleep between retries."""


def make_lm(server):
    return create_lm("local-chat-completions", f"base_url={server.url},model=fake,max_retries=1")


def queries(task, answers):
    return [ParserQuery(task, answer, lexicon_for(task)) for answer in answers]


ANSWERS = [
    "A piano.",
    "Some prose here.",
    "nothing at all",
    "A piano.",  # asked once
    "hopeless",
    "violin and flute",
]


def test_replies_are_read_reasked_and_counted(tmp_path):
    with ChatServer(scripted) as server:
        scope = parser_scope("local-chat-completions", {"model": "fake", "base_url": server.url})
        assert "base_url" not in str(scope) and scope["prompt_version"] == PARSER_PROMPT_VERSION
        cache = ResultCache(tmp_path / "c.sqlite", scope=scope)
        parser = LLMParser(make_lm(server), name="fake", cache=cache, retries=2, sleep=no_wait)
        readings = parser.parse_many(queries("instrument", ANSWERS), progress=False)
        first_pass = len(server.requests)
        assert [r.labels for r in readings] == [
            ("piano", "J.S. Bach"),  # an open task keeps an unknown term as written
            ("violin", "cello"),
            (),
            ("piano", "J.S. Bach"),
            None,  # still malformed: no reading (not an empty prediction)
            ("violin", "flute"),
        ]
        assert [r.status for r in readings] == ["ok", "ok", "ok", "ok", "malformed", "ok"]
        assert readings[1].attempts == 2 and readings[4].attempts == 3  # 1 ask + 2 re-asks
        assert "is a sentence" in readings[4].problem
        # 5 distinct answers: 5 first asks, prose re-asked once, hopeless twice
        assert first_pass == 5 + 1 + 2
        reask = server.requests[5]["messages"]
        assert [m["role"] for m in reask] == ["user", "assistant", "user"]
        assert "could not be read" in reask[2]["content"]
        assert parser.stats.unique == 5 and parser.stats.retried == 2
        assert parser.stats.malformed == 1 and parser.stats.empty == 1
        assert parser.stats.requests == first_pass and parser.stats.cache_hits == 0
        assert server.requests[0]["temperature"] == 0

        # second pass: every well-formed reply comes from the cache; the malformed one
        # was not cached and is asked again (bounded, as before)
        again = LLMParser(make_lm(server), name="fake", cache=cache, retries=2, sleep=no_wait)
        assert again.parse_many(queries("instrument", ANSWERS), progress=False) == [
            r if r.status == "malformed" else type(r)(r.labels, "ok", r.reply, 0) for r in readings
        ]
        assert again.stats.cache_hits == 4 and again.stats.requests == 3
        assert len(server.requests) == first_pass + 3
        # another prompt version or parser model is another scope: nothing is reused
        other = ResultCache(tmp_path / "c.sqlite", scope={**cache.scope, "model": "other"})
        assert other.get(queries("instrument", ["A piano."])[0].key) is None


def test_closed_list_tasks_reask_labels_off_the_list():
    with ChatServer(scripted) as server:
        parser = LLMParser(make_lm(server), name="fake", retries=1, sleep=no_wait)
        (reading,) = parser.parse_many(queries("regional", ["Egyptian vibes"]), progress=False)
        assert reading.labels == ("middle-eastern",) and reading.attempts == 2
        instruction = server.requests[0]["messages"][0]["content"]
        assert "Choose only from these regional styles" in instruction
        assert "Middle Eastern, Native American" in instruction


def test_unauthorised_fails_fast_and_server_errors_are_bounded():
    with ChatServer(lambda body: 401) as server:
        parser = LLMParser(make_lm(server), name="fake", retries=5, sleep=no_wait)
        with pytest.raises(ParserCallError, match="HTTP 401.*API key"):
            parser.parse_many(queries("composer", ["Bach"]), progress=False)
        assert len(server.requests) == 1  # no retry of ours (max_retries=1 in the client)
    waits = []
    with ChatServer(lambda body: 503) as server:
        parser = LLMParser(make_lm(server), name="fake", retries=2, sleep=waits.append)
        with pytest.raises(ParserCallError, match="failed 3 times.*rerun"):
            parser.parse_many(queries("composer", ["Bach"]), progress=False)
        assert len(server.requests) == 3 and waits == [2.0, 4.0]


@pytest.mark.parametrize(
    "task, reply, problem",
    [
        ("instrument", "piano, violin", None),
        ("instrument", "", None),
        ("instrument", "None", None),
        ("instrument", "Here are the instruments mentioned in the response: piano", "sentence"),
        ("instrument", "piano?", "sentence"),
        ("mood", "Sad, Happy", None),
        ("mood", "melancholic", None),  # a listed synonym maps onto the list
        ("mood", "Nostalgic", "not on the list"),
    ],
)
def test_reply_problems(task, reply, problem):
    found = reply_problem(reply, ParserQuery(task, "x", lexicon_for(task)))
    assert (found is None) if problem is None else (problem in found)


def test_reply_terms_and_the_prompt():
    assert parser_reply_terms('1. "piano"\n2. violin.', "instrument") == ["piano", "violin"]
    assert parser_reply_terms("```\nComposers: Bach\n```", "composer") == ["Bach"]
    text = parser_prompt("mood", "It is a sad song.")
    assert "Choose only from these moods" in text and text.endswith("Moods:")
    assert PARSER_PROMPT_VERSION == "llm-parser-3"


def test_reparse_names_what_it_cannot_read(tmp_path):
    import json

    from lm_eval_rul.factual.reading.reparse import ReparseError, reparse_runs

    parser = LLMParser(lm=None, name="unused")
    with pytest.raises(ReparseError, match="no results_"):
        reparse_runs([tmp_path], parser, tmp_path / "out", parser_info={})
    run = tmp_path / "run" / "model"
    run.mkdir(parents=True)
    (run / "results_2025-01-01T00-00-00.json").write_text(json.dumps({
        "results": {"factual_mood_open": {"f1,none": 0.5}},
        "configs": {"factual_mood_open": {"dataset_kwargs": {"factual_task": "mood"}}},
        "config": {"model": "lalm"},
    }))  # fmt: skip
    with pytest.raises(ReparseError, match="'factual_mood_open' has no logged samples"):
        reparse_runs([tmp_path / "run"], parser, tmp_path / "out", parser_info={})
