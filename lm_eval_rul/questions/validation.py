"""Rows of a question file turned into validated :class:`Question` records.

Every problem of every row is collected first and raised together in one
:class:`~lm_eval_rul.questions.schema.DataValidationError` naming the ids, so a file is
either loaded whole or not at all: no question is silently lost.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .schema import MAX_LISTED, DataValidationError, Question, normalize_answer, too_many_options

__all__ = ["rows_to_questions", "ACCEPTED_SCHEMAS"]

logger = logging.getLogger(__name__)

#: A UTF-16 surrogate on its own: JSON's ``"\ud800"`` escape parses into one, but it is not
#: text (no UTF-8 encoding), and fails later inside ``datasets`` or a tokenizer.
_SURROGATE = re.compile("[\ud800-\udfff]")
_TEXT_FIELDS = ("id", "question", "correct_answer", "caption", "track", "source")


#: The question-file schemas the readers accept (one source: every field error names them).
ACCEPTED_SCHEMAS = (
    "RUL JSON (RUL-MuchoMusic.json: per question id an object with question, "
    "correct_answer, distractors, PI; or a list of such objects with an id)",
    "MuChoMusic CSV (muchomusic.csv: an id column, question, correct_answer, "
    "distractor_1_answer .. distractor_3_answer, dataset, dataset_identifier)",
    "generic CSV, JSON lines or parquet (id, question, correct_answer, distractors as a "
    "JSON list or a|b|c, or columns distractor_1, distractor_2, ...)",
    "a published table (CSV/TSV, JSON lines, parquet, a save_to_disk folder: question or "
    "instruction, choices or columns choice_a.. / option_1.., answer as text, letter or "
    "index, an optional id and audio column; docs/your_own_benchmark.md)",
)
_REQUIRED = ("id", "question", "correct_answer", "distractors")


def _schemas() -> str:
    return "Question files are " + "; ".join(ACCEPTED_SCHEMAS) + "."


def _missing_fields(row: dict[str, Any]) -> list[str]:
    """Every required field ``row`` lacks (``question_id`` stands for ``id``)."""
    values = {**row, "id": row.get("id", row.get("question_id"))}
    return [f for f in _REQUIRED if values.get(f) is None or str(values.get(f)).strip() == ""]


def _wrong_schema(path: Path, missing: set[str], rows: list[dict[str, Any]]) -> None:
    """Every row lacks the same fields: the file is of another schema, not bad rows."""
    fields = list(dict.fromkeys(k for row in rows[:50] for k in row))
    raise DataValidationError(
        path,
        [
            f"no row has the field(s) {', '.join(repr(f) for f in _REQUIRED if f in missing)} "
            f"(its {len(rows)} row(s) hold {', '.join(map(repr, fields)) or 'no fields'}): the "
            "file is not in a question schema this tool reads"
        ],
        hint=_schemas() + " Rename the columns, or convert the file.",
    )


def _surrogate_field(row: dict[str, Any]) -> str | None:
    """The first field of ``row`` holding a lone surrogate escape, or None."""
    texts = [v for v in (row.get(n) for n in _TEXT_FIELDS) if isinstance(v, str)]
    distractors = row.get("distractors")
    if isinstance(distractors, list | tuple):
        texts += [v for v in distractors if isinstance(v, str)]
    if not _SURROGATE.search("\x00".join(texts)):  # one search per row: the usual case
        return None
    for name in _TEXT_FIELDS:
        value = row.get(name)
        if isinstance(value, str) and _SURROGATE.search(value):
            return repr(name)
    if isinstance(distractors, list | tuple):
        for i, value in enumerate(distractors):
            if isinstance(value, str) and _SURROGATE.search(value):
                return f"'distractors' (distractor {i + 1})"
    return None


def rows_to_questions(
    path: Path,
    rows: Iterable[dict[str, Any]],
    *,
    n_distractors: int | None,
    min_distractors: int = 1,
    check_options: bool = True,
    problems: Iterable[str] = (),
) -> list[Question]:
    """Validate rows into questions; every problem is collected, then raised together.

    ``check_options`` rejects empty distractors, a distractor equal to the correct answer
    and repeated distractors (pools skip it: :func:`read_pools` cleans those instead).
    ``problems``: what a reader found before (listed first); a row with ``_problem`` is
    one a reader could not read (its id still counted), so every problem is named in one
    pass.
    """
    questions: list[Question] = []
    problems = list(problems)
    near_duplicates: list[str] = []
    seen: set[str] = set()
    missing_by_row: list[frozenset[str]] = []  # the fields each row lacks (empty: none)
    kept_rows: list[dict[str, Any]] = []
    for position, row in enumerate(rows):
        if "_bad" in row:
            problems.append(f"row {position}: expected an object, got {row['_bad']!r:.60}")
            missing_by_row.append(frozenset())
            continue
        kept_rows.append(row)
        missing = _missing_fields(row)
        missing_by_row.append(frozenset(missing))
        qid = row.get("id", row.get("question_id"))
        where = f"id {str(qid).strip()!r}" if "id" not in missing else f"row {position}"
        if missing:  # every field it lacks at once, not one per run
            problems.append(f"{where}: missing field(s) {', '.join(repr(m) for m in missing)}")
            continue
        qid = str(qid).strip()
        field = _surrogate_field(row)
        if field is not None:
            problems.append(
                f"{where}: field {field} holds a lone surrogate escape (such as \"\\ud800\"), "
                "which is not text; fix or remove that escape"
            )
            continue
        if qid in seen:
            problems.append(f"{where}: appears more than once")
            continue
        seen.add(qid)
        if "_problem" in row:
            problems.append(str(row["_problem"]))
            continue
        distractors = row["distractors"]
        if not isinstance(distractors, list | tuple) or not all(
            isinstance(d, str) for d in distractors
        ):
            problems.append(f"{where}: 'distractors' must be a list of strings")
            continue
        distractors = [d.strip() for d in distractors]
        if n_distractors is not None and len(distractors) != n_distractors:
            problems.append(
                f"{where}: expected {n_distractors} distractors, found {len(distractors)}"
            )
            continue
        if len(distractors) < min_distractors:
            problems.append(f"{where}: needs at least {min_distractors} distractors")
            continue
        correct = str(row["correct_answer"]).strip()
        crowded = too_many_options(where, len(distractors) + 1) if check_options else None
        if crowded:  # pools (unchecked options) are offered a few at a time
            problems.append(crowded)
            continue
        if check_options:
            empty = [i for i, d in enumerate(distractors) if not d]
            if empty:
                problems.append(f"{where}: distractor {empty[0] + 1} is empty")
                continue
            norm_correct = normalize_answer(correct)  # once per question, not per pair
            norms = [normalize_answer(d) for d in distractors]
            equal = [d for d, norm in zip(distractors, norms, strict=True) if norm == norm_correct]
            if equal:
                problems.append(f"{where}: distractor {equal[0]!r} equals the correct answer")
                continue
            if len(set(distractors)) != len(distractors):
                problems.append(f"{where}: two distractors are the same text")
                continue
            if len(set(norms)) != len(distractors):
                near_duplicates.append(qid)
        pi = row.get("PI", row.get("pi"))
        try:
            pi = None if pi in (None, "") else float(pi)
        except (TypeError, ValueError):
            problems.append(f"{where}: PI {pi!r} is not a number")
            continue
        questions.append(
            Question(
                id=qid,
                question=str(row["question"]).strip(),
                correct_answer=correct,
                distractors=tuple(distractors),
                caption=(str(row["caption"]).strip() or None) if row.get("caption") else None,
                pi=pi,
                track=str(row["track"]) if row.get("track") else None,
                source=str(row["source"]) if row.get("source") else None,
                audio=row.get("_audio"),  # where the file itself says the clip is
            )
        )
    if problems:
        if len(kept_rows) > 1 and len(set(missing_by_row)) == 1 and missing_by_row[0]:
            _wrong_schema(path, set(missing_by_row[0]), kept_rows)
        hint = "Fix or remove these rows; nothing was loaded, so no question is silently lost."
        if any(missing_by_row):
            hint += " " + _schemas()
        raise DataValidationError(path, problems, hint=hint)
    if not questions:
        raise DataValidationError(path, ["the file holds no questions"])
    if near_duplicates:
        # The released RUL-MuChoMusic has three such rows (e.g. 'Tom-Tom' / 'Tom-tom'):
        # they are distinct options as shown, so they are kept as released.
        logger.warning(
            "%s: %d question(s) have distractors differing only in case or spacing, kept as "
            "released: ids %s",
            path,
            len(near_duplicates),
            ", ".join(near_duplicates[:MAX_LISTED]),
        )
    return questions
