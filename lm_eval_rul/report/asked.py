"""What a run asked its model besides its questions, and which items it asked.

:func:`asked_of` reads a results file's system prompt, generation arguments and applied
chat template; :func:`rows_digest` hashes the items a task logged, for the families whose
samples are no multiple-choice questions (tagging clips, factual windows). Both are part of
a run's identity (:func:`lm_eval_rul.report.run_keys.same_run`): runs that differ in them
are two runs, never one run's repeats.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["ASKED_NAMES", "asked_of", "asked_text", "gen_kwargs_of", "rows_digest"]

#: Document fields that say what an item asked, in every family (multiple choice, tagging,
#: factual): its id, text, answers, options or vocabulary, and the stretch of audio played.
#: Paths of this machine and the audio registry's ids are left out (a moved folder asks the
#: same questions).
_ASKED_FIELDS = (
    "id",
    "question",
    "prompt",
    "options",
    "letters",
    "correct_answer",
    "dropped_distractor",
    "gold",
    "gold_tags",
    "tags",
    "tag_texts",
    "tagging_task",
    "tagging_protocol",
    "factual_task",
    "variant",
    "study",
    "scoring",
    "chunk",
    "chunk_rule",
    "protocol",
    "dataset",
    "audio_path",
    "audio_window",
)


def rows_digest(rows: Iterable[Mapping[str, Any]]) -> str:
    """A hash of the items a task logged, for the families whose samples are no questions
    (tagging clips, factual windows): each document's :data:`_ASKED_FIELDS`, order-free.
    Two runs of one split file rewritten in between differ here."""
    items = set()
    for row in rows:
        doc = row.get("doc") or {}
        if isinstance(doc, Mapping):
            asked = {key: doc[key] for key in _ASKED_FIELDS if key in doc}
            items.add(json.dumps(asked, sort_keys=True, default=str))
    return hashlib.sha1("\n".join(sorted(items)).encode("utf-8")).hexdigest()[:12]


def _gen_kwargs(value: Any) -> dict[str, str] | None:
    """``--gen_kwargs`` as recorded (a dict, or the ``k=v,...`` text), as sorted text."""
    if isinstance(value, str):
        pairs = [part.partition("=") for part in value.split(",") if part.strip()]
        value = {key.strip(): text.strip() for key, _, text in pairs}
    if isinstance(value, Mapping) and value:
        return {str(key): str(item) for key, item in sorted(value.items())}
    return None


#: The names :func:`asked_of` gives, in the order a variant lists them.
ASKED_NAMES = ("system_prompt", "system_instruction", "gen_kwargs", "chat_template")


def gen_kwargs_of(results: Mapping[str, Any]) -> str:
    """The ``--gen_kwargs`` a results file records (its ``config``), as JSON; ``""``: none."""
    config = results.get("config")
    given = _gen_kwargs(config.get("gen_kwargs")) if isinstance(config, Mapping) else None
    return json.dumps(given, sort_keys=True) if given else ""


def asked_of(
    results: Mapping[str, Any], args: Mapping[str, Any], *, generation: bool = True
) -> tuple[tuple[str, str], ...]:
    """What a run asked its model besides the questions, as ``((name, value), ...)``: the
    system prompt (``system_prompt=`` of ``lalm``/``lalm-api``, the harness's
    ``--system_instruction``), the chat template the harness applied and, for a run with
    ``generation`` tasks (the harness ignores them elsewhere), the generation arguments
    (``--gen_kwargs``); unset ones left out. Runs differing here are two runs (the
    generation arguments: for each generation task, in its identity)."""
    found = {
        "system_prompt": args.get("system_prompt"),
        "system_instruction": results.get("system_instruction"),
        "gen_kwargs": json.loads(gen_kwargs_of(results) or "null") if generation else None,
        "chat_template": results.get("chat_template_sha"),
    }
    return tuple(
        (name, json.dumps(value, sort_keys=True, default=str))
        for name, value in found.items()
        if value not in (None, "", "None")
    )


def asked_text(run: Any, name: str) -> str:
    """How a variant shows one of :func:`asked_of`'s values of a
    :class:`~lm_eval_rul.report.runs.Run` (short, on one line)."""
    value = dict(run.asked).get(name)
    if value is None:
        return "none"
    shown = json.loads(value)
    if isinstance(shown, dict):
        text = ",".join(f"{key}={item}" for key, item in shown.items())
    else:
        text = " ".join(str(shown).split())
    if name == "chat_template":
        return text[:8]
    return text if len(text) <= 40 else f"{text[:37]}..."
