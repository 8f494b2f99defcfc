"""Distractor prompt, parsing and cleaning; generation through lm-eval's
``local-chat-completions`` model against an OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
import re

import pytest
from doubles.chat import ChatServer

from lm_eval_rul.distractors import DistractorGenerator, parse_candidates, with_retries
from lm_eval_rul.distractors.prompts import DISTRACTOR_EXAMPLES, distractor_messages
from lm_eval_rul.questions import Question, clean_pool
from lm_eval_rul.registration import create_lm


def test_prompt_has_examples_item_and_tag_instructions():
    system, user = distractor_messages("What mood?", "calm", "Soft pads.", n_candidates=7)
    assert system["role"] == "system" and user["role"] == "user"
    text = user["content"]
    assert "Write 7 distractors" in text and "<distractor></distractor>" in text
    for question, _, _answer, distractors in DISTRACTOR_EXAMPLES:
        assert question in text and f"<distractor>{distractors[0]}</distractor>" in text
    assert text.rstrip().endswith(
        "Question: What mood?\nCaption: Soft pads.\nCorrect answer: calm\nDistractors:"
    )
    assert "(no caption)" in distractor_messages("Q", "a")[1]["content"]


@pytest.mark.parametrize(
    "reply, expected",
    [
        ("<distractor>Viola</distractor>\n<distractor> Oboe </distractor>", ["Viola", "Oboe"]),
        ("<Distractor>1. 'Harp'</DISTRACTOR><distractor>- Flute</distractor>", ["Harp", "Flute"]),
        ("<distractor>Bass &amp; drums</distractor>", ["Bass & drums"]),
        ("<distractor>Viola", []),  # unclosed
        ("<distractor>  </distractor><distractor>Oboe</distractor>", ["Oboe"]),  # empty tag
        ("<distractor>a<distractor>Cello</distractor>", ["Cello"]),  # nested opening tag
        ("Viola, Oboe, Flute", []),  # no tags at all
        ("<distractor>" + "x" * 300 + "</distractor>", []),  # runaway text
        ("", []),
        (None, []),
    ],
)
def test_parse_candidates_handles_malformed_replies(reply, expected):
    assert parse_candidates(reply) == expected


def test_clean_pool_normalises_deduplicates_and_drops_the_correct_answer():
    pool = clean_pool(["Oboe", "  oboe. ", "CELLO", "Solo  violin", "", '"Harp"'], "Cello")
    assert pool.candidates == ["Oboe", "Solo violin", "Harp"]
    assert (pool.n_in, pool.duplicates, pool.equal_to_correct, pool.empty) == (6, 1, 1, 1)


# ----------------------------------------------------------------------------- loopback server


def scripted_server(script: dict[int, list]) -> ChatServer:
    """A loopback chat server replaying scripted replies per track.

    ``script[track]`` is a list of replies (a string, or an int HTTP status to fail with),
    the last one repeated; the question is recognised by the ``track N`` in its caption.
    The returned server's ``script`` holds the queues (a test may refill them).
    """
    queues = {k: list(v) for k, v in script.items()}

    def reply(body: dict) -> str | int:
        track = int(re.findall(r"track (\d+)", body["messages"][-1]["content"])[-1])
        queue = server.script[track]
        return queue.pop(0) if len(queue) > 1 else queue[0]

    server = ChatServer(reply)
    server.script = queues
    return server


def chat_lm(url: str):
    return create_lm("local-chat-completions", f"base_url={url},model=fake-llm,max_retries=1")


def test_generation_through_local_chat_completions():
    q = Question("2", "What mood?", "calm", (), caption="Soft pads; track 0.")
    script = {
        0: [
            500,  # retried by the caller
            "<distractor>Tense</distractor><distractor>Dark</distractor>",
            "Sorry, I cannot help with that.",  # no parsable candidate
            "<distractor>tense</distractor><distractor>Calm</distractor><distractor>Sad",
        ]
    }
    with scripted_server(script) as server:
        generator = DistractorGenerator(chat_lm(server.url), n_batches=3, n_per_batch=5, seed=7)
        delays: list[float] = []
        replies = [
            with_retries(
                lambda b=b: generator.reply(q, b),
                retries=2,
                backoff=0.5,
                what="call",
                sleep=delays.append,
            )
            for b in range(3)
        ]
    result = generator.collect(q.id, replies)
    assert delays == [0.5]  # one 500, retried once after the first backoff
    assert result.n_replies == 3 and result.n_unparsable == 1
    assert result.candidates == ["Tense", "Dark", "tense", "Calm"]
    assert clean_pool(result.candidates, q.correct_answer).candidates == ["Tense", "Dark"]
    # Chat-formatted requests with the prompt, sampling settings and a seed per batch.
    sent = server.requests
    assert len(sent) == 4 and sent[0]["messages"][0]["role"] == "system"
    assert "Correct answer: calm" in sent[0]["messages"][1]["content"]
    assert sent[0]["temperature"] == 1.0 and sent[0]["max_tokens"] == 512
    assert len({r["seed"] for r in sent[1:]}) == 3


def test_generation_with_a_local_hf_model_is_seeded_per_batch(tiny_lm):
    lm = create_lm("hf", f"pretrained={tiny_lm},dtype=float32", device="cpu", batch_size=1)
    generator = DistractorGenerator(lm, n_batches=2, max_gen_toks=12, seed=1)
    q = Question("2", "What mood?", "calm", (), caption="Soft pads.")
    first, again, other = generator.reply(q, 0), generator.reply(q, 0), generator.reply(q, 1)
    assert first == again and first != other  # sampled, reproducible from (seed, id, batch)
    result = generator.collect(q.id, [first, other])
    assert result.n_replies == 2 and result.n_unparsable == 2  # random weights: no tags
    assert "<|im_start|>assistant" in generator.request(q, 0).args[0]  # chat template applied


def test_read_pools_and_generated_pools_share_one_cleaning_rule(tmp_path):
    from lm_eval_rul.questions import clean_pools, read_pools

    rows = {
        "1": {"question": "Q?", "correct_answer": "Cello", "distractors": []},
        "2": {
            "question": "Mood?",
            "correct_answer": '"calm"',
            "distractors": ['"Tense"', "tense", " ... ", "CALM", '"calm".', "Dark"],
        },
    }
    path = tmp_path / "pools.json"
    path.write_text(json.dumps(rows))
    pools, report = read_pools(path, allow_empty=True)  # empty pools kept for build
    assert [q.distractors for q in pools] == [(), ('"Tense"', "tense", "CALM", "Dark")]
    assert report.empty == {"2": 1} and report.equal_to_correct == {"2": 1}
    # The same rule with text tidying (generated candidates): quotes go, so "tense" repeats.
    tidied, tidy_report = clean_pools(pools)
    assert tidied[1].distractors == ("Tense", "CALM", "Dark")
    assert tidy_report.duplicates == {"2": 1} and tidy_report.n_candidates_out == 3
