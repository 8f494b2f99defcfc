"""A loopback OpenAI-compatible chat-completions server for offline tests of LLM calls.

Tests point lm-eval's ``local-chat-completions`` model at :attr:`ChatServer.url`, so the
request goes through the harness's real client code; the server answers with whatever
the test's ``reply`` function returns for the request.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["ChatServer"]


class ChatServer:
    """Serve ``POST /v1/chat/completions`` on 127.0.0.1 with scripted replies.

    Args:
        reply: ``request body -> reply text``, or an int to fail with that HTTP status.

    Attributes:
        url: The endpoint to pass as ``base_url``.
        requests: Every request body received, in order.

    Example:
        >>> with ChatServer(lambda body: "VERDICT: answerable") as server:  # doctest: +SKIP
        ...     lm = create_lm("local-chat-completions", f"base_url={server.url},model=m")
    """

    def __init__(self, reply: Callable[[dict], str | int]) -> None:
        self.requests: list[dict] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                """Keep the test output quiet (the base class writes every request)."""

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(body)
                answer = reply(body)
                if isinstance(answer, int):
                    self.send_response(answer)
                    self.end_headers()
                    self.wfile.write(b'{"error": "scripted failure"}')
                    return
                message = {"role": "assistant", "content": answer}
                payload = {
                    "id": "x",
                    "object": "chat.completion",
                    "model": body.get("model", ""),
                    "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                }
                data = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1/chat/completions"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> ChatServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
