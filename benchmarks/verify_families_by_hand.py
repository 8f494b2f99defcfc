"""Verify by hand the ``lalm`` families CI cannot build, in an environment that can.

Gemma 3n's model needs ``timm``, Phi-4-multimodal's image processor ``torchvision`` and
Granite Speech's feature extractor ``torchaudio``; none installs beside CI's CPU torch.
For each family this script builds a tiny random-weight model of the real class with the
published template, tokens and feature-extractor settings (``lm_eval_rul.testing``), and
runs ``lalm`` on it:

1. letters under ``audio=original`` and ``audio=noise`` give different log-likelihoods;
2. generation runs (``generate_until``, batched);
3. the letters' log-probabilities from the prefix cache equal a forward pass of the
   processor's own rendering of the same chat (``apply_chat_template`` with the audio,
   or the rendered template through the processor for an inline-placeholder family)
   within 1e-4, and lalm's prompt ids equal that rendering token for token.

It prints the figures and the environment (package versions, date) for docs/models.md::

    python benchmarks/verify_families_by_hand.py             # the three CI cannot
    python benchmarks/verify_families_by_hand.py qwen2_audio # any row of FAMILIES
    python benchmarks/verify_families_by_hand.py gemma3n

Exit status 1 when a check fails, 2 when a named family is unknown. An environment for
all three (outside the repository; torchaudio needs its matching torch)::

    python3.11 -m venv ENV && . ENV/bin/activate
    pip install torch==2.9.1 torchvision==0.24.1 && pip install torch==2.9.1 'torchaudio==2.9.*'
    pip install timm transformers==5.24.0 'lm-eval[hf,api]==0.4.13' datasets soundfile librosa
    pip install -e . --no-deps
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

TOLERANCE = 1e-4


def _builders() -> dict[str, Callable[[Path], Path]]:
    """Each family's tiny-model builder, from the one mapping of ``FAMILIES`` rows
    (``lm_eval_rul.testing.families``); a builder whose optional package is missing raises
    ImportError naming it when called."""
    from lm_eval_rul.testing.families import FAMILY_BUILDERS

    return {key: builder.build for key, builder in FAMILY_BUILDERS.items()}


def _by_default() -> list[str]:
    """The rows whose model CI cannot build, and Phi-4-multimodal, whose full processor
    (its image part) CI cannot load."""
    from lm_eval_rul.testing.families import family_keys

    return [*family_keys(in_ci=False), "phi4_multimodal"]


def _environment() -> str:
    names = ("torch", "torchvision", "torchaudio", "timm", "transformers", "tokenizers", "lm_eval")
    versions = []
    for name in names:
        try:
            versions.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            continue
    return f"Python {platform.python_version()}, " + ", ".join(versions)


def _letter_requests(docs: list[dict]) -> list[Any]:
    from lm_eval.api.instance import Instance

    from lm_eval_rul.mcqa.tasks import doc_to_choice, doc_to_text

    return [
        Instance("loglikelihood", doc, (doc_to_text(doc), f" {letter}"), index)
        for doc in docs
        for index, letter in enumerate(doc_to_choice(doc))
    ]


def _model(path: Path, **kwargs: Any):
    from lm_eval_rul.models.lalm import LALM

    return LALM(
        pretrained=str(path), dtype="float32", device="cpu", results_cache="none", **kwargs
    )


def verify(family: str, path: Path, metadata: dict[str, str]) -> bool:
    from lm_eval.api.instance import Instance

    from lm_eval_rul.mcqa.tasks import load_rul_muchomusic
    from lm_eval_rul.testing.rendering import lalm_prompt_ids, processor_rendering_score

    docs = list(load_rul_muchomusic(0, **metadata)["test"])[:4]
    requests = _letter_requests(docs)
    start = time.perf_counter()
    model = _model(path, batch_size=2)
    original = [ll for ll, _ in model.loglikelihood(requests, disable_tqdm=True)]
    noise_model = _model(path, audio="noise", noise_seconds=2.0, batch_size=2)
    noise = [ll for ll, _ in noise_model.loglikelihood(requests, disable_tqdm=True)]
    differ = max(abs(a - b) for a, b in zip(original, noise, strict=True))

    gen_requests = [
        Instance("generate_until", doc, (doc["question"], {"until": [], "max_gen_toks": 6}), 0)
        for doc in docs[:2]
    ]
    generated = model.generate_until(gen_requests, disable_tqdm=True)

    worst, same_tokens = 0.0, True
    for request, cached in zip(requests, original, strict=True):
        own, score = processor_rendering_score(model, request)
        worst = max(worst, abs(score - cached))
        same_tokens &= lalm_prompt_ids(model, request) == own
    seconds = time.perf_counter() - start

    ok = differ > 0 and worst <= TOLERANCE and same_tokens and len(generated) == 2
    print(f"{family}: {model.family.name}, {type(model.model).__name__}, {path}")
    print(f"  letters: {len(requests)} requests; max |original - noise| = {differ:.6f}")
    print(f"  generation: {[g[:40] for g in generated]!r}")
    print(
        f"  cached prefix vs processor's own rendering: max |diff| = {worst:.2e} "
        f"(tolerance {TOLERANCE:g}); prompt ids equal token for token: {same_tokens}"
    )
    print(f"  {'PASS' if ok else 'FAIL'} in {seconds:.1f} s")
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "families",
        nargs="*",
        help="FAMILY_BUILDERS keys (default: gemma3n, granite_speech, phi4_multimodal)",
    )
    args = parser.parse_args(argv)
    builders = _builders()
    wanted = args.families or _by_default()
    unknown = [f for f in wanted if f not in builders]
    if unknown:
        print(f"verify_families_by_hand: unknown families {unknown}; known: {list(builders)}")
        return 2
    from lm_eval_rul.testing.audio import write_audio_benchmark

    print(f"{datetime.date.today().isoformat()}; {_environment()}")
    results = {}
    with tempfile.TemporaryDirectory(prefix="lalm_by_hand_") as root:
        metadata = write_audio_benchmark(Path(root) / "data")
        for family in wanted:
            try:
                path = builders[family](Path(root) / family)
            except ImportError as error:
                print(f"{family}: cannot be built here ({type(error).__name__}: {error})")
                results[family] = False
                continue
            results[family] = verify(family, path, metadata)
    print("summary: " + ", ".join(f"{f} {'PASS' if ok else 'FAIL'}" for f, ok in results.items()))
    return 0 if all(results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
