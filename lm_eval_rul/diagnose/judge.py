"""An optional LLM judge of answerability, beside (never instead of) the audit rules.

Any harness model with ``generate_until`` can judge (``local-chat-completions`` for an
OpenAI-compatible server, ``hf``, ``vllm``...), exactly as ``build``'s generator is
driven (:class:`~lm_eval_rul.build.distractors.DistractorGenerator`). The judge sees the
question and its options (the correct one marked) and must answer with one line
``VERDICT: answerable`` or ``VERDICT: unanswerable`` and a ``REASON:`` line. A reply
without a readable verdict is a *parse failure*, and a call that still fails after its
retries a *call failure*; both are counted and stored as such, never guessed.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ..questions import Question

__all__ = [
    "JUDGE_SYSTEM",
    "JUDGE_TEMPLATE",
    "VERDICTS",
    "JudgeVerdict",
    "judge_messages",
    "parse_verdict",
    "AnswerabilityJudge",
    "verdict_counts",
]

logger = logging.getLogger(__name__)

VERDICTS = ("answerable", "unanswerable")

JUDGE_SYSTEM = (
    "You audit music question-answering benchmarks. A listener hears a short music clip and "
    "answers a multiple-choice question about it. The listener sees only the audio, the "
    "question and the options: never a caption, description, tags or any metadata."
)
JUDGE_TEMPLATE = (
    "Question: {question}\n"
    "Correct answer: {correct}\n"
    "Other options:\n{distractors}\n\n"
    "Can a careful listener with good musical knowledge pick the correct answer from the "
    "audio alone? Reply 'unanswerable' if the question or an option refers to text the "
    "listener never sees, asks for facts that cannot be heard (where or when it was "
    "recorded, who wrote it), or if the correct answer does not actually answer the "
    "question.\n"
    "Reply with exactly two lines:\n"
    "VERDICT: answerable or VERDICT: unanswerable\n"
    "REASON: one short sentence"
)

_VERDICT = re.compile(r"verdict\W{0,5}\s*(un)?answerable\b", re.IGNORECASE)
_REASON = re.compile(r"reason\W{0,5}\s*(.+)", re.IGNORECASE)


@dataclass
class JudgeVerdict:
    """The judge's reading of one question.

    Attributes:
        verdict: ``answerable``, ``unanswerable`` or ``None`` (no readable verdict).
        reason: The ``REASON:`` line, when given.
        status: ``ok``, ``parse_failure`` (reply without a verdict) or ``call_failure``.
        reply: The raw reply (``None`` after a call failure).
        error: The last error of a call failure.
    """

    verdict: str | None
    reason: str | None = None
    status: str = "ok"
    reply: str | None = None
    error: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def judge_messages(question: Question, *, max_distractors: int = 8) -> list[dict[str, str]]:
    """Chat messages asking whether ``question`` can be answered from the audio.

    Args:
        question: The question; at most ``max_distractors`` distractors are shown (pools
            can hold dozens).
        max_distractors: Distractors shown, in their stored order.
    """
    shown = question.distractors[:max_distractors]
    more = len(question.distractors) - len(shown)
    lines = "\n".join(f"- {d}" for d in shown) or "- (none)"
    if more > 0:
        lines += f"\n- ... and {more} more"
    user = JUDGE_TEMPLATE.format(
        question=question.question, correct=question.correct_answer, distractors=lines
    )
    return [{"role": "system", "content": JUDGE_SYSTEM}, {"role": "user", "content": user}]


def parse_verdict(reply: str | None) -> JudgeVerdict:
    """Read ``VERDICT: ...`` (the last one) and ``REASON: ...`` from a reply.

    >>> parse_verdict("VERDICT: unanswerable\\nREASON: asks about the caption").verdict
    'unanswerable'
    >>> parse_verdict("I think it is fine.").status
    'parse_failure'
    """
    if not reply:
        return JudgeVerdict(None, status="parse_failure", reply=reply)
    found = _VERDICT.findall(reply)
    reason = _REASON.search(reply)
    if not found:
        return JudgeVerdict(None, status="parse_failure", reply=reply)
    verdict = "unanswerable" if found[-1] else "answerable"
    return JudgeVerdict(verdict, reason.group(1).strip() if reason else None, reply=reply)


class AnswerabilityJudge:
    """Ask a harness LM whether each question can be answered from the audio.

    Args:
        lm: An lm-eval ``LM`` with ``generate_until`` and ``apply_chat_template``.
        max_gen_toks: Token budget of one reply.
        max_distractors: Distractors shown per question.
        retries: Retries of a failing call (exponential backoff from ``backoff`` s).
        backoff: First retry delay in seconds.
        sleep: Called between retries (tests pass a no-op).
    """

    def __init__(
        self,
        lm: Any,
        *,
        max_gen_toks: int = 128,
        max_distractors: int = 8,
        retries: int = 2,
        backoff: float = 2.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.lm = lm
        self.max_gen_toks = max_gen_toks
        self.max_distractors = max_distractors
        self.retries = retries
        self.backoff = backoff
        self.sleep = sleep
        self.n_calls = 0

    def _instance(self, question: Question) -> Any:
        from lm_eval.api.instance import Instance

        messages = judge_messages(question, max_distractors=self.max_distractors)
        context = self.lm.apply_chat_template(messages, add_generation_prompt=True)
        gen_kwargs = {
            "max_gen_toks": self.max_gen_toks,
            "temperature": 0.0,
            "do_sample": False,
            "until": [],
        }
        return Instance(
            request_type="generate_until",
            doc={},
            arguments=(context, gen_kwargs),
            idx=0,
            metadata=("lm_eval_rul_judge", 0, 1),
        )

    def judge(self, question: Question) -> JudgeVerdict:
        """One question's verdict (a call failure after the retries is recorded, not raised)."""
        error = None
        for attempt in range(self.retries + 1):
            self.n_calls += 1
            try:
                (reply,) = self.lm.generate_until([self._instance(question)], disable_tqdm=True)
            except Exception as err:  # noqa: BLE001 - any failure of the judge's call
                error = f"{type(err).__name__}: {err}"
                if attempt < self.retries:
                    delay = self.backoff * 2**attempt
                    logger.warning(
                        "judge call for question %r failed (%s); retry %d/%d in %.1fs",
                        question.id, error, attempt + 1, self.retries, delay,
                    )  # fmt: skip
                    self.sleep(delay)
                continue
            return parse_verdict(reply if isinstance(reply, str) else None)
        return JudgeVerdict(None, status="call_failure", error=error)

    def judge_all(
        self, questions: Sequence[Question], *, chunk_size: int = 32, progress: bool = True
    ) -> dict[str, JudgeVerdict]:
        """``{question id: verdict}``.

        Questions go to the model ``chunk_size`` at a time (so an API model's
        ``num_concurrent`` and an ``hf`` model's batching apply); when a chunk's call
        fails, its questions are retried one by one (:meth:`judge`).
        """
        from tqdm.auto import tqdm

        if chunk_size < 1:
            raise ValueError(f"chunk_size must be at least 1, got {chunk_size}")
        verdicts: dict[str, JudgeVerdict] = {}
        bar = tqdm(total=len(questions), desc="judge", unit="question", disable=not progress)
        for start in range(0, len(questions), chunk_size):
            chunk = list(questions[start : start + chunk_size])
            self.n_calls += 1
            try:
                replies = self.lm.generate_until(
                    [self._instance(q) for q in chunk], disable_tqdm=True
                )
            except Exception as err:  # noqa: BLE001 - retried question by question
                logger.warning("judge call for %d questions failed (%r)", len(chunk), err)
                replies = None
            for position, q in enumerate(chunk):
                if replies is None:
                    verdicts[q.id] = self.judge(q)
                else:
                    reply = replies[position]
                    verdicts[q.id] = parse_verdict(reply if isinstance(reply, str) else None)
            bar.update(len(chunk))
        bar.close()
        return verdicts


def verdict_counts(verdicts: dict[str, JudgeVerdict]) -> dict[str, int]:
    """Counts of ``answerable``, ``unanswerable``, ``parse_failure``, ``call_failure``."""
    counts = dict.fromkeys((*VERDICTS, "parse_failure", "call_failure"), 0)
    for v in verdicts.values():
        counts[v.verdict if v.status == "ok" else v.status] += 1
    return counts
