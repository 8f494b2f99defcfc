"""The per-task request counts ``lalm-api`` prints before it sends anything.

An API run costs per request, so once the harness has built the requests of a request
type (all letters of the multiple-choice tasks, or all prompts of the generation tasks)
and before any of them is sent, ``lalm-api`` logs one table: per task, the questions,
the harness's requests, the HTTP requests they take, how many the resume cache already
answers, and how many will be sent.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["TaskCount", "RequestCounts"]

_COLUMNS = ("questions", "harness requests", "HTTP requests", "cached", "to send")


@dataclass
class TaskCount:
    """The counts of one task (see the module doc)."""

    questions: set = field(default_factory=set)
    requests: int = 0
    http: int = 0
    cached: int = 0

    def row(self) -> tuple[int, int, int, int, int]:
        return (len(self.questions), self.requests, self.http, self.cached, self.http - self.cached)


class RequestCounts:
    """Counts of one request type, by task.

    Args:
        kind: ``loglikelihood`` or ``generate_until``.
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.tasks: dict[str, TaskCount] = {}

    def _task(self, task: str | None) -> TaskCount:
        return self.tasks.setdefault(task or "(no task)", TaskCount())

    def request(self, task: str | None, question: object) -> None:
        """Count one harness request of ``question`` (any hashable identity)."""
        count = self._task(task)
        count.requests += 1
        count.questions.add(question)

    def http(self, task: str | None, *, cached: bool) -> None:
        """Count one HTTP request the requests take (``cached``: the cache answers it)."""
        count = self._task(task)
        count.http += 1
        count.cached += int(cached)

    @property
    def to_send(self) -> int:
        return sum(c.http - c.cached for c in self.tasks.values())

    def table(self, header: str) -> str:
        """``header`` then one aligned row per task and a total row."""
        rows = [(name, *count.row()) for name, count in sorted(self.tasks.items())]
        totals = tuple(sum(row[i] for row in rows) for i in range(1, 6))
        rows.append(("total", *totals))
        width = max(len("task"), *(len(row[0]) for row in rows))
        lines = [header, "  " + "task".ljust(width) + "".join(f"{c:>18}" for c in _COLUMNS)]
        for name, *numbers in rows:
            lines.append("  " + name.ljust(width) + "".join(f"{n:>18}" for n in numbers))
        return "\n".join(lines)
