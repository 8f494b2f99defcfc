"""A loopback OpenAI chat server whose "model" knows an item's answer only when it hears it.

Each item has a sound: a sine tone at its own frequency, somewhere in its clip. The server
decodes every audio part of a request (the WAV ``lalm-api`` sends), looks for the item's
tone in the spectrum (a peak far above the spectrum's median, which Gaussian noise and
silence never make), and answers the item's correct letter (``[[X]]``) when it hears the
tone, or when the item is answerable from its text; otherwise a wrong letter. Items of kind
``never`` are always answered wrong. The prompt is the package's generation prompt
(``Question: ...`` and ``Options: (A) ... (B) ...``).
"""

from __future__ import annotations

import base64
import io
import json
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

__all__ = ["ListenedItem", "ListeningServer", "hears_tone"]


@dataclass(frozen=True)
class ListenedItem:
    """How the server's model answers one item: ``kind`` is ``text`` (always right),
    ``never`` (always wrong) or ``audio`` (right when it hears ``hz``)."""

    question: str
    correct_answer: str
    kind: str
    hz: float = 0.0


def hears_tone(wave: np.ndarray, rate: int, hz: float) -> bool:
    """Whether ``wave`` holds a tone at ``hz``: a spectral peak 100x the median power."""
    if wave.size < rate // 10:
        return False
    power = np.abs(np.fft.rfft(wave.astype(np.float64))) ** 2
    freqs = np.fft.rfftfreq(wave.size, 1.0 / rate)
    near = power[np.abs(freqs - hz) <= 5.0]
    floor = float(np.median(power)) + 1e-12
    return bool(near.size) and float(near.max()) > 100.0 * floor


def _waves(body: Mapping[str, Any]) -> list[tuple[np.ndarray, int]]:
    import soundfile as sf

    found = []
    for message in body.get("messages", []):
        content = message.get("content")
        for part in content if isinstance(content, list) else []:
            if part.get("type") == "input_audio":
                raw = base64.b64decode(part["input_audio"]["data"])
            elif part.get("type") == "audio_url":
                raw = base64.b64decode(part["audio_url"]["url"].split("base64,", 1)[1])
            else:
                continue
            wave, rate = sf.read(io.BytesIO(raw), dtype="float32")
            found.append((wave if wave.ndim == 1 else wave.mean(axis=1), int(rate)))
    return found


def _text(body: Mapping[str, Any]) -> str:
    parts = []
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        else:
            parts += [p.get("text", "") for p in content if p.get("type") == "text"]
    return "\n".join(parts)


class ListeningServer:
    """``http://127.0.0.1:PORT/v1`` serving ``model`` over ``items`` (question -> item).

    Attributes:
        url: The base URL for ``lalm-api``'s ``base_url``.
        heard: ``(question, heard the tone)`` of every request with audio, in order.
    """

    def __init__(self, items: list[ListenedItem], model: str = "listener") -> None:
        self.items = {item.question: item for item in items}
        self.model = model
        self.heard: list[tuple[str, bool]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                """Quiet."""

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._send(200, {"object": "list", "data": [{"id": model, "object": "model"}]})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                content = server.answer(body)
                message = {"role": "assistant", "content": content}
                choice = {"index": 0, "message": message, "finish_reason": "stop"}
                self._send(200, {"id": "x", "object": "chat.completion", "model": model,
                                 "choices": [choice]})  # fmt: skip

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._lock = threading.Lock()

    def answer(self, body: Mapping[str, Any]) -> str:
        text = _text(body)
        question = re.search(r"Question: (.*)", text)
        item = self.items.get(question.group(1).strip()) if question else None
        options = dict(re.findall(r"\(([A-Z])\) (.*?)(?= \([A-Z]\) |\n|$)", text))
        if item is None or not options:
            return "I cannot tell."
        right = next(letter for letter, option in options.items()
                     if option.strip() == item.correct_answer)  # fmt: skip
        wrong = next(letter for letter in options if letter != right)
        if item.kind == "text":
            return f"[[{right}]]"
        if item.kind == "never":
            return f"[[{wrong}]]"
        waves = _waves(body)
        heard = any(hears_tone(wave, rate, item.hz) for wave, rate in waves)
        with self._lock:
            self.heard.append((item.question, heard))
        return f"[[{right if heard else wrong}]]"

    def __enter__(self) -> ListeningServer:
        self._thread.start()
        return self

    def __exit__(self, *_exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
