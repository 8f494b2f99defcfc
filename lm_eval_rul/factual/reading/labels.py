"""The six factual tasks and their fixed label vocabularies (one source of truth each).

Canonical label strings, as they appear in gold sets, parsed predictions, sample logs
and per-label tables:

* instruments: lower-case names (``"piano"``, ``"contrabass"``, ``"horn"``); MusicNet's
  eleven MIDI programs map to :data:`MUSICNET_PROGRAMS`;
* composers: surnames as MusicNet's metadata spells them (``"Bach"``, ``"Dvorak"``);
* genres: FMA genre titles exactly as ``genres.csv`` has them (``"Hip-Hop"``), read at
  run time (:mod:`lm_eval_rul.factual.reading.genres`);
* moods and regional styles: OverClocked ReMix tag ids (``"energetic"``,
  ``"middle-eastern"``) with display names for prompts;
* time signatures: ``"N/M"`` (``"4/4"``), plus ``"irregular"`` and ``"variable"``.

Nothing here reads files.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "TASKS",
    "TaskInfo",
    "task_info",
    "MUSICNET_PROGRAMS",
    "MUSICNET_COMPOSERS",
    "OCREMIX_MOODS",
    "OCREMIX_REGIONAL",
    "OCREMIX_TIMESIGS",
    "timesig_label",
    "display_name",
    "out_of_vocabulary",
]

#: MusicNet's note-label ``instrument`` column (1-based General MIDI program) -> label.
MUSICNET_PROGRAMS: dict[int, str] = {
    1: "piano",  # Acoustic Grand Piano
    7: "harpsichord",
    41: "violin",
    42: "viola",
    43: "cello",
    44: "contrabass",
    61: "horn",  # French Horn
    69: "oboe",
    71: "bassoon",
    72: "clarinet",
    74: "flute",
}

#: The ten composers of MusicNet, as its metadata spells them.
MUSICNET_COMPOSERS: tuple[str, ...] = (
    "Bach",
    "Beethoven",
    "Brahms",
    "Cambini",
    "Dvorak",
    "Faure",
    "Haydn",
    "Mozart",
    "Ravel",
    "Schubert",
)

#: OverClocked ReMix ``Mood > *`` tags: id -> display name (22 tags).
OCREMIX_MOODS: dict[str, str] = {
    "aggressive": "Aggressive",
    "angry": "Angry",
    "chill": "Chill",
    "dark": "Dark",
    "energetic": "Energetic",
    "epic": "Epic",
    "funky": "Funky",
    "funny": "Funny",
    "goofy": "Goofy",
    "happy": "Happy",
    "jazzy": "Jazzy",
    "mellow": "Mellow",
    "mystical": "Mystical",
    "peaceful": "Peaceful",
    "quirky": "Quirky",
    "romantic": "Romantic",
    "sad": "Sad",
    "sexy": "Sexy",
    "solemn": "Solemn",
    "spooky": "Spooky",
    "suspenseful": "Suspenseful",
    "trippy": "Trippy",
}

#: OverClocked ReMix ``Regional > *`` tags: id -> display name (15 tags; the site spells
#: the id ``carribean``, the display name is corrected).
OCREMIX_REGIONAL: dict[str, str] = {
    "african": "African",
    "appalachian": "Appalachian",
    "cajun": "Cajun",
    "carribean": "Caribbean",
    "celtic": "Celtic",
    "chinese": "Chinese",
    "indian": "Indian",
    "japanese": "Japanese",
    "latin-american": "Latin American",
    "mediterranean": "Mediterranean",
    "middle-eastern": "Middle Eastern",
    "native-american": "Native American",
    "slavic": "Slavic",
    "south-american": "South American",
    "world": "World",
}

#: OverClocked ReMix time-signature tags -> label (9 tags).
OCREMIX_TIMESIGS: dict[str, str] = {
    "timesig-4-4": "4/4",
    "timesig-3-4": "3/4",
    "timesig-6-8": "6/8",
    "timesig-5-4": "5/4",
    "timesig-7-8": "7/8",
    "timesig-7-4": "7/4",
    "timesig-9-8": "9/8",
    "timesig-irregular": "irregular",
    "timesig-variable": "variable",
}


@dataclass(frozen=True)
class TaskInfo:
    """What defines one factual task.

    Attributes:
        name: Task key (``instrument``, ``composer``, ``genre``, ``regional``, ``mood``,
            ``timesig``).
        dataset: ``musicnet``, ``fma`` or ``ocremix``.
        noun: What the labels are, for prompts and messages (``instruments``).
        label_matching: True for the closed-list tasks (mood, regional style): the parser
            maps near-synonyms onto the list ("Egyptian" -> Middle Eastern) and ignores
            every other word; False: the parser reads every term of its kind, so terms
            outside the gold vocabulary count as wrong predictions.
        candidates: The fixed candidate labels in prompt order (empty for genre, whose
            candidates are FMA's titles read at run time).
    """

    name: str
    dataset: str
    noun: str
    label_matching: bool
    candidates: tuple[str, ...] = ()


TASKS: dict[str, TaskInfo] = {
    "instrument": TaskInfo(
        "instrument", "musicnet", "instruments", False, tuple(MUSICNET_PROGRAMS.values())
    ),
    "composer": TaskInfo("composer", "musicnet", "composers", False, MUSICNET_COMPOSERS),
    "genre": TaskInfo("genre", "fma", "genres", False),
    "regional": TaskInfo("regional", "ocremix", "regional styles", True, tuple(OCREMIX_REGIONAL)),
    "mood": TaskInfo("mood", "ocremix", "moods", True, tuple(OCREMIX_MOODS)),
    "timesig": TaskInfo(
        "timesig", "ocremix", "time signatures", False, tuple(OCREMIX_TIMESIGS.values())
    ),
}


def task_info(task: str) -> TaskInfo:
    """The :class:`TaskInfo` of ``task``; ``ValueError`` naming the tasks otherwise."""
    try:
        return TASKS[task]
    except KeyError:
        raise ValueError(f"task must be one of {', '.join(TASKS)}, got {task!r}") from None


def timesig_label(tag: str) -> str:
    """``"timesig-4-4"`` -> ``"4/4"``; ``"timesig-irregular"`` -> ``"irregular"``.

    Tags outside :data:`OCREMIX_TIMESIGS` of the same ``timesig-N-M`` shape are read too.

    Examples
    --------
    >>> timesig_label("timesig-12-8")
    '12/8'
    """
    if tag in OCREMIX_TIMESIGS:
        return OCREMIX_TIMESIGS[tag]
    parts = tag.split("-")
    if len(parts) == 3 and parts[0] == "timesig" and parts[1].isdigit() and parts[2].isdigit():
        return f"{parts[1]}/{parts[2]}"
    raise ValueError(f"{tag!r} is not an OverClocked ReMix time-signature tag (timesig-N-M)")


def display_name(task: str, label: str) -> str:
    """How ``label`` is written in prompts (``"middle-eastern"`` -> ``"Middle Eastern"``)."""
    if task == "mood":
        return OCREMIX_MOODS.get(label, label)
    if task == "regional":
        return OCREMIX_REGIONAL.get(label, label)
    return label


def out_of_vocabulary(
    task: str, labels: Iterable[str], titles: Iterable[str] | None = None
) -> list[str]:
    """The ``labels`` outside ``task``'s vocabulary (its candidates; genre: FMA ``titles``).

    Such a label is a term the model named that no item can have (the open name lists of
    :mod:`~lm_eval_rul.factual.reading.names`, "12/8", "guitar" for MusicNet): it costs precision.

    Examples
    --------
    >>> out_of_vocabulary("instrument", ["piano", "guitar", "theremin"])
    ['guitar', 'theremin']
    """
    genre = task == "genre" and titles is not None
    vocabulary = set(titles if genre else task_info(task).candidates)
    return [label for label in labels if label not in vocabulary]
