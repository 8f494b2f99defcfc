"""Bounded fuzzy matching of misspelt words against a lexicon's one-word forms.

A word of the answer that no alias matched is compared with the lexicon's one-word
forms (labels, aliases, agent nouns) of the same first letter and a similar length. It
reads as a form when (optimal string alignment distance: an insertion, a deletion, a
substitution or a swap of two neighbours each cost one):

* both have at least :data:`MIN_LENGTH` letters, or the word has :data:`SHORT_LENGTH`
  letters, is no English word (:data:`~.guards.SHORT_WORDS`: "cell", "base", "tube") and
  lies one edit from a form of 4-5 letters ("obeo" -> oboe, "celo" -> cello); shorter
  slips are listed by hand (:data:`~.names.SHORT_MISSPELLINGS`: "obo");
* the distance is at most 1 for a form of 5-7 letters, at most 2 for 8 or more;
* exactly one label is nearest; a tie goes to the one form the word is a letter-dropping
  of ("violn": violin, not viola), else reads nothing ("funmy" between funny and funky);
* the word is not in :data:`GUARD_WORDS` (:mod:`~.guards`): real English words one or two
  edits from a form but meaning something else ("harmonic" is not a harmonica,
  "according" is not an accordion, "musical" is not mystical), and composers' first
  names ("Gabriel" is not Gabrieli);
* a hyphenated word is first read whole ("hip-hopp" -> Hip-Hop), then part by part.

Results are cached per word, so a run pays for each distinct word once.
"""

from __future__ import annotations

from collections.abc import Iterable

from .guards import GUARD_WORDS, SHORT_WORDS

__all__ = [
    "MIN_LENGTH",
    "SHORT_LENGTH",
    "GUARD_WORDS",
    "SHORT_WORDS",
    "max_distance",
    "osa_distance",
    "FuzzyIndex",
]

MIN_LENGTH = 5
#: Words of this length read only at distance 1 and only when they are no English word.
SHORT_LENGTH = 4

def max_distance(form: str, word: str = "") -> int:
    """The largest distance at which ``word`` may read as ``form`` (0: never fuzzy).

    Forms of 5-7 letters: 1, of 8 or more: 2; a 4-letter word (not a real word: the
    caller checks :data:`GUARD_WORDS`) may read as a form of 4-5 letters at distance 1
    ("obeo" -> oboe, "flut" -> flute); nothing shorter is ever guessed.
    """
    if len(form) < MIN_LENGTH:
        return 1 if len(form) == SHORT_LENGTH and len(word) == SHORT_LENGTH else 0
    if len(word) == SHORT_LENGTH:
        return 1 if len(form) == MIN_LENGTH else 0
    return 1 if len(form) <= 7 else 2


def _subsequence(word: str, form: str) -> bool:
    """Whether ``word`` is ``form`` with letters left out (the commonest slip: "violn")."""
    letters = iter(form)
    return all(ch in letters for ch in word)


def osa_distance(a: str, b: str, limit: int) -> int:
    """Optimal string alignment distance of ``a`` and ``b``, or ``limit + 1`` when larger.

    Examples
    --------
    >>> osa_distance("harpischord", "harpsichord", 2), osa_distance("pianno", "piano", 1)
    (1, 1)
    >>> osa_distance("according", "accordion", 2)
    2
    """
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        best = i
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            value = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                value = min(value, prev2[j - 2] + 1)
            cur[j] = value
            best = min(best, value)
        if best > limit:
            return limit + 1
        prev2, prev = prev, cur
    return min(prev[-1], limit + 1)


class FuzzyIndex:
    """One-word forms indexed by (first letter, length), with a cache of words looked up.

    Args:
        forms: ``(form, label)`` pairs (lower case, no accents); forms of other words
            than ``[a-z]`` letters are skipped.
    """

    def __init__(self, forms: Iterable[tuple[str, str]]) -> None:
        self._by_key: dict[tuple[str, int], list[tuple[str, str]]] = {}
        self._exact: set[str] = set()
        for form, label in forms:
            form = form.replace("-", "")  # "hip-hop" is looked up as "hiphop"
            if not form.isalpha() or len(form) < SHORT_LENGTH:
                continue
            self._exact.add(form)
            self._by_key.setdefault((form[0], len(form)), []).append((form, label))
        self._cache: dict[str, tuple[str, str] | None] = {}

    def lookup(self, word: str) -> tuple[str, str] | None:
        """``(form, label)`` the misspelt ``word`` reads as, or None (see the module docstring)."""
        cache = self._cache
        if word in cache:
            return cache[word]
        found = self._search(word)
        if len(self._cache) < 200_000:
            self._cache[word] = found
        return found

    def _search(self, word: str) -> tuple[str, str] | None:
        if len(word) < SHORT_LENGTH or word in GUARD_WORDS or word in self._exact:
            return None
        if len(word) == SHORT_LENGTH and word in SHORT_WORDS:
            return None
        best: list[tuple[str, str]] = []
        best_distance = 3
        for length in range(len(word) - 2, len(word) + 3):
            for form, label in self._by_key.get((word[0], length), ()):
                limit = max_distance(form, word)
                distance = osa_distance(word, form, min(limit, best_distance))
                if distance > limit or distance > best_distance:
                    continue
                if distance < best_distance:
                    best, best_distance = [], distance
                best.append((form, label))
        if len({label for _, label in best}) > 1:  # a tie: a form missing letters wins
            best = [(form, label) for form, label in best if _subsequence(word, form)]
        if not best or len({label for _, label in best}) > 1:
            return None
        return best[0]
