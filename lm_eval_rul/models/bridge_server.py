"""lm-eval-rul bridge: serve a research audio LM to ``lalm-api`` from its own environment.

Written out by ``lm-eval-rul bridge --write FILE``; copy FILE into the model's environment
and run ``python FILE --adapter my_adapter.py [--host 127.0.0.1] [--port 8000]``. It needs
only Python >= 3.8, the standard library, numpy and soundfile.

The adapter is a Python file that defines:

  generate(audio, sampling_rate, prompt, max_new_tokens) -> str        (required)
  loglikelihood(audio, sampling_rate, context, continuation) -> float  (optional)
  MAX_AUDIO_SECONDS = 30    the model's audio window (optional; longer audio is cut to it,
                            and every cut is reported in the reply and on this console)
  CHUNKED = True            the model hears long audio in windows (optional; the factual
                            tasks then ask about each window)
  NAME = "my-model"         the model name lalm-api's model= must give (default: the
                            adapter file's name)
  THREAD_SAFE = True        let requests reach the model concurrently (default: one at a time)

``audio`` is a mono float32 numpy array at ``sampling_rate`` Hz, or None when the request
carries no audio (lalm-api's audio=none). ``prompt`` / ``context`` is the question text,
``continuation`` the answer to score (a letter such as " A"). ``loglikelihood`` returns
log p(continuation | audio, context) (or a pair (logprob, is_greedy)); with it, letter
scoring and the Perceptual Index work through the bridge, without it only generation does.

The server speaks what lalm-api sends to an OpenAI-compatible endpoint: POST
/v1/chat/completions (an input_audio WAV part and the text; a request whose last message is
a prefilled assistant answer with continue_final_message is answered with vLLM's
prompt_logprobs, from loglikelihood) and GET /v1/models (the name and this declaration,
which lalm-api reads: max_audio_seconds, chunked, has_loglikelihood). An adapter that
raises or returns a wrong type gives an HTTP 500 carrying the message, never an answer.
It binds to 127.0.0.1 unless --host says otherwise: it has no authentication.
"""

from __future__ import annotations

import argparse
import base64
import importlib.util
import io
import json
import math
import os
import sys
import threading
import time
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

#: Version of the declaration under ``/v1/models``' ``lm_eval_rul_bridge`` key.
PROTOCOL_VERSION = 1
_GENERATE_SIGNATURE = "generate(audio, sampling_rate, prompt, max_new_tokens) -> str"


class BridgeError(Exception):
    """A request the bridge answers with an HTTP error (status, message)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class Adapter:
    """The user's adapter module, checked, with what it declares."""

    def __init__(self, path: str) -> None:
        self.path = os.path.abspath(path)
        if not os.path.isfile(self.path):
            raise SystemExit(f"bridge: adapter file {path} not found; give --adapter PATH.py")
        folder = os.path.dirname(self.path)
        if folder not in sys.path:
            sys.path.insert(0, folder)  # the adapter may import files beside it
        try:
            spec = importlib.util.spec_from_file_location("bridge_adapter", self.path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        except BaseException as error:  # noqa: BLE001 - one line, whatever the adapter raised
            if isinstance(error, KeyboardInterrupt):
                raise
            raise SystemExit(
                f"bridge: adapter {path} does not import: {type(error).__name__}: {error}"
            ) from None
        self.generate_fn = getattr(module, "generate", None)
        if not callable(self.generate_fn):
            raise SystemExit(f"bridge: adapter {path} defines no {_GENERATE_SIGNATURE}")
        self.loglikelihood_fn = getattr(module, "loglikelihood", None)
        if self.loglikelihood_fn is not None and not callable(self.loglikelihood_fn):
            raise SystemExit(f"bridge: adapter {path}: loglikelihood is not a function")
        window = getattr(module, "MAX_AUDIO_SECONDS", None)
        if window is not None and (
            isinstance(window, bool) or not isinstance(window, (int, float)) or window <= 0
        ):
            raise SystemExit(
                f"bridge: adapter {path}: MAX_AUDIO_SECONDS = {window!r} is not a positive "
                "number of seconds (or leave it out: no limit)"
            )
        self.max_audio_seconds = None if window is None else float(window)
        self.chunked = bool(getattr(module, "CHUNKED", False))
        stem = os.path.splitext(os.path.basename(self.path))[0]
        self.name = str(getattr(module, "NAME", None) or stem)
        self.thread_safe = bool(getattr(module, "THREAD_SAFE", False))
        self.lock = threading.Lock()

    def declaration(self) -> dict:
        return {
            "version": PROTOCOL_VERSION,
            "name": self.name,
            "max_audio_seconds": self.max_audio_seconds,
            "chunked": self.chunked,
            "has_loglikelihood": self.loglikelihood_fn is not None,
            "thread_safe": self.thread_safe,
        }

    def call(self, function, *args):
        """``function(*args)``, one call at a time unless the adapter is thread-safe."""
        if self.thread_safe:
            return function(*args)
        with self.lock:
            return function(*args)


def read_wav(data: str) -> tuple:
    """(mono float32 waveform, rate) of a base64 WAV; stereo is averaged."""
    import numpy as np
    import soundfile as sf

    try:
        wave, rate = sf.read(io.BytesIO(base64.b64decode(data)), dtype="float32")
    except Exception as error:  # noqa: BLE001 - any decoding failure is the client's
        raise BridgeError(
            400, f"the input_audio part is not a readable WAV file ({error})"
        ) from None
    if wave.ndim > 1:
        wave = wave.mean(axis=1)
    return np.ascontiguousarray(wave, dtype=np.float32), int(rate)


def split_request(body: dict) -> tuple:
    """(audio part or None, the user text, the prefilled answer or None) of a chat body."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BridgeError(400, "the request has no messages")
    roles = [m.get("role") if isinstance(m, dict) else None for m in messages]
    if "system" in roles:
        raise BridgeError(
            400,
            "the bridge passes one prompt to the adapter: drop system_prompt= from "
            "lalm-api's --model_args (put any instruction in the adapter's own template)",
        )
    prefilled = None
    if roles[-1] == "assistant" and body.get("continue_final_message"):
        prefilled = messages[-1].get("content")
        if isinstance(prefilled, list):
            prefilled = "".join(p.get("text", "") for p in prefilled if isinstance(p, dict))
        messages = messages[:-1]
        roles = roles[:-1]
    if roles != ["user"]:
        raise BridgeError(400, f"expected one user message (roles sent: {roles})")
    content = messages[0].get("content")
    if isinstance(content, str):
        return None, content, prefilled
    audio, texts = [], []
    for part in content if isinstance(content, list) else []:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text":
            texts.append(str(part.get("text", "")))
        elif kind == "input_audio":
            audio.append(part.get("input_audio") or {})
        else:
            raise BridgeError(400, f"unsupported content part {kind!r} (text, input_audio)")
    if len(audio) > 1:
        raise BridgeError(400, f"{len(audio)} audio parts in one message; the bridge takes one")
    return (audio[0] if audio else None), "\n".join(texts), prefilled


class Bridge:
    """Turns request bodies into adapter calls and adapter results into replies."""

    def __init__(self, adapter: Adapter, log=None) -> None:
        self.adapter = adapter
        self.cuts = 0
        self.log = log or (lambda line: print(line, file=sys.stderr, flush=True))

    def audio(self, part) -> tuple:
        """(waveform or None, rate, the cut record or None) of an input_audio part."""
        if part is None:
            return None, 16000, None
        if part.get("format", "wav") != "wav" or not isinstance(part.get("data"), str):
            raise BridgeError(400, "input_audio must be {'data': base64 WAV, 'format': 'wav'}")
        wave, rate = read_wav(part["data"])
        window = self.adapter.max_audio_seconds
        if window is None or len(wave) <= int(round(window * rate)):
            return wave, rate, None
        seconds = len(wave) / rate
        wave = wave[: int(round(window * rate))]
        self.cuts += 1
        self.log(
            f"bridge: audio of {seconds:.2f} s cut to the model's window of {window:g} s "
            f"(MAX_AUDIO_SECONDS; {self.cuts} cut so far)"
        )
        return wave, rate, {"audio_seconds": round(seconds, 3), "cut_to_seconds": window}

    def complete(self, body: dict) -> dict:
        name = body.get("model")
        if name is not None and name != self.adapter.name:
            raise BridgeError(
                404,
                f"model {name!r} is not served here; this bridge serves "
                f"{self.adapter.name!r} (lalm-api model={self.adapter.name})",
            )
        part, text, prefilled = split_request(body)
        if body.get("logprobs") or body.get("top_logprobs"):
            raise BridgeError(
                400,
                "top_logprobs: the bridge gives letter log-probabilities on the prompt "
                "path only (lalm-api logprobs=auto or prompt), from the adapter's loglikelihood",
            )
        if prefilled is not None or body.get("prompt_logprobs") is not None:
            return self.score(part, text, prefilled)
        return self.generate(part, text, body)

    def score(self, part, context: str, continuation) -> dict:
        function = self.adapter.loglikelihood_fn
        if function is None:
            raise BridgeError(
                400,
                "prompt_logprobs: the adapter defines no loglikelihood(audio, "
                "sampling_rate, context, continuation), so letters cannot be scored",
            )
        if not isinstance(continuation, str) or not continuation:
            raise BridgeError(400, "prompt_logprobs needs the answer as a prefilled assistant turn")
        wave, rate, cut = self.audio(part)
        value = self._run(function, "loglikelihood", wave, rate, context, continuation)
        greedy = True
        if isinstance(value, (tuple, list)) and len(value) == 2:
            value, greedy = value[0], bool(value[1])
        try:
            logprob = float(value)
        except (TypeError, ValueError):
            raise BridgeError(
                500, f"adapter loglikelihood returned {type(value).__name__}, not a number"
            ) from None
        if math.isnan(logprob) or logprob > 1e-6:
            raise BridgeError(500, f"adapter loglikelihood returned {logprob!r}, not a log p <= 0")
        own = {"logprob": logprob, "rank": 1 if greedy else 2, "decoded_token": continuation}
        entry = {"0": own} if greedy else {"0": own, "1": {"logprob": None, "rank": 1}}
        reply = self._reply("", "length")
        reply["prompt_logprobs"] = [None, entry]
        return self._with_cut(reply, cut)

    def generate(self, part, prompt: str, body: dict) -> dict:
        wave, rate, cut = self.audio(part)
        budget = body.get("max_completion_tokens") or body.get("max_tokens") or 256
        text = self._run(self.adapter.generate_fn, "generate", wave, rate, prompt, int(budget))
        if not isinstance(text, str):
            raise BridgeError(500, f"adapter generate returned {type(text).__name__}, not str")
        stops = body.get("stop") or []
        stops = [stops] if isinstance(stops, str) else stops
        finish = "length"
        for stop in stops:
            if stop and stop in text:
                text, finish = text[: text.index(stop)], "stop"
        return self._with_cut(self._reply(text, finish), cut)

    def _run(self, function, what: str, *args):
        try:
            return self.adapter.call(function, *args)
        except Exception as error:  # noqa: BLE001 - reported to the client, never answered
            self.log(f"bridge: adapter {what} raised:\n{traceback.format_exc().rstrip()}")
            raise BridgeError(
                500, f"adapter {what} raised {type(error).__name__}: {error}"
            ) from None

    def _reply(self, content: str, finish: str) -> dict:
        message = {"role": "assistant", "content": content}
        choice = {"index": 0, "message": message, "finish_reason": finish}
        created, name = int(time.time()), self.adapter.name
        reply = {"id": f"bridge-{time.time_ns()}", "object": "chat.completion"}
        return dict(reply, created=created, model=name, choices=[choice])

    @staticmethod
    def _with_cut(reply: dict, cut) -> dict:
        if cut is not None:
            reply["bridge"] = {"audio_cut": cut}
        return reply


def make_handler(bridge: Bridge, verbose: bool = False):
    """The request handler class serving ``bridge``."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: lalm-api reuses its connections
        disable_nagle_algorithm = True  # headers and body leave at once (no 40 ms stalls)

        def log_message(self, format: str, *args) -> None:  # noqa: A002 - the base's name
            if verbose:
                super().log_message(format, *args)

        def _send(self, status: int, body, headers=None) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

        def _error(self, status: int, message: str) -> None:
            kind = "server_error" if status >= 500 else "invalid_request_error"
            self._send(status, {"error": {"message": message, "type": kind, "code": status}})

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            if self.path.split("?", 1)[0].rstrip("/") not in ("/v1/models", "/models"):
                self._error(404, f"no such path {self.path} (GET /v1/models)")
                return
            declared = bridge.adapter.declaration()
            model = {"id": declared["name"], "object": "model", "owned_by": "lm-eval-rul-bridge"}
            self._send(200, {"object": "list", "data": [dict(model, lm_eval_rul_bridge=declared)]})

        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            if not self.path.split("?", 1)[0].rstrip("/").endswith("/chat/completions"):
                self._error(404, f"no such path {self.path} (POST /v1/chat/completions)")
                return
            try:
                try:
                    body = json.loads(raw)
                except ValueError as error:
                    raise BridgeError(400, f"the request body is not JSON ({error})") from None
                if not isinstance(body, dict):
                    raise BridgeError(400, "the request body is not a JSON object")
                reply = bridge.complete(body)
            except BridgeError as error:
                self._error(error.status, str(error))
                return
            except Exception as error:  # noqa: BLE001 - a bridge bug: say it, keep serving
                traceback.print_exc()
                self._error(500, f"bridge error: {type(error).__name__}: {error}")
                return
            cut = reply.get("bridge", {}).get("audio_cut")
            seconds = f"{cut['audio_seconds']}s->{cut['cut_to_seconds']}s" if cut else None
            self._send(200, reply, {"X-Bridge-Audio-Cut": seconds} if cut else None)

    return Handler


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=os.path.basename(sys.argv[0]) or "bridge.py",
        description=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Then: lm-eval-rul run --model lalm-api --model_args "
        "base_url=http://127.0.0.1:8000/v1,model=NAME --tasks ...",
    )
    parser.add_argument("--adapter", required=True, help="the adapter file (see above)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: loopback)")
    parser.add_argument("--port", type=int, default=8000, help="port (default: 8000)")
    parser.add_argument("--verbose", action="store_true", help="log every request")
    return parser.parse_args(argv)


def _fail(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
    raise SystemExit(2)


def serve(argv=None) -> None:
    """Check the adapter, bind, announce, serve until Ctrl-C (exit 2 on bad input)."""
    args = parse_args(argv)
    try:
        adapter = Adapter(args.adapter)
    except SystemExit as stop:
        _fail(str(stop.code))
    bridge = Bridge(adapter)
    try:
        server = ThreadingHTTPServer((args.host, args.port), make_handler(bridge, args.verbose))
    except OSError as error:
        why = f"{args.host}:{args.port} ({error.strerror or error})"
        _fail(f"bridge: cannot listen on {why}; is another server using it? Choose another --port.")
    server.daemon_threads = True
    declared = adapter.declaration()
    window = declared["max_audio_seconds"]
    print(
        f"bridge: serving {adapter.name!r} (adapter {args.adapter}; audio window "
        f"{'none' if window is None else f'{window:g} s'}, chunked {declared['chunked']}, "
        f"loglikelihood {'yes' if declared['has_loglikelihood'] else 'no'}) at "
        f"http://{args.host}:{server.server_address[1]}/v1",
        flush=True,
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        server.server_close()


if __name__ == "__main__":
    serve()
