"""Bounded fuzzy matching of misspelt words against a lexicon's one-word forms.

A word of the answer that no alias matched is compared with the lexicon's one-word
forms (labels, aliases, agent nouns) of the same first letter and a similar length. It
reads as a form when (optimal string alignment distance: an insertion, a deletion, a
substitution or a swap of two neighbours each cost one):

* both have at least :data:`MIN_LENGTH` letters (short words are never guessed);
* the distance is at most 1 for a form of 5-7 letters, at most 2 for 8 or more;
* exactly one form is nearest (a tie, "funmy" between funny and funky, reads nothing);
* the word is not in :data:`GUARD_WORDS`: real English words one or two edits from a
  form but meaning something else ("according" is not an accordion, "musical" is not
  mystical, "electric" is not Electronic, "bluesy" is not Blues), and composers' first
  names ("Gabriel" is not Gabrieli).

Results are cached per word, so a run pays for each distinct word once.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["MIN_LENGTH", "GUARD_WORDS", "max_distance", "osa_distance", "FuzzyIndex"]

MIN_LENGTH = 5

#: English words near a form that mean something else (never read as the form).
GUARD_WORDS: frozenset[str] = frozenset(
    """
    according accordingly fluke flukes cells hello chair chairs recorded reorder recording
    percussive string stringed stings strong drugs belts balls belly bills bulls bella belle
    trumped trumpets sinking singles single organic organs organa orange sitting
    mental medal medals petal metals meta blue blues clues county counter horse house hours
    mouse trace france garbage electric electrical electronics instruments instrument
    instrumentation classic classics classically classicism musical musically mythical
    mystic chills chilly child chile yellow fellow bellow hollow lovely tended tinder render
    tenser terse dense sense cherry silky hummed hummer heroin heroine travel gravel raven
    revel ravels handle handles handed hoist host grief satin satire bitten green greet
    greed indie chins garlic gently gentile reverend scarf scars lively lovely dancer dances
    danced popular rocky rocker soulful punky funny funky happen nappy jazzed jazzier
    scared scare proper latino latins latina native nation matin satan salsa polka
    leaning learning latter letter bitter batter baker barker sweet sweat tender
    slavish slavic lavish sonata sonatas notes noted voices voiced chord chords choral
    corps coral carol corral moral mortal portal metro retro grave gravy heavy heave
    gabriel antonio antonin johann joseph franz ludwig wolfgang frederic claude maurice
    robert felix johannes gustav richard pyotr sergei george edward henry georg ralph
    camille gioachino giuseppe giacomo arcangelo domenico alessandro henryk bedrich
    nikolai modest alexander dmitri leopold michael christian philipp emanuel friedemann
    stringy brassy fluty flutey bluesy housey trancey noisy
    """.split()
)


def max_distance(form: str) -> int:
    """The largest distance at which a word may read as ``form`` (0: never fuzzy)."""
    if len(form) < MIN_LENGTH:
        return 0
    return 1 if len(form) <= 7 else 2


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
            if not form.isalpha() or len(form) < MIN_LENGTH:
                continue
            self._exact.add(form)
            self._by_key.setdefault((form[0], len(form)), []).append((form, label))
        self._cache: dict[str, tuple[str, str] | None] = {}

    def lookup(self, word: str) -> tuple[str, str] | None:
        """``(form, label)`` the misspelt ``word`` reads as, or None (see the module docstring)."""
        if word in self._cache:
            return self._cache[word]
        found = self._search(word)
        if len(self._cache) < 200_000:
            self._cache[word] = found
        return found

    def _search(self, word: str) -> tuple[str, str] | None:
        if len(word) < MIN_LENGTH or word in GUARD_WORDS or word in self._exact:
            return None
        best: list[tuple[str, str]] = []
        best_distance = 3
        for length in range(len(word) - 2, len(word) + 3):
            for form, label in self._by_key.get((word[0], length), ()):
                limit = max_distance(form)
                distance = osa_distance(word, form, min(limit, best_distance))
                if distance > limit or distance > best_distance:
                    continue
                if distance < best_distance:
                    best, best_distance = [], distance
                best.append((form, label))
        if not best or len({label for _, label in best}) > 1:
            return None
        return best[0]
