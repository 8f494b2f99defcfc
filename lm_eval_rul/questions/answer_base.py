"""Where a table's numeric answers count from: settled by the file (an answer 0, an answer
equal to its item's number of options, numbered choice columns: :func:`.columns.index_base`)
or by ``--metadata mc_answer_base``; a file that settles neither is refused in one line
showing both readings (:func:`unsettled_base`), never read from a guessed base, which would
shift every gold answer by one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .columns import _as_number, _text_position
from .schema import OPTION_LETTERS, DataValidationError

__all__ = ["names_an_option", "answer_base_value", "unsettled_base"]


def names_an_option(value: Any, options: Sequence[str | None]) -> bool:
    """Whether an answer cell is one of its options' own text (``"3"`` among ``2, 3, 4``):
    read as text first, so it says nothing about where numbers count from."""
    return value is not None and _text_position(str(value).strip(), options) is not None


def answer_base_value(value: Any, where: str) -> int | None:
    """``--metadata mc_answer_base`` as 0 or 1 (None when not given).

    Raises:
        DataValidationError: any other value.
    """
    if value in (None, ""):
        return None
    number = _as_number(value)
    if number not in (0, 1):
        raise DataValidationError(
            where,
            [
                f"--metadata mc_answer_base={value!r}: give 0 (the first choice is 0) "
                "or 1 (the first choice is 1)"
            ],
        )
    return number


def unsettled_base(
    where: str,
    answer: str,
    choices: str | tuple[str, ...],
    rows: Sequence[tuple[Any, Sequence[str | None]]],
) -> None:
    """Raise the one line of a numeric answer column whose base the file does not settle:
    the column, the first rows read from 0 and from 1, and the keys that settle it.

    Raises:
        DataValidationError: always.
    """
    shown = [(a, o) for a, o in rows if _as_number(a) is not None][:2]

    def reading(base: int) -> str:
        read = []
        for value, options in shown:
            at = _as_number(value) - base  # type: ignore[operator]
            inside = 0 <= at < len(options) and options[at] is not None
            text = f"{OPTION_LETTERS[at]} {str(options[at])[:30]!r}" if inside else "no choice"
            read.append(f"{value} -> {text}")
        return "; ".join(read)

    columns = f"{choices!r}" if isinstance(choices, str) else f"{choices[0]}..{choices[-1]}"
    raise DataValidationError(
        where,
        [
            f"the answer column {answer!r} holds numbers over the choices {columns}, none 0 "
            f"and none equal to its item's number of choices, so nothing says where they "
            f"count from: from 0 the first rows read {reading(0)}; from 1 {reading(1)}"
        ],
        hint="Say which: --metadata mc_answer_base=1 (or 0), or map numbered choice columns "
        "(option_1.. count from 1) with --metadata mc_columns; nothing was loaded "
        "(docs/your_own_benchmark.md).",
    )
