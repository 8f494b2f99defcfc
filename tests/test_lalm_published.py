"""``lalm`` on tiny models that carry each family's published template, tokens and processor.

Per ``FAMILIES`` row whose model CI builds and that writes the audio as a chat item
(:func:`lm_eval_rul.testing.families.family_keys`; Phi-4-multimodal's inline placeholder:
``test_lalm_phi4.py``; Gemma 3n and Granite Speech: ``test_family_builders.py``): the
prompt ``lalm`` builds is, token for token, the processor's own full rendering (system turn, audio
markers and their expansion, generation prompt, the letter right after it); the
cached-prefix letter log-probabilities equal a full forward of that rendering; ``noise``
gives other log-likelihoods than ``original``; generation equals greedy decoding of the
rendering. A template or processor that does not fit is refused in one line naming the
family, before any forward pass.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch

from lm_eval_rul.testing.families import family_keys

#: The rows these tests run, read from ``FAMILIES`` through the one builder mapping.
TYPED = family_keys(in_ci=True, content="typed")

#: What the rendered prompt (placeholder unexpanded) holds, per family: its start, the
#: audio marker as the template writes it, and the generation prompt it ends with.
RENDERED = {
    "qwen2_audio": (
        "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n",
        "Audio 1: <|audio_bos|><|AUDIO|><|audio_eos|>\n",
        "<|im_end|>\n<|im_start|>assistant\n",
    ),
    "qwen2_5_omni_thinker": (
        "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n",
        "<|audio_bos|><|AUDIO|><|audio_eos|>",
        "<|im_end|>\n<|im_start|>assistant\n",
    ),
    "audioflamingo3": (
        "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n",
        "<sound>",
        "<|im_end|>\n<|im_start|>assistant\n",
    ),
    "musicflamingo": (
        "<|im_start|>system\nYou are Music Flamingo, a multimodal assistant",
        "<sound>",
        "<|im_end|>\n<|im_start|>assistant\n",
    ),
    "qwen3_omni_moe_thinker": (
        "<|im_start|>user\n",
        "<|audio_start|><|audio_pad|><|audio_end|>",
        "<|im_end|>\n<|im_start|>assistant\n",
    ),
    "voxtral": ("<s>[INST]", "[BEGIN_AUDIO][AUDIO]", "[/INST]"),
}


@pytest.fixture(scope="session")
def published(family_models):
    """One tiny model per family, with its published conventions, built once (shared)."""
    return family_models


def _docs(metadata: dict[str, str]) -> list[dict]:
    """Two questions of fold 0 that hear two different clips."""
    from lm_eval_rul.mcqa.tasks import load_rul_muchomusic

    docs = list(load_rul_muchomusic(0, **metadata)["test"])
    assert docs[0]["audio_ref"] != docs[2]["audio_ref"]
    return [docs[0], docs[2]]


def _requests(docs: list[dict]) -> list:
    from lm_eval.api.instance import Instance

    from lm_eval_rul.mcqa.tasks import doc_to_choice, doc_to_text

    return [
        Instance("loglikelihood", doc, (doc_to_text(doc), f" {letter}"), index)
        for doc in docs
        for index, letter in enumerate(doc_to_choice(doc))
    ]


def _model(path: Path, **kwargs):
    from lm_eval_rul.models.lalm import LALM

    return LALM(pretrained=str(path), dtype="float32", device="cpu", **kwargs)


def _rendering(lm, question: str, wave) -> dict:
    """The processor's own full rendering of the question with ``wave`` (None: no audio)."""
    from lm_eval_rul.models.core import chat_messages
    from lm_eval_rul.models.prompts import audio_item

    rate = lm.spec.sampling_rate
    if lm.family.prompts == "mistral":
        parts = [] if wave is None else [audio_item(wave, rate)]
        encoded = lm.processor.apply_chat_template(
            chat_messages(question, audio_parts=parts), add_generation_prompt=True
        )
    else:
        parts = [] if wave is None else [{"type": "audio", "audio": wave}]
        encoded = lm.processor.apply_chat_template(
            chat_messages(question, audio_parts=parts),
            add_generation_prompt=True,
            tokenize=True,
            return_dict=True,
            return_tensors="pt",
            processor_kwargs={"sampling_rate": rate},
        )
    return {k: v for k, v in encoded.items() if k in lm._forward_names and torch.is_tensor(v)}


def _heard(lm, request):
    """The one wave ``lm`` hears for ``request`` (None under audio=none)."""
    source = lm.hear_requests([request])[0][0]
    waves = source.waves(lm.spec)[1]
    return None if not waves else waves[0]


def _check_against_rendering(lm, requests) -> tuple[list[float], dict]:
    """Assert lalm's prompts and letters are the processor's rendering.

    Returns the letters' log-likelihoods and the rendering of the first document.

    Every document's letters (scored from the clip's cached prefix) are compared with a
    full forward of the processor's own rendering of that document, letters right after it.
    """
    cached = [value for value, _ in lm.loglikelihood(requests, disable_tqdm=True)]
    renderings = []
    for first in range(0, len(requests), 4):
        context = requests[first].args[0]
        question = lm.question_text(context, lm.hear_requests(requests[first : first + 1])[0][0])
        wave = _heard(lm, requests[first])
        reference = _rendering(lm, question, wave)
        renderings.append(reference)
        if first == 0:  # lalm's own full prompt, expanded by its processor path
            ids = lm._model_inputs([lm.prompt_text(question)], None if wave is None else [wave])
            assert ids["input_ids"].tolist() == reference["input_ids"].tolist()
        if wave is not None:
            audio = [t for t in reference["input_ids"][0].tolist() if t in lm._audio_ids]
            assert len(audio) > 1  # the marker expanded to one token per audio frame group
        with torch.no_grad():
            logits = lm.model(**reference).logits[0, -1].float()
        logprobs = torch.log_softmax(logits, dim=-1)
        for index in range(first, first + 4):
            letter = requests[index].args[1]
            _, prompt_ids, letter_ids = lm._encode_request(context, letter)
            assert letter_ids == lm._encode(letter) and len(letter_ids) == 1
            # the letter is scored right after the rendering's generation prompt
            assert prompt_ids == lm._encode(lm.prompt_text(question))
            assert cached[index] == pytest.approx(logprobs[letter_ids[0]].item(), abs=1e-4)
    return cached, renderings[0]


@pytest.mark.parametrize("family", TYPED)
def test_published_family_prompt_letters_and_generation(published, audio_data, family):
    from lm_eval.api.instance import Instance

    assert sorted(RENDERED) == sorted(TYPED)  # a new row says what its prompt holds
    start, marker, generation_prompt = RENDERED[family]
    docs = _docs(audio_data)
    requests = _requests(docs)
    lm = _model(published[family], batch_size=2)
    before, after = lm._parts
    assert before.startswith(start) and before.endswith(marker)
    assert before.count(marker) == 1 and after.endswith(generation_prompt)
    original, reference = _check_against_rendering(lm, requests)
    assert len(original) == 8 and len(set(original[:4])) == 4

    noise = _model(published[family], audio="noise", noise_seconds=1.0)
    noisy = [value for value, _ in noise.loglikelihood(requests[:4], disable_tqdm=True)]
    assert all(a != b for a, b in zip(original[:4], noisy, strict=True))

    # generation: lalm's answer is greedy decoding of the processor's own rendering (the
    # first document's prompt, whose rendering the letters were checked against above)
    gen_kwargs = {"until": [], "max_gen_toks": 4}
    gen = Instance("generate_until", docs[0], (requests[0].args[0], gen_kwargs), 0)
    (answer,) = lm.generate_until([gen], disable_tqdm=True)
    width = reference["input_ids"].shape[1]
    with torch.no_grad():
        tokens = lm.model.generate(
            **reference, max_new_tokens=4, do_sample=False, pad_token_id=lm.tokenizer.pad_token_id
        )
    eos = lm.tok_decode(lm.eot_token_id, skip_special_tokens=False)
    assert answer == lm.tok_decode(tokens[0, width:].tolist()).split(eos)[0]
    assert tokens.shape[1] > width


def test_voxtral_without_audio_is_the_text_only_rendering(published, audio_data):
    lm = _model(published["voxtral"], audio="none")
    assert lm._parts == ("<s>[INST]", "[/INST]")
    letters, _ = _check_against_rendering(lm, _requests(_docs(audio_data))[:4])
    assert len(letters) == 4


def test_voxtral_refusals_name_the_family_before_any_forward(published, monkeypatch):
    import transformers.utils
    from torch.nn.modules.module import register_module_forward_hook

    from lm_eval_rul.models.args import LALMArgumentError

    path = published["voxtral"]
    forwards: list[str] = []  # every torch module's forward, process-wide
    handle = register_module_forward_hook(lambda m, *_: forwards.append(type(m).__name__))
    try:
        with pytest.raises(
            LALMArgumentError, match=r"^lalm: Voxtral: .*drop system_prompt"
        ) as caught:
            _model(path, system_prompt="Answer briefly.")
        assert "\n" not in str(caught.value)
        with pytest.raises(LALMArgumentError, match=r"^lalm: Voxtral prompts come only from"):
            _model(path, chat_template=False)
        monkeypatch.setattr(transformers.utils, "is_mistral_common_available", lambda: False)
        with pytest.raises(LALMArgumentError, match=r"lm-eval-rul\[voxtral\]") as caught:
            _model(path)
        assert str(caught.value).startswith("lalm: Voxtral needs mistral-common")
    finally:
        handle.remove()
    assert forwards == []


@pytest.mark.parametrize(
    ("template", "match"),
    [
        # an audio marker the processor does not know (Gemma-like `<audio>` text)
        (
            "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{% for c in m['content'] %}"
            "{% if c['type'] == 'audio' %}<audio>{% else %}{{ c['text'] }}{% endif %}"
            "{% endfor %}<|im_end|>\n{% endfor %}<|im_start|>assistant\n",
            r"^lalm: Qwen2-Audio: the chat template of .* writes no audio marker the processor "
            r"expands \('<\|audio_bos\|><\|AUDIO\|><\|audio_eos\|>'\) before the question",
        ),
        # a template that needs the real audio item (as Voxtral's own Jinja template does)
        (
            "{% for m in messages %}{% for c in m['content'] %}{% if c['type'] == 'audio' "
            "and 'path' not in c %}{{ raise_exception('Audio content must be specified.') }}"
            "{% endif %}{% endfor %}{% endfor %}",
            r"^lalm: Qwen2-Audio: the chat template of .* cannot render the prompt .*"
            r"Audio content must be specified",
        ),
    ],
)
def test_template_that_does_not_fit_is_one_line_naming_the_family(
    published, tmp_path, template, match
):
    import transformers
    from torch.nn.modules.module import register_module_forward_hook

    from lm_eval_rul.models.args import LALMArgumentError

    path = tmp_path / "qwen2_audio_other_template"
    shutil.copytree(published["qwen2_audio"], path)
    processor = transformers.AutoProcessor.from_pretrained(path)
    processor.chat_template = template
    processor.save_pretrained(path)
    forwards: list[str] = []  # every torch module's forward, process-wide
    handle = register_module_forward_hook(lambda m, *_: forwards.append(type(m).__name__))
    try:
        with pytest.raises(LALMArgumentError, match=match) as caught:
            _model(path)
    finally:
        handle.remove()
    assert "\n" not in str(caught.value).split("rendered:")[0]
    assert forwards == []


def test_full_qwen3_omni_checkpoint_loads_only_its_thinker(published, audio_data, tmp_path):
    import json

    from lm_eval_rul.testing.audio import make_tiny_omni_full_checkpoint

    full = make_tiny_omni_full_checkpoint(tmp_path / "full", published["qwen3_omni_moe_thinker"])
    assert json.loads((full / "config.json").read_text())["model_type"] == "qwen3_omni_moe"
    model = _model(full)
    assert type(model.model).__name__ == "Qwen3OmniMoeThinkerForConditionalGeneration"
    requests = _requests(_docs(audio_data)[:1])
    thinker = _model(published["qwen3_omni_moe_thinker"])
    assert model.loglikelihood(requests, disable_tqdm=True) == thinker.loglikelihood(
        requests, disable_tqdm=True
    )
