"""The processor's own rendering of a request, to check ``lalm``'s prompts against.

``lalm`` renders the template once around a sentinel, caches the expanded system + audio
prefix and appends each question's plain ids. These helpers build the same chat the way
a user of the checkpoint would (``apply_chat_template`` with the audio in the messages,
or, for an inline-placeholder family, the rendered template through the processor) and
score the letter on one forward pass of it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["processor_rendering_score", "lalm_prompt_ids"]


def processor_rendering_score(model: Any, request: Any) -> tuple[list[int], float]:
    """The processor's own rendering of the request's chat and the letter's log-prob on it."""
    import torch
    import torch.nn.functional as F

    from ..models.core import chat_messages

    context, letter = request.args[:2]
    source, key = model.hear_requests([request])[0]
    text = model.question_text(context, source)
    _, waves = source.waves(model.spec, key)
    processor, tokenizer = model.processor, model.tokenizer
    rate = model.spec.sampling_rate  # lalm resampled the clip to the extractor's rate
    # the checkpoint's template: the processor's (None: it resolves its own), else its
    # tokenizer's
    template = None if processor.chat_template else tokenizer.chat_template
    if model.family.content == "inline":
        messages = chat_messages(text, system_prompt=model.system_prompt)
        messages[-1]["content"] = model.placeholder * len(waves) + text  # a string content
        rendered = processor.apply_chat_template(
            messages, chat_template=template, tokenize=False, add_generation_prompt=True
        )
        inputs = processor(
            text=[rendered], audio=list(waves), sampling_rate=rate, return_tensors="pt"
        )
    else:
        parts = [{"type": "audio", "audio": wave} for wave in waves]
        messages = chat_messages(text, audio_parts=parts, system_prompt=model.system_prompt)
        rendered = processor.apply_chat_template(
            messages, chat_template=template, tokenize=False, add_generation_prompt=True
        )
        inputs = processor.apply_chat_template(
            messages,
            chat_template=template,
            tokenize=True,
            add_generation_prompt=True,
            return_dict=True,
            return_tensors="pt",
        )
    plain = tokenizer(rendered, add_special_tokens=False)["input_ids"]
    letter_ids = tokenizer(rendered + letter, add_special_tokens=False)["input_ids"][len(plain) :]
    own = [int(t) for t in inputs["input_ids"][0]]
    ids = torch.tensor([own + letter_ids])
    forward = {
        k: (v.to(model.model.dtype) if v.is_floating_point() else v)
        for k, v in inputs.items()
        if k in model._forward_names and k != "input_ids"
    }
    if model.family.content != "inline" and "input_features" not in forward:
        raise RuntimeError(f"the processor's rendering carries no audio: {sorted(inputs)}")
    forward["attention_mask"] = torch.ones_like(ids)
    if "token_type_ids" in forward:
        pad = torch.zeros((1, len(letter_ids)), dtype=forward["token_type_ids"].dtype)
        forward["token_type_ids"] = torch.cat([forward["token_type_ids"], pad], dim=1)
    with torch.no_grad():
        logits = model.model(input_ids=ids, **forward).logits[0]
    logprobs = F.log_softmax(logits[len(own) - 1 : -1].float(), dim=-1)
    score = sum(float(logprobs[i, t]) for i, t in enumerate(letter_ids))
    return own, score


def lalm_prompt_ids(model: Any, request: Any) -> list[int]:
    """The ids lalm's prefix cache reads: the processor's prefix, then the plain suffix."""
    source, key = model.hear_requests([request])[0]
    context = model.question_text(request.args[0], source)
    before = model.parts_for(source.clips(model.spec))[0]
    _, waves = source.waves(model.spec, key)
    expanded = [int(t) for t in model._model_inputs([before], waves)["input_ids"][0]]
    _, ctx_ids, _ = model._encode_request(context, request.args[1], source.clips(model.spec))
    return expanded + ctx_ids[len(model._encode(before)) :]
