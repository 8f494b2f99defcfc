"""Free-text answers read into tags: the factual lexicon parser given a tag vocabulary.

:func:`read_tags` reads every tag of the vocabulary the answer names (aliases and
spellings of :mod:`.vocab`, longest match first; a negated, hedged or rejected mention is
not a mention: the rules of :mod:`lm_eval_rul.factual.reading.parser`). An answer naming
no tag is *unparsed*: it is scored as an empty prediction (every gold tag a false
negative) and counted, never replaced by a guess. :func:`read_one` is the single-label rule
(GTZAN, NSynth, Medley-solos-DB): exactly one label, else unparsed (wrong); :func:`read_genre`
is it for GTZAN.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..factual.reading.parser import parse_labels
from .vocab import tag_lexicon

__all__ = ["TagReading", "read_tags", "read_one", "read_genre"]


@dataclass(frozen=True)
class TagReading:
    """What an answer was read as.

    Attributes:
        tags: The tags read, in order of first mention.
        unparsed: No tag (or, for a single-label reading, not exactly one) was read.
        dropped: The mentions the parser dropped and why (``{"surface", "reason"}``).
    """

    tags: tuple[str, ...]
    unparsed: bool
    dropped: tuple[dict[str, str], ...] = ()

    def to_log(self) -> dict[str, object]:
        """Plain data for the sample log."""
        return {"tags": list(self.tags), "unparsed": self.unparsed, "dropped": list(self.dropped)}


def read_tags(answer: str, vocabulary: str, tags: Sequence[str]) -> TagReading:
    """The tags of ``tags`` that ``answer`` names.

    >>> from lm_eval_rul.tagging.vocab import MTT_TOP50
    >>> read_tags("Piano, no vocals, not rock.", "mtt", MTT_TOP50).tags
    ('piano', 'no vocals')
    """
    result = parse_labels(str(answer), tag_lexicon(vocabulary, tuple(tags)))
    dropped = tuple(
        {"tag": m.label, "surface": m.surface, "reason": m.dropped}
        for m in result.mentions
        if m.dropped
    )
    return TagReading(result.labels, not result.labels, dropped)


def read_one(answer: str, vocabulary: str, labels: Sequence[str]) -> TagReading:
    """Exactly one label of ``labels`` named, else unparsed (no label kept).

    >>> from lm_eval_rul.tagging.vocab import NSYNTH_FAMILIES
    >>> read_one("Strings, bowed.", "nsynth_instrument", NSYNTH_FAMILIES).tags
    ('string',)
    >>> read_one("a bass guitar", "nsynth_instrument", NSYNTH_FAMILIES).unparsed
    True
    """
    reading = read_tags(answer, vocabulary, labels)
    if len(reading.tags) == 1:
        return reading
    return TagReading((), True, reading.dropped)


def read_genre(answer: str, genres: Sequence[str]) -> TagReading:
    """Exactly one genre of ``genres`` named, else unparsed (no tags kept).

    >>> from lm_eval_rul.tagging.vocab import GTZAN_GENRES
    >>> read_genre("Hip-hop.", GTZAN_GENRES).tags, read_genre("pop or rock", GTZAN_GENRES).unparsed
    (('hiphop',), True)
    """
    return read_one(answer, "gtzan", genres)
