"""Question schemas, loaders and validation: one place for every data format we read.

Formats (DESIGN.md §2):

* the released RUL-MuChoMusic JSON: ``{id: {question, caption, correct_answer,
  distractors[4], PI}}`` (a list of such rows with an ``id`` field is accepted too);
* the released distractor pools: the same layout with 24–71 ``distractors``;
* the MuChoMusic CSV (``question, dataset, dataset_identifier, correct_answer,
  distractor_{1,2,3}_answer, ...`` plus a question id);
* a JSONL / CSV / parquet of ``id, question, correct_answer, distractors[, caption]``.

Loaders return :class:`Question` objects; every malformed row is reported in one
:class:`DataValidationError` that names the file, the ids and the fix.
"""

from __future__ import annotations

import ast
import csv
import json
import logging
import os
import re
import urllib.request
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .errors import UserInputError

__all__ = [
    "Question",
    "PoolCleaningReport",
    "DataValidationError",
    "DataSourceError",
    "normalize_answer",
    "read_rul_json",
    "read_pools",
    "read_muchomusic_csv",
    "read_questions_table",
    "load_questions",
    "attach_tracks",
    "load_questions_without_distractors",
    "default_rul_path",
    "default_muchomusic_csv",
    "RUL_GITHUB_URL",
    "RUL_HF_REPO",
    "MUCHOMUSIC_HF_REPO",
]

logger = logging.getLogger(__name__)

RUL_GITHUB_URL = (
    "https://raw.githubusercontent.com/yongyizang/AreYouReallyListening/main/RUL-MuchoMusic.json"
)
RUL_HF_REPO = "yongyizang/RUListening"
MUCHOMUSIC_HF_REPO = "mulab-mir/muchomusic"
MUCHOMUSIC_CSV_NAME = "muchomusic.csv"

MUCHOMUSIC_COLUMNS = (
    "question",
    "dataset",
    "dataset_identifier",
    "correct_answer",
    "distractor_1_answer",
    "distractor_2_answer",
    "distractor_3_answer",
)
_ID_COLUMNS = ("id", "question_id", "qid", "")
_MAX_LISTED = 10


@dataclass(frozen=True)
class Question:
    """One multiple-choice music question.

    Attributes:
        id: Question id as a string (the MuChoMusic question id for RUL rows).
        question: The question text.
        correct_answer: The correct option's text.
        distractors: Wrong options, in their released order (fold k drops index k).
        caption: The audio caption the question was written from, when known.
        pi: The Perceptual Index stored with the row (``PI`` in the released JSON).
        track: Audio clip key: the MuChoMusic ``dataset_identifier`` stem, when known.
        source: Audio source dataset (``sdd`` or ``musiccaps``), when known.
    """

    id: str
    question: str
    correct_answer: str
    distractors: tuple[str, ...]
    caption: str | None = None
    pi: float | None = None
    track: str | None = None
    source: str | None = None


@dataclass
class PoolCleaningReport:
    """What :func:`read_pools` removed from the distractor pools, with counts per id."""

    n_questions: int = 0
    n_candidates_in: int = 0
    n_candidates_out: int = 0
    equal_to_correct: dict[str, int] = field(default_factory=dict)
    duplicates: dict[str, int] = field(default_factory=dict)
    empty: dict[str, int] = field(default_factory=dict)

    def summary(self) -> str:
        return (
            f"{self.n_questions} pools, {self.n_candidates_in} candidates in, "
            f"{self.n_candidates_out} kept; dropped {sum(self.equal_to_correct.values())} equal "
            f"to the correct answer (in {len(self.equal_to_correct)} pools), "
            f"{sum(self.duplicates.values())} duplicates, {sum(self.empty.values())} empty"
        )


class DataValidationError(UserInputError, ValueError):
    """A data file has malformed rows; ``problems`` lists each one with its id."""

    def __init__(self, path: str | os.PathLike[str], problems: Sequence[str], hint: str = ""):
        self.path = str(path)
        self.problems = list(problems)
        shown = "\n".join(f"  - {p}" for p in self.problems[:_MAX_LISTED])
        more = len(self.problems) - _MAX_LISTED
        tail = f"\n  ... and {more} more" if more > 0 else ""
        hint = f"\n{hint}" if hint else ""
        super().__init__(f"{len(self.problems)} problem(s) in {self.path}:\n{shown}{tail}{hint}")


class DataSourceError(UserInputError, RuntimeError):
    """A default public dataset could not be fetched (offline, moved, or private)."""


def normalize_answer(text: str) -> str:
    """Case-, space- and trailing-punctuation-insensitive form of an answer.

    >>> normalize_answer("  Electric  Guitar. ")
    'electric guitar'
    """
    text = re.sub(r"\s+", " ", str(text)).strip().lower()
    return text.rstrip(".!;:,").strip()


# ----------------------------------------------------------------------------- readers


class _KeyedObject(dict):
    """A JSON object that remembers the keys it held more than once."""

    duplicate_keys: tuple[str, ...] = ()


def _keep_duplicate_keys(pairs: list[tuple[str, Any]]) -> _KeyedObject:
    obj = _KeyedObject()
    duplicates = [key for key, _ in pairs if sum(1 for k, _ in pairs if k == key) > 1]
    obj.update(pairs)
    obj.duplicate_keys = tuple(dict.fromkeys(duplicates))
    return obj


def _read_json_rows(path: Path) -> list[dict[str, Any]]:
    """Rows of a dict-of-dicts or list-of-dicts JSON file, each with an ``id``."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=_keep_duplicate_keys)
    except json.JSONDecodeError as err:
        raise DataValidationError(path, [f"not valid JSON: {err}"]) from None
    problems = [f"id {k!r}: appears more than once" for k in getattr(raw, "duplicate_keys", ())]
    if isinstance(raw, dict):
        items = list(raw.items())
    elif isinstance(raw, list):
        items = [(r.get("id") if isinstance(r, dict) else None, r) for r in raw]
    else:
        raise DataValidationError(path, ["expected a JSON object keyed by id, or a list of rows"])
    rows = []
    for position, (key, value) in enumerate(items):
        where = f"id {key!r}" if key is not None else f"row {position}"
        if not isinstance(value, dict):
            problems.append(f"{where}: expected an object with question fields, got {value!r:.80}")
            continue
        problems += [f"{where}: field {k!r} appears more than once" for k in value.duplicate_keys]
        rows.append({"id": key, **value} if isinstance(raw, dict) else dict(value))
    if problems:
        raise DataValidationError(path, problems)
    return rows


def _read_jsonl_rows(path: Path) -> list[dict[str, Any]]:
    rows = []
    problems = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as err:
            problems.append(f"line {lineno}: not valid JSON ({err.msg})")
    if problems:
        raise DataValidationError(path, problems)
    return rows


def _parse_list_cell(value: Any) -> Any:
    """CSV/parquet cells holding a list: JSON, a Python literal, or ``a|b|c``."""
    if not isinstance(value, str):
        return list(value) if hasattr(value, "__iter__") else value
    text = value.strip()
    if text.startswith("["):
        for parse in (json.loads, ast.literal_eval):
            try:
                return list(parse(text))
            except (ValueError, SyntaxError):
                continue
    return [part.strip() for part in text.split("|") if part.strip()]


def _rows_to_questions(
    path: Path,
    rows: Iterable[dict[str, Any]],
    *,
    n_distractors: int | None,
    min_distractors: int = 1,
    check_options: bool = True,
) -> list[Question]:
    """Validate rows into questions; every problem is collected, then raised together.

    ``check_options`` rejects empty distractors, a distractor equal to the correct answer
    and repeated distractors (pools skip it: :func:`read_pools` cleans those instead).
    """
    questions: list[Question] = []
    problems: list[str] = []
    near_duplicates: list[str] = []
    seen: set[str] = set()
    for position, row in enumerate(rows):
        if "_bad" in row:
            problems.append(f"row {position}: expected an object, got {row['_bad']!r:.60}")
            continue
        qid = row.get("id", row.get("question_id"))
        if qid is None or str(qid).strip() == "":
            problems.append(f"row {position}: missing field 'id'")
            continue
        qid = str(qid).strip()
        where = f"id {qid!r}"
        if qid in seen:
            problems.append(f"{where}: appears more than once")
            continue
        seen.add(qid)
        missing = [
            f for f in ("question", "correct_answer", "distractors") if row.get(f) in (None, "")
        ]
        if missing:
            problems.append(f"{where}: missing field(s) {', '.join(repr(m) for m in missing)}")
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
        if check_options:
            empty = [i for i, d in enumerate(distractors) if not d]
            if empty:
                problems.append(f"{where}: distractor {empty[0] + 1} is empty")
                continue
            equal = [d for d in distractors if normalize_answer(d) == normalize_answer(correct)]
            if equal:
                problems.append(f"{where}: distractor {equal[0]!r} equals the correct answer")
                continue
            if len(set(distractors)) != len(distractors):
                problems.append(f"{where}: two distractors are the same text")
                continue
            if len({normalize_answer(d) for d in distractors}) != len(distractors):
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
            )
        )
    if problems:
        raise DataValidationError(
            path,
            problems,
            hint="Fix or remove these rows; nothing was loaded, so no question is silently lost.",
        )
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
            ", ".join(near_duplicates[:_MAX_LISTED]),
        )
    return questions


def read_rul_json(path: str | os.PathLike[str], *, n_distractors: int | None = 4) -> list[Question]:
    """Read the released RUL-MuChoMusic JSON (or any file of the same schema).

    Args:
        path: The JSON file, ``{id: {question, caption, correct_answer, distractors, PI}}``
            or a list of rows carrying ``id``.
        n_distractors: Exact number of distractors each row must have (``None``: any).

    Raises:
        DataValidationError: listing every malformed row by id.
    """
    path = Path(path)
    return _rows_to_questions(path, _read_json_rows(path), n_distractors=n_distractors)


def read_pools(
    path: str | os.PathLike[str], *, allow_empty: bool = False
) -> tuple[list[Question], PoolCleaningReport]:
    """Read distractor pools (the released ``distractors.json`` format) and clean them.

    Cleaning (:func:`~lm_eval_rul.distractors.clean_pools`, without re-tidying the text),
    counted per id in the returned report: strip whitespace, drop empty candidates, drop
    candidates equal to the correct answer after :func:`normalize_answer` (10 such pools
    in the release), drop repeats keeping the first.

    Args:
        path: The pools file (JSON keyed by id, a JSON list of rows, or JSONL).
        allow_empty: Keep pools that are (or end up) empty instead of refusing the file
            (``lm-eval-rul build`` turns them into per-question failure records).

    Raises:
        DataValidationError: for malformed rows, or (unless ``allow_empty``) a pool left
            with no candidate.
    """
    from .distractors import clean_pools  # distractors imports this module

    path = Path(path)
    rows = _read_json_rows(path) if path.suffix != ".jsonl" else _read_jsonl_rows(path)
    questions = _rows_to_questions(
        path, rows, n_distractors=None, min_distractors=0 if allow_empty else 1, check_options=False
    )
    cleaned, report = clean_pools(questions, tidy=False)
    empty_pools = [
        f"id {q.id!r}: no candidate left after cleaning" for q in cleaned if not q.distractors
    ]
    if empty_pools and not allow_empty:
        raise DataValidationError(path, empty_pools)
    logger.info("Cleaned distractor pools from %s: %s", path, report.summary())
    return cleaned, report


def _muchomusic_track(dataset_identifier: str) -> str:
    return re.sub(r"\.json$", "", dataset_identifier.strip())


def read_muchomusic_csv(path: str | os.PathLike[str]) -> list[Question]:
    """Read MuChoMusic's ``muchomusic.csv`` (the three original distractors, in order).

    The question id comes from a column named ``id``, ``question_id`` or ``qid`` (or the
    unnamed index column pandas writes). ``track`` is the ``dataset_identifier`` stem.
    """
    path = Path(path)
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        header = reader.fieldnames or []
        missing = [c for c in MUCHOMUSIC_COLUMNS if c not in header]
        if missing:
            raise DataValidationError(
                path,
                [f"missing column(s) {', '.join(missing)}; found {', '.join(header)}"],
                hint="Expected MuChoMusic's muchomusic.csv (huggingface.co/datasets/"
                f"{MUCHOMUSIC_HF_REPO}).",
            )
        id_column = next((c for c in _ID_COLUMNS if c in header), None)
        if id_column is None:
            raise DataValidationError(
                path,
                [f"no question id column (one of id, question_id, qid); found {', '.join(header)}"],
            )
        rows = []
        for row in reader:
            rows.append(
                {
                    "id": row[id_column],
                    "question": row["question"],
                    "correct_answer": row["correct_answer"],
                    "distractors": [row[f"distractor_{i}_answer"] or "" for i in (1, 2, 3)],
                    "track": _muchomusic_track(row["dataset_identifier"] or ""),
                    "source": row["dataset"],
                }
            )
    for row in rows:
        if any(d == "" for d in row["distractors"]):
            row["distractors"] = [d for d in row["distractors"] if d]  # reported as too few
    return _rows_to_questions(path, rows, n_distractors=3)


def read_questions_table(
    path: str | os.PathLike[str], *, n_distractors: int | None = None
) -> list[Question]:
    """Read a JSONL, CSV or parquet of ``id, question, correct_answer, distractors[, caption]``.

    In CSV and parquet, ``distractors`` may be a JSON list, a Python list literal or
    ``a|b|c``; columns ``distractor_1`` ... are accepted instead.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        rows = _read_jsonl_rows(path)
    elif suffix == ".csv":
        with path.open(newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
    elif suffix == ".parquet":
        import pyarrow.parquet as pq

        rows = pq.read_table(path).to_pylist()
    else:
        raise DataValidationError(path, [f"unsupported file type {suffix!r}"])
    for row in rows:
        if isinstance(row.get("distractors"), str) and suffix != ".jsonl":
            row["distractors"] = _parse_list_cell(row["distractors"])
        if "distractors" not in row:
            numbered = {
                int(m.group(1)): k
                for k in row
                if (m := re.fullmatch(r"distractor_?(\d+)(?:_answer)?", k))
            }
            if numbered:
                row["distractors"] = [row[numbered[i]] or "" for i in sorted(numbered)]
    return _rows_to_questions(path, rows, n_distractors=n_distractors)


def load_questions(
    path: str | os.PathLike[str], *, n_distractors: int | None = None
) -> list[Question]:
    """Read any supported question file, choosing the reader from its content.

    ``.json``: the released RUL / pools layout; ``.csv`` with MuChoMusic's columns:
    :func:`read_muchomusic_csv`; other ``.csv``, ``.jsonl``, ``.parquet``:
    :func:`read_questions_table`.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"question file not found: {path}")
    suffix = path.suffix.lower()
    if suffix == ".json":
        return read_rul_json(path, n_distractors=n_distractors)
    if suffix == ".csv":
        with path.open(newline="", encoding="utf-8") as handle:
            header = next(csv.reader(handle), [])
        if all(c in header for c in MUCHOMUSIC_COLUMNS):
            return read_muchomusic_csv(path)
    return read_questions_table(path, n_distractors=n_distractors)


def attach_tracks(questions: Sequence[Question], reference: Sequence[Question]) -> list[Question]:
    """Copy ``track``/``source`` from MuChoMusic rows onto RUL rows with the same id.

    Rows whose id is absent from ``reference`` keep ``track=None``; the caller decides
    whether that is an error (it is for audio runs that look clips up by track).
    """
    by_id = {q.id: q for q in reference}
    return [
        replace(q, track=by_id[q.id].track, source=by_id[q.id].source) if q.id in by_id else q
        for q in questions
    ]


# ----------------------------------------------------------------------------- sources


def _cache_dir() -> Path:
    root = os.environ.get("LM_EVAL_RUL_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "lm_eval_rul"
    )
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path


def _download(url: str, target: Path) -> Path:
    partial = target.with_suffix(target.suffix + ".part")
    with urllib.request.urlopen(url, timeout=60) as response:  # noqa: S310 - fixed https URL
        partial.write_bytes(response.read())
    partial.replace(target)
    return target


def _hf_rul_file() -> Path:
    from huggingface_hub import hf_hub_download, list_repo_files

    files = list_repo_files(RUL_HF_REPO, repo_type="dataset")
    preferred = sorted(
        (f for f in files if f.lower().endswith((".json", ".jsonl", ".csv", ".parquet"))),
        key=lambda f: ("rul" not in f.lower(), f.count("/"), f),
    )
    if not preferred:
        raise DataSourceError(f"no question file in {RUL_HF_REPO}: {files}")
    return Path(hf_hub_download(RUL_HF_REPO, preferred[0], repo_type="dataset"))


def default_rul_path() -> Path:
    """The public RUL-MuChoMusic file, downloaded once and cached.

    Tries ``RUL-MuchoMusic.json`` in the GitHub release, then the Hugging Face dataset
    ``yongyizang/RUListening``. The cache lives in ``$LM_EVAL_RUL_CACHE`` (default
    ``~/.cache/lm_eval_rul``).
    """
    cached = _cache_dir() / "RUL-MuchoMusic.json"
    if cached.is_file():
        return cached
    errors = []
    try:
        return _download(RUL_GITHUB_URL, cached)
    except Exception as err:  # noqa: BLE001 - any network failure falls through to the mirror
        errors.append(f"{RUL_GITHUB_URL}: {err}")
    try:
        return _hf_rul_file()
    except Exception as err:  # noqa: BLE001
        errors.append(f"huggingface.co/datasets/{RUL_HF_REPO}: {err}")
    raise DataSourceError(
        "Could not download RUL-MuChoMusic:\n  "
        + "\n  ".join(errors)
        + '\nPass a local copy with --metadata \'{"data_path": "/path/to/RUL-MuchoMusic.json"}\'.'
    )


def default_muchomusic_csv() -> Path:
    """MuChoMusic's ``muchomusic.csv`` from the Hugging Face hub (cached by the hub client)."""
    try:
        from huggingface_hub import hf_hub_download

        return Path(hf_hub_download(MUCHOMUSIC_HF_REPO, MUCHOMUSIC_CSV_NAME, repo_type="dataset"))
    except Exception as err:  # noqa: BLE001
        raise DataSourceError(
            f"Could not download {MUCHOMUSIC_CSV_NAME} from huggingface.co/datasets/"
            f"{MUCHOMUSIC_HF_REPO}: {err}\nPass a local copy with --metadata "
            '\'{"data_path": "/path/to/muchomusic.csv"}\' (or "muchomusic_csv" for RUL tasks).'
        ) from err


# ----------------------------------------------------------------------------- build input


def load_questions_without_distractors(path: str | os.PathLike[str]) -> list[Question]:
    """Questions to generate distractors for: like :func:`load_questions`, but in JSON and
    JSONL files ``distractors`` may be absent (or empty) on any row.

    Rows that do carry distractors get the usual option checks; ids, fields and
    duplicates are validated by the same rules as every other reader. CSV and parquet
    files go through :func:`load_questions` unchanged.

    Raises:
        DataValidationError: listing every malformed row.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"question file not found: {path}")
    suffix = path.suffix.lower()
    if suffix not in (".json", ".jsonl"):
        return load_questions(path)
    rows = _read_json_rows(path) if suffix == ".json" else _read_jsonl_rows(path)
    prepared = []
    for row in rows:
        if not isinstance(row, dict):
            prepared.append({"_bad": row})
        elif row.get("distractors") is None:
            prepared.append({**row, "distractors": []})
        else:
            prepared.append(row)
    return _rows_to_questions(path, prepared, n_distractors=None, min_distractors=0)
