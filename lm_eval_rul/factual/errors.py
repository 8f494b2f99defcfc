"""Errors of the factual tasks' data: every problem named at once, before the model loads."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..errors import UserInputError

__all__ = ["FactualInputError", "AudioFilesError", "PROBLEM_KINDS", "SKIP_PROBLEMS_HINT"]

#: Kinds of file problem :class:`AudioFilesError` reports, in the order it lists them.
PROBLEM_KINDS: tuple[str, ...] = ("missing", "unreadable", "checksum mismatch")
_LISTED = 10
#: The ``--metadata`` that leaves items with unusable audio out instead of stopping the run
#: (read by :func:`lm_eval_rul.factual.datasets.sources.prepare_task`).
SKIP_PROBLEMS_HINT = """--metadata '{..., "on_audio_problem": "skip"}'."""


class FactualInputError(UserInputError, ValueError):
    """Bad input for a factual task: a table, a folder, an option; the message says which."""


class AudioFilesError(FactualInputError):
    """Audio files of a factual task are missing, unreadable or fail their checksum.

    Attributes:
        problems: ``{kind: [(item id, path, detail), ...]}`` for each kind of
            :data:`PROBLEM_KINDS` that occurred.
        total: Number of items checked.
    """

    def __init__(
        self,
        problems: Mapping[str, Sequence[tuple[str, str, str]]],
        *,
        total: int,
        dataset: str,
        hint: str = "",
    ) -> None:
        self.problems = {k: list(v) for k, v in problems.items() if v}
        self.total = total
        count = sum(len(v) for v in self.problems.values())
        summary = ", ".join(f"{len(self.problems[k])} {k}" for k in PROBLEM_KINDS if k in self)
        lines = [f"{dataset}: {count} of {total} audio files cannot be used ({summary})."]
        for kind in PROBLEM_KINDS:
            rows = self.problems.get(kind, [])
            for item_id, path, detail in rows[:_LISTED]:
                lines.append(
                    f"  {kind}: item {item_id}: {path}" + (f" ({detail})" if detail else "")
                )
            if len(rows) > _LISTED:
                lines.append(f"  ... and {len(rows) - _LISTED} more {kind}")
        lines.append(
            hint
            or "Fix: download or re-extract the files named above into the folder given with "
            "--metadata, or pass sample_size to evaluate a subset that has its files, or "
            f"leave these items out (counted in the results): {SKIP_PROBLEMS_HINT}"
        )
        super().__init__("\n".join(lines))

    def __contains__(self, kind: object) -> bool:
        return kind in self.problems
