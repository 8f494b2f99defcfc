"""The FMA genre hierarchy, read at run time from FMA's ``genres.csv``.

``genres.csv`` (``fma_metadata``) has one row per genre: ``genre_id``, ``#tracks``,
``parent`` (0 for a root) and ``title`` (``top_level`` too, which we recompute from the
parents and check). FMA has 163 genres under 16 roots. Labels are genre titles; the
*same-tree* view of a label set replaces each genre by its root's title.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ...errors import UserInputError

__all__ = ["GenreTree", "GenreTableError", "read_genre_tree"]

_REQUIRED = ("genre_id", "parent", "title")


class GenreTableError(UserInputError, ValueError):
    """``genres.csv`` is missing, malformed or not a tree; the message says where."""


@dataclass(frozen=True, eq=False)
class GenreTree:
    """FMA genres: ids, titles, parents and roots.

    Attributes:
        titles: ``{genre_id: title}``.
        parents: ``{genre_id: parent_id}`` (0 for a root).
        counts: ``{genre_id: #tracks}`` as FMA lists them (0 when the column is absent).
    """

    titles: dict[int, str]
    parents: dict[int, int]
    counts: dict[int, int]

    def __post_init__(self) -> None:
        by_title: dict[str, int] = {}
        for genre_id, title in self.titles.items():
            if title in by_title:
                raise GenreTableError(
                    f"genres.csv: title {title!r} is used by genres {by_title[title]} and "
                    f"{genre_id}; titles must be unique to serve as labels"
                )
            by_title[title] = genre_id
        object.__setattr__(self, "_by_title", by_title)

    def id_of(self, title: str) -> int:
        """The genre id of ``title`` (``KeyError`` if unknown)."""
        return self._by_title[title]  # type: ignore[attr-defined]

    def root_id(self, genre_id: int) -> int:
        """The id of ``genre_id``'s top-level ancestor (itself for a root)."""
        seen = {genre_id}
        while self.parents[genre_id] != 0:
            genre_id = self.parents[genre_id]
            if genre_id in seen:
                raise GenreTableError(f"genres.csv: the parents of genre {genre_id} form a cycle")
            seen.add(genre_id)
        return genre_id

    def root(self, title: str) -> str | None:
        """The root title of genre ``title``; None for a title FMA does not have."""
        if title not in self._by_title:  # type: ignore[attr-defined]
            return None
        return self.titles[self.root_id(self.id_of(title))]

    @property
    def roots(self) -> tuple[str, ...]:
        """Root titles, in genre-id order."""
        return tuple(self.titles[g] for g in sorted(self.titles) if self.parents[g] == 0)

    @property
    def all_titles(self) -> tuple[str, ...]:
        """Every title, grouped by root (roots in id order), each group alphabetical."""
        order = sorted(
            self.titles,
            key=lambda g: (self.root_id(g), self.parents[g] != 0, self.titles[g].lower()),
        )
        return tuple(self.titles[g] for g in order)

    def titles_of(self, genre_ids: Iterable[int]) -> tuple[str, ...]:
        """Titles of ``genre_ids`` in the given order, without repeats."""
        out: list[str] = []
        for genre_id in genre_ids:
            if genre_id not in self.titles:
                raise KeyError(genre_id)
            if self.titles[genre_id] not in out:
                out.append(self.titles[genre_id])
        return tuple(out)

    def to_roots(self, labels: Iterable[str]) -> tuple[str, ...]:
        """The same-tree view of a label set: each title replaced by its root title.

        A label FMA does not have (a genre word outside its taxonomy) is kept as it is
        prefixed with ``"?"``, so that it still counts as a (wrong) prediction.

        Examples
        --------
        >>> tree = GenreTree({12: "Rock", 25: "Punk", 4: "Jazz"}, {12: 0, 25: 12, 4: 0}, {})
        >>> tree.to_roots(["Punk", "Rock", "Jazz", "Synthwave"])
        ('Rock', 'Jazz', '?Synthwave')
        """
        out: list[str] = []
        for label in labels:
            root = self.root(label)
            mapped = root if root is not None else f"?{label}"
            if mapped not in out:
                out.append(mapped)
        return tuple(out)


def read_genre_tree(path: str | Path) -> GenreTree:
    """Read FMA's ``genres.csv`` into a :class:`GenreTree`.

    Raises:
        GenreTableError: The file is missing, lacks a column, has a non-integer id, a
            parent that is not a genre, a cycle, or a ``top_level`` that disagrees with
            the parents.
    """
    path = Path(path)
    if not path.is_file():
        raise GenreTableError(
            f"FMA genres.csv not found at {path}; it is in fma_metadata.zip "
            "(https://os.unil.cloud.switch.ch/fma/fma_metadata.zip)"
        )
    titles: dict[int, str] = {}
    parents: dict[int, int] = {}
    counts: dict[int, int] = {}
    tops: dict[int, int] = {}
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in _REQUIRED if c not in (reader.fieldnames or [])]
        if missing:
            raise GenreTableError(f"{path}: missing column(s) {', '.join(missing)}")
        for line, row in enumerate(reader, start=2):
            try:
                genre_id, parent = int(row["genre_id"]), int(row["parent"] or 0)
                counts[genre_id] = int(row.get("#tracks") or 0)
                if row.get("top_level"):
                    tops[genre_id] = int(row["top_level"])
            except ValueError:
                raise GenreTableError(f"{path} line {line}: non-integer id in {row}") from None
            titles[genre_id] = row["title"].strip()
            parents[genre_id] = parent
    dangling = sorted(g for g, p in parents.items() if p and p not in titles)
    if dangling:
        raise GenreTableError(f"{path}: genres {dangling} have a parent that is not a genre")
    tree = GenreTree(titles, parents, counts)
    wrong = sorted(g for g, top in tops.items() if tree.root_id(g) != top)
    if wrong:
        raise GenreTableError(f"{path}: top_level disagrees with the parents for genres {wrong}")
    return tree
