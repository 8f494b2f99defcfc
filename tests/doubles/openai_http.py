"""The HTTP side of the loopback OpenAI-compatible server (:mod:`.openai_server`).

Error replies in OpenAI's (and Gemini's) layouts, the scripted failures a test can queue,
the checks every request goes through (API key, script, model name, the fields a mode
rejects) and the request handler; the model side, which renders the chat and computes
the answer, is :class:`~doubles.openai_server.OpenAIAudioServer`.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any

__all__ = [
    "VLLM_EXTRAS",
    "SCRIPTED",
    "REWRITES",
    "SPELLINGS",
    "Reply",
    "error_reply",
    "fingerprint",
    "check_request",
    "make_handler",
]

#: Fields of vLLM's chat API that OpenAI rejects.
VLLM_EXTRAS = ("prompt_logprobs", "add_generation_prompt", "continue_final_message")


def fingerprint(body: dict[str, Any]) -> str:
    """A request's identity (audio by digest), to count repeated requests."""
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


class Reply(Exception):
    """Answer the current request with ``status`` and ``body`` (an error)."""

    def __init__(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        super().__init__(status)
        self.status, self.body, self.headers = status, body, headers or {}


def error_reply(status: int, message: str, code: Any = None) -> Reply:
    """An error reply in OpenAI's layout."""
    error = {"message": message, "type": "invalid_request_error", "code": code or status}
    return Reply(status, {"error": error})


_GEMINI_BAD_KEY = {
    "code": 400,
    "message": "API key not valid. Please pass a valid API key.",
    "status": "INVALID_ARGUMENT",
    "details": [{"reason": "API_KEY_INVALID"}],
}


#: Scripted failures: status -> (body, headers). ``"gemini_bad_key"`` is Gemini's 400 list.
SCRIPTED: dict[Any, tuple[Any, dict[str, str]]] = {
    429: (
        {"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}},
        {"Retry-After": "0"},
    ),
    500: ({"error": {"message": "Internal server error"}}, {}),
    503: ({"error": {"message": "Service unavailable"}}, {}),
    401: ({"error": "Unauthorized"}, {}),
    404: ({"error": {"message": "The model `x` does not exist.", "code": 404}}, {}),
    "gemini_bad_key": ([{"error": _GEMINI_BAD_KEY}], {}),
    # a gateway's error sent as a success (HTTP 200)
    "not_completion": ({"error": {"message": "upstream request timed out", "code": 504}}, {}),
}
_SCRIPTED_STATUS: dict[Any, int] = {"gemini_bad_key": 400, "not_completion": 200}


def _top_entries(answer: dict[str, Any]) -> list[dict[str, Any]]:
    return answer["choices"][0]["logprobs"]["content"][0]["top_logprobs"]


def _drop(key: str) -> Callable[[dict[str, Any]], None]:
    def rewrite(answer: dict[str, Any]) -> None:
        for entry in _top_entries(answer):
            entry.pop(key, None)

    return rewrite


def _null_logprob(answer: dict[str, Any]) -> None:
    for entry in _top_entries(answer):
        entry["logprob"] = None


def _no_prompt_logprobs(answer: dict[str, Any]) -> None:
    answer.pop("prompt_logprobs", None)


def _infinite_prompt_logprob(answer: dict[str, Any]) -> None:
    for record in answer["prompt_logprobs"][-1].values():  # the continuation's last token
        record["logprob"] = float("inf")  # json.dumps writes Infinity


def _infinite_top_logprob(answer: dict[str, Any]) -> None:
    _top_entries(answer)[0]["logprob"] = float("inf")


def _duplicate_top_token(answer: dict[str, Any]) -> None:
    """The most likely token listed twice with two values (a proxy merging replies): the
    two summed would give it a probability above 1."""
    entries = _top_entries(answer)
    first = dict(entries[0], token=" A", logprob=-0.1)
    entries[:1] = [first, dict(first, logprob=-0.2)]


def _positive_prompt_logprob(answer: dict[str, Any]) -> None:
    for record in answer["prompt_logprobs"][-1].values():
        record["logprob"] = 0.544


def _lone_surrogate(answer: dict[str, Any]) -> None:
    """Half an emoji at the end (a generation cut by ``max_tokens`` between the two
    halves of a UTF-16 pair): ``json.dumps`` writes it as the escape ``"\\ud83d"``."""
    message = answer["choices"][0]["message"]
    message["content"] = "The answer is [[A]] \ud83d"


#: Scripted answers computed by the model, then altered (a misbehaving server or proxy).
REWRITES: dict[str, Callable[[dict[str, Any]], None]] = {
    "no_prompt_logprobs": _no_prompt_logprobs,
    "top_without_logprob": _drop("logprob"),
    "top_logprob_null": _null_logprob,
    "top_without_token": _drop("token"),
    "prompt_logprob_infinity": _infinite_prompt_logprob,
    "top_logprob_1e400": _infinite_top_logprob,
    "top_duplicate_token": _duplicate_top_token,
    "prompt_logprob_positive": _positive_prompt_logprob,
    "content_lone_surrogate": _lone_surrogate,
}
#: How a rewritten answer is spelled where ``json.dumps`` cannot say it: an out-of-range
#: literal, which Python's ``json`` reads as ``inf``.
SPELLINGS: dict[str, Callable[[str], str]] = {
    "top_logprob_1e400": lambda text: text.replace("Infinity", "1e400"),
}


def check_request(server: Any, headers: Any, body: dict[str, Any]) -> str | None:
    """Raise the error reply a request to ``server`` calls for, if any (in vLLM's/OpenAI's
    order): a wrong key, a scripted failure, another model's name, a field the mode
    rejects. Returns the scripted :data:`REWRITES` name of the answer, if any."""
    if server.api_key is not None:
        sent = headers.get("Authorization", "")
        if sent != f"Bearer {server.api_key}":
            presented = sent.removeprefix("Bearer ")
            message = f"Incorrect API key provided: {presented}"
            raise error_reply(401, message, code="invalid_api_key")
    with server._count_lock:
        scripted = server.script.popleft() if server.script else 200
        rewrite = scripted if scripted in REWRITES else None
        scripted = 200 if rewrite else scripted
        if scripted == 200 and server.fail_after is not None:
            scripted = 503 if server._accepted >= server.fail_after else 200
        if scripted == 200:
            server._accepted += 1
    if scripted != 200:
        reply, headers_out = SCRIPTED[scripted]
        raise Reply(_SCRIPTED_STATUS.get(scripted, scripted), reply, headers_out)
    if body.get("model") != server.served_model:
        raise error_reply(404, f"The model `{body.get('model')}` does not exist.")
    if server.logprobs != "full":
        extra = next((name for name in VLLM_EXTRAS if name in body), None)
        if extra:
            raise error_reply(400, f"Unrecognized request argument supplied: {extra}")
    if server.logprobs == "none" and body.get("logprobs") and not server.silent_no_logprobs:
        raise error_reply(400, "This model does not support the 'logprobs' parameter.")
    return rewrite


def make_handler(server: Any) -> type[BaseHTTPRequestHandler]:
    """The request handler of ``server`` (an :class:`~.openai_server.OpenAIAudioServer`):
    ``GET .../models`` and ``POST .../chat/completions``, answered by ``server``'s model."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            """Keep test output quiet (the base class writes every request to stderr)."""

        def _send(
            self, status: int, body: Any, headers: dict[str, str] | None = None, rewrite=None
        ):
            data = SPELLINGS.get(rewrite, str)(json.dumps(body)).encode()
            if self.command == "POST":  # chat answers only (lalm-api also GETs /models)
                with server._count_lock:  # before the answer leaves: a retry may come at once
                    server.statuses.append(status)
            self.send_response(status)
            for name, value in {"Content-Type": "application/json", **(headers or {})}.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/models"):
                self._send(200, {"data": [{"id": server.served_model, "object": "model"}]})
            else:
                self._send(404, {"error": {"message": "Not Found"}})

        def do_POST(self) -> None:
            with server._count_lock:
                server.posts += 1
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            try:
                if not self.path.endswith("/chat/completions"):
                    raise error_reply(404, "Not Found")
                rewrite = check_request(server, self.headers, body)
                time.sleep(server.latency)
                with server._model_lock:
                    answer, recorded = server._complete(body)
                if rewrite:
                    REWRITES[rewrite](answer)
            except Reply as reply:
                self._send(reply.status, reply.body, reply.headers)
                return
            with server._count_lock:
                server.answered.append(recorded)
            self._send(200, answer, rewrite=rewrite)

    return Handler
