"""Thin bridge from the YAMLs to lm_eval_rul (the logic lives in the package)."""

from lm_eval_rul.mcqa.tasks import (  # noqa: F401
    doc_to_audio,
    doc_to_text_gen,
    load_muchomusic,
    load_rul_muchomusic,
    process_results_gen,
)
