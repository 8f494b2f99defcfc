"""The resume cache of ``lalm-api`` keeps its keys across versions (issue 42).

``lalm-api`` answers through the core's stored-results template; an entry written by an
earlier version (6c18fcc) must still be found. The scope and the keys are rebuilt here
from what the server heard (the WAV bytes) and was sent (the request body), by the
formula the module documents, and compared with the rows of the SQLite file.
"""

from __future__ import annotations

import hashlib
import sqlite3

from lm_eval_rul.cache import digest

MODEL = "tiny-audio"


def _rows(path) -> set[tuple[str, str]]:
    with sqlite3.connect(str(path)) as db:
        return {(scope, key) for scope, key in db.execute("SELECT scope, key FROM results")}


def test_prompt_top_and_generation_keys_are_those_of_earlier_versions(
    tiny_audio_lm, audio_data, tmp_path
):
    from doubles.openai_server import OpenAIAudioServer
    from lm_eval.api.instance import Instance

    from lm_eval_rul.audio.requests import request_audio
    from lm_eval_rul.mcqa.tasks import doc_to_choice, doc_to_text, load_rul_muchomusic
    from lm_eval_rul.models.api import LALMAPI
    from lm_eval_rul.models.api_payload import wav_bytes
    from lm_eval_rul.models.core import audio_settings

    doc = next(iter(load_rul_muchomusic(0, **audio_data)["test"]))
    context = doc_to_text(doc)
    letters = [f" {letter}" for letter in doc_to_choice(doc)]
    task = ("rul_muchomusic_fold0", 0, 1)
    scored = [
        Instance("loglikelihood", doc, (context, letter), i, task)
        for i, letter in enumerate(letters)
    ]
    asked = [Instance("generate_until", doc, (context, {"until": ["\n"]}), 0, task)]
    cache = tmp_path / "api.sqlite"
    with OpenAIAudioServer(tiny_audio_lm, served_model=MODEL) as server:
        settings = {"base_url": server.url, "model": MODEL, "retry_backoff": 0}
        prompt = LALMAPI(**settings, results_cache=str(cache), logprobs="prompt")
        first = prompt.loglikelihood(scored, True)
        LALMAPI(**settings, results_cache=str(cache), logprobs="top").loglikelihood(scored, True)
        generated = prompt.generate_until(asked, True)
        sent = server.answered[-1]
        posts = server.posts
        again = LALMAPI(**settings, results_cache=str(cache), logprobs="prompt")
        assert again.loglikelihood(scored, True) == first
        assert again.generate_until(asked, True) == generated
        assert server.posts == posts  # every answer read back

    _, waves = request_audio(scored[:1], prompt.spec)[0].waves(prompt.spec)
    heard = hashlib.sha256(wav_bytes(waves[0], 16_000, "FLOAT")).hexdigest()
    scope = digest({
        "cache": "lalm-api/1",
        "endpoint_model": MODEL,
        **audio_settings(prompt.spec),
        "wav_subtype": "FLOAT",
        "system_prompt": None,
    })  # fmt: skip
    body = {name: value for name, value in sent.items() if name != "messages"}
    keys = [["prompt", context, letter, heard] for letter in letters]
    keys += [["top", context, heard, 20], ["gen", context, heard, {**body, "messages": None}]]
    assert _rows(cache) == {(scope, digest(parts)) for parts in keys}
