"""Phi-4-multimodal with its published template and tokens, audio-only where CI has no
torchvision (offline).

The model class needs no torchvision; the processor's image processor does, so ``lalm``
loads the same processor class without it (:func:`~lm_eval_rul.models.families.
audio_only_class`), from files saved under the real class name.
"""

from __future__ import annotations

import logging

import pytest


@pytest.fixture(scope="module")
def phi4(family_models):
    """The tiny model of the ``phi4_multimodal`` row (``lm_eval_rul.testing.families``)."""
    return family_models["phi4_multimodal"]


@pytest.fixture(scope="module")
def letter_requests(audio_data):
    from lm_eval.api.instance import Instance

    from lm_eval_rul.mcqa.tasks import doc_to_choice, doc_to_text, load_rul_muchomusic

    docs = list(load_rul_muchomusic(0, **audio_data)["test"])[:1]
    return [
        Instance("loglikelihood", doc, (doc_to_text(doc), f" {letter}"), index)
        for doc in docs
        for index, letter in enumerate(doc_to_choice(doc))
    ]


def _model(path, **kwargs):
    from lm_eval_rul.models.lalm import LALM

    # results_cache=none: every call computes (the module-wide model outlives a test's cache)
    return LALM(
        pretrained=str(path),
        dtype="float32",
        device="cpu",
        batch_size=2,
        results_cache="none",
        **kwargs,
    )


@pytest.fixture(scope="module")
def loaded(phi4):
    """``(model, warnings while loading)``, loaded once for this module's tests."""
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append
    logger = logging.getLogger("lm_eval_rul.models.families")
    logger.addHandler(handler)
    try:
        model = _model(phi4)
    finally:
        logger.removeHandler(handler)
    return model, [r.getMessage() for r in records]


def test_letters_equal_the_processors_own_rendering(phi4, loaded, letter_requests):
    from lm_eval_rul.testing.rendering import lalm_prompt_ids, processor_rendering_score

    model, warnings = loaded
    try:
        import torchvision  # noqa: F401
    except ImportError:
        assert type(model.processor).__name__ == "Phi4MultimodalProcessorAudioOnly"
        assert any("audio-only part" in message for message in warnings)
    cached = [ll for ll, _ in model.loglikelihood(letter_requests, disable_tqdm=True)]
    for request, score in zip(letter_requests, cached, strict=True):
        own, reference = processor_rendering_score(model, request)
        assert score == pytest.approx(reference, abs=1e-4)
        assert lalm_prompt_ids(model, request) == own
    tokens = model.tokenizer.convert_ids_to_tokens(own)
    count = tokens.count("<|audio|>")
    assert count > 10  # the processor expanded the one placeholder per the clip's length
    first = tokens.index("<|audio|>")
    assert tokens[first - 1] == "<|user|>" and tokens[first + count] != "<|audio|>"
    assert tokens[-2:] == ["<|end|>", "<|assistant|>"]

    noise = _model(phi4, audio="noise", noise_seconds=1.0)
    heard_noise = [ll for ll, _ in noise.loglikelihood(letter_requests, disable_tqdm=True)]
    assert heard_noise != pytest.approx(cached, abs=1e-6)


def test_generation_runs_batched(loaded, letter_requests):
    from lm_eval.api.instance import Instance

    model = loaded[0]
    docs = [letter_requests[0].doc, dict(letter_requests[0].doc, question="What is heard?")]
    requests = [
        Instance("generate_until", doc, (doc["question"], {"until": [], "max_gen_toks": 4}), 0)
        for doc in docs
    ]
    batched = model.generate_until(requests, disable_tqdm=True)
    one_by_one = [model.generate_until([r], disable_tqdm=True)[0] for r in requests]
    assert len(batched) == 2 and all(isinstance(text, str) for text in batched)
    assert batched == one_by_one
