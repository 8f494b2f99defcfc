"""Tiny offline fixtures for tests, benchmarks and a user's smoke test: real model classes,
random weights.

Nothing here downloads: tokenizers are trained locally with ``tokenizers``, models
are built from small configs of real transformers classes and saved with
``save_pretrained``, and data files are written in the released schemas.

Public names (modules): :mod:`text` (tokenizer and tiny causal LM), :mod:`audio`
(synthesised clips and fast tiny audio LMs of four families), :mod:`families` (the one
mapping from each ``FAMILIES`` row to its tiny-model builder: :mod:`published`, tiny audio
LMs with each family's published template, tokens and processor, Voxtral's Tekken tokenizer
in :mod:`voxtral`, and :mod:`gemma3n`, :mod:`phi4_multimodal`, :mod:`granite_speech`),
:mod:`smoke` (``python -m lm_eval_rul.testing.smoke DIR``: a user's offline smoke test),
:mod:`counters` (forward
pass counters), :mod:`fixtures` (question files in the released schemas), :mod:`harness`
(running the CLI in a subprocess, offline), :mod:`isolation` (the test
session's caches moved into a temporary folder, writes under the user's caches recorded).

What a user runs stays here: the smoke command and the tiny-model builders it and the
tests share. The test doubles (loopback HTTP servers standing in for vLLM, OpenAI and chat
LLMs, the bridge's research-shaped model) are not installed: they are ``tests/doubles/``.
"""

__all__ = [
    "text",
    "audio",
    "families",
    "published",
    "voxtral",
    "smoke",
    "counters",
    "fixtures",
    "harness",
    "isolation",
]
