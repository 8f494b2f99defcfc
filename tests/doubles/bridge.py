"""The bridge under test: a tiny research-shaped audio LM, its adapter, and isolated interpreters.

The research LALMs the papers evaluated (SALMONN, LTU, MU-LLaMA...) share one shape: an
audio encoder (Whisper's, mostly), a projection into the LM's embedding space, and a causal
LM. :func:`make_research_lm` saves such a model with random weights (transformers'
``WhisperEncoder``, a ``torch.nn.Linear``, ``Qwen2ForCausalLM``), :data:`RESEARCH_ADAPTER`
is its bridge adapter (its own feature extraction and prompt template, as a research
repository's inference script has), and :func:`isolated_python` makes a virtual environment
that cannot import ``lm_eval_rul`` nor ``lm_eval``, where :func:`start_bridge` runs the
written server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import textwrap
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = [
    "RESEARCH_WINDOW_SECONDS",
    "RESEARCH_ADAPTER",
    "make_research_lm",
    "write_adapter",
    "isolated_python",
    "start_bridge",
    "post_chat",
    "clean_env",
    "MINIMAL_PACKAGES",
]

#: The tiny model's audio window (its Whisper feature extractor's ``chunk_length``).
RESEARCH_WINDOW_SECONDS = 4
_MEL_BINS, _D_MODEL = 16, 16

#: What the written server needs (numpy and soundfile, with soundfile's own dependencies).
MINIMAL_PACKAGES = (
    "numpy", "numpy.libs", "soundfile", "_soundfile", "_soundfile_data", "cffi", "typing_extensions"
)  # fmt: skip
_NEVER = ("lm_eval", "lm_eval_rul", "_editable_impl_lm_eval_rul", "__editable__")

#: The adapter of :func:`make_research_lm`'s model (``MODEL_DIR`` is filled in).
RESEARCH_ADAPTER = textwrap.dedent(
    '''\
    """Adapter of a tiny Whisper-encoder + projection + Qwen2 audio LM (test fixture)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, WhisperFeatureExtractor
    from transformers.models.whisper.modeling_whisper import WhisperEncoder

    MODEL_DIR = {model_dir!r}
    MAX_AUDIO_SECONDS = {window}
    NAME = "tiny-research-lalm"

    torch.set_num_threads(1)
    _features = WhisperFeatureExtractor.from_pretrained(MODEL_DIR + "/encoder")
    _encoder = WhisperEncoder.from_pretrained(MODEL_DIR + "/encoder").eval()
    _lm = AutoModelForCausalLM.from_pretrained(MODEL_DIR + "/lm").eval()
    _tokenizer = AutoTokenizer.from_pretrained(MODEL_DIR + "/lm")
    _projection = torch.load(MODEL_DIR + "/projection.pt", weights_only=False).eval()
    _embed = _lm.get_input_embeddings()


    def _prefix(audio, sampling_rate, prompt):
        parts = []
        if audio is not None:
            mel = _features(audio, sampling_rate=sampling_rate, return_tensors="pt")
            parts.append(_projection(_encoder(mel.input_features).last_hidden_state)[0])
        ids = _tokenizer("USER: " + prompt + "\\nASSISTANT:", return_tensors="pt").input_ids
        parts.append(_embed(ids[0]))
        return torch.cat(parts)


    @torch.no_grad()
    def loglikelihood(audio, sampling_rate, context, continuation):
        prefix = _prefix(audio, sampling_rate, context)
        ids = _tokenizer(continuation, add_special_tokens=False).input_ids
        embeds = torch.cat([prefix, _embed(torch.tensor(ids))])
        logits = _lm(inputs_embeds=embeds[None]).logits[0, len(prefix) - 1 : -1]
        logprobs = torch.log_softmax(logits.float(), dim=-1)
        return float(logprobs[torch.arange(len(ids)), torch.tensor(ids)].sum())


    @torch.no_grad()
    def generate(audio, sampling_rate, prompt, max_new_tokens):
        embeds, out = _prefix(audio, sampling_rate, prompt), []
        for _ in range(max_new_tokens):
            token = int(_lm(inputs_embeds=embeds[None]).logits[0, -1].argmax())
            if token == _tokenizer.eos_token_id:
                break
            out.append(token)
            embeds = torch.cat([embeds, _embed(torch.tensor([token]))])
        return _tokenizer.decode(out, skip_special_tokens=True)
    '''
)


def make_research_lm(directory: str | Path, seed: int = 0) -> Path:
    """Save ``encoder/`` (WhisperEncoder + its feature extractor), ``projection.pt``, ``lm/``."""
    import torch
    from transformers import WhisperConfig, WhisperFeatureExtractor
    from transformers.models.whisper.modeling_whisper import WhisperEncoder

    from lm_eval_rul.testing.text import make_tiny_causal_lm

    directory = Path(directory)
    lm_dir = make_tiny_causal_lm(directory / "lm", family="qwen2", seed=seed)
    torch.manual_seed(seed)
    config = WhisperConfig(
        num_mel_bins=_MEL_BINS,
        encoder_layers=1,
        encoder_attention_heads=2,
        encoder_ffn_dim=2 * _D_MODEL,
        d_model=_D_MODEL,
        max_source_positions=RESEARCH_WINDOW_SECONDS * 100 // 2,  # 10 ms frames, stride 2
    )
    WhisperEncoder(config).eval().save_pretrained(directory / "encoder")
    WhisperFeatureExtractor(
        feature_size=_MEL_BINS, sampling_rate=16_000, chunk_length=RESEARCH_WINDOW_SECONDS
    ).save_pretrained(directory / "encoder")
    from transformers import AutoConfig

    hidden = AutoConfig.from_pretrained(lm_dir).hidden_size
    torch.save(torch.nn.Linear(_D_MODEL, hidden), directory / "projection.pt")
    return directory


def write_adapter(path: str | Path, model_dir: str | Path) -> Path:
    """Write :data:`RESEARCH_ADAPTER` for the model saved in ``model_dir``."""
    path = Path(path)
    path.write_text(
        RESEARCH_ADAPTER.format(model_dir=str(model_dir), window=RESEARCH_WINDOW_SECONDS)
    )
    return path


def isolated_python(root: str | Path, packages: Iterable[str] | None = None) -> Path:
    """A virtual environment's interpreter that sees only some of this one's packages.

    Args:
        root: Folder of the new environment (``root/venv``, ``root/site``).
        packages: Top-level names (modules, packages, ``.so`` stems) to expose; ``None``:
            every installed one except lm-eval and lm-eval-rul (never exposed).
    """
    root = Path(root)
    venv, site = root / "venv", root / "site"
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", str(venv)], check=True)
    site.mkdir(parents=True, exist_ok=True)
    source = Path(sysconfig.get_paths()["purelib"])
    wanted = None if packages is None else set(packages)
    for entry in source.iterdir():
        stem = entry.name.split(".")[0] if entry.suffix in (".py", ".so") else entry.name
        if entry.suffix == ".pth" or entry.name.lower().startswith(_NEVER):
            continue
        if wanted is not None and entry.name.endswith(".dist-info"):
            continue
        if wanted is None or stem in wanted or entry.name in wanted:
            (site / entry.name).symlink_to(entry)
    if wanted is not None and "cffi" in wanted:  # soundfile's: the compiled backend and parser
        for entry in source.glob("_cffi_backend*"):
            (site / entry.name).symlink_to(entry)
        (site / "pycparser").symlink_to(source / "pycparser")
    python = venv / "bin" / "python"
    venv_site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    Path(venv_site, "bridge_test_packages.pth").write_text(f"{site}\n")
    return python


def clean_env() -> dict[str, str]:
    """This process's environment without ``PYTHONPATH`` (the worktree's lm_eval_rul)."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}


def start_bridge(
    python: str | Path, server: str | Path, adapter: str | Path, log: str | Path, *options: str
) -> tuple[subprocess.Popen, str]:
    """Run ``python server --adapter adapter --port 0 [options]``; (the process, its URL).

    The server's console (stderr: cuts, adapter tracebacks) goes to the file ``log``.

    Raises:
        RuntimeError: The server exited before announcing itself (its console).
    """
    with open(log, "w") as console:
        process = subprocess.Popen(
            [str(python), str(server), "--adapter", str(adapter), "--port", "0", *options],
            stdout=subprocess.PIPE, stderr=console, text=True, env=clean_env(),
            cwd=Path(server).parent,  # not a folder holding lm_eval_rul
        )  # fmt: skip
    line = process.stdout.readline() if process.stdout else ""
    if "serving" not in line:
        process.kill()
        process.wait()
        raise RuntimeError(f"the bridge did not start: {line}{Path(log).read_text()}")
    return process, line.rsplit(" at ", 1)[1].strip()


def post_chat(url: str, body: dict[str, Any] | bytes) -> tuple[int, dict[str, Any]]:
    """``POST url/chat/completions`` with ``body`` (a dict sent as JSON, or raw bytes);
    ``(status, the reply's JSON)``, an HTTP error's included."""
    import urllib.error
    import urllib.request

    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(
        url + "/chat/completions", data, {"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())
