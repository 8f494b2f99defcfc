"""Harness requests of the RUL-MuChoMusic fixture, built as lm-eval builds them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["letter_docs", "letter_requests", "generation_requests"]


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
