"""The tagging prompts, by protocol (``--metadata tagging_protocol``).

* ``ours`` (default): prompts that list the vocabulary (as CMI-Bench's GTZAN instruction
  does), for the free-text tasks; a per-tag yes/no question for the tag likelihoods; the
  package's letter prompt (:func:`~lm_eval_rul.mcqa.prompts.pi_prompt`) for ``gtzan``.
* ``cmi``: CMI-Bench's published instructions (Ma et al., ISMIR 2025), verbatim, for the
  free-text tasks (:data:`CMI_INSTRUCTIONS`). CMI-Bench publishes generation instructions
  only, so the likelihood and letter tasks ask the same question under both protocols.

The single-label releases (NSynth, Medley-solos-DB: :data:`~.releases.RELEASES`) ask their
own question for letters and "choose exactly one <kind> from this list" in free text, under
both protocols (no CMI-Bench instruction of theirs is reproduced here).

Qwen3-Omni's report publishes no prompt for its music table (only greedy decoding, no
system prompt, the text after the audio): no protocol claims to be it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import UserInputError
from ..mcqa.prompts import letters_for, pi_prompt
from .releases import RELEASES
from .vocab import tag_text

__all__ = [
    "PROTOCOLS",
    "TAG_SLOT",
    "CMI_INSTRUCTIONS",
    "KINDS",
    "TaggingProtocolError",
    "protocol_of",
    "letters_prompt",
    "gen_prompt",
    "tag_question",
]

#: Protocol names (the first is the default).
PROTOCOLS: tuple[str, ...] = ("ours", "cmi")
#: Where the per-tag question of a likelihood task puts the tag (replaced per request).
TAG_SLOT = "<<tag>>"
#: What a task's tags are called in the prompts.
KINDS: dict[str, str] = {
    "gtzan": "genre",
    "mtg_genre": "genre",
    "mtg_moodtheme": "mood/theme",
    "mtg_instrument": "instrument",
    "mtg_top50": "music",
    "magnatagatune": "music",
}
#: CMI-Bench's instructions, verbatim (GTZAN's from its ``CMI_GTZAN.jsonl``).
CMI_INSTRUCTIONS: dict[str, str] = {
    "gtzan": (
        "Identify the genre of the given music. You must choose exactly one genre from the "
        "following list:\nGenres: blues, classical, country, disco, hip-hop, jazz, metal, pop, "
        "reggae, rock.\n\nYour response should only contain ONE selected genre.\n\n"
        "Example 1: blues\nExample 2: hiphop\nExample 3: jazz"
    ),
    "mtg_genre": "Please provide the genre tag(s) of given audio.",
    "mtg_moodtheme": "Please provide the emotion tag(s) of given audio.",
    "mtg_instrument": "Please provide the instrument tag(s) of given audio.",
    "mtg_top50": (
        "Please provide the music tags of given audio? This may include but not limited to "
        "instruments, emotions and genres"
    ),
    "magnatagatune": "Please provide the tags of given music.",
}


class TaggingProtocolError(UserInputError, ValueError):
    """``tagging_protocol`` names no protocol."""


def protocol_of(metadata: Mapping[str, Any]) -> str:
    """The protocol ``metadata`` asks for (``ours`` when not given).

    Raises:
        TaggingProtocolError: Not one of :data:`PROTOCOLS`.
    """
    value = metadata.get("tagging_protocol") or PROTOCOLS[0]
    if value not in PROTOCOLS:
        raise TaggingProtocolError(
            f"--metadata tagging_protocol={value!r}: use one of {', '.join(PROTOCOLS)} "
            "(ours: prompts listing the vocabulary; cmi: CMI-Bench's instructions)."
        )
    return str(value)


def letters_prompt(
    labels: Sequence[str], question: str = "Which genre is this music?"
) -> tuple[str, tuple[str, ...]]:
    """A letter task's prompt and its letters (the labels as options, in order; GTZAN's
    genres unless another ``question`` is asked)."""
    shown = [tag_text(g) for g in labels]
    return pi_prompt(question, shown), letters_for(len(shown))


def gen_prompt(task: str, tags: Sequence[str], protocol: str) -> str:
    """The free-text prompt of ``task`` (``gtzan``, a tag task or a single-label release)
    under ``protocol``."""
    listed = ", ".join(tag_text(t) for t in tags)
    if task in RELEASES:
        kind = RELEASES[task].kind
        return (
            f"Identify the {kind} of the given audio. Choose exactly one {kind} from this "
            f"list: {listed}. Answer with the {kind} only."
        )
    if protocol == "cmi":
        return CMI_INSTRUCTIONS[task]
    if task == "gtzan":
        return (
            "Identify the genre of the given music. Choose exactly one genre from this list: "
            f"{listed}. Answer with the genre only."
        )
    return (
        f"Listen to the music and name the {KINDS[task]} tags that describe it, chosen from "
        f"this list: {listed}. Answer with the tags only, separated by commas."
    )


def tag_question(task: str) -> str:
    """The per-tag question of a likelihood task, with :data:`TAG_SLOT` for the tag; the
    model's next word is read as " yes" or " no"."""
    return f'Is "{TAG_SLOT}" a {KINDS[task]} tag of this music? Answer yes or no.'
