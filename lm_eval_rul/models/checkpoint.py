"""The engines that read a checkpoint (``lalm``, ``lalm-vllm``): :class:`CheckpointLM`.

Both render the family's chat template once and tokenize every request the same way (as
lm-eval's ``hf`` model splits context and continuation): one source of prompts is what
makes the two models' letters comparable. Letters are grouped by clip (:class:`Question`)
so each clip's audio prefix is computed once.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import jinja2

from ..adapters import adapter_named
from ..audio import AudioSpec, Condition
from ..audio.requests import RequestAudio
from ..mcqa.letters import announce_multi_token
from ..progress import progress_bar
from .args import LALMArgumentError
from .core import AudioLM, StoredResults, chat_messages, hear, recorded_parameters, results_path
from .families import (
    Family,
    family_max_seconds,
    load_processor,
    resolve_attr,
    several_clips_refusal,
    template_renderer,
)
from .prompts import (
    MISSING_MISTRAL_COMMON,
    MistralPrompts,
    audio_token_ids,
    family_blank_ids,
    template_trims_question,
)

logger = logging.getLogger(__name__)

#: Bumped whenever what is stored, or how it is computed, changes meaning.
FORMAT = 1
_WEIGHTS = (".safetensors", ".bin", ".json", ".model", ".txt", ".jinja", ".py")


def checkpoint_identity(pretrained: str, revision: str, config: Any) -> dict[str, Any]:
    """What identifies the weights: a folder's files (size, mtime) or a hub commit."""
    folder = Path(pretrained).expanduser()
    if folder.is_dir():
        files = sorted(
            (p.name, p.stat().st_size, p.stat().st_mtime_ns)
            for p in folder.iterdir()
            if p.is_file() and p.suffix in _WEIGHTS
        )
        return {"path": str(folder.resolve()), "files": files}
    return {
        "hub_id": pretrained,
        "revision": revision,
        "commit": getattr(config, "_commit_hash", None),
    }


def results_scope(
    lm: Any,
    spec: AudioSpec | None = None,
    *,
    dtype: str | None = None,
    versions: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Everything besides the request that decides ``lm``'s results: the checkpoint by its
    files or hub commit, the template, the condition.

    Args:
        lm: The model (``lalm``, or ``lalm-vllm``, which builds its prompts the same way);
            its ``MODEL_NAME`` is in the scope: results of two engines never mix.
        spec: What it hears (default: ``lm.spec``).
        dtype: The weights' dtype (default: ``lm.model.dtype``).
        versions: More package versions that decide the results (``lalm-vllm``: vLLM's).
    """
    import torch
    import transformers

    from .. import __version__

    spec = spec or lm.spec
    return {
        "model": lm.MODEL_NAME,
        "format": FORMAT,
        "versions": {
            "lm_eval_rul": __version__,
            "transformers": transformers.__version__,
            "torch": torch.__version__,
            **(versions or {}),
        },
        "checkpoint": checkpoint_identity(lm.pretrained, lm.revision, lm._config),
        "dtype": dtype or str(lm.model.dtype),
        "family": lm.family.name,
        "template": list(lm._parts),
        # only where the template trims the question, so other scopes keep their keys
        **({"question_trimmed": True} if getattr(lm, "_trims_question", False) else {}),
        "chat_template": lm.use_chat_template,
        "system_prompt": lm.system_prompt,
        "prefix_cache": lm.prefix_cache,
        "audio": {
            "condition": spec.condition,
            **recorded_parameters(spec),
            "max_seconds": spec.max_seconds,
            "sampling_rate": spec.sampling_rate,
        },
    }


@dataclass
class Question:
    """The letter requests of one (clip, context): scored after one audio prefix."""

    key: Hashable  # what is heard (the clip's condition key)
    source: RequestAudio
    context_ids: list[int]  # the prompt's token ids (audio placeholder unexpanded)
    letters: list[tuple[int, list[int]]]  # (index among the requests to score, its ids)


#: Marks where the question text goes when the chat template is rendered once.
_SENTINEL = "\ue000LALM-TEXT\ue000"


def check_prompt_dependencies(family: Family, who: str) -> None:
    """The packages ``family``'s prompts need (Voxtral: mistral-common), for engine ``who``."""
    if family.prompts == "mistral":
        from transformers.utils import is_mistral_common_available

        if not is_mistral_common_available():
            raise LALMArgumentError(MISSING_MISTRAL_COMMON.format(who=who, family=family.name))


class CheckpointLM(AudioLM):
    """The core of the engines that read a checkpoint (see the module doc).

    Uses ``family``, ``pretrained``, ``use_chat_template`` and ``system_prompt``; sets
    ``processor``, ``tokenizer`` and the rendered template parts. An engine defines
    ``_score_questions(questions) -> [(index, (log p, greedy))]`` (one call after one audio
    prefix per clip) and ``_generate``.
    """

    #: Questions (letters) or prompts (generation) per engine call across clips (``lalm``:
    #: per clip): enough for vLLM to fill its batches, few enough that a stop loses little.
    QUESTIONS_PER_CALL: ClassVar[int] = 256

    family: Family
    pretrained: str
    use_chat_template: bool
    system_prompt: str | None

    def _hear(self, args: Mapping[str, Any]) -> AudioSpec:
        """What the model hears (``args``: the checked ``model_args``), once its processor
        is loaded (its sampling rate and limit), and the template for that condition."""
        spec = hear(
            args["audio"],
            args,
            sampling_rate=self._sampling_rate(),
            max_seconds=self._max_seconds(args["max_audio_seconds"]),
        )
        self._init_prompts(spec.audio_condition)
        return spec

    def _start(
        self,
        args: Mapping[str, Any],
        spec: AudioSpec | None = None,
        *,
        dtype: str | None = None,
        versions: Mapping[str, str] | None = None,
    ) -> AudioSpec:
        """The core's state: ``spec`` (default: :meth:`_hear`) and the results file
        (``results_cache=auto``: its adapter row's) scoped to the checkpoint and spec."""
        spec = spec or self._hear(args)
        scope = results_scope(self, spec, dtype=dtype, versions=versions)
        results_file = adapter_named(self.MODEL_NAME).results_file
        stored = StoredResults(results_path(args["results_cache"], results_file), scope)
        AudioLM.__init__(self, spec, stored, max_gen_toks=args["max_gen_toks"])
        return spec

    def _load_processor(self, pretrained: str, kwargs: dict[str, Any]) -> None:
        """Load the checkpoint's processor and tokenizer (and Voxtral's Tekken prompts)."""
        self.processor = load_processor(self.family, pretrained, kwargs)
        self.tokenizer = self.processor.tokenizer
        self._mistral: MistralPrompts | None = None
        if self.family.prompts == "mistral":
            self._mistral = MistralPrompts(self.processor, self._where, self._sampling_rate())

    def _init_prompts(self, condition: Condition) -> None:
        """Render the template for ``condition`` (no audio slot where it has none)."""
        self._audio_ids = self._audio_token_ids()
        self._blank_ids = family_blank_ids(self.tokenizer, self.family)
        self._trims_question = False  # the template writes the question `| trim`med
        clips = 1 if condition.audio_slot else 0
        self._parts = self._template_parts(clips=clips)
        self._parts_by_clips = {clips: self._parts}

    @property
    def _where(self) -> str:
        """``lalm-vllm: Qwen2-Audio``: what starts a message of this engine and family."""
        return f"{self.MODEL_NAME}: {self.family.name}"

    def _sampling_rate(self) -> int:
        rate = resolve_attr(self.processor, "feature_extractor.sampling_rate")
        return int(rate or self.family.sampling_rate)

    def _max_seconds(self, override: float | None) -> float | None:
        if override is not None:
            return float(override)
        return family_max_seconds(self.family, self.processor)

    @property
    def placeholder(self) -> str:
        """The audio placeholder written into the prompt (before processor expansion)."""
        token = getattr(self.processor, "audio_token", None)
        if token and token not in self.family.placeholder:
            return token
        return self.family.placeholder

    def _audio_token_ids(self) -> set[int]:
        if self._mistral is not None:
            return self._mistral.audio_ids
        return audio_token_ids(
            self.processor,
            self.family,
            self.placeholder,
            where=self.pretrained,
            who=self.MODEL_NAME,
        )

    def _template_parts(self, *, clips: int) -> tuple[str, str]:
        """(text before the question, text after it) of the rendered prompt with ``clips``
        audio slots (0: a text-only prompt)."""
        with_audio = clips > 0
        if self.family.max_clips is not None and clips > self.family.max_clips:
            raise LALMArgumentError(
                several_clips_refusal(f"{self._where} ({self.pretrained})", self.family, clips)
            )
        if self._mistral is not None:
            if not self.use_chat_template:
                raise LALMArgumentError(
                    f"{self._where} prompts come only from its processor's "
                    "apply_chat_template with the audio (mistral-common); drop "
                    "chat_template=false."
                )
            return self._mistral.template_parts(
                clips=clips, sentinel=_SENTINEL, system_prompt=self.system_prompt
            )
        if not self.use_chat_template:
            return (f"{self.placeholder}\n" * clips), ""
        audio_parts = [{"type": "audio", "audio": f"clip{i}"} for i in range(clips)]
        messages = chat_messages(
            _SENTINEL, audio_parts=audio_parts, system_prompt=self.system_prompt
        )
        if self.family.content == "inline":
            messages[-1]["content"] = self.placeholder * clips + _SENTINEL
        render = template_renderer(self.processor, self.tokenizer)
        try:
            rendered = render(messages)
        except (ValueError, TypeError, KeyError, jinja2.TemplateError) as error:
            raise LALMArgumentError(
                f"{self._where}: the chat template of {self.pretrained} cannot "
                "render the prompt (audio items {'type': 'audio'} without the audio itself, "
                f"then the question): {' '.join(str(error).split())}; pass model_args "
                "chat_template=false to write the audio placeholder and the question without it."
            ) from error
        if isinstance(rendered, list):
            rendered = rendered[0]
        if rendered.count(_SENTINEL) != 1:
            raise LALMArgumentError(
                f"{self._where}: the chat template of {self.pretrained} does not "
                f"write the question text once; rendered: {rendered!r}."
            )
        before, after = rendered.split(_SENTINEL)
        where = f"{self._where} ({self.pretrained})"
        self._trims_question = template_trims_question(render, messages, rendered, _SENTINEL, where)
        if with_audio and not self._audio_ids.intersection(self._encode(before)):
            raise LALMArgumentError(
                f"{self._where}: the chat template of {self.pretrained} writes no "
                f"audio marker the processor expands ({self.placeholder!r}) before the "
                f"question; rendered: {before!r}. Pass model_args chat_template=false to "
                "write it without the template."
            )
        return before, after

    def parts_for(self, clips: int | None) -> tuple[str, str]:
        """The template parts around the question for ``clips`` audio slots (``None``: the
        condition's own, one clip or none)."""
        if clips is None:
            return self._parts
        if clips not in self._parts_by_clips:
            self._parts_by_clips[clips] = self._template_parts(clips=clips)
        return self._parts_by_clips[clips]

    def prompt_text(self, context: str, clips: int | None = None) -> str:
        """The full prompt (audio placeholder unexpanded) the model reads for ``context``."""
        before, after = self.parts_for(clips)
        return before + (context.strip() if self._trims_question else context) + after

    def _encode(self, text: str) -> list[int]:
        if self._mistral is not None:
            return self._mistral.encode(text)
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def _encode_request(
        self, context: str, continuation: str, clips: int | None = None
    ) -> tuple[str, list[int], list[int]]:
        """(full text, prompt ids, continuation ids) of a request, split as HFLM splits.

        The continuation's ids are those of the whole text after the prompt's ids, so
        a tokenizer that merges across the boundary is scored the way lm-eval's ``hf``
        model scores it.
        """
        n_spaces = len(context) - len(context.rstrip())
        if n_spaces and not self.parts_for(clips)[1]:
            continuation = context[-n_spaces:] + continuation
            context = context[:-n_spaces]
        prompt = self.prompt_text(context, clips)
        context_ids = self._encode(prompt)
        whole = self._encode(prompt + continuation)
        return prompt + continuation, context_ids, whole[len(context_ids) :]

    def _score_letters(
        self, todo: list[tuple[Any, RequestAudio, Hashable]], finished: Callable, disable_tqdm: bool
    ) -> None:
        """Score ``todo`` clip by clip, :meth:`_chunks` at a time."""
        groups = self._questions_by_clip(todo)
        bar = progress_bar(
            len(todo), f"{self.MODEL_NAME}: scoring", enabled=not disable_tqdm and self.rank == 0
        )
        try:
            for chunk in self._chunks(groups):
                finished(self._score_questions(chunk))
                bar.update(sum(len(question.letters) for question in chunk))
        finally:
            bar.close()

    def _questions_by_clip(
        self, todo: list[tuple[Any, RequestAudio, Hashable]]
    ) -> list[list[Question]]:
        """The requests as questions, clip by clip in order of first appearance, each
        clip's contexts in order (a continuation of several tokens is said once)."""
        by_clip: OrderedDict[Hashable, OrderedDict[str, Question]] = OrderedDict()
        multi_token: dict[str, list[int]] = {}
        for index, (request, source, key) in enumerate(todo):
            context, continuation = request.args[:2]
            context = self.question_text(context, source)
            _, ctx_ids, cont_ids = self._encode_request(
                context, continuation, source.clips(self.spec)
            )
            if not cont_ids:
                raise LALMArgumentError(
                    f"{self.MODEL_NAME}: continuation {continuation!r} of document "
                    f"{request.doc.get('id')!r} encodes to no tokens."
                )
            if len(cont_ids) > 1:
                multi_token.setdefault(continuation, cont_ids)
            contexts = by_clip.setdefault(key, OrderedDict())
            contexts.setdefault(context, Question(key, source, ctx_ids, [])).letters.append(
                (index, cont_ids)
            )
        pieces = {t: self.tokenizer.convert_ids_to_tokens(ids) for t, ids in multi_token.items()}
        if pieces:
            announce_multi_token(self.MODEL_NAME, pieces, what="continuation", log=logger)
        return [list(contexts.values()) for contexts in by_clip.values()]

    def _chunks(self, groups: list[list[Question]]) -> Iterator[list[Question]]:
        """Questions per engine call: :data:`QUESTIONS_PER_CALL` across clips, a clip's
        questions together (its prefix then stays in the engine's cache)."""
        questions = [q for group in sorted(groups, key=lambda g: repr(g[0].key)) for q in group]
        for start in range(0, len(questions), self.QUESTIONS_PER_CALL):
            yield questions[start : start + self.QUESTIONS_PER_CALL]
