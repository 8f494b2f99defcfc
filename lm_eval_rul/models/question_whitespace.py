"""Whether a chat template writes the question as given or trimmed.

``lalm`` renders the template once around a sentinel and puts each question between the
two parts. Gemma 3n's template writes the text as ``{{ item['text'] | trim }}``, so the
processor's own rendering of a question with leading or trailing whitespace (a harness
context ending in ``"Answer: "`` or a newline) drops it; inserting the question unchanged
would give the model a prompt the processor never writes. One more rendering, with
whitespace around the sentinel, tells which the template does.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from .args import LALMArgumentError

__all__ = ["template_trims_question"]

#: Whitespace put around the sentinel: a newline and a space on each side.
_LEFT, _RIGHT = "\n ", " \n"


def template_trims_question(
    render: Callable[[list[dict[str, Any]]], str | list[str]],
    messages: list[dict[str, Any]],
    rendered: str,
    sentinel: str,
    where: str,
) -> bool:
    """``True`` if the template strips the whitespace around the question (as ``str.strip``,
    which Jinja's ``trim`` is), ``False`` if it writes the question verbatim.

    Args:
        render: The template rendering of a chat (``apply_chat_template`` with
            ``tokenize=False`` and the generation prompt).
        messages: The chat ``rendered`` came from; the user turn's text is ``sentinel``.
        rendered: ``render(messages)``.
        sentinel: The question's stand-in, written once in ``rendered``.
        where: The family and checkpoint, for the error line.

    Raises:
        LALMArgumentError: The template changes that whitespace some other way (one side
            only, or rewritten), so no single rule gives the processor's own rendering.
    """
    padded = _LEFT + sentinel + _RIGHT
    probe = render(_with_question(messages, sentinel, padded))
    probe = probe[0] if isinstance(probe, list) else probe
    if probe == rendered.replace(sentinel, padded):
        return False
    if probe == rendered:
        return True
    raise LALMArgumentError(
        f"lalm: {where}: the chat template changes the whitespace around the question other "
        f"than by trimming it (question {padded!r} rendered as {probe!r}); pass model_args "
        "chat_template=false to write the question without it."
    )


def _with_question(
    messages: list[dict[str, Any]], sentinel: str, text: str
) -> list[dict[str, Any]]:
    """A copy of ``messages`` with ``text`` where the user turn says ``sentinel``."""
    changed = copy.deepcopy(messages)
    turn = changed[-1]
    if isinstance(turn["content"], str):
        turn["content"] = turn["content"].replace(sentinel, text)
    else:
        for part in turn["content"]:
            if part.get("type") == "text":
                part["text"] = part["text"].replace(sentinel, text)
    return changed
