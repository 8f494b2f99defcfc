"""The LLM parser: any harness model reads the labels out of an answer (the paper's method).

The instruction is :func:`~lm_eval_rul.factual.prompts.parser_prompt` (the eight rules and,
for mood and regional style, the closed label list), sent through the model's chat
template with ``generate_until`` at temperature 0 (``local-chat-completions``, ``hf``,
``vllm``...). The reply, a comma-separated list, becomes canonical labels through the
task's lexicon (:func:`~lm_eval_rul.factual.prompts.read_parser_reply`).

* **Cache**: well-formed replies are kept in a :class:`~lm_eval_rul.cache.ResultCache`
  scoped by (parser model, prompt version) and keyed by (task, closed list, response), so
  re-scoring the same answers again costs no call. The labels are re-read from the
  cached reply each time (an alias-table fix applies at once).
* **Malformed replies** (:func:`reply_problem`: an item that is prose, not a label: more
  than five words, "?"/"!", or words such as "response", "mentioned", "is", "think";
  for the closed-list tasks, an item not on the list) are asked again, with what was
  wrong, at most ``retries`` times; a reply still malformed is *counted* and gives no
  reading (``labels`` None: not an empty prediction, and never a guess; the metrics leave
  such windows out, :mod:`~lm_eval_rul.factual.records`), and is not cached (a rerun asks
  again). An empty reply is the rules' "nothing mentioned": an empty prediction.
* **Failing calls** follow the package's retry policy (:mod:`lm_eval_rul.retries`): an
  error no retry can fix (HTTP 400/401/403/404/405/422, an invalid URL, a programming
  error) stops at once with an error naming it (a wrong ``base_url``, model name or key
  fails the same way every time); any other failure is retried ``retries`` times with
  exponential backoff, then stops with an error. What was parsed so far stays cached, so a
  rerun resumes.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...cache import ResultCache
from ...retries import error_text, permanent_error, with_retries
from ..errors import FactualInputError
from ..prompts import (
    PARSER_PROMPT_VERSION,
    parser_prompt,
    parser_reply_terms,
    parser_retry_prompt,
    read_parser_reply,
)
from .labels import task_info
from .lexicon import Lexicon

__all__ = [
    "ParserQuery",
    "ParserReading",
    "ParserStats",
    "ParserCallError",
    "LLMParser",
    "reply_problem",
    "parser_scope",
]

logger = logging.getLogger(__name__)

_MAX_WORDS = 5  # an item longer than this is prose, not a label
#: Words that make an item prose ("the response mentions", "I cannot tell"), never a label.
_PROSE = re.compile(
    r"\b(?:response|answer|mentions?|mentioned|listed|here|there|is|are|was|were|think|sorry|"
    r"cannot|can't|unclear|unknown)\b",
    re.IGNORECASE,
)


class ParserCallError(FactualInputError):
    """The parser model cannot be called (wrong endpoint, model name or key; server down)."""


@dataclass(frozen=True)
class ParserQuery:
    """One answer to parse.

    Attributes:
        task: Task key.
        response: The evaluated model's answer.
        lexicon: The task's lexicon (maps the reply onto canonical labels).
    """

    task: str
    response: str
    lexicon: Lexicon = field(repr=False)

    @property
    def closed(self) -> tuple[str, ...]:
        """The closed label list the parser chooses from (mood, regional), else empty."""
        info = task_info(self.task)
        return tuple(info.candidates) if info.label_matching else ()

    @property
    def key(self) -> list[Any]:
        return [self.task, list(self.closed), self.response]


@dataclass(frozen=True)
class ParserReading:
    """What the parser made of one answer.

    Attributes:
        labels: Canonical labels (empty: the answer names none); None for a malformed
            reply (no reading, which is not "nothing named").
        status: ``ok`` or ``malformed`` (still malformed after the retries).
        reply: The parser's last raw reply.
        attempts: Replies asked for (0 when it came from the cache).
        problem: Why the last reply was malformed.
    """

    labels: tuple[str, ...] | None
    status: str
    reply: str
    attempts: int
    problem: str | None = None

    def to_log(self, parser: str) -> dict[str, Any]:
        """Plain data for a sample log (the lexicon parser logs the same ``labels``)."""
        return {
            "labels": None if self.labels is None else list(self.labels),
            "reply": self.reply,
            "status": self.status,
            "attempts": self.attempts,
            "problem": self.problem,
            "parser": parser,
        }


@dataclass
class ParserStats:
    """Counts of one parser's work (for the summary and the benchmarks).

    Attributes:
        queries: Answers asked about.
        unique: Distinct (task, closed list, answer) among them.
        cache_hits: Distinct answers whose reply came from the cache.
        requests: Prompts sent to the model (first asks and re-asks).
        retried: Distinct answers whose first reply was malformed.
        malformed: Distinct answers still malformed after the retries.
        empty: Distinct answers read as naming no label.
    """

    queries: int = 0
    unique: int = 0
    cache_hits: int = 0
    requests: int = 0
    retried: int = 0
    malformed: int = 0
    empty: int = 0


def reply_problem(reply: str, query: ParserQuery) -> str | None:
    """Why ``reply`` is not a well-formed label list for ``query`` (None when it is).

    Examples
    --------
    >>> from lm_eval_rul.factual.reading.lexicon import lexicon_for
    >>> q = ParserQuery("mood", "A sad song.", lexicon_for("mood"))
    >>> reply_problem("Sad", q) is None, reply_problem("Melancholy pop", q)
    (True, "'Melancholy pop' is not on the list")
    """
    for term in parser_reply_terms(reply, query.task):
        if len(term.split()) > _MAX_WORDS or any(c in term for c in "?!") or _PROSE.search(term):
            return f"{term[:60]!r} is a sentence, not a label"
        if query.closed and not read_parser_reply(term, query.lexicon):
            return f"{term!r} is not on the list"
    return None


def parser_scope(parser_model: str, model_args: dict[str, Any]) -> dict[str, Any]:
    """The cache scope of a parser: the harness model, the served model and its revision,
    and :data:`~lm_eval_rul.factual.prompts.PARSER_PROMPT_VERSION` (never endpoints or keys)."""
    return {
        "kind": "factual-llm-parser",
        "parser_model": parser_model,
        "model": str(model_args.get("model") or model_args.get("pretrained") or ""),
        "revision": str(model_args.get("revision") or ""),
        "prompt_version": PARSER_PROMPT_VERSION,
    }


class LLMParser:
    """Parse answers into labels with a harness model (see the module docstring).

    Args:
        lm: An lm-eval ``LM`` with ``generate_until`` (``apply_chat_template`` is used when
            the model has a chat template).
        name: The parser's name in logs and records (e.g. ``gpt-4.1-mini``).
        cache: Where well-formed replies are kept (None: no cache).
        retries: Re-asks of a malformed reply, and retries of a failing call.
        chunk_size: Prompts per ``generate_until`` call (an API model's ``num_concurrent``
            and an ``hf`` model's batching apply within a call).
        max_gen_toks: Token budget of one reply.
        backoff: First retry delay of a failing call, in seconds (doubling).
        sleep: Called between call retries (tests pass a no-op).
    """

    def __init__(
        self,
        lm: Any,
        *,
        name: str,
        cache: ResultCache | None = None,
        retries: int = 2,
        chunk_size: int = 32,
        max_gen_toks: int = 128,
        backoff: float = 2.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if retries < 0 or chunk_size < 1:
            raise ValueError(f"need retries >= 0 and chunk_size >= 1, got {retries}, {chunk_size}")
        self.lm, self.name, self.cache = lm, name, cache
        self.retries, self.chunk_size, self.max_gen_toks = retries, chunk_size, max_gen_toks
        self.backoff, self.sleep = backoff, sleep
        self.stats = ParserStats()
        self._raw_prompts = False

    # ------------------------------------------------------------------ requests
    def _context(self, messages: list[dict[str, str]]) -> str:
        if not self._raw_prompts:
            try:
                return self.lm.apply_chat_template(messages, add_generation_prompt=True)
            except Exception as error:  # noqa: BLE001 - a model without a chat template
                logger.warning(
                    "parser %s: no chat template (%s); sending the plain prompt", self.name, error
                )
                self._raw_prompts = True
        return "\n\n".join(m["content"] for m in messages) + "\n"

    def _instance(self, messages: list[dict[str, str]]) -> Any:
        from lm_eval.api.instance import Instance

        gen_kwargs = {
            "until": [],
            "max_gen_toks": self.max_gen_toks,
            "temperature": 0.0,
            "do_sample": False,
        }
        return Instance(
            request_type="generate_until",
            doc={},
            arguments=(self._context(messages), gen_kwargs),
            idx=0,
            metadata=("lm_eval_rul_factual_parser", 0, 1),
        )

    def _generate(self, conversations: list[list[dict[str, str]]]) -> list[str]:
        """One reply per conversation, with the package's retry policy
        (:mod:`lm_eval_rul.retries`): an error no retry can fix stops at once, others are
        retried with backoff, then stop."""
        instances = [self._instance(c) for c in conversations]
        try:
            replies = with_retries(
                lambda: self.lm.generate_until(instances, disable_tqdm=True),
                retries=self.retries,
                backoff=self.backoff,
                what=f"parser {self.name}",
                sleep=self.sleep,
            )
        except Exception as error:  # noqa: BLE001 - any failure of the remote call
            reason = permanent_error(error, args_option="--parser_args")
            if reason is not None:
                raise ParserCallError(
                    f"the parser model {self.name} failed with an error no retry can fix "
                    f"({reason}; {error_text(error)[:200]})"
                ) from error
            raise ParserCallError(
                f"the parser model {self.name} failed {self.retries + 1} times "
                f"({error_text(error)[:200]}); the replies read so far are cached: rerun the "
                "same command to resume"
            ) from error
        self.stats.requests += len(instances)
        return ["" if r is None else str(r) for r in replies]

    # ------------------------------------------------------------------ parsing
    def _read_cached(self, query: ParserQuery) -> ParserReading | None:
        if self.cache is None:
            return None
        found = self.cache.get(query.key)
        if not isinstance(found, dict) or reply_problem(str(found.get("reply")), query):
            return None
        reply = str(found["reply"])
        return ParserReading(read_parser_reply(reply, query.lexicon), "ok", reply, 0)

    def _ask(self, queries: list[ParserQuery]) -> list[ParserReading]:
        """Ask for the given queries, re-asking malformed replies up to ``retries`` times."""
        conversations = [
            [{"role": "user", "content": parser_prompt(q.task, q.response)}] for q in queries
        ]
        out: list[ParserReading | None] = [None] * len(queries)
        pending = list(range(len(queries)))
        for attempt in range(self.retries + 1):
            replies = self._generate([conversations[i] for i in pending])
            still = []
            for index, reply in zip(pending, replies, strict=True):
                query = queries[index]
                problem = reply_problem(reply, query)
                if problem is None:
                    out[index] = ParserReading(
                        read_parser_reply(reply, query.lexicon), "ok", reply, attempt + 1
                    )
                    if self.cache is not None:
                        self.cache.put(query.key, {"reply": reply, "attempts": attempt + 1})
                    continue
                if attempt == 0:
                    self.stats.retried += 1
                out[index] = ParserReading(None, "malformed", reply, attempt + 1, problem)
                conversations[index] = conversations[index] + [
                    {"role": "assistant", "content": reply},
                    {"role": "user", "content": parser_retry_prompt(query.task, problem)},
                ]
                still.append(index)
            pending = still
            if not pending:
                break
        return [reading for reading in out if reading is not None]

    def parse_many(
        self, queries: Sequence[ParserQuery], *, progress: bool = True
    ) -> list[ParserReading]:
        """The reading of every query, in order (equal queries are asked once)."""
        from tqdm.auto import tqdm

        self.stats.queries += len(queries)
        unique: dict[str, ParserQuery] = {}
        for query in queries:
            unique.setdefault(ResultCache.key(query.key), query)
        self.stats.unique += len(unique)
        readings: dict[str, ParserReading] = {}
        missing: list[tuple[str, ParserQuery]] = []
        for key, query in unique.items():
            cached = self._read_cached(query)
            if cached is None:
                missing.append((key, query))
            else:
                readings[key] = cached
                self.stats.cache_hits += 1
        bar = tqdm(total=len(missing), desc=f"parser {self.name}", disable=not progress)
        for start in range(0, len(missing), self.chunk_size):
            chunk = missing[start : start + self.chunk_size]
            for (key, _), reading in zip(chunk, self._ask([q for _, q in chunk]), strict=True):
                readings[key] = reading
            bar.update(len(chunk))
        bar.close()
        for reading in readings.values():
            self.stats.malformed += reading.status == "malformed"
            self.stats.empty += reading.status == "ok" and not reading.labels
        return [readings[ResultCache.key(q.key)] for q in queries]
