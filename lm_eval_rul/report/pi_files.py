"""``lm-eval-rul pi`` output files read back for the report (``--pi [NAME=]FILE``)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .samples import RunReadError

__all__ = ["PIFile", "read_pi_file"]


@dataclass(frozen=True)
class PIFile:
    """The rows of a ``lm-eval-rul pi`` JSONL file.

    Attributes:
        path: The file.
        pi: Question id -> PI.
        chance: Question id -> the PI of a uniform guess, ``1 - 1/n_options`` (the row's
            ``chance``, else from the options of its logged ``prompts``); ids whose row
            carries neither are absent.
    """

    path: str
    pi: dict[str, float]
    chance: dict[str, float]


def _row_chance(row: dict[str, Any], where: str, qid: str) -> float | None:
    """``chance`` of a PI row, else ``1 - 1/n`` averaged over its prompts' options."""
    if row.get("chance") is not None:
        try:
            chance = float(row["chance"])
        except (TypeError, ValueError):
            chance = math.nan
        if not 0.0 <= chance < 1.0:
            raise RunReadError(
                f"{where}: chance of id {qid} is {row['chance']!r}, not in [0, 1) "
                "(1 - 1/number of options)"
            )
        return chance
    prompts = row.get("prompts")
    if isinstance(prompts, list) and prompts:
        sizes = [len(p["options"]) for p in prompts if isinstance(p, dict) and p.get("options")]
        if len(sizes) == len(prompts):
            return sum(1.0 - 1.0 / n for n in sizes) / len(sizes)
    options = row.get("options")
    if isinstance(options, list) and options:
        return 1.0 - 1.0 / len(options)
    return None


def read_pi_file(path: str | Path) -> PIFile:
    """The PI (and chance level) of each question in a ``lm-eval-rul pi`` JSONL file.

    Rows are ``{"id": ..., "pi": ..., "chance": ...}``; ``chance`` may be left out.

    Raises:
        RunReadError: Unreadable line, missing ``id``/``pi``, a PI outside [0, 1], a
            chance outside [0, 1), or a duplicate id; the message names the file and line.
    """
    path = Path(path)
    if not path.is_file():
        raise RunReadError(f"PI file {str(path)!r} does not exist")
    values: dict[str, float] = {}
    chances: dict[str, float] = {}
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                row = json.loads(line)
            except json.JSONDecodeError as error:
                raise RunReadError(f"{where}: not JSON ({error.msg})") from None
            if not isinstance(row, dict) or "id" not in row or "pi" not in row:
                raise RunReadError(f'{where}: expected a row {{"id": ..., "pi": ...}}, got {row!r}')
            qid = str(row["id"])
            try:
                pi = float(row["pi"])
            except (TypeError, ValueError):
                message = f"{where}: pi of id {qid} is {row['pi']!r}, not a number"
                raise RunReadError(message) from None
            if not 0.0 <= pi <= 1.0:
                raise RunReadError(f"{where}: pi of id {qid} is {pi}, outside [0, 1]")
            if qid in values:
                raise RunReadError(f"{where}: id {qid} appears twice")
            values[qid] = pi
            chance = _row_chance(row, where, qid)
            if chance is not None:
                chances[qid] = chance
    if not values:
        raise RunReadError(f"PI file {path} has no rows")
    return PIFile(str(path), values, chances)
