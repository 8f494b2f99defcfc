"""OverClocked ReMix: the regional-style, mood and time-signature tasks.

A tag table shaped like ``ocremix_remix_mood_regional_timesig_genre.csv``
(``remix_id,ocr_id,title,primary_game,download_url,mood_tags,regional_tags,
timesig_tags,genre_tags``; several tags joined with ``|``) and a folder of the mp3s,
each named as the last part of its ``download_url`` (as given, or URL-decoded:
``Journey's%20End`` or ``Journey's End``).

Items of a task = the remixes with at least one tag of its kind. Gold = the tags
(mood and regional tag ids; time signatures as ``"4/4"``, ``"irregular"``...). Tags
outside the fixed vocabularies are kept as labels and counted (``unknown_tags``).

Counts (``TaskItems.counts``): ``remixes`` (table rows), ``items``, ``unknown_tags``.
"""

from __future__ import annotations

import csv
import logging
from pathlib import Path
from urllib.parse import unquote

from ...paths import contained_path
from ..errors import FactualInputError
from ..items import Item, TaskItems, id_order
from ..reading.labels import OCREMIX_MOODS, OCREMIX_REGIONAL, timesig_label

__all__ = ["OCREMIX_TASK_COLUMNS", "ocremix_audio_path", "read_ocremix"]

logger = logging.getLogger(__name__)

#: Task -> column of the tag table.
OCREMIX_TASK_COLUMNS: dict[str, str] = {
    "regional": "regional_tags",
    "mood": "mood_tags",
    "timesig": "timesig_tags",
}
_REQUIRED = ("ocr_id", "download_url", *OCREMIX_TASK_COLUMNS.values())
_KNOWN = {"regional": OCREMIX_REGIONAL, "mood": OCREMIX_MOODS}


def ocremix_audio_path(audio_dir: str | Path, download_url: str, *, item: str = "remix") -> Path:
    """The mp3 of a remix: the URL's last part, or its URL-decoded form if that exists.

    Raises:
        PathEscapeError: Either name leads out of ``audio_dir`` (``..``, ``%2F..%2F``).
    """
    name = download_url.rstrip("/").rsplit("/", 1)[-1]
    raw, decoded = (
        contained_path(
            audio_dir,
            part,
            item=f"OverClocked ReMix {item} (download_url {download_url!r})",
            option="--metadata ocremix_audio_dir",
            fix="correct the download_url in the tag table.",
        )
        for part in (name, unquote(name))
    )
    return decoded if not raw.exists() and decoded.exists() else raw


def _label(task: str, tag: str) -> str:
    return timesig_label(tag) if task == "timesig" else tag


def read_ocremix(tags_csv: str | Path, audio_dir: str | Path) -> dict[str, TaskItems]:
    """The ``regional``, ``mood`` and ``timesig`` items of an OverClocked ReMix tag table.

    Raises:
        FactualInputError: Missing file or column, a repeated ``ocr_id``, an empty
            ``download_url`` on a tagged row, or a malformed time-signature tag.
    """
    tags_csv = Path(tags_csv)
    if not tags_csv.is_file():
        raise FactualInputError(f"OverClocked ReMix tag table not found at {tags_csv}")
    with tags_csv.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in _REQUIRED if c not in (reader.fieldnames or [])]
        if missing:
            raise FactualInputError(f"{tags_csv}: missing column(s) {', '.join(missing)}")
        rows = list(reader)
    seen: set[str] = set()
    out: dict[str, TaskItems] = {}
    for row in rows:
        if row["ocr_id"] in seen:
            raise FactualInputError(f"{tags_csv}: ocr_id {row['ocr_id']} appears twice")
        seen.add(row["ocr_id"])
    for task, column in OCREMIX_TASK_COLUMNS.items():
        items, unknown = [], 0
        for line, row in enumerate(rows, start=2):
            tags = [t.strip() for t in row[column].split("|") if t.strip()]
            if not tags:
                continue
            if not row["download_url"].strip():
                raise FactualInputError(f"{tags_csv} line {line}: tagged remix has no download_url")
            try:
                gold = tuple(dict.fromkeys(_label(task, t) for t in tags))
            except ValueError as error:
                raise FactualInputError(f"{tags_csv} line {line}: {error}") from None
            if task in _KNOWN:
                unknown += sum(label not in _KNOWN[task] for label in gold)
            path = ocremix_audio_path(
                audio_dir, row["download_url"].strip(), item=f"ocr_id {row['ocr_id']}"
            )
            items.append(Item(row["ocr_id"], task, "ocremix", path, gold))
        if unknown:
            logger.warning("%s: %d %s tag(s) outside the fixed vocabulary", tags_csv, unknown, task)
        items.sort(key=lambda it: id_order(it.id))
        counts = {"remixes": len(rows), "items": len(items), "unknown_tags": unknown}
        out[task] = TaskItems(task, tuple(items), counts)
    return out
