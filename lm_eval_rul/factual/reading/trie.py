"""One regular expression for many aliases, shaped as a trie (shared prefixes written once).

A plain alternation of a thousand aliases makes the regex engine try every alias at every
word start; a trie tries one branch per letter. :func:`trie_pattern` keeps the matching
rules of the aliases: a space or hyphen in an alias matches any run of spaces and hyphens,
a dot is optional (and so is the space after it), an optional plural ``s``/``es``, word
boundaries on both sides, and the longest alias wins at each position (a branch that goes
on is tried before the alias that ends there). Exactly one empty capturing group, the
alias's own, takes part in a match: ``match.lastindex - 1`` is its index in the returned
tuple.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["trie_pattern"]

_SEP = "\x00"  # a run of spaces/hyphens
_DOT = "\x01"  # a dot and the spaces after it
_UNIT = {_SEP: r"[\s\-]+", _DOT: r"\.?[\s\-]*"}


def _units(text: str) -> list[str]:
    units: list[str] = []
    for part in re.split(r"(\.\s*|[\s\-]+)", text):
        if not part:
            continue
        if part.startswith("."):
            units.append(_DOT)
        elif not part.strip(" -"):
            units.append(_SEP)
        else:
            units.extend(part)
    return units


def trie_pattern(
    texts: Sequence[str], *, plurals: bool = False
) -> tuple[re.Pattern[str], tuple[int, ...]]:
    """The compiled trie of ``texts`` and, per capturing group, the index of its text.

    Examples
    --------
    >>> pattern, order = trie_pattern(["horn", "english horn", "j.s. bach"], plurals=True)
    >>> [(m.group(), order[m.lastindex - 1]) for m in pattern.finditer("english horns, js bach")]
    [('english horns', 1), ('js bach', 2)]
    """
    root: dict = {}
    for index, text in enumerate(texts):
        node = root
        for unit in _units(text):
            node = node.setdefault(unit, {})
        node.setdefault("", index)  # the first of equal texts wins
    order: list[int] = []
    end = r"(?:e?s)?(?![a-z0-9])()" if plurals else r"(?![a-z0-9])()"

    def emit(node: dict) -> str:
        branches = []
        for unit, child in node.items():
            if unit == "":
                continue
            branches.append(_UNIT.get(unit, re.escape(unit)) + emit(child))
        if "" in node:
            order.append(node[""])
            branches.append(end)
        return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"

    body = emit(root)
    return re.compile(rf"(?<![a-z0-9]){body}"), tuple(order)
