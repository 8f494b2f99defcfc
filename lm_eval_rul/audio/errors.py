"""The audio errors: each names the item, the file or the value, and the fix."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..errors import UserInputError
from ..questions.schema import MAX_LISTED, natural_id_key

__all__ = [
    "AMBIGUOUS",
    "AMBIGUOUS_HINT",
    "AudioError",
    "MissingAudioError",
    "AudioDecodeError",
    "UnknownConditionError",
]

#: Marks the "paths tried" of a question whose Hugging Face row is ambiguous.
AMBIGUOUS = "(ambiguous:"
AMBIGUOUS_HINT = (
    "Fix: questions whose text (and every other field both sides have) matches several rows "
    "of the Hugging Face dataset cannot be given a clip: join on ids with --metadata "
    "audio_id_column, give muchomusic_csv (RUL rows are then also compared on MuChoMusic's "
    "own options), or pass --metadata '{\"audio_skip_ambiguous\": true}' to run without "
    "these questions."
)


class AudioError(UserInputError, ValueError):
    """Base class of this module's errors."""


class MissingAudioError(AudioError):
    """Items have no audio; ``missing`` maps each item id to the paths tried."""

    def __init__(self, missing: Mapping[str, Sequence[str]], *, total: int, hint: str = ""):
        ordered = sorted(missing.items(), key=lambda kv: natural_id_key(str(kv[0])))
        self.missing = {str(k): list(v) for k, v in ordered}
        ids = list(self.missing)
        more = f", ... (+{len(ids) - MAX_LISTED} more)" if len(ids) > MAX_LISTED else ""
        shown = ", ".join(ids[:MAX_LISTED]) + more
        lines = [f"No audio for {len(ids)} of {total} items: ids {shown}."]
        for item in ids[:3]:
            tried = self.missing[item]
            lines.append(f"  id {item}: tried {', '.join(tried) if tried else '(nothing to try)'}")
        lines.append(
            hint
            or "Fix: put the files where the paths above point (one per question id, or one "
            "per MuChoMusic track: RUL rows need --metadata muchomusic_csv to know their "
            "track), give the right --metadata audio_dir / audio_hf_dataset, or run with "
            "audio=noise|silence|none, which need no files."
        )
        super().__init__("\n".join(lines))


class AudioDecodeError(AudioError):
    """An audio file is corrupt, empty or unreadable; the message names it."""


class UnknownConditionError(AudioError):
    """``audio=`` names no registered condition (``names``: those that are)."""

    def __init__(self, condition: object, names: Sequence[str]):
        self.condition = condition
        super().__init__(
            f"audio={condition!r} is not a condition; use one of {', '.join(names)} "
            "(e.g. --model_args pretrained=...,audio=noise)"
        )

