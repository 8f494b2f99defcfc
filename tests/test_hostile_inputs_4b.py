"""Hostile inputs, fourth pass (issue 36, items 5-17), second half: MMAU items with more
choices than letters, data keys of ``task_manager``, the bridge (an adapter that exits, an
infinite window, a port out of range) and unreadable clips (tiny real models, temp folders).
"""

from __future__ import annotations

import json
import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")


# ------------------------------------------------------------------ more choices than letters


@pytest.mark.parametrize("protocol", ["rul", "official", "lmms"])
@pytest.mark.parametrize("task", ["mmau_music", "mmau_music_gen"])
def test_an_mmau_item_with_more_choices_than_letters_is_one_line_under_every_protocol(
    protocol, task, tiny_lm, tmp_path, capsys, constructions
):
    from lm_eval_rul.testing.harness import cli_error_line
    from lm_eval_rul.testing.mmau import mmau_rows, write_mmau_json

    rows = mmau_rows()
    rows[3]["choices"] = [f"choice {k}" for k in range(30)]
    rows[3]["answer"] = "choice 7"
    data = write_mmau_json(tmp_path / "mmau.json", rows)
    line = cli_error_line(
        ["run", "--model", "hf", "--model_args", f"pretrained={tiny_lm}", "--device", "cpu",
         "--tasks", task, "--output_path", tmp_path / "out",
         "--metadata",
         json.dumps({"mmau_data_path": str(data), "protocol": protocol})],  # fmt: skip
        capsys,
    )
    assert f"item {rows[3]['id']!r}: 30 choices, more than the 26 option letters" in line
    assert "ValueError" not in line and constructions == []


def test_a_question_file_with_more_options_than_letters_names_the_question(tmp_path):
    from lm_eval_rul.questions import DataValidationError
    from lm_eval_rul.questions.validation import rows_to_questions

    rows = [
        {"id": "1", "question": "q", "correct_answer": "a", "distractors": ["b", "c"]},
        {"id": "2", "question": "q", "correct_answer": "a",
         "distractors": [f"d{k}" for k in range(26)]},  # fmt: skip
    ]
    with pytest.raises(DataValidationError, match="id '2': 27 choices, more than the 26"):
        rows_to_questions(tmp_path / "q.json", rows, n_distractors=None)
    pools = rows_to_questions(tmp_path / "p.json", rows, n_distractors=None, check_options=False)
    assert len(pools[1].distractors) == 26  # a pool is offered a few candidates at a time


# ------------------------------------------------------------ task_manager's data keys


@pytest.mark.parametrize(
    "key, what",
    [("mmau_data_path", "file"), ("rul_mmau_data_path", "file"), ("musicnet_dir", "directory"),
     ("ocremix_tags", "file")],  # fmt: skip
)
def test_every_data_key_of_every_benchmark_is_checked_at_the_task_manager_call(
    key, what, tmp_path
):
    import lm_eval_rul

    missing = tmp_path / "nowhere"
    with pytest.raises(FileNotFoundError) as caught:
        lm_eval_rul.task_manager(include_defaults=False, **{key: str(missing)})
    message = str(caught.value)
    assert f"lm_eval_rul.task_manager keyword {key}='{missing}': no such {what}" in message


def test_task_manager_reads_the_mmau_file_it_is_given(tmp_path):
    import lm_eval_rul
    from lm_eval_rul.cli.data_keys import data_keys
    from lm_eval_rul.questions import DataValidationError
    from lm_eval_rul.testing.mmau import mmau_rows, write_mmau_json

    assert {"mmau_data_path", "rul_mmau_data_path"} <= set(data_keys()["mmau"])
    rows = mmau_rows()
    rows[0]["answer"] = "no such choice"
    bad = write_mmau_json(tmp_path / "mmau.json", rows)
    with pytest.raises(DataValidationError, match=f"item {rows[0]['id']!r}: answer"):
        lm_eval_rul.task_manager(include_defaults=False, mmau_data_path=str(bad))
