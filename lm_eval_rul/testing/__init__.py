"""Tiny offline fixtures for tests and benchmarks: real model classes, random weights.

Nothing here downloads: tokenizers are trained locally with ``tokenizers``, models
are built from small configs of real transformers classes and saved with
``save_pretrained``, and data files are written in the released schemas.
"""
