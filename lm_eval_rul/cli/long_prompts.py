"""``run``: a plugin task's prompt longer than the model's context stops the run, uncut.

lm-eval's ``hf`` (and ``vllm``) models keep the last ``max_length + 1`` tokens of a
request that does not fit, with a warning per request, so the model would answer a
question whose start it never saw. While a ``run`` executes, :func:`no_cut_prompts`
measures the plugin's requests (documents with a ``benchmark`` field) with the model's
own tokenizer before they are scored and raises one
:class:`~lm_eval_rul.mcqa.PromptTooLongError` naming the questions. Other tasks keep the
harness's behaviour. (``lalm`` never cuts a prompt.)
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

__all__ = ["check_requests_fit", "no_cut_prompts"]

_FIX = (
    "Use a model with a longer context (or model_args max_length=N, if the model was "
    "trained for more)."
)


def check_requests_fit(lm: Any, requests: list[Any]) -> None:
    """Raise :class:`~lm_eval_rul.mcqa.PromptTooLongError` for plugin requests ``lm`` would cut."""
    from ..mcqa.letter_scoring import (
        PromptTooLongError,
        context_limit,
        fits_surely,
        request_tokens,
    )

    limit = context_limit(lm)
    if limit is None:
        return
    lengths: dict[str, int] = {}
    for request in requests:
        doc = request.doc if isinstance(request.doc, dict) else {}
        if "benchmark" not in doc or not request.args[0]:
            continue
        if fits_surely(request.args[0] + request.args[1], limit):
            continue
        tokens = request_tokens(lm, *request.args[:2])
        if tokens > limit + 1:
            key = f"{doc['benchmark']}:{doc.get('id')}"
            lengths[key] = max(tokens, lengths.get(key, 0))
    if lengths:
        raise PromptTooLongError(lengths, limit, fix=_FIX)


@contextlib.contextmanager
def no_cut_prompts() -> Iterator[None]:
    """While a ``run`` executes: check the plugin's requests before the harness scores them."""
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
