"""An optional LLM judge of answerability, beside (never instead of) the audit rules.

Any harness model with ``generate_until`` can judge (``local-chat-completions`` for an
OpenAI-compatible server, ``hf``, ``vllm``...), exactly as ``build``'s generator is
driven (:class:`~lm_eval_rul.distractors.generation.DistractorGenerator`). The judge sees the
question and its options (the correct one marked) and must answer with one line
``VERDICT: answerable`` or ``VERDICT: unanswerable`` and a ``REASON:`` line. A reply
without a readable verdict is a *parse failure*, and a call that still fails after its
retries a *call failure*; both are counted and stored as such, never guessed.

Failing calls follow the package's retry policy (:mod:`lm_eval_rul.retries`): a transient
failure is retried with exponential backoff; an error no retry can fix (HTTP
400/401/403/404/405/422, an invalid URL, a programming error) stops the run at once with
:class:`JudgeFailure`, and so does the same error on each of the first
:data:`~lm_eval_rul.retries.FAIL_FAST_ITEMS` questions (a wrong URL or model name).
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ..errors import UserInputError
from ..questions import Question
from ..retries import FAIL_FAST_ITEMS, SameErrorFromStart, error_text, permanent_error, with_retries

__all__ = [
    "JUDGE_SYSTEM",
    "JUDGE_TEMPLATE",
    "VERDICTS",
    "JudgeVerdict",
    "JudgeFailure",
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


class JudgeFailure(UserInputError, RuntimeError):
    """The judge cannot work: an error no retry fixes, or the same error from the start."""


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
        name: The judge in messages (e.g. ``local-chat-completions``).
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
        name: str = "the judge model",
        max_gen_toks: int = 128,
        max_distractors: int = 8,
        retries: int = 2,
        backoff: float = 2.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.lm = lm
        self.name = name
        self.max_gen_toks = max_gen_toks
        self.max_distractors = max_distractors
        self.retries = retries
        self.backoff = backoff
        self.sleep = sleep
        self.n_calls = 0
        self._from_start = SameErrorFromStart(FAIL_FAST_ITEMS)

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

    def _call(self, questions: Sequence[Question]) -> list[Any]:
        self.n_calls += 1
        return self.lm.generate_until([self._instance(q) for q in questions], disable_tqdm=True)

    def _stop_if_hopeless(self, question_id: str, error: BaseException) -> None:
        """Raise :class:`JudgeFailure` when no retry, and no later question, can succeed."""
        reason = permanent_error(error, args_option="--judge_args")
        if reason is not None:
            what = f"failed with an error no retry can fix ({reason}) on question {question_id!r}"
        elif self._from_start.failed(error):
            what = (
                f"failed on each of the first {FAIL_FAST_ITEMS} questions with the same error "
                f"({self.retries} retries each)"
            )
        else:
            return
        raise JudgeFailure(
            f"diagnose stopped: the judge ({self.name}) {what}. Last error: "
            f"{error_text(error)}. Fix --judge / --judge_args and rerun."
        ) from error

    def judge(self, question: Question) -> JudgeVerdict:
        """One question's verdict; a transient failure that outlasts the retries is recorded
        as a ``call_failure``, not raised.

        Raises:
            JudgeFailure: At once on an error no retry can fix, or when the first
                :data:`~lm_eval_rul.retries.FAIL_FAST_ITEMS` questions all fail with the
                same error.
        """
        try:
            (reply,) = with_retries(
                lambda: self._call([question]),
                retries=self.retries,
                backoff=self.backoff,
                what=f"judge call for question {question.id!r}",
                sleep=self.sleep,
            )
        except Exception as err:  # noqa: BLE001 - recorded as a call failure, or stops the run
            self._stop_if_hopeless(question.id, err)
            return JudgeVerdict(None, status="call_failure", error=error_text(err))
        self._from_start.succeeded()
        return parse_verdict(reply if isinstance(reply, str) else None)

    def judge_all(
        self, questions: Sequence[Question], *, chunk_size: int = 32, progress: bool = True
    ) -> dict[str, JudgeVerdict]:
        """``{question id: verdict}``.

        Questions go to the model ``chunk_size`` at a time (so an API model's
        ``num_concurrent`` and an ``hf`` model's batching apply); when a chunk's call
        fails with an error a retry may fix, its questions are retried one by one
        (:meth:`judge`).

        Raises:
            JudgeFailure: See :meth:`judge`; a chunk's error no retry can fix stops the run
                at once, before any question is asked alone.
        """
        from tqdm.auto import tqdm

        if chunk_size < 1:
            raise ValueError(f"chunk_size must be at least 1, got {chunk_size}")
        verdicts: dict[str, JudgeVerdict] = {}
        bar = tqdm(total=len(questions), desc="judge", unit="question", disable=not progress)
        try:
            for start in range(0, len(questions), chunk_size):
                chunk = list(questions[start : start + chunk_size])
                try:
                    replies = self._call(chunk)
                except Exception as err:  # noqa: BLE001 - retried question by question
                    reason = permanent_error(err, args_option="--judge_args")
                    if reason is not None:
                        self._stop_if_hopeless(chunk[0].id, err)
                    logger.warning("judge call for %d questions failed (%r)", len(chunk), err)
                    replies = None
                else:
                    self._from_start.succeeded()
                for position, q in enumerate(chunk):
                    if replies is None:
                        verdicts[q.id] = self.judge(q)
                    else:
                        reply = replies[position]
                        verdicts[q.id] = parse_verdict(reply if isinstance(reply, str) else None)
                bar.update(len(chunk))
        finally:
            bar.close()
        return verdicts


def verdict_counts(verdicts: dict[str, JudgeVerdict]) -> dict[str, int]:
    """Counts of ``answerable``, ``unanswerable``, ``parse_failure``, ``call_failure``."""
    counts = dict.fromkeys((*VERDICTS, "parse_failure", "call_failure"), 0)
    for v in verdicts.values():
        counts[v.verdict if v.status == "ok" else v.status] += 1
    return counts
