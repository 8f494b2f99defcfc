"""Letter scoring over an API (``loglikelihood`` of :class:`~lm_eval_rul.models.api.LALMAPI`).

The path (``logprobs=``): ``prompt`` sends each letter as a prefilled answer and reads
the prompt's log-probabilities (exact: the number ``lalm`` computes; one request per
letter); ``top`` asks once per question for the first answer token's top ``k``
log-probabilities (approximate; letters outside the top ``k`` are counted and given no
probability); ``auto`` sends the first letter on the prompt path and keeps it when the
answer has prompt log-probabilities, else falls back to ``top``; ``none`` refuses.
Whichever path, the first request goes alone, so a server without log-probabilities is
reported before anything else is sent.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any

from ..audio.requests import RequestAudio
from .api_client import APIRequestError, Job
from .api_counts import RequestCounts
from .api_logprobs import (
    NoLogprobsError,
    has_prompt_logprobs,
    no_logprobs_message,
    prompt_path_score,
    rejects_prompt_logprobs,
    top_logprobs_of,
    top_path_scores,
)
from .api_payload import prompt_logprobs_body, top_logprobs_body
from .args import LALMArgumentError

__all__ = ["APILetterScoringMixin"]

logger = logging.getLogger(__name__)

_MAX_EXAMPLES = 10


@dataclass
class _Letter:
    index: int
    task: str | None
    doc: Any  # the harness document
    source: RequestAudio  # where its audio comes from
    key: Hashable  # key of the audio the document hears
    context: str
    continuation: str


class APILetterScoringMixin:
    """``loglikelihood`` for ``lalm-api`` (see the module doc).

    Uses the model's ``spec``, ``condition``, ``model``, ``system_prompt``,
    ``logprobs``, ``top_logprobs``, ``letter_path``, ``stats``, ``missing_examples``,
    ``_audio``, ``_client``, ``_cache``, ``_cache_get``, ``_cache_put`` and ``_send_one``.
    """

    def loglikelihood(self, requests: list[Any], disable_tqdm: bool = False) -> list:
        """``(log p(letter | audio, prompt), greedy)`` per request, in order."""
        if not requests:
            return []
        if self.logprobs == "none":
            raise NoLogprobsError(
                no_logprobs_message(self._client.host, self.model, self.logprobs_why)
            )
        sources = self.audio_sources(requests)
        keys: dict[int, Hashable] = {}
        letters = []
        for index, (request, source) in enumerate(zip(requests, sources, strict=True)):
            if id(source.parts) not in keys:
                keys[id(source.parts)] = source.key(self.spec)
            context, continuation = request.args[:2]
            context = self.question_text(context, source)
            key = keys[id(source.parts)]
            doc = request.doc or {}
            letters.append(
                _Letter(index, request.task_name, doc, source, key, context, continuation)
            )
        path = self._resolve_letter_path(letters[0])
        if path == "prompt":
            return self._score_prompt_path(letters, disable_tqdm)
        return self._score_top_path(letters, disable_tqdm)

    # ------------------------------------------------------------------ path
    def _resolve_letter_path(self, probe: _Letter) -> str:
        """``prompt`` or ``top``: forced, found earlier (this run or the cache), or probed.

        The probed path is stored in the resume cache only once a request on it succeeded
        (the probe itself for ``prompt``, the first ``top`` answer for ``top``), so one bad
        reply never pins a path for later runs. Where the path came from is logged once
        per run.
        """
        if self.letter_path is not None and self.logprobs not in ("prompt", "top"):
            return self.letter_path
        if self.logprobs in ("prompt", "top"):
            self.letter_path, source = self.logprobs, f"logprobs={self.logprobs}"
        elif (cached := self._cache_get(["letter_path"])) is not None:
            where = self._cache.path if self._cache is not None else "this run"
            self.letter_path, source = str(cached), f"from the resume cache {where}"
        else:
            self.letter_path = self._probe_prompt_path(probe)
            source = "probed"
            if self.letter_path == "prompt":  # the probe was answered on this path
                self._cache_put(["letter_path"], self.letter_path)
            else:
                self._letter_path_unconfirmed = True  # stored after a top answer
        if getattr(self, "_letter_path_logged", None) != self.letter_path:
            self._letter_path_logged = self.letter_path
            shown = (
                "the prompt path (exact)"
                if self.letter_path == "prompt"
                else f"the top-{self.top_logprobs} path (approximate)"
            )
            logger.info("lalm-api: letters are scored on %s: %s", shown, source)
        return self.letter_path

    def _confirm_letter_path(self) -> None:
        """A request on the probed path succeeded: keep the path for later runs."""
        if getattr(self, "_letter_path_unconfirmed", False):
            self._letter_path_unconfirmed = False
            self._cache_put(["letter_path"], self.letter_path)

    def _probe_prompt_path(self, letter: _Letter) -> str:
        """Send ``letter`` on the prompt path; ``prompt`` if the answer has prompt logprobs."""
        try:
            body = self._send_one(self._prompt_job(letter))
        except APIRequestError as error:
            if not rejects_prompt_logprobs(error.status, error.server_message):
                raise
            why = f"HTTP {error.status}: {error.server_message}"
        else:
            if has_prompt_logprobs(body):
                score = prompt_path_score(body, letter.continuation)
                self._cache_put(self._prompt_parts(letter), list(score))
                logger.info("lalm-api: letters scored from prompt log-probabilities (exact)")
                return "prompt"
            why = "the answer has no prompt_logprobs"
        logger.warning(
            "lalm-api: %s has no prompt log-probabilities (%s); letters are scored from the "
            "top-%d log-probabilities of the first answer token (approximate; see "
            "api_letters_missing_from_top in the results).",
            self._client.host,
            why,
            self.top_logprobs,
        )
        return "top"

    # ------------------------------------------------------------------ prompt path
    def _prompt_parts(self, letter: _Letter) -> list[Any]:
        digest = self._audio.digest(letter.key, letter.source)
        return ["prompt", letter.context, letter.continuation, digest]

    def _prompt_job(self, letter: _Letter) -> Job:
        def build() -> dict[str, Any]:
            messages = self._audio.messages(
                letter.key, letter.source, letter.context, self.system_prompt
            )
            return prompt_logprobs_body(self.model, messages, letter.continuation)

        return Job(letter, build)

    def _score_prompt_path(self, letters: list[_Letter], disable_tqdm: bool) -> list:
        results: list[tuple[float, bool] | None] = [None] * len(letters)
        counts = RequestCounts("loglikelihood")
        jobs = []
        for letter in letters:
            counts.request(letter.task, (letter.key, letter.context))
            value = self._cache_get(self._prompt_parts(letter))
            counts.http(letter.task, cached=value is not None)
            if value is not None:
                results[letter.index] = (float(value[0]), bool(value[1]))
            else:
                jobs.append(self._prompt_job(letter))
        self._announce(counts, "prompt path, exact: one HTTP request per letter")

        def on_reply(job: Job, body: dict[str, Any]) -> None:
            letter = job.tag
            if not has_prompt_logprobs(body):
                raise NoLogprobsError(
                    no_logprobs_message(self._client.host, self.model, "no prompt_logprobs")
                    + " (logprobs=top reads the top log-probabilities of the first token.)"
                )
            score = prompt_path_score(body, letter.continuation)
            self._cache_put(self._prompt_parts(letter), list(score))
            results[letter.index] = score

        self._client.send(jobs, on_reply, desc="lalm-api: letters", disable_tqdm=disable_tqdm)
        return results

    # ------------------------------------------------------------------ top path
    def _top_parts(self, letter: _Letter) -> list[Any]:
        digest = self._audio.digest(letter.key, letter.source)
        return ["top", letter.context, digest, int(self.top_logprobs)]

    def _score_top_path(self, letters: list[_Letter], disable_tqdm: bool) -> list:
        for letter in letters:
            if not letter.continuation.strip() or len(letter.continuation.split()) != 1:
                raise LALMArgumentError(
                    f"lalm-api: logprobs=top scores single-token answers (option letters); "
                    f"continuation {letter.continuation!r} is not one. Use a server with "
                    "prompt log-probabilities (vLLM) for these tasks."
                )
        groups: OrderedDict[tuple[Hashable, str], list[_Letter]] = OrderedDict()
        for letter in letters:
            groups.setdefault((letter.key, letter.context), []).append(letter)
        counts = RequestCounts("loglikelihood")
        tops: dict[tuple[Hashable, str], list] = {}
        jobs = []
        for group_key, group in groups.items():
            first = group[0]
            for letter in group:
                counts.request(letter.task, group_key)
            cached = self._cache_get(self._top_parts(first))
            counts.http(first.task, cached=cached is not None)
            if cached is not None:
                tops[group_key] = cached
                continue

            def build(letter: _Letter = first) -> dict[str, Any]:
                messages = self._audio.messages(
                    letter.key, letter.source, letter.context, self.system_prompt
                )
                return top_logprobs_body(self.model, messages, self.top_logprobs)

            jobs.append(Job((group_key, first), build))
        self._announce(
            counts, f"top-{self.top_logprobs} path, approximate: one HTTP request per question"
        )

        def on_reply(job: Job, body: dict[str, Any]) -> None:
            group_key, first = job.tag
            top = top_logprobs_of(body)
            if top is None:
                raise NoLogprobsError(
                    no_logprobs_message(
                        self._client.host, self.model, "its answers carry no top_logprobs"
                    )
                )
            tops[group_key] = [list(pair) for pair in top]
            self._cache_put(self._top_parts(first), tops[group_key])
            self._confirm_letter_path()

        try:
            self._client.send(jobs, on_reply, desc="lalm-api: questions", disable_tqdm=disable_tqdm)
        except APIRequestError as error:
            if "logprob" not in error.server_message.lower():
                raise
            why = f"HTTP {error.status}: {error.server_message}"
            raise NoLogprobsError(no_logprobs_message(self._client.host, self.model, why)) from None
        results: list[tuple[float, bool] | None] = [None] * len(letters)
        for group_key, group in groups.items():
            top = [(str(token), float(logprob)) for token, logprob in tops[group_key]]
            scores = top_path_scores(top, [letter.continuation for letter in group])
            missing = [letter for letter, score in zip(group, scores, strict=True) if not score]
            for letter, score in zip(group, scores, strict=True):
                results[letter.index] = score if score else (float("-inf"), False)
            self._count_missing(group, missing)
        self._warn_missing()
        return results

    def _count_missing(self, group: list[_Letter], missing: list[_Letter]) -> None:
        if not missing:
            return
        self.stats["letters_missing_from_top"] += len(missing)
        self.stats["questions_missing_letters"] += 1
        if len(missing) == len(group):
            self.stats["questions_without_letters"] += 1
        if len(self.missing_examples) < _MAX_EXAMPLES:
            doc = group[0].doc if isinstance(group[0].doc, Mapping) else {}
            name = f"{doc.get('benchmark', group[0].task)}:{doc.get('id')}"
            if isinstance(doc.get("fold"), int) and doc["fold"] >= 0:  # which fold's prompt
                name += f" fold {doc['fold']}"
            letters = ",".join(m.continuation.strip() for m in missing)
            self.missing_examples.append(f"{name} ({letters})")

    def _warn_missing(self) -> None:
        if not self.stats["letters_missing_from_top"]:
            return
        logger.warning(
            "lalm-api: %d letters of %d questions were not among the top %d first tokens "
            "(%d questions had no letter at all), e.g. %s. Such a letter gets no probability "
            "(log p = -inf); a question with no letter counts as wrong. The counts are in the "
            "results' config (api_letters_missing_from_top, ...).",
            self.stats["letters_missing_from_top"],
            self.stats["questions_missing_letters"],
            self.top_logprobs,
            self.stats["questions_without_letters"],
            "; ".join(self.missing_examples),
        )
