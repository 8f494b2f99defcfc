"""Gemma 3n's real processor rendering against ``lalm``'s audio-span check (offline).

The model class needs ``timm`` (its vision tower), which does not install beside CI's
CPU torch; these tests run the real ``Gemma3nProcessor`` with the published template,
tokens and feature extractor (:mod:`lm_eval_rul.testing.gemma3n`) through the functions
``lalm`` checks its prefix with. ``benchmarks/verify_families_by_hand.py`` runs the model
end to end where timm is installed. The template's ``| trim`` of the question is
checked on the processor, and through ``lalm`` on a loadable checkpoint given such a template.
"""

from __future__ import annotations

import dataclasses

import pytest

from lm_eval_rul.models.args import LALMArgumentError
from lm_eval_rul.models.core import chat_messages
from lm_eval_rul.models.families import family_for
from lm_eval_rul.models.prompts import (
    SpanMismatch,
    audio_token_ids,
    family_blank_ids,
    match_spans,
)

SENTINEL = "\ue000TEXT\ue000"
QUESTION = "What is the mood? (A) calm (B) tense\nAnswer with the letter."


@pytest.fixture(scope="module")
def processor(family_models):
    import transformers

    family_models.processor_layer("gemma3n")  # the gemma3n row's builder, built once
    # loaded back as a user's checkpoint is (AutoProcessor, the saved files)
    return transformers.AutoProcessor.from_pretrained(family_models.layer_dir("gemma3n"))


@pytest.fixture(scope="module")
def clip():
    from lm_eval_rul.testing.audio import synth_clip

    return synth_clip("chord", seconds=1.5, sr=16_000)


def _parts(processor, system_prompt=None) -> tuple[str, str]:
    """The template text before and after the question, with one audio slot (as lalm)."""
    messages = chat_messages(
        SENTINEL, audio_parts=[{"type": "audio", "audio": "clip0"}], system_prompt=system_prompt
    )
    rendered = processor.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    before, after = rendered.split(SENTINEL)
    return before, after


def _plain(processor, text: str) -> list[int]:
    return processor.tokenizer(text, add_special_tokens=False)["input_ids"]


def _expanded(processor, text: str, clip) -> list[int]:
    # the template wrote the BOS; lalm (as apply_chat_template) adds no other
    encoded = processor(
        text=[text], audio=[clip], sampling_rate=16_000, text_kwargs={"add_special_tokens": False}
    )
    return list(encoded["input_ids"][0])


def _span_args(processor):
    family = family_for("gemma3n")
    ids = audio_token_ids(processor, family, processor.audio_token, where="tiny", who="lalm")
    return family, ids, family_blank_ids(processor.tokenizer, family)


@pytest.mark.parametrize("system_prompt", [None, "You are a music expert."])
def test_cached_prefix_plus_question_is_the_processors_own_rendering(
    processor, clip, system_prompt
):
    family, audio_ids, blank_ids = _span_args(processor)
    before, after = _parts(processor, system_prompt)
    plain, expanded = _plain(processor, before), _expanded(processor, before, clip)
    span = match_spans(
        plain, expanded, audio_ids, blank_ids, family.audio_padding, processor.tokenizer.decode
    )
    assert span is not None and span.end == len(plain)  # the prefix ends with the audio span
    tokens = processor.tokenizer.convert_ids_to_tokens(expanded)
    assert tokens.count(processor.audio_token) == processor.audio_seq_length == 188
    assert tokens[-3:] == ["<audio_soft_token>", "<end_of_audio>", "\n\n"]

    # what lalm scores: the expanded prefix (one forward per clip), then the question's
    # own plain ids and the letter; it must be the processor's own full rendering
    prompt = before + QUESTION + after
    context = _plain(processor, prompt)
    letter = _plain(processor, prompt + " A")[len(context) :]
    assert context[: len(plain)] == plain
    scored = expanded + context[len(plain) :] + letter
    messages = chat_messages(
        QUESTION, audio_parts=[{"type": "audio", "audio": clip}], system_prompt=system_prompt
    )
    own = processor.apply_chat_template(
        messages, tokenize=True, add_generation_prompt=True, return_dict=True, sampling_rate=16_000
    )["input_ids"][0]
    assert scored[: len(scored) - len(letter)] == list(own)
    assert processor.tokenizer.convert_ids_to_tokens(list(own))[-3:] == [
        "<start_of_turn>",
        "model",
        "\n",
    ]
    assert processor.tokenizer.convert_ids_to_tokens(letter) == ["▁A"]
    assert scored == _expanded(processor, prompt + " A", clip)
    if system_prompt:
        assert processor.tokenizer.decode(own).startswith(
            "<bos><start_of_turn>user\nYou are a music expert.\n\n\n\n<start_of_audio>"
        )


def test_without_markers_and_blank_lines_the_rendering_is_refused(processor, clip):
    """The check as it was (audio token only): Gemma 3n's rendering reads as changed text."""
    before, _ = _parts(processor)
    plain, expanded = _plain(processor, before), _expanded(processor, before, clip)
    only_audio = {processor.audio_token_id}
    with pytest.raises(SpanMismatch, match="before the audio differs"):
        match_spans(plain, expanded, only_audio, set(), "", processor.tokenizer.decode)


@pytest.mark.parametrize(
    ("sequence", "message"),
    [
        ("\n<start_of_audio>{audio}<end_of_audio>\n", "blank lines around the audio"),
        ("\n\nAudio:<start_of_audio>{audio}<end_of_audio>\n\n", "before the audio differs"),
        ("\n\n<start_of_audio>{audio}<end_of_audio>\n\nListen.", "after the audio differs"),
    ],
)
def test_a_processor_writing_other_text_around_the_audio_is_refused(
    processor, clip, sequence, message
):
    family, audio_ids, blank_ids = _span_args(processor)
    before, _ = _parts(processor)
    audio = processor.audio_token * processor.audio_seq_length
    original = processor.full_audio_sequence
    processor.full_audio_sequence = sequence.format(audio=audio)
    try:
        expanded = _expanded(processor, before, clip)
    finally:
        processor.full_audio_sequence = original
    with pytest.raises(SpanMismatch, match=message):
        match_spans(
            _plain(processor, before),
            expanded,
            audio_ids,
            blank_ids,
            family.audio_padding,
            processor.tokenizer.decode,
        )


def test_span_tokens_are_the_markers_and_blank_lines(processor):
    family, audio_ids, blank_ids = _span_args(processor)
    tokenizer = processor.tokenizer
    assert sorted(tokenizer.convert_ids_to_tokens(sorted(audio_ids))) == sorted(
        ["<audio_soft_token>", "<start_of_audio>", "<end_of_audio>"]
    )
    blanks = {tokenizer.decode([i]) for i in blank_ids}
    assert {"\n", "\n\n", "\n\n\n"} <= blanks and all(set(b) == {"\n"} for b in blanks)
    assert family_blank_ids(tokenizer, family_for("qwen2_audio")) == set()


def test_a_processor_without_a_marker_gets_one_line(processor):
    family = dataclasses.replace(family_for("gemma3n"), audio_markers=("boa_token", "eox_token"))
    with pytest.raises(LALMArgumentError, match="Gemma 3n: the processor of tiny names no eox"):
        audio_token_ids(processor, family, processor.audio_token, where="tiny", who="lalm")


# A harness context with the whitespace the template's ``| trim`` drops.
PADDED_QUESTION = "\n" + QUESTION + "\nAnswer: "


def test_the_question_is_trimmed_as_the_template_trims_it(processor):
    """Gemma 3n writes ``{{ item['text'] | trim }}``: lalm's prompt must drop the same."""
    from lm_eval_rul.models.families import template_renderer
    from lm_eval_rul.models.prompts import template_trims_question

    render = template_renderer(processor, processor.tokenizer)
    messages = chat_messages(SENTINEL, audio_parts=[{"type": "audio", "audio": "clip0"}])
    rendered = render(messages)
    assert template_trims_question(render, messages, rendered, SENTINEL, "Gemma 3n (tiny)")
    before, after = rendered.split(SENTINEL)
    own = render(chat_messages(PADDED_QUESTION, audio_parts=[{"type": "audio", "audio": "c"}]))
    assert before + PADDED_QUESTION + after != own  # inserted unchanged: not what it writes
    assert before + PADDED_QUESTION.strip() + after == own
    assert own.endswith("Answer:<end_of_turn>\n<start_of_turn>model\n")


def test_a_template_trimming_one_side_only_is_refused(processor):
    from lm_eval_rul.models.prompts import template_trims_question

    one_side = processor.chat_template.replace("item['text'] | trim", "item['text'].rstrip()")
    assert one_side != processor.chat_template

    def render(messages):
        return processor.apply_chat_template(
            messages, chat_template=one_side, tokenize=False, add_generation_prompt=True
        )

    messages = chat_messages(SENTINEL, audio_parts=[{"type": "audio", "audio": "clip0"}])
    with pytest.raises(LALMArgumentError, match="other than by trimming it"):
        template_trims_question(render, messages, render(messages), SENTINEL, "Gemma 3n (tiny)")


def test_lalm_trims_the_question_only_where_the_template_does(tiny_audio_lm, audio_data, tmp_path):
    """End to end on a loadable family (Gemma 3n's model needs timm): the same checkpoint
    with its text written ``| trim``med, then as it ships (verbatim)."""
    import shutil

    from lm_eval.api.instance import Instance

    from lm_eval_rul.mcqa.tasks import doc_to_text, load_rul_muchomusic
    from lm_eval_rul.models.checkpoint import results_scope
    from lm_eval_rul.models.families import template_renderer
    from lm_eval_rul.models.lalm import LALM
    from lm_eval_rul.testing.rendering import lalm_prompt_ids, processor_rendering_score

    trimming = tmp_path / "trimming"
    shutil.copytree(tiny_audio_lm, trimming)
    template = trimming / "chat_template.jinja"
    text = template.read_text()
    assert "{{ c['text'] }}" in text
    template.write_text(text.replace("{{ c['text'] }}", "{{ c['text'] | trim }}"))
    for path, trims in ((trimming, True), (tiny_audio_lm, False)):
        model = LALM(pretrained=str(path), dtype="float32", device="cpu", results_cache="none")
        render = template_renderer(model.processor, model.tokenizer)
        own = render(chat_messages(PADDED_QUESTION, audio_parts=[{"type": "audio", "audio": "c"}]))
        assert model.prompt_text(PADDED_QUESTION) == own
        assert (PADDED_QUESTION in own) is not trims
        assert ("question_trimmed" in results_scope(model)) is trims  # own stored results

        if trims:  # the letters, from the cached prefix, on the processor's own rendering
            doc = next(iter(load_rul_muchomusic(0, **audio_data)["test"]))
            request = Instance("loglikelihood", doc, ("\n" + doc_to_text(doc) + " \n", " A"), 0)
            ((cached, _),) = model.loglikelihood([request], disable_tqdm=True)
            own_ids, reference = processor_rendering_score(model, request)
            assert lalm_prompt_ids(model, request) == own_ids
            assert cached == pytest.approx(reference, abs=1e-4)
