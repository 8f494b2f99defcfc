"""``run``: a plugin task's prompt longer than the model's context stops the run, uncut.

lm-eval's ``hf`` and ``vllm`` models cut a request that does not fit from the left, with
at most a warning: a ``loglikelihood`` request keeps its last ``max_length + 1`` tokens,
and a ``generate_until`` context its last ``max_length - max_gen_toks`` (the room left
for the answer). The model would answer a question whose start it never saw. While a
``run`` executes, :func:`no_cut_prompts` measures the plugin's requests (documents with a
``benchmark`` field) with the model's own tokenizer before they are run and raises one
:class:`~lm_eval_rul.mcqa.PromptTooLongError` naming the questions:

* log-likelihood (:func:`check_requests_fit`): in the harness's
  ``TemplateLM.loglikelihood``, which ``hf`` and ``vllm`` use;
* generation (:func:`check_generation_fits`): on the model the evaluator runs, when it
  generates with the harness's own ``hf`` or ``vllm`` ``generate_until`` (``lalm``
  generates from the whole prompt and never cuts one; API models leave it to their
  server).

Other tasks keep the harness's behaviour.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

__all__ = ["check_requests_fit", "check_generation_fits", "no_cut_prompts", "no_cut_generation"]

_FIX = (
    "Use a model with a longer context (or model_args max_length=N, if the model was "
    "trained for more)."
)
_GEN_FIX = (
    "Use a model with a longer context (or model_args max_length=N, if the model was "
    "trained for more), or leave less room for the answer (--gen_kwargs max_gen_toks=N)."
)
#: The harness's ``generate_until`` methods that cut a long context from the left.
_CUTTING_GENERATORS = {
    ("lm_eval.models.huggingface", "HFLM.generate_until"),
    ("lm_eval.models.vllm_causallms", "VLLM.generate_until"),
}


def _plugin_key(request: Any) -> str | None:
    """``benchmark:id`` of a plugin document's request (None for other tasks' requests)."""
    doc = request.doc if isinstance(request.doc, dict) else {}
    if "benchmark" not in doc or not request.args[0]:
        return None
    return f"{doc['benchmark']}:{doc.get('id')}"


def check_requests_fit(lm: Any, requests: list[Any]) -> None:
    """Raise :class:`~lm_eval_rul.mcqa.PromptTooLongError` for plugin requests ``lm`` would cut."""
    from ..mcqa.letter_scoring import (
        PromptTooLongError,
        context_limit,
        fits_surely,
        longest_request_tokens,
    )

    limit = context_limit(lm)
    if limit is None:
        return
    lengths: dict[str, int] = {}
    for request in requests:
        key = _plugin_key(request)
        # a question already found too long is refused whole: its other letters (and a
        # huge text's further tokenising) are not needed
        if key is None or key in lengths or fits_surely(request.args[0] + request.args[1], limit):
            continue
        tokens = longest_request_tokens(lm, request.args[0], [request.args[1]], limit)
        if tokens > limit + 1:
            lengths[key] = tokens
    if lengths:
        raise PromptTooLongError(lengths, limit, fix=_FIX)


def cuts_generation_prompts(lm: Any) -> bool:
    """Whether ``lm`` generates with the harness's ``hf``/``vllm`` ``generate_until``."""
    method = getattr(type(lm), "generate_until", None)
    where = (getattr(method, "__module__", ""), getattr(method, "__qualname__", ""))
    return where in _CUTTING_GENERATORS


def check_generation_fits(lm: Any, requests: list[Any]) -> None:
    """Raise :class:`~lm_eval_rul.mcqa.PromptTooLongError` for plugin ``generate_until``
    requests whose context ``lm`` would cut: longer than ``max_length - max_gen_toks``
    (the request's ``max_gen_toks``, else the model's), or than ``max_length`` for a
    sequence-to-sequence ``hf`` model."""
    from lm_eval.models.utils import normalize_gen_kwargs

    from ..mcqa.letter_scoring import PromptTooLongError, fits_surely

    max_length = getattr(lm, "max_length", None)
    if not cuts_generation_prompts(lm) or not isinstance(max_length, int):
        return
    seq2seq = getattr(lm, "backend", "causal") == "seq2seq"
    default = getattr(lm, "max_gen_toks", 256)
    lengths: dict[str, int] = {}
    room: dict[str, tuple[int, int]] = {}  # key -> (limit, max_gen_toks)
    for request in requests:
        key = _plugin_key(request)
        if key is None or key in lengths:
            continue
        context, gen_kwargs = request.args[0], request.args[1]
        gen_toks = int(normalize_gen_kwargs(dict(gen_kwargs or {}), default)["max_gen_toks"])
        limit = max_length if seq2seq else max_length - gen_toks
        if limit > 0 and fits_surely(context, limit - 1):
            continue
        tokens = len(lm.tok_encode(context))
        if tokens > limit:
            lengths[key] = max(tokens, lengths.get(key, 0))
            room[key] = min((limit, gen_toks), room.get(key, (limit, gen_toks)))
    if not lengths:
        return
    limit, gen_toks = min(room.values())
    where = (
        f"the model's context of {max_length} tokens"
        if seq2seq
        else f"the {limit} tokens the model's context of {max_length} leaves for a prompt "
        f"after max_gen_toks={gen_toks}"
    )
    raise PromptTooLongError(
        lengths, limit, fix=_GEN_FIX, room=where, prompt="a generation prompt"
    )


@contextlib.contextmanager
def no_cut_generation(lm: Any) -> Iterator[None]:
    """While the evaluator runs ``lm``: its ``generate_until`` checks the plugin's contexts
    first, when it is one of the harness's that cut them (``generate_until`` is overridden
    by each harness model class, so the check goes on the instance; entered by
    :func:`lm_eval_rul.cli.run.evaluate_hooks`, the run's one wrapper of ``evaluate``)."""
    if not cuts_generation_prompts(lm):
        yield
        return
    generate_until = lm.generate_until

    def checked(requests: list[Any], *more: Any, **options: Any) -> Any:
        check_generation_fits(lm, requests)
        return generate_until(requests, *more, **options)

    lm.generate_until = checked
    try:
        yield
    finally:
        del lm.generate_until


@contextlib.contextmanager
def no_cut_prompts() -> Iterator[None]:
    """While a ``run`` executes: check the plugin's log-likelihood requests before the
    harness runs them (generation: :func:`no_cut_generation`)."""
    from lm_eval.api.model import TemplateLM

    original = TemplateLM.loglikelihood

    def loglikelihood(self: Any, requests: list[Any], disable_tqdm: bool = False) -> Any:
        check_requests_fit(self, requests)
        return original(self, requests, disable_tqdm=disable_tqdm)

    TemplateLM.loglikelihood = loglikelihood
    try:
        yield
    finally:
        TemplateLM.loglikelihood = original
