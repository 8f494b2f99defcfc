"""MMAU's prompts, in one place, per protocol (``--metadata protocol``).

* ``rul`` (ours): the RUListening prompts of :mod:`lm_eval_rul.mcqa.prompts` (the
  letter prompt for ``mmau_music``, the step-by-step ``[[X]]`` prompt for
  ``mmau_music_gen``), options in an order seeded from the item.
* ``lmms``: lmms-eval's ``mmau`` prompt exactly: ``{question}\\n``, one ``A. {choice}``
  line per choice in the JSON's order, then ``\\nAnswer with the option's letter from
  the given choices directly.``
* ``official``: MMAU's repository publishes no prompt, and its scorer reads the choice's
  TEXT from the answer (a bare letter matches nothing). Ours: the question, the choices
  one per line in the JSON's order without letters, and a request for the choice's text
  (:data:`OFFICIAL_INSTRUCTION`). The letter task ``mmau_music`` under ``official`` uses
  our letter prompt in the JSON's order.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..prompts import gen_prompt, letters_for, pi_prompt

__all__ = [
    "LMMS_POST_PROMPT",
    "OFFICIAL_INSTRUCTION",
    "lmms_prompt",
    "official_prompt",
    "letter_prompt",
    "generation_prompt",
]

#: lmms-eval's ``post_prompt`` of its ``mmau`` tasks (``_default_template_yaml``).
LMMS_POST_PROMPT = "\nAnswer with the option's letter from the given choices directly."
#: Ours, for the official protocol: MMAU's scorer matches the words of the choice.
OFFICIAL_INSTRUCTION = "Answer with the text of the correct choice."


def lmms_prompt(question: str, options: Sequence[str]) -> str:
    """lmms-eval's ``mmau`` ``doc_to_text`` (empty ``pre_prompt``).

    >>> lmms_prompt("Tempo?", ["Slow", "Fast"])
    "Tempo?\\nA. Slow\\nB. Fast\\nAnswer with the option's letter from the given choices directly."
    """
    lines = "\n".join(f"{x}. {o}" for x, o in zip(letters_for(len(options)), options, strict=True))
    return f"{question}\n{lines}{LMMS_POST_PROMPT}"


def official_prompt(question: str, options: Sequence[str]) -> str:
    """Our prompt of the official protocol (see the module docstring).

    >>> official_prompt("Tempo?", ["Slow", "Fast"])
    'Tempo?\\nChoices:\\nSlow\\nFast\\nAnswer with the text of the correct choice.'
    """
    return f"{question}\nChoices:\n" + "\n".join(options) + f"\n{OFFICIAL_INSTRUCTION}"


def letter_prompt(protocol: str, question: str, options: Sequence[str]) -> str:
    """The prompt of ``mmau_music`` (its continuation is the answer letter)."""
    if protocol == "lmms":
        return lmms_prompt(question, options)
    return pi_prompt(question, options)


def generation_prompt(protocol: str, question: str, options: Sequence[str]) -> str:
    """The prompt of ``mmau_music_gen``."""
    if protocol == "lmms":
        return lmms_prompt(question, options)
    if protocol == "official":
        return official_prompt(question, options)
    return gen_prompt(question, options)
