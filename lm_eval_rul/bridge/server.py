"""lm-eval-rul bridge: serve a research audio LM to ``lalm-api`` from its own environment.

Written out by ``lm-eval-rul bridge --write FILE``; copy FILE into the model's environment
and run ``python FILE --adapter my_adapter.py [--host 127.0.0.1] [--port 8000]``. It needs
only Python >= 3.8, the standard library, numpy and soundfile.

The adapter is a Python file that defines:

  generate(audio, sampling_rate, prompt, max_new_tokens) -> str        (required)
  loglikelihood(audio, sampling_rate, context, continuation) -> float  (optional)
  MAX_AUDIO_SECONDS = 30    the model's audio window (optional; longer audio is cut to it,
                            and every cut is reported in the reply and on this console;
                            math.inf, like leaving it out, is no limit)
  CHUNKED = True            the model hears long audio in windows (optional; the factual
                            tasks then ask about each window)
  NAME = "my-model"         the model name lalm-api's model= must give (default: the
                            adapter file's name)
  THREAD_SAFE = True        let requests reach the model concurrently (default: one at a time)
  WORKDIR = "/path/to/repo" the folder the research code expects to run from (optional; the
                            bridge changes into it and puts it on sys.path before importing
                            the adapter; --chdir DIR does the same from the command line)
  TRANSIENT_ERRORS = (...)  exception classes worth retrying (optional; CUDA out of memory
                            and any exception with ``transient = True`` count as well)

CHUNKED and THREAD_SAFE are True or False (a string such as "false" is refused).

``audio`` is a mono float32 numpy array at ``sampling_rate`` Hz, or None when the request
carries no audio (lalm-api's audio=none: build a text-only prompt). ``prompt`` /
``context`` is the question text, ``continuation`` the answer to score (a letter such as
" A"). ``loglikelihood`` returns log p(continuation | audio, context) as a float (or a pair
(logprob, is_greedy), is_greedy True or False when the model's argmax is known; with a bare
float is_greedy is reported unknown); with it, letter scoring and the Perceptual Index work
through the bridge, without it only generation does.

The server speaks what lalm-api sends to an OpenAI-compatible endpoint: POST
/v1/chat/completions (an input_audio WAV part and the text; a request whose last message is
a prefilled assistant answer with continue_final_message is answered with vLLM's
prompt_logprobs, from loglikelihood) and GET /v1/models (the name and this declaration,
which lalm-api reads: max_audio_seconds, chunked, has_loglikelihood). An adapter that
raises or returns a wrong type gives an HTTP 422 carrying its message, never an answer:
lalm-api stops at once (retrying the same call cannot help); a transient failure (above)
gives an HTTP 503, which lalm-api retries. A malformed request is an HTTP 400.
It binds to 127.0.0.1 unless --host says otherwise: it has no authentication (binding
another address warns).
"""

from __future__ import annotations

import argparse
import ast
import base64
import importlib.util
import io
import ipaddress
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
#: HTTP status of an adapter failure: not retried by lalm-api (the same call fails again).
ADAPTER_FAILED = 422
#: HTTP status of a failure the adapter declares transient: lalm-api retries it.
ADAPTER_TRANSIENT = 503
_AUDIO_SHAPE = "input_audio must be {'data': base64 WAV, 'format': 'wav'}"
#: Largest request body accepted (an hour of float32 audio at 48 kHz, base64, is ~0.9 GB).
MAX_BODY_BYTES = 1 << 30


class BridgeError(Exception):
    """A request the bridge answers with an HTTP error (status, message)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class Adapter:
    """The user's adapter module, checked, with what it declares.

    Args:
        path: The adapter file.
        workdir: The folder to run from (``--chdir``); default: the adapter's ``WORKDIR``.
    """

    def __init__(self, path: str, workdir=None) -> None:
        self.path = os.path.abspath(path)
        if not os.path.isfile(self.path):
            raise SystemExit(f"bridge: adapter file {path} not found; give --adapter PATH.py")
        folder = os.path.dirname(self.path)
        if folder not in sys.path:
            sys.path.insert(0, folder)  # the adapter may import files beside it
        self.workdir = _enter_workdir(path, self.path, workdir)
        module = _import_adapter(path, self.path)
        self.generate_fn = getattr(module, "generate", None)
        if not callable(self.generate_fn):
            raise SystemExit(f"bridge: adapter {path} defines no {_GENERATE_SIGNATURE}")
        self.loglikelihood_fn = getattr(module, "loglikelihood", None)
        if self.loglikelihood_fn is not None and not callable(self.loglikelihood_fn):
            raise SystemExit(f"bridge: adapter {path}: loglikelihood is not a function")
        window = getattr(module, "MAX_AUDIO_SECONDS", None)
        if window is not None and (
            isinstance(window, bool)
            or not isinstance(window, (int, float))
            or not window > 0  # NaN too
        ):
            raise SystemExit(
                f"bridge: adapter {path}: MAX_AUDIO_SECONDS = {window!r} is not a positive "
                "number of seconds (or leave it out, or math.inf: no limit)"
            )
        # math.inf (or a number beyond the float range) reads as "no limit", as leaving it out
        infinite = window is not None and not math.isfinite(float(window))
        self.max_audio_seconds = None if window is None or infinite else float(window)
        self.chunked = _flag(module, "CHUNKED", path)
        self.thread_safe = _flag(module, "THREAD_SAFE", path)
        stem = os.path.splitext(os.path.basename(self.path))[0]
        name = getattr(module, "NAME", None)
        if name is not None and (not isinstance(name, str) or not name.strip()):
            raise SystemExit(f"bridge: adapter {path}: NAME = {name!r} is not a model name (str)")
        self.name = name or stem
        transient = getattr(module, "TRANSIENT_ERRORS", ())
        transient = (transient,) if isinstance(transient, type) else tuple(transient or ())
        if not all(isinstance(t, type) and issubclass(t, BaseException) for t in transient):
            raise SystemExit(
                f"bridge: adapter {path}: TRANSIENT_ERRORS = {transient!r} is not a tuple of "
                "exception classes"
            )
        self.transient_errors = transient
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

    def is_transient(self, error: BaseException) -> bool:
        """Whether retrying may help: declared by the adapter, or CUDA out of memory."""
        if isinstance(error, self.transient_errors) or getattr(error, "transient", False) is True:
            return True
        text = f"{type(error).__name__}: {error}"
        return type(error).__name__ == "OutOfMemoryError" or "CUDA out of memory" in text


def _flag(module, name: str, path: str) -> bool:
    """A True/False declaration of the adapter (absent: False); anything else is refused."""
    value = getattr(module, name, False)
    if type(value).__name__ in ("bool", "bool_"):  # Python's or numpy's
        return bool(value)
    raise SystemExit(
        f"bridge: adapter {path}: {name} = {value!r} is not True or False (a string such as "
        f"'false' would count as true); write {name} = True or {name} = False"
    )


def _literal_workdir(path: str, shown: str):
    """The adapter's top-level ``WORKDIR = "..."``, read without running the file."""
    try:
        with open(path, encoding="utf-8") as handle:
            tree = ast.parse(handle.read(), filename=path)
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return None  # the import reports it, with its line
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if not any(isinstance(t, ast.Name) and t.id == "WORKDIR" for t in targets):
            continue
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return node.value.value
        raise SystemExit(
            f"bridge: adapter {shown}:{node.lineno}: WORKDIR must be a plain string (it is "
            "read before the adapter runs); or pass --chdir DIR"
        )
    return None


def _enter_workdir(shown: str, path: str, given):
    """Change into ``--chdir`` or the adapter's ``WORKDIR`` (relative to the adapter's
    folder) and put it on ``sys.path``, before the adapter runs; returns it (or None)."""
    where = "--chdir" if given else f"adapter {shown}: WORKDIR"
    folder = given or _literal_workdir(path, shown)
    if not folder:
        return None
    base = os.getcwd() if given else os.path.dirname(path)
    folder = os.path.abspath(os.path.join(base, os.path.expanduser(folder)))
    if not os.path.isdir(folder):
        raise SystemExit(f"bridge: {where} {folder} is not a folder; give the model's checkout")
    os.chdir(folder)
    if folder not in sys.path:
        sys.path.insert(1, folder)  # after the adapter's folder: its helpers come first
    return folder


def _import_adapter(shown: str, path: str):
    """The adapter module, or one line naming the file and line where its import failed."""
    try:
        spec = importlib.util.spec_from_file_location("bridge_adapter", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except BaseException as error:  # noqa: BLE001 - one line, whatever the adapter raised
        if isinstance(error, KeyboardInterrupt):
            raise
        text = str(error).strip().splitlines()
        raise SystemExit(
            f"bridge: adapter {shown} does not import: {type(error).__name__}: "
            f"{text[0] if text else ''} ({_failed_at(error, path)})"
        ) from None
    return module


def _failed_at(error: BaseException, path: str) -> str:
    """``at FILE:LINE`` of a failed import: the adapter's line, and the deepest other one."""
    if isinstance(error, SyntaxError) and error.filename:
        return f"at {error.filename}:{error.lineno}"
    ours = os.path.abspath(__file__)
    frames = [
        frame
        for frame in traceback.extract_tb(error.__traceback__)
        if not frame.filename.startswith("<") and os.path.abspath(frame.filename) != ours
    ]
    mine = [f for f in frames if os.path.abspath(f.filename) == path]
    if not frames:
        return f"in {path}"
    deepest, where = frames[-1], f"at {path}:{mine[-1].lineno}" if mine else f"from {path}"
    if os.path.abspath(deepest.filename) == path:
        return where
    return f"{where}, in {deepest.filename}:{deepest.lineno}"


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


def _text_of(content, where: str) -> str:
    """The text of a message's content: a string, or its text parts joined."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise BridgeError(400, f"{where} content is {type(content).__name__}, not text or parts")
    texts = []
    for part in content:
        if not isinstance(part, dict) or part.get("type") != "text":
            raise BridgeError(400, f"{where} content may hold text parts only")
        texts.append(_string(part.get("text", ""), f"{where} text part"))
    return "".join(texts)


def _string(value, where: str) -> str:
    if not isinstance(value, str):
        raise BridgeError(400, f"{where} is {type(value).__name__}, not a string")
    return value


def split_request(body: dict) -> tuple:
    """(audio part or None, the user text, the prefilled answer or None) of a chat body.

    Raises:
        BridgeError: 400 for anything but one user message (text and at most one
            ``input_audio`` part), optionally followed by a prefilled assistant answer.
    """
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BridgeError(400, "the request has no messages")
    if not all(isinstance(m, dict) for m in messages):
        raise BridgeError(400, "each message must be a JSON object with a role and content")
    roles = [m.get("role") for m in messages]
    if "system" in roles:
        raise BridgeError(
            400,
            "the bridge passes one prompt to the adapter: drop system_prompt= from "
            "lalm-api's --model_args (put any instruction in the adapter's own template)",
        )
    prefilled = None
    if roles[-1] == "assistant" and body.get("continue_final_message"):
        prefilled = _text_of(messages[-1].get("content"), "the assistant message's")
        messages = messages[:-1]
        roles = roles[:-1]
    if roles != ["user"]:
        raise BridgeError(400, f"expected one user message (roles sent: {roles})")
    content = messages[0].get("content")
    if isinstance(content, str):
        return None, content, prefilled
    if not isinstance(content, list):
        raise BridgeError(400, f"the user content is {type(content).__name__}, not text or parts")
    audio, texts = [], []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text":
            texts.append(_string(part.get("text", ""), "a text part's text"))
        elif kind == "input_audio":
            if not isinstance(part.get("input_audio"), dict):  # never read as "no audio"
                raise BridgeError(400, _AUDIO_SHAPE)
            audio.append(part["input_audio"])
        else:
            raise BridgeError(400, f"unsupported content part {kind!r} (text, input_audio)")
    if len(audio) > 1:
        raise BridgeError(400, f"{len(audio)} audio parts in one message; the bridge takes one")
    return (audio[0] if audio else None), "\n".join(texts), prefilled


def token_budget(body: dict) -> int:
    """``max_completion_tokens`` / ``max_tokens`` of a body (default 256), a positive int."""
    for name in ("max_completion_tokens", "max_tokens"):
        value = body.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise BridgeError(400, f"{name} = {value!r} is not a positive whole number")
        return value
    return 256


def stop_strings(body: dict) -> list:
    """The body's ``stop`` strings (a string or a list of strings)."""
    stops = body.get("stop") or []
    stops = [stops] if isinstance(stops, str) else stops
    if not isinstance(stops, list) or not all(isinstance(x, str) for x in stops):
        raise BridgeError(400, f"stop = {body.get('stop')!r} is not a string or list of strings")
    return stops


def logprob_of(value, what: str) -> tuple:
    """(log p, is_greedy or None) of what ``loglikelihood`` returned.

    A float (or int), or a pair (float, bool); ``None``: the adapter did not say whether
    the continuation is the model's argmax (never guessed).

    Raises:
        BridgeError: 422 for anything else: a string, a bool, NaN, an infinity, a log p > 0.
    """
    greedy = None
    if isinstance(value, (tuple, list)) and len(value) == 2:
        value, greedy = value
        if type(greedy).__name__ not in ("bool", "bool_"):
            raise BridgeError(
                ADAPTER_FAILED,
                f"adapter {what} returned is_greedy = {greedy!r}; give True or False "
                "(or return the log-probability alone: is_greedy is then unknown)",
            )
        greedy = bool(greedy)
    number = type(value).__name__ in ("int", "float", "float16", "float32", "float64")
    if isinstance(value, bool) or not number:
        raise BridgeError(
            ADAPTER_FAILED,
            f"adapter {what} returned {type(value).__name__} {value!r:.40}, not a number "
            "(return a float, e.g. float(logprob), or (float, is_greedy))",
        )
    logprob = float(value)
    if not math.isfinite(logprob) or logprob > 1e-6:
        raise BridgeError(
            ADAPTER_FAILED, f"adapter {what} returned {logprob!r}, not a finite log p <= 0"
        )
    return min(logprob, 0.0), greedy


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
        if (
            not isinstance(part, dict)
            or part.get("format", "wav") != "wav"
            or not isinstance(part.get("data"), str)
        ):
            raise BridgeError(400, _AUDIO_SHAPE)
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
        logprob, greedy = logprob_of(value, "loglikelihood")
        # vLLM's layout: the prompt token's own record (rank 1: it is the argmax), plus the
        # argmax's when it is another token; unknown: no rank at all (lalm-api: not greedy)
        rank = None if greedy is None else 1 if greedy else 2
        own = {"logprob": logprob, "rank": rank, "decoded_token": continuation}
        entry = {"0": own} if greedy is not False else {"0": own, "1": {"logprob": None, "rank": 1}}
        reply = self._reply("", "length")
        reply["prompt_logprobs"] = [None, entry]
        if greedy is None:
            reply.setdefault("bridge", {})["is_greedy"] = None
        return self._with_cut(reply, cut)

    def generate(self, part, prompt: str, body: dict) -> dict:
        budget, stops = token_budget(body), stop_strings(body)
        wave, rate, cut = self.audio(part)
        text = self._run(self.adapter.generate_fn, "generate", wave, rate, prompt, budget)
        if not isinstance(text, str):
            raise BridgeError(
                ADAPTER_FAILED, f"adapter generate returned {type(text).__name__}, not str"
            )
        finish = "length"
        for stop in stops:
            if stop and stop in text:
                text, finish = text[: text.index(stop)], "stop"
        return self._with_cut(self._reply(text, finish), cut)

    def _run(self, function, what: str, *args):
        try:
            return self.adapter.call(function, *args)
        except (Exception, SystemExit) as error:  # noqa: BLE001 - reported, never answered
            # research code calls sys.exit()/exit() (argparse on a bad option does): an
            # error reply carrying its message, and the bridge keeps serving
            self.log(f"bridge: adapter {what} raised:\n{traceback.format_exc().rstrip()}")
            said = " ".join(str(error).split())
            if isinstance(error, SystemExit):
                said = f"the adapter called sys.exit({error.code!r})"
            said = said if len(said) <= 200 else said[:200] + "..."
            if self.adapter.is_transient(error):  # lalm-api retries a 503
                raise BridgeError(
                    ADAPTER_TRANSIENT,
                    f"adapter {what} raised {type(error).__name__}: {said} (transient)",
                ) from None
            raise BridgeError(
                ADAPTER_FAILED,
                f"adapter {what} raised {type(error).__name__}: {said} (not retried: the "
                "bridge console has the traceback)",
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
            reply.setdefault("bridge", {})["audio_cut"] = cut
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

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            if self.path.split("?", 1)[0].rstrip("/") not in ("/v1/models", "/models"):
                self._error(404, f"no such path {self.path} (GET /v1/models)")
                return
            declared = bridge.adapter.declaration()
            model = {"id": declared["name"], "object": "model", "owned_by": "lm-eval-rul-bridge"}
            self._send(200, {"object": "list", "data": [dict(model, lm_eval_rul_bridge=declared)]})

        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            given = self.headers.get("Content-Length")
            length = int(given.strip()) if given and given.strip().isdigit() else -1
            if length < 0 or length > MAX_BODY_BYTES:
                self.close_connection = True  # the body's end is unknown: never read it
                self._error(
                    400 if length < 0 else 413,
                    f"Content-Length {given!r} is not a byte count"
                    if length < 0
                    else f"the body of {length} bytes is over the bridge's {MAX_BODY_BYTES}",
                )
                return
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
                self._error(ADAPTER_FAILED, f"bridge error: {type(error).__name__}: {error}")
                return
            cut = reply.get("bridge", {}).get("audio_cut")
            seconds = f"{cut['audio_seconds']}s->{cut['cut_to_seconds']}s" if cut else None
            self._send(200, reply, {"X-Bridge-Audio-Cut": seconds} if cut else None)

        def _error(self, status: int, message: str) -> None:
            kind = "server_error" if status >= 500 else "invalid_request_error"
            headers = {"Retry-After": "1"} if status == ADAPTER_TRANSIENT else None
            body = {"error": {"message": message, "type": kind, "code": status}}
            self._send(status, body, headers)

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
    parser.add_argument(
        "--chdir",
        metavar="DIR",
        help="run from DIR (the model's checkout, for code that opens relative paths) and put "
        "it on sys.path, before the adapter is imported (default: the adapter's WORKDIR)",
    )
    parser.add_argument("--verbose", action="store_true", help="log every request")
    return parser.parse_args(argv)


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.split("%", 1)[0]).is_loopback
    except ValueError:  # a name: only localhost is known to stay on this machine
        return host == "localhost"


def _fail(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
    raise SystemExit(2)


def serve(argv=None) -> None:
    """Check the adapter, bind, announce, serve until Ctrl-C (exit 2 on bad input)."""
    args = parse_args(argv)
    try:
        adapter = Adapter(args.adapter, args.chdir)
    except SystemExit as stop:
        _fail(str(stop.code))
    bridge = Bridge(adapter)
    if not 0 <= args.port <= 65535:
        _fail(f"bridge: --port {args.port} is not a port (0 to 65535; 0: any free one)")
    try:
        server = ThreadingHTTPServer((args.host, args.port), make_handler(bridge, args.verbose))
    except OSError as error:
        why = f"{args.host}:{args.port} ({error.strerror or error})"
        _fail(f"bridge: cannot listen on {why}; is another server using it? Choose another --port.")
    server.daemon_threads = True
    host = server.server_address[0]
    if not _is_loopback(host):
        print(
            f"bridge: warning: listening on {host}, reachable from other machines: the bridge "
            "has no authentication, so anyone who reaches this port can run the model. Keep "
            "the default --host 127.0.0.1 and tunnel (ssh -L 8000:127.0.0.1:8000 HOST) unless "
            "the network is yours.",
            file=sys.stderr,
            flush=True,
        )
    declared = adapter.declaration()
    window = declared["max_audio_seconds"]
    print(
        f"bridge: serving {adapter.name!r} (adapter {args.adapter}; audio window "
        f"{'none' if window is None else f'{window:g} s'}, chunked {declared['chunked']}, "
        f"loglikelihood {'yes' if declared['has_loglikelihood'] else 'no'}"
        f"{'' if adapter.workdir is None else f'; running from {adapter.workdir}'}) at "
        f"http://{args.host}:{server.server_address[1]}/v1",
        flush=True,
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        server.server_close()


if __name__ == "__main__":
    serve()
