"""A loopback server speaking OpenAI's chat protocol byte by byte as a test scripts it.

Where :class:`~doubles.openai_server.OpenAIAudioServer` runs a real model,
this one answers ``GET .../models`` and ``POST .../chat/completions`` with whatever a
test needs of the transport: a redirect, a body that is not UTF-8, an answer dripped one
byte at a time. It records each request's method, path and headers, so a test can see
where a key went.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["Answer", "COMPLETION", "Request", "ScriptedServer", "completion", "redirect"]


@dataclass
class Answer:
    """One scripted reply: ``drip`` seconds between the bytes of the body (0: at once)."""

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    drip: float = 0.0


def completion(content: str = "A") -> Answer:
    """A chat completion whose message is ``content``."""
    message = {"role": "assistant", "content": content}
    choice = {"index": 0, "message": message, "finish_reason": "stop"}
    body = {"id": "x", "object": "chat.completion", "choices": [choice]}
    return Answer(200, json.dumps(body).encode())


#: The body of :func:`completion` ("A"), to build altered ones from.
COMPLETION: bytes = completion().body


def redirect(location: str, status: int = 307) -> Answer:
    """A redirect to ``location`` (307/308 keep the method and the body)."""
    return Answer(status, b"", {"Location": location})


@dataclass
class Request:
    """What the server received: the method, the path and the headers."""

    method: str
    path: str
    headers: dict[str, str]


class ScriptedServer:
    """``http://127.0.0.1:PORT/v1``, answering each request with ``answer(request)``.

    Args:
        answer: ``Request -> Answer``; the default answers ``GET /models`` with an empty
            list and every ``POST`` with :func:`completion`.

    Attributes:
        url: The base URL (``.../v1``).
        origin: ``http://127.0.0.1:PORT``.
        requests: Every request received, in order.
    """

    def __init__(self, answer: Callable[[Request], Answer] | None = None) -> None:
        self.requests: list[Request] = []
        self.answer = answer or _default
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                """Keep test output quiet."""

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                request = Request(self.command, self.path, dict(self.headers.items()))
                server.requests.append(request)
                reply = server.answer(request)
                self.send_response(reply.status)
                headers = {"Content-Type": "application/json", **reply.headers}
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                try:
                    if not reply.drip:
                        self.wfile.write(reply.body)
                        return
                    for byte in reply.body:  # a server that answers, slowly, for ever
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        time.sleep(reply.drip)
                except OSError:  # the client gave up: its deadline worked
                    self.close_connection = True

            do_GET = do_POST = _serve

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.origin = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.url = f"{self.origin}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(self, *_exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _default(request: Request) -> Answer:
    if request.method == "GET":
        return Answer(200, b'{"object": "list", "data": []}')
    return completion()
