"""Harness requests of the RUL-MuChoMusic fixture, built as lm-eval builds them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["letter_docs", "letter_requests", "generation_requests", "check_top_path_counts"]


def letter_docs(
    metadata: Mapping[str, str], folds: Iterable[int] = (0,), n: int | None = None
) -> list[dict]:
    """The first ``n`` documents (all by default) of each fold's test split, fold by fold."""
    from ..mcqa.tasks import load_rul_muchomusic

    docs: list[dict] = []
    for fold in folds:
        split = list(load_rul_muchomusic(fold, **metadata)["test"])
        docs.extend(split if n is None else split[:n])
    return docs


def letter_requests(docs: list[dict], task: str = "rul_muchomusic_fold0") -> list:
    """One ``loglikelihood`` request per answer letter (`` A``...) of each document."""
    from lm_eval.api.instance import Instance

    from ..mcqa.tasks import doc_to_choice, doc_to_text

    return [
        Instance("loglikelihood", doc, (doc_to_text(doc), f" {letter}"), i, (task, n, 1))
        for n, doc in enumerate(docs)
        for i, letter in enumerate(doc_to_choice(doc))
    ]


def generation_requests(docs: list[dict], gen_kwargs: dict[str, Any]) -> list:
    """One ``generate_until`` request per document (the ``_gen`` task's prompt)."""
    from lm_eval.api.instance import Instance

    from ..mcqa.tasks import doc_to_text_gen

    return [
        Instance("generate_until", doc, (doc_to_text_gen(doc), dict(gen_kwargs)), 0, ("gen", n, 1))
        for n, doc in enumerate(docs)
    ]


def check_top_path_counts(info: Mapping[str, Any], scores: list, k: int) -> list[bool]:
    """``lalm-api``'s ``top``-``k`` counts (``get_model_info``) agree with its 4-letter
    ``scores``, some letters missing; returns which letters were missing (-inf)."""
    missing = [ll == float("-inf") for ll, _ in scores]
    assert info["api_logprob_path"] == f"top-{k}"
    assert info["api_letters_missing_from_top"] == sum(missing) > 0
    by_question = [missing[i : i + 4] for i in range(0, len(missing), 4)]
    assert info["api_questions_missing_letters"] == sum(any(q) for q in by_question)
    assert info["api_questions_without_letters"] == sum(all(q) for q in by_question)
    return missing
