"""The prompt table, the list prompts' candidates, and the LLM-parser prompt and reply."""

from __future__ import annotations

import pytest

from lm_eval_rul.factual.prompts import (
    PROMPT_VARIANTS,
    TEMPLATES,
    candidate_labels,
    parser_prompt,
    prompt,
    read_parser_reply,
)
from lm_eval_rul.factual.reading.genres import GenreTree
from lm_eval_rul.factual.reading.labels import TASKS, display_name
from lm_eval_rul.factual.reading.lexicon import lexicon_for
from lm_eval_rul.testing.factual import FMA_GENRE_ROWS

TREE = GenreTree({r[0]: r[3] for r in FMA_GENRE_ROWS}, {r[0]: r[2] for r in FMA_GENRE_ROWS}, {})


def test_every_task_has_every_variant():
    assert set(TEMPLATES) == set(TASKS)
    for task in TASKS:
        assert set(PROMPT_VARIANTS) <= set(TEMPLATES[task])


@pytest.mark.parametrize("task", list(TASKS))
def test_list_prompt_enumerates_every_candidate(task):
    text = prompt(task, "list", genre_tree=TREE)
    names = [display_name(task, label) for label in candidate_labels(task, TREE)]
    assert names and all(name in text for name in names)
    assert ", ".join(names) in text  # in vocabulary order
    assert "{" not in prompt(task, "open") and "{" not in text


def test_candidates():
    assert (
        candidate_labels("instrument")[0] == "piano" and len(candidate_labels("instrument")) == 11
    )
    assert len(candidate_labels("composer")) == 10
    assert len(candidate_labels("mood")) == 22 and len(candidate_labels("regional")) == 15
    assert candidate_labels("timesig")[0] == "4/4" and len(candidate_labels("timesig")) == 9
    assert len(candidate_labels("genre", TREE)) == len(FMA_GENRE_ROWS)
    assert "Middle Eastern" in prompt("regional", "list")


def test_unknown_task_or_variant():
    with pytest.raises(ValueError, match="open, list"):
        prompt("mood", "formal")
    with pytest.raises(ValueError, match="task must be one of"):
        prompt("tempo")
    with pytest.raises(ValueError, match="genre_tree"):
        prompt("genre", "list")


def test_parser_prompt_states_the_rules_and_the_closed_list():
    text = parser_prompt("regional", "It sounds Egyptian.")
    assert "Response: It sounds Egyptian." in text
    assert "X more than Y" in text and "J.S. Bach" in text
    assert "Middle Eastern" in text and "Choose only from" in text
    assert "Choose only from" not in parser_prompt("instrument", "Piano.")


def test_read_parser_reply():
    assert read_parser_reply(
        "Middle Eastern, Egyptian, celtic, Klingon", lexicon_for("regional")
    ) == (
        "middle-eastern",
        "celtic",
    )
    # open task: unknown terms stay as (wrong) predictions
    assert read_parser_reply("J.S. Bach, Hildegard\nBach", lexicon_for("composer")) == (
        "Bach",
        "Hildegard",
    )
    assert read_parser_reply("", lexicon_for("mood")) == ()
