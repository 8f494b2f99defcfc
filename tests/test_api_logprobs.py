"""``lalm-api``'s pure pieces: WAV parts, reading log-probabilities, error bodies, redaction."""

from __future__ import annotations

import base64
import io
import math

import numpy as np
import pytest


def test_wav_parts_are_deterministic_and_float_is_exact():
    import soundfile as sf

    from lm_eval_rul.models.api_payload import input_audio_part, wav_bytes
    from lm_eval_rul.testing.audio import synth_clip

    wave = synth_clip("chord", seconds=0.5)
    exact = wav_bytes(wave, 16_000, "FLOAT")
    assert b"PEAK" not in exact  # libsndfile's chunk holds the time of writing
    decoded, rate = sf.read(io.BytesIO(exact), dtype="float32")
    assert rate == 16_000 and np.array_equal(decoded, wave)
    pcm, _ = sf.read(io.BytesIO(wav_bytes(wave, 16_000, "PCM_16")), dtype="float32")
    assert 0 < np.abs(pcm - wave).max() < 1e-4
    part = input_audio_part(exact)
    assert part["type"] == "input_audio" and part["input_audio"]["format"] == "wav"
    assert base64.b64decode(part["input_audio"]["data"]) == exact


def _entry(actual: tuple[int, str, float, int], top: tuple[int, str, float] | None = None):
    token_id, text, logprob, rank = actual
    entry = {str(token_id): {"logprob": logprob, "rank": rank, "decoded_token": text}}
    if top is not None:
        entry[str(top[0])] = {"logprob": top[2], "rank": 1, "decoded_token": top[1]}
    return entry


@pytest.mark.parametrize("actual_last", [False, True])
def test_prompt_path_reads_the_continuation_in_either_vllm_layout(actual_last):
    from lm_eval_rul.models.api_payload import prompt_path_score

    letter = _entry((288, " A", -2.0, 3), (41, "C", -0.5))
    if actual_last:  # early vLLM V1 put the prompt token after the top-k, ranked k+1
        letter = dict(reversed(list(letter.items())))
    body = {"prompt_logprobs": [None, _entry((7, "\n", -0.1, 1)), letter]}
    assert prompt_path_score(body, " A") == (-2.0, False)
    greedy = {"prompt_logprobs": [None, _entry((7, "is", -0.3, 1)), _entry((288, " A", -0.2, 1))]}
    assert prompt_path_score(greedy, " A") == (-0.2, True)
    second = _entry((6, "B", -2.0, 2), (9, "C", -0.2))
    two = {"prompt_logprobs": [None, _entry((5, " A", -1.0, 1)), second]}
    assert prompt_path_score(two, " AB") == (-3.0, False)


def test_prompt_path_refuses_a_prompt_not_ending_with_the_continuation():
    from lm_eval_rul.models.api_payload import ContinuationMismatchError, prompt_path_score

    body = {"prompt_logprobs": [None, _entry((7, "\n A", -0.1, 1))]}
    with pytest.raises(ContinuationMismatchError, match=r"spell '\\n A', not the continuation"):
        prompt_path_score(body, " A")


def test_top_path_adds_the_spellings_and_reports_absent_letters():
    from lm_eval_rul.models.api_payload import top_logprobs_of, top_path_scores

    top = [("B", -0.9), (" A", -1.0), ("A", -2.0), ("The", -3.0)]  # adds up to 0.96
    candidates = [{"token": t, "logprob": v} for t, v in top]
    first = {"token": "B", "logprob": -0.9, "top_logprobs": candidates}
    body = {"choices": [{"logprobs": {"content": [first]}}]}
    assert top_logprobs_of(body) == top
    a, b, c = top_path_scores(top, [" A", " B", " C"])
    assert a == (pytest.approx(math.log(math.exp(-1.0) + math.exp(-2.0))), False)
    assert b == (-0.9, True) and c is None
    assert top_logprobs_of({"choices": [{"logprobs": None}]}) is None
    assert top_logprobs_of({"choices": [{"logprobs": {"content": [{"top_logprobs": []}]}}]}) is None


@pytest.mark.parametrize(
    ("status", "message", "refused"),
    [
        (400, "Unrecognized request argument supplied: prompt_logprobs", True),
        (400, 'Invalid JSON payload received. Unknown name "continue_final_message"', True),
        (400, "Prefix caching with prompt logprobs not yet supported on VLLM V1.", True),
        (400, "Requested prompt logprobs of 30, which is greater than max allowed: 20", True),
        (400, "messages: audio is too long", False),
        (500, "prompt_logprobs crashed", False),
    ],
)
def test_which_4xx_means_no_prompt_path(status, message, refused):
    from lm_eval_rul.models.api_payload import rejects_prompt_logprobs

    assert rejects_prompt_logprobs(status, message) is refused


def test_server_messages_of_every_error_layout_and_redaction(monkeypatch):
    from lm_eval_rul.models.api_http import ChatClient, HTTPSettings, chat_url, server_message

    assert server_message('{"error": {"message": "The model `x` does not exist."}}') == (
        "The model `x` does not exist."
    )
    assert server_message('{"error": "Unauthorized"}') == "Unauthorized"
    assert server_message('{"object": "error", "message": "bad", "code": 400}') == "bad"
    gemini = '[{"error": {"code": 400, "message": "API key not valid.", "status": "X"}}]'
    assert server_message(gemini) == "API key not valid."
    assert server_message("<html>  Bad \n Gateway </html>") == "<html> Bad Gateway </html>"
    monkeypatch.setenv("K", "my-own-key-123")
    settings = HTTPSettings(api_key_env="K")
    client = ChatClient(chat_url("http://h:1/v1/"), model="m", settings=settings)
    assert client.url == "http://h:1/v1/chat/completions"
    text = client.redact("key my-own-key-123, also sk-abcdef123456 and AIzaSyA1234567890abcdefghij")
    assert text == "key ***, also *** and ***"
    assert "my-own-key" not in repr(client)


def test_a_question_with_no_letter_is_wrong_and_casts_no_vote():
    """The top path's all ``-inf`` row: never a first-letter or uniform guess."""
    from lm_eval_rul.mcqa.scoring import choice_probabilities, is_correct, perceptual_index
    from lm_eval_rul.report.samples import sample_answer

    none, some = [float("-inf")] * 4, [float("-inf"), -1.0, float("-inf"), -2.0]
    assert not is_correct(none, 0) and perceptual_index(none, 0) == 1.0
    assert choice_probabilities(none).tolist() == [0.0] * 4
    assert is_correct(some, 1) and perceptual_index(some, 0) == 1.0
    doc = {"options": ["a", "b", "c", "d"], "letters": ["A", "B", "C", "D"], "id": "7"}
    assert sample_answer({"doc": doc, "filtered_resps": [[v, False] for v in none]}) is None
    assert sample_answer({"doc": doc, "filtered_resps": [[v, False] for v in some]}) == "b"
