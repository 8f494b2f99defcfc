"""Every ``FAMILIES`` row has one tiny-model builder, and what it builds carries the
published template, special tokens and feature-extractor settings the builder declares
(:mod:`lm_eval_rul.testing.families`). Rows whose model CI cannot build are checked on
their processor layer; the models themselves run in ``tests/test_lalm_published.py``,
``test_lalm_phi4.py`` and ``test_lalm_model.py``, parametrised over the same mapping."""

from __future__ import annotations

import dataclasses
import inspect
import json

import pytest

from lm_eval_rul.models.families import FAMILIES, family_for
from lm_eval_rul.testing.families import FAMILY_BUILDERS, builder_problems, family_keys


def test_every_family_row_has_exactly_one_builder_and_every_builder_a_row():
    assert builder_problems() == []
    assert sorted(family_keys()) == sorted(FAMILY_BUILDERS)
    assert [family_for(key) for key in family_keys()] == list(FAMILIES)

    # a new row without a builder, and a builder for no row, are named
    new_row = dataclasses.replace(FAMILIES[0], name="Kimi-Audio", model_types=("kimi_audio",))
    assert builder_problems([*FAMILIES, new_row]) == ["row 'Kimi-Audio' has 0 builders (want 1)"]
    stray = dict(FAMILY_BUILDERS, salmonn=dataclasses.replace(FAMILY_BUILDERS["voxtral"]))
    assert builder_problems(builders=stray) == [
        "builder 'salmonn' writes model_type 'voxtral'",
        "builder 'salmonn' is for no FAMILIES row",
    ]


def test_rows_ci_cannot_build_say_why_and_keep_a_processor_layer():
    outside = family_keys(in_ci=False)
    assert outside == ["gemma3n", "granite_speech"]
    for key in outside:
        builder = FAMILY_BUILDERS[key]
        assert "CI" in builder.not_in_ci and builder.processor_layer is not None
    assert all(FAMILY_BUILDERS[k].processor_layer is None for k in family_keys(in_ci=True))


def _ids(tokenizer, tokens) -> list[int]:
    """Each token's one id (it reads back as the token: not the unknown token's)."""
    ids = [tokenizer.convert_tokens_to_ids(token) for token in tokens]
    assert [tokenizer.convert_ids_to_tokens(i) for i in ids] == list(tokens)
    return ids


def _check_features(extractor, declared) -> None:
    assert type(extractor).__name__ == declared["feature_extractor"]
    for name, value in declared.items():
        if name != "feature_extractor":
            assert getattr(extractor, name) == value, name


@pytest.mark.parametrize("key", family_keys(in_ci=True))
def test_built_model_carries_its_published_conventions(family_models, key):
    from lm_eval_rul.models.families import fallback_chat_template, load_processor

    builder = FAMILY_BUILDERS[key]
    path = family_models[key]
    assert json.loads((path / "config.json").read_text())["model_type"] == key
    processor = load_processor(builder.family, str(path), {})
    tokenizer = processor.tokenizer
    template = fallback_chat_template(processor, tokenizer) or processor.chat_template
    if builder.chat_template is None:  # the processor's own (Qwen2-Audio) or mistral-common
        assert template == getattr(processor, "default_chat_template", None)
    else:
        assert template == builder.chat_template
    ids = _ids(tokenizer, builder.special_tokens)
    assert len(set(ids)) == len(ids)
    extractor = getattr(processor, "feature_extractor", None) or processor.audio_processor
    _check_features(extractor, builder.features)


def test_gemma3n_processor_layer_carries_its_published_conventions(family_models):
    builder = FAMILY_BUILDERS["gemma3n"]
    processor = family_models.processor_layer("gemma3n")
    assert processor.chat_template == builder.chat_template
    assert len(set(_ids(processor.tokenizer, builder.special_tokens))) == 6
    _check_features(processor.feature_extractor, builder.features)
    assert "timm" in builder.not_in_ci


def test_granite_speech_tokenizer_layer_carries_its_published_conventions(family_models):
    """Granite's feature extractor needs torchaudio: its declared settings are checked
    against the class's own defaults, which the builder uses."""
    import transformers

    builder = FAMILY_BUILDERS["granite_speech"]
    tokenizer = family_models.processor_layer("granite_speech")
    assert tokenizer.chat_template == builder.chat_template
    ids = _ids(tokenizer, builder.special_tokens)
    rendered = tokenizer.apply_chat_template(
        [{"role": "system", "content": "S"}, {"role": "user", "content": "<|audio|>Q?"}],
        tokenize=True,
        add_generation_prompt=True,
        return_dict=False,
    )
    assert ids[-1] in rendered  # <|audio|> is one token in the rendered prompt
    defaults = inspect.signature(transformers.GraniteSpeechFeatureExtractor.__init__).parameters
    for name, value in builder.features.items():
        if name != "feature_extractor":
            assert defaults[name].default == value, name
    assert "torchaudio" in builder.not_in_ci
