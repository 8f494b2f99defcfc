"""A fourth engine: an :class:`~lm_eval_rul.models.core.AudioLM` subclass defined here and one
adapter row given to the public registration point, run through the harness on a letter
task and a generation task (docs/architecture.md, "Adding an engine")."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import Any

import pytest
import torch
import transformers
from lm_eval.api.model import LM

from lm_eval_rul.adapters import Adapter, audio_adapter_names, tokenizer_model_names
from lm_eval_rul.models.args import LALMArgumentError, given_args, validate_model_args
from lm_eval_rul.models.core import (
    AudioLM,
    StoredResults,
    audio_settings,
    chat_messages,
    hear,
    results_path,
)
from lm_eval_rul.models.families import family_for
from lm_eval_rul.models.lalm import continuation_score

NAME = "tiny-audio-engine"


def check_model_args(model_args: Mapping[str, Any]) -> dict[str, Any]:
    """What every engine's module defines: its ``model_args`` checked before it loads."""
    return validate_model_args(model_args, NaiveAudioLM)


class NaiveAudioLM(AudioLM):
    """One full forward per letter and ``generate`` per prompt, on transformers."""

    MODEL_NAME = NAME

    def __init__(
        self,
        pretrained: str,
        audio: str | None = "original",
        max_gen_toks: int = 8,
        results_cache: str | None = "auto",
        batch_size: int | str = 1,
        max_batch_size: int | None = None,
        device: str | None = None,
        **condition_args: Any,
    ) -> None:
        LM.__init__(self)
        args = check_model_args(given_args(locals(), unchecked=("batch_size",)))
        self.processor = transformers.AutoProcessor.from_pretrained(pretrained)
        config = transformers.AutoConfig.from_pretrained(pretrained)
        model_class = getattr(transformers, family_for(config.model_type).model_class)
        self.model = model_class.from_pretrained(pretrained, dtype=torch.float32).eval()
        rate = self.processor.feature_extractor.sampling_rate
        spec = hear(args["audio"], args, sampling_rate=rate, max_seconds=30.0)
        scope = {"model": NAME, "checkpoint": pretrained, **audio_settings(spec)}
        file = results_path(args["results_cache"], ROW.results_file)
        super().__init__(spec, StoredResults(file, scope), max_gen_toks=args["max_gen_toks"])

    def _engine_info(self) -> dict[str, Any]:
        return {"engine": NAME}

    def _inputs(self, request: Any, source: Any, key: Hashable, text: str) -> dict[str, Any]:
        _, waves = source.waves(self.spec, key)
        part = {"type": "audio", "audio": "clip"} if waves else None
        messages = chat_messages(self.question_text(request.args[0], source), audio_part=part)
        prompt = self.processor.apply_chat_template(
            messages, tokenize=False, add_generation_prompt=True
        )
        audio = {"audio": waves, "sampling_rate": self.spec.sampling_rate} if waves else {}
        return self.processor(text=[prompt + text], return_tensors="pt", **audio)

    @torch.no_grad()
    def _score_letters(self, todo: list[Any], finished: Callable, disable_tqdm: bool) -> None:
        for index, (request, source, key) in enumerate(todo):
            context = self._inputs(request, source, key, "")["input_ids"]
            whole = self._inputs(request, source, key, request.args[1])
            continuation = whole["input_ids"][0, context.shape[1] :].tolist()
            logits = self.model(**whole).logits[0, context.shape[1] - 1 : -1]
            finished([(index, continuation_score(logits, continuation))])

    @torch.no_grad()
    def _generate(self, todo: list[Any], finished: Callable, disable_tqdm: bool) -> None:
        for index, (request, source, key) in enumerate(todo):
            inputs = self._inputs(request, source, key, "")
            kwargs = dict(request.args[1])
            new = int(kwargs.get("max_gen_toks", self.max_gen_toks))
            out = self.model.generate(**inputs, max_new_tokens=new, do_sample=False)
            text = self.processor.tokenizer.decode(
                out[0, inputs["input_ids"].shape[1] :], skip_special_tokens=True
            )
            for stop in kwargs.get("until") or []:
                text = text.split(stop)[0]
            finished([(index, text)])

    def loglikelihood_rolling(self, requests: list[Any], disable_tqdm: bool = False) -> list:
        raise LALMArgumentError(f"{NAME}: no rolling log-likelihood")


ROW = Adapter(
    NAME, f"{__name__}:NaiveAudioLM", hears_audio=True, reads_checkpoint=True,
    results_file="tiny_audio_engine.sqlite", knows_audio_limit=True, served=False,
    loads_tokenizer=True,
)  # fmt: skip


@pytest.fixture
def registered():
    from lm_eval_rul import adapters, registration

    registration.register_adapter(ROW)
    try:
        yield ROW
    finally:
        adapters.ADAPTERS.remove(ROW)
        registration.MODELS.pop(NAME)


def test_a_fourth_engine_is_its_class_and_one_row(registered, tiny_audio_lm, audio_data):
    import lm_eval
    from lm_eval.api.registry import get_model

    import lm_eval_rul
    from lm_eval_rul.registration import model_args_checker

    # the row alone makes it known: the harness, the audio checks, the letter check
    assert get_model(NAME) is NaiveAudioLM
    assert NAME in audio_adapter_names() and NAME in tokenizer_model_names()
    assert model_args_checker(NAME) is check_model_args
    # its messages carry its own name, not another engine's
    with pytest.raises(LALMArgumentError, match=rf"^{NAME}: max_gen_toks='many' is not"):
        check_model_args({"pretrained": str(tiny_audio_lm), "max_gen_toks": "many"})

    results = lm_eval.simple_evaluate(
        model=NAME,
        model_args=f"pretrained={tiny_audio_lm},audio=noise,noise_seconds=1,results_cache=none",
        tasks=["rul_muchomusic_fold2", "rul_muchomusic_gen_fold2"],
        task_manager=lm_eval_rul.task_manager(include_defaults=False, **audio_data),
        limit=2,
        log_samples=True,
    )
    letters = results["samples"]["rul_muchomusic_fold2"]
    answers = results["samples"]["rul_muchomusic_gen_fold2"]
    assert len(letters) == 2 and len(answers) == 2
    for sample in letters:  # four letters scored, each a finite log-probability
        scores = [float(row[0]) for row in sample["filtered_resps"]]
        assert len(scores) == 4 and all(s < 0 for s in scores)
        assert sample["doc"]["audio_heard"].startswith("noise")
    assert all(isinstance(sample["resps"][0][0], str) for sample in answers)
    config = results["config"]
    assert config["audio_condition"] == "noise" and config["engine"] == NAME
    assert config["audio_condition_by_task"] == {
        "rul_muchomusic_fold2": "noise",
        "rul_muchomusic_gen_fold2": "noise",
    }
    assert "acc,none" in results["results"]["rul_muchomusic_fold2"]
