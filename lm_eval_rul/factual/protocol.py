"""The factual protocol of a run: ``rul`` (ours, the default) or ``paper``.

One choice, ``--metadata protocol=...`` (or ``lalm-api``'s model argument of the same
name, which the harness merges into the metadata), sets every convention on which the
paper and we differ; ``docs/factual.md`` ("The paper's protocol and ours") lists them. The
ones the code acts on:

* **a recording longer than the model's limit**, for a model that hears long audio whole
  (everything but the models the paper chunked), is cut under both protocols as the model
  itself would cut it (its first ``limit`` seconds, one document; Audio Flamingo 3's
  processor keeps the first 600 s): windows only when asked for (``chunk_seconds``) or
  for a chunked model. Every document records ``recording_seconds``, ``heard_seconds``
  and ``cut``, and the run logs how many recordings were cut;
* **the windows of a chunked model** (LTU-AS, MU-LLaMA, LLaMA-Adapter: ``chunked`` from
  the bridge, 60 s segments) **or of ``chunk_seconds``**: ``paper`` cuts consecutive
  segments of that length from the start (the last one shorter); ``rul`` cuts equal
  windows of at most that length (no short tail);
* **API models** (``lalm-api``): ``paper`` keeps the provider's default inference
  settings (no ``temperature``, no ``max_tokens`` sent); ``rul`` sends temperature 0 and
  the task's token cap (256).

The figures both protocols report alike (binary-choice F1 beside accuracy, same-tree genre
per predicted label) are not switched: they are reported under every protocol.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .errors import FactualInputError

__all__ = [
    "PROTOCOLS",
    "DEFAULT_PROTOCOL",
    "PAPER_SEGMENT_SECONDS",
    "check_protocol",
    "protocol_of",
    "is_chunked",
]

#: Protocol name -> what it sets.
PROTOCOLS: dict[str, str] = {
    "rul": "ours (the default): each recording heard whole and cut at the model's own "
    "limit, windows of equal length when asked for; API models at temperature 0 with the "
    "task's token cap",
    "paper": "the paper's: each recording heard whole and cut at the model's own limit, "
    "60 s segments only for the models it chunked; API models at the provider's defaults",
}
DEFAULT_PROTOCOL = "rul"
#: The segment length of the models the paper chunked (LTU-AS, MU-LLaMA, LLaMA-Adapter).
PAPER_SEGMENT_SECONDS = 60.0

_TRUE, _FALSE = ("true", "1", "yes", "on"), ("false", "0", "no", "off", "none", "")


def check_protocol(value: Any, *, where: str = "--metadata protocol") -> str:
    """``value`` as a protocol name (None or "" is the default).

    Raises:
        FactualInputError: Naming the value and the protocols.

    Examples
    --------
    >>> check_protocol(None), check_protocol(" Paper ")
    ('rul', 'paper')
    """
    if value is None or str(value).strip() == "":
        return DEFAULT_PROTOCOL
    name = str(value).strip().lower()
    if name not in PROTOCOLS:
        raise FactualInputError(
            f"{where}={value!r} is not a factual protocol; use rul (ours, the default: "
            "equal windows when windows are asked for, API models at temperature 0) or paper "
            "(the paper's: fixed 60 s segments, API models at the provider's defaults); both "
            "cut a recording at the model's limit"
        )
    return name


def protocol_of(metadata: Mapping[str, Any]) -> str:
    """The checked protocol of a run's (merged) metadata: ``factual_protocol``, else the
    bare ``protocol`` (the factual tasks' catalogue entry, ``tasks/factual/benchmark.py``)."""
    from ..catalogue import by_folder

    family = by_folder()["factual"]
    key = family.protocol_source(metadata)
    return check_protocol(metadata.get(key), where=f"--metadata {key}")


def is_chunked(value: Any) -> bool:
    """``chunked`` (a model argument merged into the metadata, or ``--metadata``) as a bool.

    Raises:
        FactualInputError: A value that is not a boolean.
    """
    if isinstance(value, bool):
        return value
    text = "" if value is None else str(value).strip().lower()
    if text in _TRUE or text in _FALSE:
        return text in _TRUE
    raise FactualInputError(f"chunked={value!r} is not a boolean; use chunked=true or false")
