"""``lm-eval-rul parse``: how an answer is read, without a run (same parser, same vocabularies).

One answer (``TEXT``): the reading (labels, true/false, or the chosen option) and why, one
line per mention (kept, or dropped and the reason) or per cue. Many (``--jsonl FILE``):
one JSON object a line in (``id``, ``task``, ``kind``, ``text``, optional ``options``),
one a line out (``id`` and ``labels``, or ``id`` and ``answer``). Every line is checked
before anything is printed; a bad one stops with its line number (exit 2).
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import UserInputError

__all__ = ["KINDS", "ParseInputError", "add_parser", "read_jsonl", "reading"]

#: What an answer answers: an open question (labels), true/false, a choice of two.
KINDS: tuple[str, ...] = ("open", "truefalse", "binary")


class ParseInputError(UserInputError, ValueError):
    """A bad ``parse`` request: unknown task or kind, a binary case without two options,
    an unreadable ``--jsonl`` line."""


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "parse",
        help="Show how the factual parser reads an answer (labels, true/false, a choice)",
        description=(
            "Read a model's answer the way a factual run reads it (the lexicon parser, the "
            "task's vocabulary) and say why: each mention kept or dropped and the reason. "
            "--kind truefalse reads a true/false answer, --kind binary the choice between "
            "--options A,B."
        ),
        epilog=textwrap.dedent(
            """\
            examples:
              lm-eval-rul parse --task instrument "A solo pianist, joined later by a violinist."
              lm-eval-rul parse --task composer --kind binary --options Haydn,Brahms \\
                  "Haydn or Brahms? I think Brahms."
              lm-eval-rul parse --task mood --kind truefalse "No problem! The answer is true."
              lm-eval-rul parse --jsonl answers.jsonl --fma_genres fma_metadata/genres.csv
            """
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("text", nargs="?", metavar="TEXT", help="the answer to read")
    parser.add_argument("--task", help="instrument, composer, genre, regional, mood, timesig")
    parser.add_argument("--kind", default="open", help="open (default), truefalse, binary")
    parser.add_argument("--options", help="the two options of a binary choice: A,B")
    parser.add_argument(
        "--jsonl",
        metavar="FILE",
        help="one JSON object a line: id, task, kind, text, optional options",
    )
    parser.add_argument(
        "--fma_genres", metavar="FILE", help="FMA's genres.csv (fma_metadata/), for genre"
    )
    parser.set_defaults(func=_execute)


def _check(task: Any, kind: Any, options: Any, where: str) -> tuple[str, str, list[str] | None]:
    from ..factual.reading.labels import TASKS

    if task not in TASKS:
        raise ParseInputError(f"{where}unknown task {task!r}: use one of {', '.join(TASKS)}")
    if kind not in KINDS:
        raise ParseInputError(f"{where}unknown kind {kind!r}: use one of {', '.join(KINDS)}")
    if options is not None and (
        not isinstance(options, list)
        or len(options) != 2
        or not all(isinstance(o, str) and o.strip() for o in options)
    ):
        raise ParseInputError(f"{where}options must be two labels, got {options!r}")
    if kind == "binary" and options is None:
        raise ParseInputError(f"{where}a binary answer needs its two options (A,B)")
    return task, kind, [o.strip() for o in options] if options is not None else None


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """The cases of a ``--jsonl`` file, each checked; the first bad line raises
    :class:`ParseInputError` naming it."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise ParseInputError(f"--jsonl {path}: cannot be read ({error.strerror})") from None
    cases = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path} line {number}: "
        try:
            case = json.loads(line)
        except json.JSONDecodeError as error:
            raise ParseInputError(f"{where}not JSON ({error.msg})") from None
        if not isinstance(case, dict):
            raise ParseInputError(f"{where}not a JSON object")
        missing = [key for key in ("id", "task", "kind", "text") if key not in case]
        if missing:
            raise ParseInputError(
                f"{where}missing {', '.join(map(repr, missing))} (each line needs id, task, "
                "kind, text)"
            )
        if not isinstance(case["text"], str):
            raise ParseInputError(f"{where}'text' must be a string")
        _check(case["task"], case["kind"], case.get("options"), where)
        cases.append(case)
    return cases


def reading(
    task: str, kind: str, text: str, options: Sequence[str] | None, genres_csv: str | None
) -> tuple[Any, list[str]]:
    """``(value, why)``: labels (open), True/False/None, or option 0/1/None, and the lines
    that explain it."""
    from ..factual.reading.answers import read_choice, read_truefalse
    from ..factual.reading.lexicon import lexicon_for
    from ..factual.reading.parser import explain, parse_labels

    if kind == "truefalse":
        found = read_truefalse(text)
        return found.value, list(found.why)
    lexicon = lexicon_for(task, _tree(genres_csv) if task == "genre" else None)
    if kind == "binary":
        found = read_choice(text, list(options or ()), lexicon)
        return found.value, [*found.why, *explain(parse_labels(text, lexicon))]
    result = parse_labels(text, lexicon)
    return list(result.labels), explain(result)


@functools.lru_cache(maxsize=2)
def _tree(genres_csv: str | None) -> Any:
    from ..factual.reading.genres import read_genre_tree

    if not genres_csv:
        raise ParseInputError(
            "the genre task reads FMA's titles: pass --fma_genres FILE (genres.csv in "
            "fma_metadata/)"
        )
    return read_genre_tree(genres_csv)


def _json_line(case: Mapping[str, Any], value: Any) -> str:
    key = "labels" if case["kind"] == "open" else "answer"
    return json.dumps({"id": case["id"], key: value}, ensure_ascii=False)


def _execute(args: argparse.Namespace) -> None:
    """Print the reading(s); bad input raises a ``UserInputError`` (printed, exit 2)."""
    if args.jsonl:
        if args.text is not None:
            raise ParseInputError("give either TEXT or --jsonl FILE, not both")
        cases = read_jsonl(args.jsonl)
        if any(c["task"] == "genre" and c["kind"] != "truefalse" for c in cases):
            _tree(args.fma_genres)  # before any output: a missing or bad genres.csv stops here
        out = []
        for case in cases:
            value, _ = reading(
                case["task"], case["kind"], case["text"], case.get("options"), args.fma_genres
            )
            out.append(_json_line(case, value))
        sys.stdout.write("".join(f"{line}\n" for line in out))
        return
    if args.text is None:
        raise ParseInputError("nothing to read: give the answer TEXT or --jsonl FILE")
    if args.task is None:
        from ..factual.reading.labels import TASKS

        raise ParseInputError(
            f"which task's labels does the answer name? Give --task (one of {', '.join(TASKS)}),"
            f" e.g. lm-eval-rul parse --task instrument {json.dumps(args.text)}"
        )
    options = args.options.split(",") if args.options is not None else None
    task, kind, options = _check(args.task, args.kind, options, "")
    value, why = reading(task, kind, args.text, options, args.fma_genres)
    print(f"task {task}, {kind} answer")
    if kind == "open":
        print(f"labels: {', '.join(value) if value else '(none: an empty prediction)'}")
    elif kind == "truefalse":
        print(f"answer: {'unreadable' if value is None else str(value).lower()}")
    else:
        assert options is not None
        chosen = "unreadable" if value is None else f"{value} ({options[value]})"
        print(f"choice: {chosen}")
    for line in why:
        print(f"  {line}")
