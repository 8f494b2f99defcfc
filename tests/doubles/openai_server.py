"""A loopback OpenAI-compatible chat server running a tiny real audio LM (tests, benchmarks).

It stands in for vLLM's ``/v1/chat/completions`` (or, in other modes, for OpenAI's):
it decodes each request's base64 WAV (``input_audio`` or an ``audio_url`` data URL)
with soundfile, renders the messages with the checkpoint's own processor and chat
template (an audio part becomes ``{"type": "audio"}``, as vLLM passes it), runs the
transformers model, and answers with ``message.content``, ``logprobs.content[0].top_logprobs``
and vLLM's top-level ``prompt_logprobs``. It knows nothing of ``lalm``'s code: both
sides meet only through the protocol.

Modes (``logprobs=``): ``full`` (vLLM: everything), ``top`` (OpenAI: standard fields
only; vLLM's extra fields are a 400 "Unrecognized request argument"), ``none`` (no
log-probabilities: a 400, or with ``silent_no_logprobs`` a 200 without them).
Scripted failures (:attr:`OpenAIAudioServer.script`, :attr:`~OpenAIAudioServer.fail_after`)
and counters (:attr:`~OpenAIAudioServer.posts`, :attr:`~OpenAIAudioServer.answered`)
let tests check retries, errors and resumption from the server's side. The HTTP side
(error layouts, scripted failures, request checks, the handler) is :mod:`.openai_http`.
"""

from __future__ import annotations

import base64
import collections
import contextlib
import hashlib
import inspect
import io
import json
import threading
import time
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

from .openai_http import error_reply, fingerprint, make_handler

__all__ = ["OpenAIAudioServer", "fingerprint"]


class OpenAIAudioServer:
    """``POST {url}/chat/completions`` on 127.0.0.1, answered by a tiny audio LM.

    Args:
        pretrained: A folder made by :func:`lm_eval_rul.testing.audio.make_tiny_audio_lm`
            (a family whose chat template takes typed audio parts).
        served_model: The model name requests must name (else 404, as vLLM answers).
        api_key: When set, requests without ``Authorization: Bearer {api_key}`` get a 401
            whose message repeats the key they sent (worse than OpenAI, which masks it).
        logprobs: ``full``, ``top`` or ``none`` (module doc).
        top_k_cap: Most ``top_logprobs`` / ``prompt_logprobs`` answered (vLLM's
            ``--max-logprobs``, OpenAI's 20).
        silent_no_logprobs: In mode ``none``, answer 200 without log-probabilities
            instead of a 400.
        latency: Seconds each request waits before its turn at the model (a stand-in for
            network and queueing time; the model itself runs one request at a time).
        port: Port on 127.0.0.1 (0: any free one; see :attr:`url`).

    Attributes:
        script: Statuses (429, 500, 503, 401, 404, ``"gemini_bad_key"``,
            ``"not_completion"`` (a 200 holding a gateway's error), a name of
            :data:`~.openai_http.REWRITES` (an answer altered), or 200 for "serve
            normally") consumed one per request before normal serving.
        fail_after: After this many answered requests, answer 503 to every other one.
        posts: Requests received (each retry counts).
        statuses: The status of each chat answer (POST), in order.
        answered: Bodies of the requests answered 200 (audio replaced by its digest).
    """

    def __init__(
        self,
        pretrained: str | Path,
        *,
        served_model: str = "tiny-audio",
        api_key: str | None = None,
        logprobs: str = "full",
        top_k_cap: int = 20,
        silent_no_logprobs: bool = False,
        latency: float = 0.0,
        port: int = 0,
    ) -> None:
        if logprobs not in ("full", "top", "none"):
            raise ValueError(f"logprobs must be full, top or none, got {logprobs!r}")
        self.served_model = served_model
        self.api_key = api_key
        self.logprobs = logprobs
        self.top_k_cap = int(top_k_cap)
        self.silent_no_logprobs = silent_no_logprobs
        self.latency = float(latency)
        self.script: collections.deque = collections.deque()
        self.fail_after: int | None = None
        self.posts = 0
        self.statuses: list[int] = []
        self.answered: list[dict[str, Any]] = []
        self._count_lock = threading.Lock()
        self._model_lock = threading.Lock()
        self._accepted = 0
        self._load(str(pretrained))
        self.httpd = ThreadingHTTPServer(("127.0.0.1", int(port)), make_handler(self))
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> OpenAIAudioServer:
        self._thread.start()
        return self

    def __exit__(self, *_exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def fingerprints(self) -> list[str]:
        """:func:`fingerprint` of every answered request, in order."""
        return [fingerprint(body) for body in self.answered]

    # ------------------------------------------------------------------ model
    def _load(self, pretrained: str) -> None:
        import transformers

        from lm_eval_rul.models.families import family_for, load_processor

        config = transformers.AutoConfig.from_pretrained(pretrained)
        self.family = family_for(config.model_type, where=pretrained)
        self.processor = load_processor(self.family, pretrained, {})
        self.tokenizer = self.processor.tokenizer
        model_class = getattr(transformers, self.family.model_class)
        self.model = model_class.from_pretrained(pretrained, dtype="float32").eval()
        self.sampling_rate = int(self.processor.feature_extractor.sampling_rate)
        self._forward_names = set(inspect.signature(self.model.forward).parameters)

    def _decode_audio(self, part: dict[str, Any]) -> tuple[Any, str]:
        import librosa
        import soundfile as sf

        if part["type"] == "input_audio":
            data = part["input_audio"]["data"]
        else:  # audio_url with a data URL
            data = part["audio_url"]["url"].split("base64,", 1)[1]
        raw = base64.b64decode(data)
        wave, rate = sf.read(io.BytesIO(raw), dtype="float32")
        if wave.ndim > 1:
            wave = wave.mean(axis=1)
        if rate != self.sampling_rate:
            wave = librosa.resample(wave, orig_sr=rate, target_sr=self.sampling_rate)
        return wave, hashlib.sha256(raw).hexdigest()

    def _messages(self, body: dict[str, Any]) -> tuple[list[dict], list, dict[str, Any]]:
        """HF messages, waveforms, and the body as recorded (audio by digest and length)."""
        messages, waves, recorded = [], [], json.loads(json.dumps(body))
        for message, kept in zip(body["messages"], recorded["messages"], strict=True):
            content = message["content"]
            if isinstance(content, str):
                messages.append({"role": message["role"], "content": content})
                continue
            parts = []
            for part, kept_part in zip(content, kept["content"], strict=True):
                if part["type"] in ("input_audio", "audio_url"):
                    wave, digest = self._decode_audio(part)
                    waves.append(wave)
                    kept_part.clear()
                    seconds = round(len(wave) / self.sampling_rate, 4)  # what the model hears
                    kept_part.update(type="audio", sha256=digest, seconds=seconds)
                    parts.append({"type": "audio"})
                elif part["type"] == "text":
                    parts.append({"type": "text", "text": part["text"]})
                else:
                    raise error_reply(400, f"unsupported content part type {part['type']!r}")
            messages.append({"role": message["role"], "content": parts})
        return messages, waves, recorded

    def _complete(self, body: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """(answer, request as recorded) of one request (the caller holds the model lock)."""
        import torch

        messages, waves, recorded = self._messages(body)
        add_generation_prompt = body.get("add_generation_prompt", True)
        continue_final = body.get("continue_final_message", False)
        if add_generation_prompt and continue_final:
            raise error_reply(
                400, "Cannot set both `continue_final_message` and `add_generation_prompt`."
            )
        prompt = self.processor.apply_chat_template(
            messages,
            tokenize=False,
            add_generation_prompt=add_generation_prompt,
            continue_final_message=continue_final,
        )
        prompt = prompt[0] if isinstance(prompt, list) else prompt
        kwargs = dict(self.family.processor_kwargs)
        if waves:
            kwargs.update(audio=waves, sampling_rate=self.sampling_rate)
        encoded = self.processor(text=[prompt], return_tensors="pt", **kwargs)
        inputs = {k: v for k, v in encoded.items() if k in self._forward_names}
        ids = inputs["input_ids"][0].tolist()
        max_tokens = int(body.get("max_tokens") or body.get("max_completion_tokens") or 16)
        temperature = float(body.get("temperature") or 0)
        with torch.no_grad():
            logprobs = torch.log_softmax(self.model(**inputs).logits[0].float(), dim=-1)
            if max_tokens == 1 and temperature == 0:
                new = [int(logprobs[-1].argmax())]
            else:
                if temperature > 0:
                    torch.manual_seed(int(body.get("seed") or 0))
                out = self.model.generate(
                    **inputs,
                    max_new_tokens=max_tokens,
                    do_sample=temperature > 0,
                    temperature=temperature if temperature > 0 else None,
                    pad_token_id=self.tokenizer.pad_token_id,
                )
                new = out[0, len(ids) :].tolist()
        return self._answer(body, ids, new, logprobs, max_tokens), recorded

    def _answer(
        self, body: dict[str, Any], ids: list[int], new: list[int], logprobs: Any, max_tokens: int
    ) -> dict[str, Any]:
        text = self.tokenizer.decode(new, skip_special_tokens=True)
        finish = "length" if len(new) >= max_tokens else "stop"
        for stop in body.get("stop") or []:
            if stop and stop in text:
                text, finish = text.split(stop)[0], "stop"
        choice: dict[str, Any] = {
            "index": 0,
            "message": {"role": "assistant", "content": text},
            "logprobs": None,
            "finish_reason": finish,
        }
        wants_top = body.get("logprobs") and not (
            self.logprobs == "none" and self.silent_no_logprobs
        )
        if wants_top:
            row = logprobs[-1]
            k = min(int(body.get("top_logprobs") or 0), self.top_k_cap, row.numel())
            values, top_ids = row.topk(k) if k else (row[:0], row[:0])
            pairs = zip(values.tolist(), top_ids.tolist(), strict=True)
            top = [self._token(int(i), float(v)) for v, i in pairs]
            first = {**self._token(new[0], float(row[new[0]])), "top_logprobs": top}
            choice["logprobs"] = {"content": [first]}
        answer = {
            "id": f"chatcmpl-{self.posts}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.served_model,
            "choices": [choice],
            "usage": {"prompt_tokens": len(ids), "completion_tokens": len(new)},
        }
        if body.get("prompt_logprobs") is not None:
            answer["prompt_logprobs"] = self._prompt_logprobs(ids, logprobs, body)
        return answer

    def _token(self, token_id: int, logprob: float) -> dict[str, Any]:
        text = self.tokenizer.decode([token_id])
        return {"token": text, "logprob": max(logprob, -9999.0), "bytes": list(text.encode())}

    def _prompt_logprobs(self, ids: list[int], logprobs: Any, body: dict) -> list:
        """vLLM's layout: ``None``, then per token {id: {logprob, rank, decoded_token}}."""
        k = min(int(body["prompt_logprobs"]), self.top_k_cap, logprobs.shape[-1])
        entries: list[Any] = [None]
        for position in range(1, len(ids)):
            row, actual = logprobs[position - 1], ids[position]
            value = float(row[actual])
            entry = {str(actual): self._ranked(actual, value, 1 + int((row > row[actual]).sum()))}
            if k:
                values, top_ids = row.topk(k)
                for rank, (v, i) in enumerate(zip(values, top_ids, strict=True), start=1):
                    entry.setdefault(str(int(i)), self._ranked(int(i), float(v), rank))
            entries.append(entry)
        return entries

    def _ranked(self, token_id: int, logprob: float, rank: int) -> dict[str, Any]:
        text = self.tokenizer.decode([token_id])
        return {"logprob": max(logprob, -9999.0), "rank": rank, "decoded_token": text}


def main(argv: list[str] | None = None) -> None:
    """``PYTHONPATH=tests python -m doubles.openai_server PRETRAINED``: serve until stopped."""
    import argparse
    import signal
    import sys

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pretrained", help="a folder made by make_tiny_audio_lm")
    parser.add_argument("--served-model", default="tiny-audio")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--logprobs", choices=("full", "top", "none"), default="full")
    parser.add_argument("--top-k-cap", type=int, default=20)
    args = parser.parse_args(argv)
    options = {"logprobs": args.logprobs, "top_k_cap": args.top_k_cap, "port": args.port}
    server = OpenAIAudioServer(args.pretrained, served_model=args.served_model, **options)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print(f"serving {args.served_model!r} at {server.url} (Ctrl-C stops)", flush=True)
    try:
        with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how a user stops it
            server.httpd.serve_forever()
    finally:
        print(f"{server.posts} requests received, {len(server.answered)} answered", flush=True)


if __name__ == "__main__":
    main()
